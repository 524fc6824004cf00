// The official TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// scripts/install-peers.sh) against one MCP server: resources/list, then
// resources/read of every listed resource. Prints one JSON summary line:
// {"protocolVersion", "serverName", "listed", "reads"} (reads as ts_read_all.mjs gives them).
//
// Usage: node ts_sdk_client.mjs --url URL
//        node ts_sdk_client.mjs -- CMD ARGS...
// The SDK is loaded from $MCPTAPE_NPM_PREFIX/node_modules (see .tools/env.sh; ts_sdk_load.mjs).
import { load } from "./ts_sdk_load.mjs";
import { readEveryListed } from "./ts_read_all.mjs";
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
const { listed, reads } = await readEveryListed(client, timeout);
const summary = {
  protocolVersion: transport.protocolVersion ?? null,
  serverName: client.getServerVersion()?.name ?? null,
  listed,
  reads,
};
await client.close();
// Exit once the summary (MiBs with the contents) is written: a pipe write is asynchronous.
process.stdout.write(JSON.stringify(summary) + "\n", () => process.exit(0));
