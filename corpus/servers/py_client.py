"""A real MCP client (official Python SDK `mcp` 2.x) that reads resources.

Drives a server over stdio (`-- CMD ARGS...`) or Streamable HTTP (`--url URL`):
handshake, `resources/list` following every `nextCursor`, `resources/templates/list`,
`resources/read` of up to `--reads` listed resources (text and blob alternately),
one read of a URI that does not exist; then, when asked (`--tool`, `--prompt`),
`tools/list`, `prompts/list` and each `tools/call` / `prompts/get` in order (a tool
with a `progressToken`: `--progress-tool`). Prints a JSON summary on stdout.
`--batch FILE` runs several such sessions in turn (FILE: a JSON array of argument
lists) and prints the array of their summaries.

Used by scripts/record-corpus.sh and crates/mcptape/tests/record_*.rs to drive
`mcptape record`. Not an mcptape component: it only exercises the real SDK client.
"""

import argparse
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp")
    ap.add_argument(
        "--mode",
        default="legacy",
        help="'legacy' (initialize handshake), 'auto' (server/discover, falling back), or a version such as 2026-07-28",
    )
    ap.add_argument("--reads", type=int, default=12, help="how many listed resources to read")
    ap.add_argument("--missing", default=None, help="URI that does not exist (default: derived from the first listed URI)")
    ap.add_argument("--template", action="append", default=[], help="a concrete URI to read from a template (repeatable)")
    ap.add_argument("--tool", action="append", default=[], help="NAME=JSON_ARGS: call a tool after the reads (repeatable, in order)")
    ap.add_argument("--progress-tool", action="append", default=[], help="NAME=JSON_ARGS: call a tool with a progress callback (the SDK sends a progressToken)")
    ap.add_argument("--prompt", action="append", default=[], help="NAME=JSON_ARGS: get a prompt after the tools (repeatable)")
    ap.add_argument("--max-sse-event-bytes", type=int, default=64 * 1024 * 1024, help="SSE event size limit of the HTTP client")
    ap.add_argument(
        "--batch",
        default=None,
        help="FILE: a JSON array of argument lists (each as this script takes them, without --batch); "
        "runs each as its own client session in turn, in this one process, and prints a JSON array of "
        "their summaries (saves one Python start and SDK import per session)",
    )
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS... of a stdio server")
    return ap


async def main() -> int:
    ap = parser()
    a = ap.parse_args()
    if a.batch is not None:
        with open(a.batch, encoding="utf-8") as f:
            jobs = json.load(f)
        summaries = []
        for job in jobs:
            one = ap.parse_args(job)
            if one.batch is not None:
                ap.error("--batch inside a batch")
            summaries.append(await session(ap, one))
        json.dump(summaries, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    json.dump(await session(ap, a), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


async def session(ap: argparse.ArgumentParser, a: argparse.Namespace) -> dict:
    """One client session as `a` asks; its summary."""
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if a.url:
        # The SDK's default SSE event limit is 1 MiB; the test server's 2 MB PNG needs more.
        server = streamable_http_client(a.url, max_sse_event_size=a.max_sse_event_bytes)
    elif cmd:
        server = StdioServerParameters(command=cmd[0], args=cmd[1:])
    else:
        ap.error("give --url or -- CMD ARGS...")

    summary = {"listed": [], "pages": 0, "templates": [], "reads": [], "missing": None}
    async with Client(server, mode=a.mode, cache=None, read_timeout_seconds=30) as client:
        summary["protocolVersion"] = client.protocol_version
        cursor = None
        while True:
            page = await client.list_resources(cursor=cursor)
            summary["pages"] += 1
            summary["listed"] += [str(r.uri) for r in page.resources]
            cursor = page.next_cursor
            if not cursor:
                break
        templates = await client.list_resource_templates()
        summary["templates"] = [t.uri_template for t in templates.resource_templates]

        # Alternate text and blob resources so both kinds are read (server-everything
        # lists its static text/blob resources interleaved by id).
        uris = list(summary["listed"])[: a.reads] + a.template
        for uri in uris:
            res = await client.read_resource(uri)
            kinds = []
            for c in res.contents:
                if getattr(c, "blob", None) is not None:
                    kinds.append({"uri": str(c.uri), "kind": "blob", "base64Chars": len(c.blob), "mimeType": c.mime_type})
                else:
                    kinds.append({"uri": str(c.uri), "kind": "text", "chars": len(c.text), "mimeType": c.mime_type})
            summary["reads"].append({"uri": uri, "contents": kinds})

        missing = a.missing
        if missing is None:
            first = summary["listed"][0] if summary["listed"] else "file:///"
            missing = first.rsplit("/", 1)[0] + "/mcptape-does-not-exist"
        try:
            await client.read_resource(missing)
            summary["missing"] = {"uri": missing, "error": None}
        except MCPError as e:
            summary["missing"] = {"uri": missing, "code": e.code, "message": e.error.message}
        if a.tool or a.progress_tool or a.prompt:
            summary["tools"] = [t.name for t in (await client.list_tools()).tools]
            summary["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
        summary["calls"] = []
        progress = []

        async def on_progress(done, total, message):
            progress.append(done)

        for spec, with_progress in [(t, False) for t in a.tool] + [(t, True) for t in a.progress_tool]:
            name, _, args = spec.partition("=")
            res = await client.call_tool(
                name, json.loads(args or "{}"), progress_callback=on_progress if with_progress else None
            )
            summary["calls"].append({"tool": name, "isError": bool(res.is_error), "content": len(res.content)})
        summary["progress"] = len(progress)
        for spec in a.prompt:
            name, _, args = spec.partition("=")
            res = await client.get_prompt(name, json.loads(args or "{}"))
            summary["calls"].append({"prompt": name, "messages": len(res.messages)})
    return summary


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
