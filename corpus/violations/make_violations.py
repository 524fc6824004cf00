#!/usr/bin/env python3
"""Writes corpus/violations/<rule>.jsonl (one small hand-made transcript per
mcptape check rule, each firing exactly its rule) and
crates/mcptape-check/tests/data/pass/<case>.jsonl (near misses that fire no
rule). Run from the repository root; the output is committed and this script
is the single source of every .jsonl file in both directories: running it
reproduces them byte for byte.  Usage: python3 corpus/violations/make_violations.py

A stdio file ends with an exit record, as `mcptape record` writes one last
(`recording-no-exit` fires on a stdio transcript without one), unless the file
is about the ending: a cut tail (transcript-truncated), no exit record
(recording-no-exit), or an exit record that is itself the unterminated last
line (last-record-without-newline). HTTP recordings have no exit record.
"""
import base64, json, os

V = "corpus/violations"
P = "crates/mcptape-check/tests/data/pass"
t = [0]

def header(rev=None, transport="stdio"):
    h = {"mcptapeTranscript": 1, "mcptapeVersion": "0.1.0", "transport": transport,
         "server": {"command": ["hand-made"]} if transport == "stdio" else {"url": "http://127.0.0.1:1/mcp"},
         "startedAt": "2026-11-30T00:00:00Z"}
    if rev:
        h["protocolVersion"] = rev
    return json.dumps(h, separators=(",", ":"))

def rec(kind, **kw):
    t[0] += 1000
    r = {"tUs": t[0], "kind": kind}
    r.update(kw)
    return json.dumps(r, separators=(",", ":"), ensure_ascii=False)

def msg(d, m, http=None):
    kw = {"dir": d, "msg": m}
    if http is not None:
        kw["http"] = http
    return rec("message", **kw)

