#!/usr/bin/env python3
"""Runs the MCP conformance suite (@modelcontextprotocol/conformance, pinned in
scripts/install-peers.sh) through `mcptape record` against a server, then
`mcptape check` on the recorded transcript, and prints both verdicts side by
side as a markdown table (the one in corpus/README.md).

Sessions: the faulty 2026-07-28 server of this directory with each --fault,
the Python SDK server (corpus/servers/py_server.py, 2026-07-28) and
server-everything (Streamable HTTP, forced onto 127.0.0.1; suite at
2025-11-25 with --force, and at 2026-07-28). Loopback only; each suite run is
bounded by --timeout and a process timeout.

Usage (repo root, after `source .tools/env.sh` and `cargo build -p mcptape`):
  python3 corpus/violations/servers/compare_conformance.py [--keep DIR] [--only NAME]
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
NODE = os.environ.get("MCPTAPE_NODE22")
PREFIX = os.environ.get("MCPTAPE_NPM_PREFIX")
PY = os.environ.get("MCPTAPE_PYTHON", sys.executable)
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
MCPTAPE = os.path.join(TARGET, "debug", "mcptape")
SCENARIOS = ["sep-2164-resource-not-found", "caching", "resources-list", "resources-read-text",
             "resources-read-binary", "resources-templates-read"]
SUITE_CHECKS = ["sep-2164-no-empty-contents", "sep-2164-error-code", "sep-2164-data-uri",
                "sep-2549-resources-read-caching-hints", "wire-schema-valid",
                "resources-read-text", "resources-read-binary"]
FAULTS = ["none", "text-and-blob", "neither", "missing-uri", "noncanonical-blob", "empty-contents",
          "legacy-code", "no-data-uri", "no-cache-hints", "no-result-type"]


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=15):
    import socket
    end = time.time() + timeout
    while time.time() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def session(name, server_cmd, spec, workdir, env=None):
    """server_cmd / env may contain the placeholder PORT."""
    out = os.path.join(workdir, name)
    os.makedirs(out, exist_ok=True)
    port = free_port()
    server_cmd = [str(port) if a == "PORT" else a for a in server_cmd]
    env = {k: (str(port) if v == "PORT" else v) for k, v in (env or {}).items()}
    srv = subprocess.Popen(server_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=dict(os.environ, **(env or {})))
    rec = None
    try:
        wait_port(port)
        transcript = os.path.join(out, "session.jsonl")
        proxy = free_port()
        rec = subprocess.Popen([MCPTAPE, "record", "-o", transcript, "--listen", f"127.0.0.1:{proxy}",
                                "--upstream", f"http://127.0.0.1:{port}/mcp", "--duration", "600s"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(proxy)
        suite = {}
        for sc in SCENARIOS:
            args = [NODE, os.path.join(PREFIX, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
                    "server", "--url", f"http://127.0.0.1:{proxy}/mcp", "--scenario", sc,
                    "--spec-version", spec, "--force", "--timeout", "20000", "-o", os.path.join(out, "suite")]
            subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=90)
        for f in glob.glob(os.path.join(out, "suite", "**", "checks.json"), recursive=True):
            for c in json.load(open(f)):
                prev = suite.get(c["id"])
                # Keep the worst status over the scenarios (wire-schema-valid runs in each).
                order = ["SUCCESS", "SKIPPED", "INFO", "WARNING", "FAILURE"]
                if prev is None or order.index(c["status"]) > order.index(prev):
                    suite[c["id"]] = c["status"]
    finally:
        if rec:
            rec.terminate()
            rec.wait(timeout=10)
        srv.terminate()
        srv.wait(timeout=10)
    chk = subprocess.run([MCPTAPE, "check", transcript, "--format", "json"], capture_output=True, text=True)
    report = json.loads(chk.stdout)
    rules = {}
    for f in report["files"][0]["findings"]:
        rules[f["rule"]] = rules.get(f["rule"], 0) + 1
    return suite, rules, report["files"][0]["revision"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="keep transcripts and suite output in this directory")
    ap.add_argument("--only", help="run only the session with this name")
    a = ap.parse_args()
    workdir = a.keep or tempfile.mkdtemp(prefix="mcptape-conformance-")
    sessions = []
    for fault in FAULTS:
        sessions.append((f"faulty:{fault}", [PY, os.path.join(ROOT, "corpus/violations/servers/faulty_http_server.py"),
                                             "--port", "PORT", "--fault", fault], "2026-07-28", None))
    sessions.append(("py_server (SDK 2.x) @2026-07-28", [PY, os.path.join(ROOT, "corpus/servers/py_server.py"), "http", "--port", "PORT"],
                     "2026-07-28", None))
    ev = [NODE, "--require", os.path.join(ROOT, "corpus/servers/loopback-preload.cjs"),
          os.path.join(PREFIX, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"]
    sessions.append(("server-everything @2025-11-25", ev, "2025-11-25", {"PORT": "PORT"}))
    sessions.append(("server-everything @2026-07-28", ev, "2026-07-28", {"PORT": "PORT"}))
    print("| session | suite: " + " / ".join(SUITE_CHECKS) + " | mcptape check (auto revision): rules fired |")
    print("|---|---|---|")
    for name, cmd, spec, env in sessions:
        if a.only and a.only != name:
            continue
        try:
            suite, rules, rev = session(name.replace(":", "-").replace(" ", "_").replace("@", ""), cmd, spec, workdir, env)
        except Exception as e:  # report the session and go on with the others
            print(f"| {name} | session failed: {e} | |", flush=True)
            continue
        s = " / ".join(suite.get(c, "-") for c in SUITE_CHECKS)
        r = ", ".join(f"{k}×{v}" for k, v in sorted(rules.items())) or "none"
        print(f"| {name} | {s} | {rev}: {r} |", flush=True)
    print(f"\n(transcripts and suite output in {workdir})", file=sys.stderr)


if __name__ == "__main__":
    main()
