#!/usr/bin/env python3
"""A deliberately faulty MCP 2026-07-28 server (Streamable HTTP, stateless,
JSON responses) used to compare `mcptape check` with the MCP conformance
suite on the same sessions (see corpus/README.md, "Against the conformance
suite"). Standard library only; binds 127.0.0.1.

It serves what the suite's resource scenarios read (test://static-text,
test://static-binary, test://template/{id}/data, a missing URI) and the list
methods, answering correctly except for the one fault named with --fault:

  none               correct answers
  text-and-blob      every text entry also carries a blob of the same bytes
  neither            text entries carry neither text nor blob
  missing-uri        entries carry no uri
  noncanonical-blob  the PNG blob is sent URL-safe and unpadded
  empty-contents     a missing resource is answered with contents: []
  legacy-code        a missing resource is answered with -32002 (+ data.uri)
  no-data-uri        a missing resource is answered with -32602 without data
  no-cache-hints     results carry no ttlMs / cacheScope
  no-result-type     results carry no resultType

Usage: faulty_http_server.py --port PORT --fault FAULT
"""

import argparse
import base64
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "2026-07-28"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
TEXT = "This is the content of the static text resource."
RESOURCES = [
    {"uri": "test://static-text", "name": "static-text", "description": "static text", "mimeType": "text/plain"},
    {"uri": "test://static-binary", "name": "static-binary", "description": "static binary", "mimeType": "image/png"},
]
TEMPLATES = [{"uriTemplate": "test://template/{id}/data", "name": "template", "description": "template", "mimeType": "application/json"}]


def complete(fault, result):
    if fault != "no-result-type":
        result["resultType"] = "complete"
    if fault != "no-cache-hints":
        result["ttlMs"] = 60000
        result["cacheScope"] = "public"
    return result


def text_entry(fault, uri, text, mime):
    e = {"uri": uri, "mimeType": mime, "text": text}
    if fault == "text-and-blob":
        e["blob"] = base64.b64encode(text.encode()).decode()
    if fault == "neither":
        del e["text"]
    if fault == "missing-uri":
        del e["uri"]
    return e


def read(fault, uri):
    """(result, error) for resources/read of uri."""
    if uri == "test://static-text":
        return complete(fault, {"contents": [text_entry(fault, uri, TEXT, "text/plain")]}), None
    if uri == "test://static-binary":
        blob = base64.b64encode(PNG).decode()
        if fault == "noncanonical-blob":
            blob = base64.urlsafe_b64encode(PNG).decode().rstrip("=")
        e = {"uri": uri, "mimeType": "image/png", "blob": blob}
        if fault == "missing-uri":
            del e["uri"]
        return complete(fault, {"contents": [e]}), None
    m = re.fullmatch(r"test://template/([^/]+)/data", uri)
    if m:
        body = json.dumps({"id": m.group(1), "templateTest": True, "data": f"Data for ID: {m.group(1)}"})
        return complete(fault, {"contents": [text_entry(fault, uri, body, "application/json")]}), None
    if fault == "empty-contents":
        return complete(fault, {"contents": []}), None
    if fault == "legacy-code":
        return None, {"code": -32002, "message": "Resource not found", "data": {"uri": uri}}
    if fault == "no-data-uri":
        return None, {"code": -32602, "message": "Resource not found"}
    return None, {"code": -32602, "message": "Resource not found", "data": {"uri": uri}}


def answer(fault, msg):
    method, params, mid = msg.get("method"), msg.get("params") or {}, msg.get("id")
    if mid is None:
        return None
    if method == "server/discover":
        r = complete(fault, {"supportedVersions": [VERSION], "capabilities": {"resources": {}, "tools": {}, "prompts": {}},
                             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "faulty", "version": "1.0.0"}}})
        return {"jsonrpc": "2.0", "id": mid, "result": r}
    lists = {"tools/list": {"tools": []}, "prompts/list": {"prompts": []}, "resources/list": {"resources": RESOURCES},
             "resources/templates/list": {"resourceTemplates": TEMPLATES}}
    if method in lists:
        return {"jsonrpc": "2.0", "id": mid, "result": complete(fault, dict(lists[method]))}
    if method == "resources/read":
        result, error = read(fault, params.get("uri", ""))
        if error:
            return {"jsonrpc": "2.0", "id": mid, "error": error}
        return {"jsonrpc": "2.0", "id": mid, "result": result}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": mid, "result": complete("no-cache-hints", {})}
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"Method not found: {method}"}}


def handler(fault):
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                msg = json.loads(body)
            except ValueError:
                return self.reply(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            out = answer(fault, msg) if isinstance(msg, dict) else None
            if out is None:
                self.send_response(202)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            self.reply(200, out)

        def do_GET(self):
            self.send_response(405)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_DELETE(self):
            self.do_GET()

        def reply(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return H


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--fault", default="none")
    a = ap.parse_args()
    ThreadingHTTPServer(("127.0.0.1", a.port), handler(a.fault)).serve_forever()
