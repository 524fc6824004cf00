"""N real Python SDK clients (official `mcp` 2.x) at once against one Streamable HTTP server.

Each client is its own `mcp.Client` (its own session, its ids numbered from 0 as the SDK
does), started together: handshake, `resources/list` following every `nextCursor`, then
`resources/read` of every listed resource. Prints one JSON summary on stdout:
{"clients": N, "sessions": [{"ok": bool, "error": str|null, "protocolVersion",
"reads": [{"uri", "contents": [{"uri", "mimeType", "text"|"blob"}]} | {"uri", "code", "message"}]}]}.

Used by crates/mcptape/tests/serve_http.rs (issue 23: requests belong to their session).
Not an mcptape component: it only drives the real SDK client, many at once.
"""

import argparse
import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def one(url: str, mode: str, start: asyncio.Event) -> dict:
    await start.wait()
    out = {"ok": False, "error": None, "protocolVersion": None, "reads": []}
    try:
        server = streamable_http_client(url, max_sse_event_size=64 * 1024 * 1024)
        async with Client(server, mode=mode, cache=None, read_timeout_seconds=60) as client:
            out["protocolVersion"] = client.protocol_version
            listed, cursor = [], None
            while True:
                page = await client.list_resources(cursor=cursor)
                listed += [str(r.uri) for r in page.resources]
                cursor = page.next_cursor
                if not cursor:
                    break
            for uri in listed:
                try:
                    res = await client.read_resource(uri)
                    contents = []
                    for c in res.contents:
                        e = {"uri": str(c.uri), "mimeType": c.mime_type}
                        if getattr(c, "blob", None) is not None:
                            e["blob"] = c.blob
                        else:
                            e["text"] = c.text
                        contents.append(e)
                    out["reads"].append({"uri": uri, "contents": contents})
                except MCPError as e:
                    out["reads"].append({"uri": uri, "code": e.code, "message": e.error.message})
            out["ok"] = True
    except BaseException as e:  # noqa: BLE001 - the summary says what failed, per client
        out["error"] = f"{type(e).__name__}: {e}"
    return out


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True, help="Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--mode", default="legacy", help="'legacy' (initialize) or 'auto' (server/discover first)")
    a = ap.parse_args()
    start = asyncio.Event()
    tasks = [asyncio.create_task(one(a.url, a.mode, start)) for _ in range(a.clients)]
    await asyncio.sleep(0)
    start.set()
    sessions = await asyncio.gather(*tasks)
    json.dump({"clients": a.clients, "sessions": sessions}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
