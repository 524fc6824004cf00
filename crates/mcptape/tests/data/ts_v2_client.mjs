// The official TypeScript SDK v2 client (@modelcontextprotocol/client, pinned in
// scripts/install-peers.sh) in its `auto` version-negotiation mode over stdio: it probes
// with `server/discover` on a disposable sibling process of the server command, then runs
// the session on a second one (so the server command starts twice). resources/list, then
// resources/read of every listed resource. Prints one JSON line:
// {"protocolVersion", "era", "serverName", "listed", "reads"} (reads as ts_read_all.mjs gives them).
//
// Usage: node ts_v2_client.mjs -- CMD ARGS...
// The SDK is loaded from $MCPTAPE_TS_V2_PREFIX/node_modules (see .tools/env.sh).
import { pathToFileURL } from "node:url";
import path from "node:path";
import { readEveryListed } from "./ts_read_all.mjs";

const prefix = process.env.MCPTAPE_TS_V2_PREFIX;
if (!prefix) {
  console.error("MCPTAPE_TS_V2_PREFIX is not set: source .tools/env.sh");
  process.exit(2);
}
const pkg = path.join(prefix, "node_modules/@modelcontextprotocol/client/dist");
const { Client } = await import(pathToFileURL(path.join(pkg, "index.mjs")).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(pkg, "stdio.mjs")).href);

const args = process.argv.slice(2);
if (args[0] !== "--" || args.length < 2) {
  console.error("usage: ts_v2_client.mjs -- CMD ARGS...");
  process.exit(2);
}
const transport = new StdioClientTransport({ command: args[1], args: args.slice(2), stderr: "inherit" });
const client = new Client(
  { name: "mcptape-ts-v2-test", version: "1.0.0" },
  { versionNegotiation: { mode: "auto" } },
);
const timeout = { timeout: 30000 };
await client.connect(transport, timeout);
const { listed, reads } = await readEveryListed(client, timeout);
const summary = {
  protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
  era: client.getProtocolEra() ?? null,
  serverName: client.getServerVersion()?.name ?? null,
  listed,
  reads,
};
await client.close();
process.stdout.write(JSON.stringify(summary) + "\n", () => process.exit(0));