def req(i, method, params=None, d="c2s", http=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return msg(d, m, http)

def note(method, params=None, d="c2s"):
    m = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return msg(d, m)

def res(i, result, d="s2c", http=None):
    return msg(d, {"jsonrpc": "2.0", "id": i, "result": result}, http)

def err(i, code, message, data=None, d="s2c", http=None):
    e = {"code": code, "message": message}
    if data is not None:
        e["data"] = data
    return msg(d, {"jsonrpc": "2.0", "id": i, "error": e}, http)

NEW = {"resultType": "complete", "ttlMs": 60000, "cacheScope": "public"}
def read(i, uri):
    return req(i, "resources/read", {"uri": uri})
def text_entry(uri, text="hello", mime="text/plain"):
    return {"uri": uri, "mimeType": mime, "text": text}
def blob_entry(uri, data, mime):
    return {"uri": uri, "mimeType": mime, "blob": base64.b64encode(data).decode()}

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
U = "file:///srv/docs/a.md"

def at(us, build):
    """The records `build()` makes, timed from `us` on; the global clock of
    the other files does not move (files added after the first generation
    keep their times)."""
    saved = t[0]
    t[0] = us - 1000
    lines = build()
    t[0] = saved
    return lines

def exit_after(last, **kw):
    """The recorder's exit record, 500 us after the record `last` (the
    global clock does not move, so no other file's times shift)."""
    r = {"tUs": json.loads(last)["tUs"] + 500, "kind": "exit"}
    r.update(kw or {"code": 0})
    return json.dumps(r, separators=(",", ":"))

def is_stdio(lines):
    return json.loads(lines[0]).get("transport") == "stdio"

# Stdio files without the exit record the recorder writes last (see the docstring).
NO_EXIT = {"recording-no-exit"}

def write(dirname, name, lines, tail=None):
    os.makedirs(dirname, exist_ok=True)
    if (tail is None and name not in NO_EXIT and is_stdio(lines)
            and '"kind":"exit"' not in lines[-1]):
        lines = lines + [exit_after(lines[-1])]
    with open(os.path.join(dirname, name + ".jsonl"), "w", newline="") as f:
        for l in lines:
            f.write(l + "\n")
        if tail is not None:
            f.write(tail)

def ok_read(i=1, uri=U, new=False):
    r = {"contents": [text_entry(uri)]}
    if new:
        r.update(NEW)
    return [read(i, uri), res(i, r)]

old = "2025-11-25"
new = "2026-07-28"
v = {}
v["transcript-unreadable"] = (['{"mcptapeTranscript":1,"transport":"carrier-pigeon"}'], None)
v["transcript-truncated"] = ([header(old)] + ok_read(), '{"tUs":99000,"kind":"stderr","line":"shutting d')
v["stdio-non-jsonrpc-line"] = ([header(old), rec("noise", dir="s2c", line="Server listening on stdio, press Ctrl-C to stop")] + ok_read(), None)
v["stdio-embedded-newline"] = ([header(old), read(1, U),
    rec("message", dir="s2c", msgText='{"jsonrpc":"2.0","id":1,\n"result":{"contents":[{"uri":"%s","mimeType":"text/plain","text":"hello"}]}}' % U)], None)
v["message-not-jsonrpc"] = ([header(old), msg("c2s", {"jsonrpc": "2.0", "id": None, "method": "ping"})] + ok_read(2), None)
v["read-result-malformed"] = ([header(old), read(1, U), res(1, {"contents": text_entry(U)})], None)
v["contents-neither-text-nor-blob"] = ([header(old), read(1, U), res(1, {"contents": [{"uri": U, "mimeType": "text/markdown"}]})], None)
v["contents-text-and-blob"] = ([header(old), read(1, U), res(1, {"contents": [{"uri": U, "mimeType": "text/markdown", "text": "# hi\n", "blob": "IyBoaQo="}]})], None)
v["contents-missing-uri"] = ([header(old), read(1, U), res(1, {"contents": [{"mimeType": "text/markdown", "text": "# hi\n"}]})], None)
v["blob-not-canonical-base64"] = ([header(old), read(1, "file:///srv/a.bin"), res(1, {"contents": [{"uri": "file:///srv/a.bin", "mimeType": "application/octet-stream", "blob": "Zh=="}]})], None)
v["read-empty-contents"] = ([header(old),
    req(1, "resources/list"), res(1, {"resources": [{"uri": U, "name": "a"}]}),
    read(2, "file:///srv/docs/missing.md"), res(2, {"contents": []})], None)
v["not-found-code"] = ([header(new), read(1, "file:///srv/docs/missing.md"),
    err(1, -32002, "Resource not found", {"uri": "file:///srv/docs/missing.md"})], None)
v["not-found-data-uri"] = ([header(new), read(1, "file:///srv/docs/missing.md"),
    err(1, -32602, "Resource not found", {"uri": "file:///srv/docs/other.md"})], None)
v["result-missing-resultType"] = ([header(new), read(1, U),
    res(1, {"contents": [text_entry(U)], "ttlMs": 1000, "cacheScope": "public"})], None)
v["result-missing-cache-hints"] = ([header(new), read(1, U),
    res(1, {"contents": [text_entry(U)], "resultType": "complete"})], None)
v["cache-hints-invalid"] = ([header(new), read(1, U),
    res(1, {"contents": [text_entry(U)], "resultType": "complete", "ttlMs": -5, "cacheScope": "public"})], None)
v["mimetype-sniff-mismatch"] = ([header(old), read(1, "file:///srv/pixel.jpg"),
    res(1, {"contents": [blob_entry("file:///srv/pixel.jpg", PNG, "image/jpeg")]})], None)
v["textlike-mimetype-as-blob"] = ([header(old), read(1, U),
    res(1, {"contents": [blob_entry(U, b"# Q3 summary\nRevenue up 4%.\n", "text/markdown")]})], None)
v["data-uri-in-text"] = ([header(old), read(1, "file:///srv/pixel.png"),
    res(1, {"contents": [text_entry("file:///srv/pixel.png", "data:image/png;base64," + base64.b64encode(PNG).decode(), "text/plain")]})], None)
v["blob-over-size-threshold"] = ([header(old), read(1, "file:///srv/big.bin"),
    res(1, {"contents": [blob_entry("file:///srv/big.bin", bytes(1024 * 1024 + 1), "application/octet-stream")]})], None)
v["request-unanswered"] = ([header(old), read(1, U)], None)
v["request-answered-twice"] = ([header(old)] + ok_read() + [res(1, {"contents": [text_entry(U)]})], None)
v["response-unknown-id"] = ([header(old)] + ok_read() + [res(99, {"contents": [text_entry(U)]})], None)
v["response-after-cancel"] = ([header(old), read(1, U),
    note("notifications/cancelled", {"requestId": 1, "reason": "deadline 800 ms"}),
    res(1, {"contents": [text_entry(U)]})], None)
v["ids-differ-only-in-type"] = ([header(old)] + ok_read(1) + ok_read("1"), None)
v["protocol-version-not-offered"] = ([header(),
    req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hand", "version": "1"}}),
    res(1, {"protocolVersion": "2025-06-18", "capabilities": {"resources": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    note("notifications/initialized"),
    req(2, "resources/list"), res(2, {"resources": []})], None)
META = lambda v: {"_meta": {"io.modelcontextprotocol/protocolVersion": v,
                            "io.modelcontextprotocol/clientInfo": {"name": "hand", "version": "1"},
                            "io.modelcontextprotocol/clientCapabilities": {}}}
v["http-protocol-version-mismatch"] = ([header(new, "http"),
    req(1, "resources/list", META(new), http={"exchange": 0, "method": "POST", "headers": [["content-type", "application/json"], ["mcp-protocol-version", "2025-11-25"], ["mcp-method", "resources/list"]]}),
    err(1, -32020, "MCP-Protocol-Version header does not match _meta.protocolVersion", http={"exchange": 0, "status": 400, "headers": [["content-type", "application/json"]]})], None)

v["error-id-null"] = ([header(old, "http"),
    req(1, "resources/list", http={"exchange": 0, "method": "POST", "headers": [["content-type", "application/json"]]}),
    err(None, -32000, "Bad Request: Server not initialized", http={"exchange": 0, "status": 400, "headers": [["content-type", "application/json"]]})], None)

# Files added after the first generation: timed from 91000 us on (at()).
v["not-found-guessed-from-message"] = ([header(new)] + at(91000, lambda: [read(1, "file:///srv/docs/missing.md"),
    err(1, -32603, "Resource file:///srv/docs/missing.md not found")]), None)
v["error-id-missing"] = ([header(old, "http")] + at(93000, lambda: [
    req(1, "resources/list", http={"exchange": 0, "method": "POST", "headers": [["content-type", "application/json"]]}),
    msg("s2c", {"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}},
        http={"exchange": 0, "method": "POST", "status": 400, "headers": [["content-type", "application/json"]]})]), None)
v["sse-event-not-jsonrpc"] = ([header(old, "http")] + at(95000, lambda: [
    req(1, "ping", http={"exchange": 0, "method": "POST", "headers": [["content-type", "application/json"]]}),
    msg("s2c", {"type": "heartbeat", "ts": 1764460800000},
        http={"exchange": 0, "method": "POST", "status": 200, "headers": [["content-type", "text/event-stream"]]}),
    res(1, {}, http={"exchange": 0, "method": "POST"})]), None)
# A clean read, then nothing: the recorder was SIGKILLed on a line boundary (in NO_EXIT).
v["recording-no-exit"] = ([header(old)] + at(98000, ok_read), None)
# 2025-11-25: the client batches two reads (removed in 2025-06-18); each is answered on its own line.
U2 = "file:///srv/docs/b.md"
v["jsonrpc-batch-removed"] = ([header(old)] + at(102000, lambda: [
    msg("c2s", [{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": U}},
                {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": U2}}]),
    res(1, {"contents": [text_entry(U)]}), res(2, {"contents": [text_entry(U2)]})]), None)
# 2025-11-25: a read answered with a response stamped 500 us before the read.
def answered_before():
    lines = ok_read()
    r = json.loads(lines[1]); r["tUs"] = json.loads(lines[0])["tUs"] - 500
    return [lines[0], json.dumps(r, separators=(",", ":"))]
v["record-time-backwards"] = ([header(old)] + at(106000, answered_before), None)
# MAX_RECORDED_T_US (mcptape-transcript) is 30 days in us; a stderr line one past it, then a clean read.
MAX_RECORDED_T_US = 30 * 86400 * 1000000
v["record-time-beyond-limit"] = ([header(old),
    json.dumps({"tUs": MAX_RECORDED_T_US + 1, "kind": "stderr", "line": "clock jumped"}, separators=(",", ":"))]
    + at(108000, ok_read), None)

# stdio: a read answered, then a second read sent with the same id (MCP: an id is never used
# twice in a session).
v["request-id-reused"] = ([header(old)] + at(106000, lambda: ok_read(1) + ok_read(1)), None)

for name, (lines, tail) in v.items():
    write(V, name, lines, tail)

# Near misses: each fires no rule.
p = {}
p["legacy-32002-under-2025-11-25"] = [header(old), read(1, "file:///srv/docs/missing.md"),
    err(1, -32002, "Resource not found", {"uri": "file:///srv/docs/missing.md"})]
p["not-found-32602-with-data-uri-2026"] = [header(new), read(1, "file:///srv/docs/missing.md"),
    err(1, -32602, "Resource not found", {"uri": "file:///srv/docs/missing.md"})]
p["malformed-uri-32602-without-data-2026"] = [header(new), read(1, "::not a uri"),
    err(1, -32602, "Invalid params: uri is not an absolute URI")]
p["internal-error-not-a-not-found"] = [header(new), read(1, U), err(1, -32603, "storage backend unavailable")]
p["cancelled-request-never-answered"] = [header(old), read(1, U),
    note("notifications/cancelled", {"requestId": 1, "reason": "deadline 800 ms"})]
p["null-id-parse-error-response"] = [header(old), err(None, -32700, "Parse error")] + ok_read()
p["blank-resource-one-empty-text"] = [header(old), read(1, U), res(1, {"contents": [text_entry(U, "")]})]
p["mixed-text-and-blob-entries"] = [header(old), read(1, "file:///srv/reports/q3"),
    res(1, {"contents": [text_entry("file:///srv/reports/q3.md", "# Q3 summary\nRevenue up 4%.\n", "text/markdown"),
                         blob_entry("file:///srv/reports/q3-chart.png", PNG, "image/png")]})]
p["octet-stream-with-png-bytes"] = [header(old), read(1, "file:///srv/a.bin"),
    res(1, {"contents": [blob_entry("file:///srv/a.bin", PNG, "application/octet-stream")]})]
p["legacy-encoded-text-as-blob"] = [header(old), read(1, "file:///srv/latin1.txt"),
    res(1, {"contents": [blob_entry("file:///srv/latin1.txt", "caf\u00e9 cr\u00e8me".encode("latin-1"), "text/plain; charset=iso-8859-1")]})]
p["data-word-in-text-not-a-uri"] = [header(old), read(1, U),
    res(1, {"contents": [text_entry(U, "data: the numbers below, comma separated")]})]
p["old-revision-result-without-resultType"] = [header(old)] + ok_read()
p["new-revision-complete-result"] = [header(new)] + ok_read(new=True)
p["input-required-result-without-cache-hints"] = [header(new), read(1, U),
    res(1, {"resultType": "input_required", "inputRequests": {}})]
p["server-request-answered-by-client"] = [header(old), req(0, "roots/list", d="s2c"), res(0, {"roots": []}, d="c2s")] + ok_read()
# Over HTTP a transcript holds many sessions: a second client's session reusing an id the first
# session's request had, after its answer, fires no request-id-reused (nor request-answered-twice).
H = lambda x, **kw: dict({"exchange": x}, **kw)
SID = lambda n: [["mcp-session-id", "[redacted:%d]" % n]]
p["same-id-in-another-http-session-after-answer"] = [header(old, "http"),
    req(1, "resources/read", {"uri": U}, http=H(0, method="POST", headers=SID(1))),
    res(1, {"contents": [text_entry(U)]}, http=H(0, status=200, headers=SID(1))),
    req(1, "resources/read", {"uri": U}, http=H(1, method="POST", headers=SID(2))),
    res(1, {"contents": [text_entry(U)]}, http=H(1, status=200, headers=SID(2)))]
p["ids-of-both-directions-share-a-value"] = [header(old), req(1, "roots/list", d="s2c"), res(1, {"roots": []}, d="c2s")] + ok_read(1)
p["initialize-same-version"] = [header(),
    req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hand", "version": "1"}}),
    res(1, {"protocolVersion": "2025-11-25", "capabilities": {"resources": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    note("notifications/initialized")] + ok_read(2)
p["initialize-other-version-client-disconnects"] = [header(),
    req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hand", "version": "1"}}),
    res(1, {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
    rec("exit", code=0)]
p["discover-then-supported-version"] = [header(None, "http"),
    req(1, "server/discover", META(new), http={"exchange": 0, "method": "POST", "headers": [["MCP-Protocol-Version", new]]}),
    res(1, dict(NEW, supportedVersions=[new, "2025-11-25"], capabilities={"resources": {}}), http={"exchange": 0, "status": 200}),
    req(2, "resources/read", dict(META(new), uri=U), http={"exchange": 1, "method": "POST", "headers": [["mcp-protocol-version", " 2026-07-28 "]]}),
    res(2, dict(NEW, contents=[text_entry(U)]), http={"exchange": 1, "status": 200})]
p["null-id-error-in-exchange-without-request"] = [header(old, "http"),
    note("notifications/initialized"),
    err(None, -32700, "Parse error")] + ok_read()
p["same-id-in-concurrent-http-exchanges"] = [header(old, "http"),
    req(1, "resources/read", {"uri": U}, http=H(0, method="POST")),
    req(1, "resources/read", {"uri": "file:///srv/docs/b.md"}, http=H(1, method="POST")),
    res(1, {"contents": [text_entry("file:///srv/docs/b.md")]}, http=H(1, status=200)),
    res(1, {"contents": [text_entry(U)]}, http=H(0, status=200))]
p["http-stream-closed-by-client-cancels"] = [header(new, "http"),
    req(1, "resources/read", dict(META(new), uri=U), http=H(0, method="POST", headers=[["mcp-protocol-version", new]])),
    rec("http", dir="s2c", http=H(0, method="POST", status=200, headers=[["content-type", "text/event-stream"]]), note="clientClosedStream")]
# An empty SSE priming event (an `http` record), then JSON-RPC events: no sse-event-not-jsonrpc.
p["sse-jsonrpc-events-after-priming"] = [header(old, "http")] + at(95000, lambda: [
    req(1, "ping", http=H(0, method="POST", headers=[["content-type", "application/json"]])),
    rec("http", dir="s2c", http=H(0, method="POST", status=200, headers=[["content-type", "text/event-stream"]], sseEventId="e0"), note="emptyEvent"),
    res(1, {"type": "heartbeat"}, http=H(0, method="POST", sseEventId="e1"))])
# The server was killed, but the recorder saw it and wrote the exit record: no recording-no-exit.
p["server-killed-by-signal-exit-record"] = [header(old)] + at(100000, ok_read)
p["server-killed-by-signal-exit-record"].append(exit_after(p["server-killed-by-signal-exit-record"][-1], signal=9))
# 2025-03-26 allowed batches: a batch of two reads answered by a batch fires no jsonrpc-batch-removed.
p["batch-under-2025-03-26"] = [header("2025-03-26")] + at(104000, lambda: [
    msg("c2s", [{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": U}},
                {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": U2}}]),
    msg("s2c", [{"jsonrpc": "2.0", "id": 2, "result": {"contents": [text_entry(U2)]}},
                {"jsonrpc": "2.0", "id": 1, "result": {"contents": [text_entry(U)]}}])])
# A response stamped at its request's very time (no time between them: not before it).
p["response-at-its-requests-time"] = [header(old)] + at(110000, lambda: [read(1, U),
    json.dumps(dict(json.loads(res(1, {"contents": [text_entry(U)]})), tUs=110000), separators=(",", ":"))])
# Records stamped at MAX_RECORDED_T_US exactly (the limit is allowed), the exit record too.
p["record-time-at-the-limit"] = [header(old)] + at(MAX_RECORDED_T_US - 1000, ok_read)
p["record-time-at-the-limit"].append(json.dumps({"tUs": MAX_RECORDED_T_US, "kind": "exit", "code": 0}, separators=(",", ":")))
for name, lines in p.items():
    write(P, name, lines)
# The writer crashed just before the final "\n" of its last record, the exit
# record: the record is whole and kept (no transcript-truncated, no recording-no-exit).
lines = [header(old), read(1, U), res(1, {"contents": [text_entry(U)]})]
write(P, "last-record-without-newline", lines, exit_after(lines[-1]))
