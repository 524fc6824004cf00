"""A small real MCP server written with the official Python SDK `mcp` 2.x (`MCPServer`).

Exposes what mcptape records and replays:
  * text resources   mcptape://docs/readme.md (text/markdown), mcptape://docs/notes.txt,
                     mcptape://docs/unicode.txt (non-ASCII: accents, CJK, an emoji)
  * binary resources mcptape://blobs/pixel.png (a valid 1x1 PNG, 69 bytes),
                     mcptape://blobs/large.png (a valid 1024x683 RGB PNG, >= 2 MB,
                     stored zlib blocks so it stays large; deterministic bytes),
                     mcptape://blobs/ramp.bin (1000 bytes, i % 251, application/octet-stream)
  * templates        mcptape://items/{id} (text), mcptape://bytes/{count} (count bytes, <= 1 MiB),
                     mcptape://ask/{what} (what=roots: the server sends the client a roots/list
                     request while answering the read, and reports the client's answer)
  * tools            add(a, b) (readOnlyHint: true), bump(by) (no annotations: it changes the
                     server's counter, so `bench` against a live target skips it unless allowed)
  * prompts          review(topic) (one user message)

Usage:
  python py_server.py stdio
  python py_server.py http --port PORT [--json]     (binds 127.0.0.1 only)

Environment:
  PY_SERVER_READ_DELAY_MS   milliseconds (a number >= 0, at most 60000) every resources/read
                            waits before it is answered: an injected regression for
                            `mcptape bench --baseline` (default 0: none)

The SDK serves both protocol eras: 2025-11-25 (initialize handshake, sessions) and
2026-07-28 (server/discover, no session) on the same endpoint.
"""

import argparse
import os
import random
import struct
import sys
import zlib

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

LARGE_W, LARGE_H = 1024, 683
MAX_BYTES_TEMPLATE = 1024 * 1024
MAX_READ_DELAY_MS = 60_000


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int, height: int, level: int) -> bytes:
    """A valid RGB PNG whose pixels come from `random.Random(0x6D6370)` (Mersenne Twister: same bytes on every run)."""
    rng = random.Random(0x6D6370)
    rows = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))  # filter type None per row
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(rows, level)) + _chunk(b"IEND", b"")


PIXEL_PNG = png(1, 1, 9)
LARGE_PNG = png(LARGE_W, LARGE_H, 0)
RAMP = bytes(i % 251 for i in range(1000))

server = MCPServer("mcptape-py-server", version="1.0.0", instructions="Resources for mcptape recordings.")


@server.resource("mcptape://docs/readme.md", name="readme", mime_type="text/markdown", description="A markdown document")
def readme() -> str:
    return "# mcptape test server\n\nThis document is served by the official Python SDK.\n\n- text\n- blobs\n- templates\n"


@server.resource("mcptape://docs/notes.txt", name="notes", mime_type="text/plain")
def notes() -> str:
    return "line one\nline two\n\ttabbed line three\n"


@server.resource("mcptape://docs/unicode.txt", name="unicode", mime_type="text/plain; charset=utf-8")
def unicode_text() -> str:
    return "Caf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001f600 \u00bd\n"


@server.resource("mcptape://blobs/pixel.png", name="pixel", mime_type="image/png", description="1x1 PNG")
def pixel() -> bytes:
    return PIXEL_PNG


@server.resource("mcptape://blobs/large.png", name="large", mime_type="image/png", description=f"{LARGE_W}x{LARGE_H} PNG, {len(LARGE_PNG)} bytes")
def large() -> bytes:
    return LARGE_PNG


@server.resource("mcptape://blobs/ramp.bin", name="ramp", mime_type="application/octet-stream")
def ramp() -> bytes:
    return RAMP


@server.resource("mcptape://items/{id}", name="item", mime_type="text/plain", description="Item by id")
def item(id: str) -> str:
    return f"item {id}\n"


@server.resource("mcptape://bytes/{count}", name="bytes", mime_type="application/octet-stream", description="count bytes (i % 256), at most 1 MiB")
def some_bytes(count: str) -> bytes:
    n = int(count)
    if n < 0 or n > MAX_BYTES_TEMPLATE:
        raise ValueError(f"count must be in 0..={MAX_BYTES_TEMPLATE}")
    return bytes(i % 256 for i in range(n))


@server.resource(
    "mcptape://ask/{what}",
    name="ask",
    mime_type="text/plain",
    description="Sends the client a server-to-client request (what=roots: roots/list) and reports the answer",
)
async def ask(what: str, ctx: Context) -> str:
    if what != "roots":
        raise ValueError("only mcptape://ask/roots is served")
    try:
        result = await ctx.session.list_roots()
        return f"roots/list answered: {len(result.roots)} roots\n"
    except Exception as e:  # the client's JSON-RPC error, reported in the text
        code = getattr(getattr(e, "error", None), "code", None)
        return f"roots/list failed: code {code}: {e}\n"


@server.tool(annotations=ToolAnnotations(read_only_hint=True), description="a + b")
def add(a: int, b: int) -> int:
    return a + b


COUNTER = {"n": 0}


@server.tool(description="Adds `by` to the server's counter and returns it (a side effect)")
def bump(by: int = 1) -> int:
    COUNTER["n"] += by
    return COUNTER["n"]


@server.prompt(description="Asks for a review of a topic")
def review(topic: str) -> str:
    return f"Please review {topic}."


def read_delay_ms() -> float:
    """PY_SERVER_READ_DELAY_MS as a number of ms in 0..=MAX_READ_DELAY_MS; exits 2 otherwise."""
    raw = os.environ.get("PY_SERVER_READ_DELAY_MS", "")
    if raw == "":
        return 0.0
    try:
        ms = float(raw)
    except ValueError:
        ms = -1.0
    if not 0.0 <= ms <= MAX_READ_DELAY_MS:
        print(f"py_server: PY_SERVER_READ_DELAY_MS={raw!r}: must be a number of ms in 0..={MAX_READ_DELAY_MS}", file=sys.stderr)
        sys.exit(2)
    return ms


def delay_reads(ms: float) -> None:
    """Every resources/read waits `ms` before the resource is read (the SDK's read handler calls
    `server.read_resource`, looked up on the instance at each request)."""
    read = server.read_resource

    async def delayed(uri, context=None):
        await anyio.sleep(ms / 1000.0)
        return await read(uri, context)

    server.read_resource = delayed


def main() -> None:
    delay = read_delay_ms()
    if delay > 0:
        delay_reads(delay)
    ap = argparse.ArgumentParser()
    ap.add_argument("transport", choices=["stdio", "http"])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--json", action="store_true", help="JSON replies instead of SSE streams")
    a = ap.parse_args()
    if a.transport == "stdio":
        server.run("stdio")
    else:
        print(f"py_server listening on http://127.0.0.1:{a.port}/mcp", file=sys.stderr, flush=True)
        server.run("streamable-http", host="127.0.0.1", port=a.port, json_response=a.json)


if __name__ == "__main__":
    main()
