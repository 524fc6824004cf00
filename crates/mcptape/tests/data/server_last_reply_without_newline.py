"""A stdio MCP server (2025-11-25) whose last reply has no trailing newline.

It lists one resource, reads it, and answers the read of any other URI with
the not-found error (-32002, data.uri) WITHOUT a newline, then exits: the
reply only ends at end of stream. A client that does not frame the
unterminated last line at EOF never sees that answer.
"""

import json
import sys

DOC = "test://docs/a.txt"


def send(msg, end="\n"):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + end)
    sys.stdout.flush()


while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    rid, method = msg.get("id"), msg.get("method")
    if rid is None or method is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"resources": {}},
            "serverInfo": {"name": "last-reply-without-newline", "version": "1"},
        }
    elif method == "resources/list":
        result = {"resources": [{"uri": DOC, "name": "a"}]}
    elif method == "resources/templates/list":
        result = {"resourceTemplates": []}
    elif method == "resources/read" and msg["params"]["uri"] == DOC:
        result = {"contents": [{"uri": DOC, "mimeType": "text/plain", "text": "a"}]}
    elif method == "resources/read":
        uri = msg["params"]["uri"]
        error = {"code": -32002, "message": "Resource not found", "data": {"uri": uri}}
        send({"jsonrpc": "2.0", "id": rid, "error": error}, end="")
        sys.exit(0)
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
        continue
    send({"jsonrpc": "2.0", "id": rid, "result": result})
