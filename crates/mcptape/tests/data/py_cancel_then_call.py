"""The official Python SDK client (`mcp` on PyPI) against a Streamable HTTP URL: a tool call
given up after TIMEOUT seconds (the SDK sends notifications/cancelled for it), then a second
call in the same session. Prints one JSON line: what the first call raised and the second
call's text (or what it raised).

    python py_cancel_then_call.py URL TIMEOUT
"""
import json
import sys

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL, TIMEOUT = sys.argv[1], float(sys.argv[2])


async def main():
    out = {}
    async with Client(streamable_http_client(URL), mode="legacy", cache=None, read_timeout_seconds=30) as s:
        try:
            r = await s.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 3},
                                  read_timeout_seconds=TIMEOUT)
            out["first"] = r.content[0].text
        except Exception as e:  # the timeout the test expects
            out["first_error"] = type(e).__name__
        try:
            r = await s.call_tool("echo", {"message": "again"})
            out["second"] = r.content[0].text
        except Exception as e:
            out["second_error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(out))


anyio.run(main)
