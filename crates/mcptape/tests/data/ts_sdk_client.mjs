// The official TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// scripts/install-peers.sh) against one MCP server: resources/list, then
// resources/read of every listed resource. Prints one JSON summary line:
// {"protocolVersion", "serverName", "listed", "reads": [{"uri", "ok", "code"?}]}.
//
// Usage: node ts_sdk_client.mjs --url URL
//        node ts_sdk_client.mjs -- CMD ARGS...
// The SDK is loaded from $MCPTAPE_NPM_PREFIX/node_modules (see .tools/env.sh; ts_sdk_load.mjs).
import { load } from "./ts_sdk_load.mjs";
const { Client } = await load("client/index.js");

const args = process.argv.slice(2);
let transport;
if (args[0] === "--url") {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(args[1]));
} else if (args[0] === "--") {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({ command: args[1], args: args.slice(2), stderr: "inherit" });
} else {
  console.error("usage: ts_sdk_client.mjs --url URL | -- CMD ARGS...");
  process.exit(2);
}

const client = new Client({ name: "mcptape-ts-sdk-test", version: "1.0.0" });
const timeout = { timeout: 20000 };
await client.connect(transport, timeout);
const listed = await client.listResources(undefined, timeout);
const reads = [];
for (const r of listed.resources) {
  try {
    const res = await client.readResource({ uri: r.uri }, timeout);
    reads.push({ uri: r.uri, ok: Array.isArray(res.contents) && res.contents.length > 0 });
  } catch (e) {
    reads.push({ uri: r.uri, ok: false, code: e.code ?? null, message: String(e.message ?? e) });
  }
}
const summary = {
  protocolVersion: transport.protocolVersion ?? null,
  serverName: client.getServerVersion()?.name ?? null,
  listed: listed.resources.length,
  reads,
};
console.log(JSON.stringify(summary));
await client.close();
process.exit(0);
