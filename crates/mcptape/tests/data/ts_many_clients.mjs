// N official TypeScript SDK clients (@modelcontextprotocol/sdk, pinned in
// scripts/install-peers.sh) at once against one Streamable HTTP server: each its
// own Client and transport (its own session; ids numbered from 0 as the SDK
// does), started together: resources/list, then resources/read of every listed
// resource. Prints one JSON line:
// {"clients": N, "sessions": [{"ok", "error", "protocolVersion",
//   "reads": [{"uri", "contents": [{"uri", "mimeType", "text"|"blob"}]} | {"uri", "code", "message"}]}]}
//
// Usage: node ts_many_clients.mjs --url URL --clients N
// The SDK is loaded from $MCPTAPE_NPM_PREFIX/node_modules (see .tools/env.sh; ts_sdk_load.mjs).
import { load } from "./ts_sdk_load.mjs";
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const url = opt("--url");
const n = Number(opt("--clients", "50"));
if (!url || !(n > 0)) {
  console.error("usage: ts_many_clients.mjs --url URL --clients N");
  process.exit(2);
}
const timeout = { timeout: 60000 };

async function one() {
  const out = { ok: false, error: null, protocolVersion: null, reads: [] };
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "mcptape-ts-many", version: "1.0.0" });
  try {
    await client.connect(transport, timeout);
    out.protocolVersion = transport.protocolVersion ?? null;
    const listed = [];
    let cursor;
    do {
      const page = await client.listResources(cursor ? { cursor } : undefined, timeout);
      listed.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor);
    for (const uri of listed) {
      try {
        const res = await client.readResource({ uri }, timeout);
        out.reads.push({
          uri,
          contents: res.contents.map((c) =>
            c.blob !== undefined
              ? { uri: c.uri, mimeType: c.mimeType ?? null, blob: c.blob }
              : { uri: c.uri, mimeType: c.mimeType ?? null, text: c.text },
          ),
        });
      } catch (e) {
        out.reads.push({ uri, code: e.code ?? null, message: String(e.message ?? e) });
      }
    }
    out.ok = true;
  } catch (e) {
    out.error = String(e?.stack ?? e);
  }
  try {
    await client.close();
  } catch {}
  return out;
}

const sessions = await Promise.all(Array.from({ length: n }, () => one()));
// Exit only once stdout is flushed: a piped stdout is asynchronous in Node,
// and process.exit() would cut the line at the pipe's 64 KiB.
process.stdout.write(JSON.stringify({ clients: n, sessions }) + "\n", () => process.exit(0));
