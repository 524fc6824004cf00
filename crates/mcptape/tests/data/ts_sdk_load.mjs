// Loads a module of the official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// scripts/install-peers.sh) from $MCPTAPE_NPM_PREFIX/node_modules (see .tools/env.sh):
// `await load("client/index.js")`. Exits 2 when the prefix is not set.
// Shared by ts_sdk_client.mjs and ts_many_clients.mjs.
import { pathToFileURL } from "node:url";
import path from "node:path";

const prefix = process.env.MCPTAPE_NPM_PREFIX;
if (!prefix) {
  console.error("MCPTAPE_NPM_PREFIX is not set: source .tools/env.sh");
  process.exit(2);
}
const esm = path.join(prefix, "node_modules/@modelcontextprotocol/sdk/dist/esm");
export const load = (p) => import(pathToFileURL(path.join(esm, p)).href);
