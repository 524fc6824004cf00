#!/usr/bin/env bash
# Re-records the shipped transcripts in corpus/transcripts/ from the real servers.
#
#   bash scripts/record-corpus.sh [OUT_DIR]      (default: corpus/transcripts)
#
# Needs the peers (bash scripts/install-peers.sh) and builds mcptape (debug) unless
# MCPTAPE_BIN points at a binary. Every transcript is recorded by `mcptape record`
# (a real client drives a real server through it) or `mcptape crawl` (mcptape is the
# client). Loopback only. Content that embeds a clock (server-everything's dynamic
# resources) differs between runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-$root/corpus/transcripts}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [ ! -f .tools/env.sh ]; then
  echo "record-corpus: peers missing: run scripts/install-peers.sh" >&2
  exit 1
fi
# shellcheck disable=SC1091
source .tools/env.sh
if [ -z "${MCPTAPE_BIN:-}" ]; then
  cargo build --quiet -p mcptape
  MCPTAPE_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/mcptape"
fi
SE="$MCPTAPE_NPM_PREFIX/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PY="$MCPTAPE_PYTHON"
NODE="$MCPTAPE_NODE22"
servers="$root/corpus/servers"
say() { echo "record-corpus: $*" >&2; }

# 1. server-everything over stdio, driven by the official Python SDK client through
#    `mcptape record`: initialize, resources/list (every page), templates/list, the 7
#    listed text documents, 2 blob and 2 text template expansions, one missing URI.
say "everything-stdio.jsonl"
timeout 120 "$PY" "$servers/py_client.py" --mode legacy --reads 100 \
  --template demo://resource/dynamic/blob/1 --template demo://resource/dynamic/text/1 \
  --template demo://resource/dynamic/blob/2 --template demo://resource/dynamic/text/2 \
  -- "$MCPTAPE_BIN" record --overwrite -o "$out/everything-stdio.jsonl" -- "$NODE" "$SE" stdio >/dev/null

# 2. The Python SDK server (corpus/servers/py_server.py) over stdio, both protocol eras,
#    driven by the Python SDK client through `mcptape record`: 3 text, 3 blob (one a
#    2,099,087-byte PNG), 2 template expansions, one missing URI.
for era in 2025-11-25 2026-07-28; do
  mode=legacy; [ "$era" = 2026-07-28 ] && mode=auto
  say "py-stdio-$era.jsonl"
  timeout 120 "$PY" "$servers/py_client.py" --mode "$mode" --reads 100 \
    --template mcptape://items/42 --template mcptape://bytes/300 \
    -- "$MCPTAPE_BIN" record --overwrite -o "$out/py-stdio-$era.jsonl" -- "$PY" "$servers/py_server.py" stdio >/dev/null
done

# 2b. Sessions that call tools and get prompts (bench replays every recorded method):
#    server-everything over stdio (2 reads, `echo`, `get-sum`, its long-running operation
#    with progress notifications, 1 s in 3 steps, `simple-prompt`, `args-prompt`) and the
#    Python SDK server, 2026-07-28 (2 reads, `add` readOnlyHint, `bump` unannotated,
#    `review` prompt); over Streamable HTTP below (py-tools-http-2025-11-25.jsonl, for the
#    k6 export of every method).
say "everything-tools-stdio.jsonl"
timeout 120 "$PY" "$servers/py_client.py" --mode legacy --reads 2 \
  --tool 'echo={"message":"hello mcptape"}' --tool 'get-sum={"a":2,"b":40}' \
  --tool 'echo={"message":"again"}' \
  --progress-tool 'trigger-long-running-operation={"duration":1,"steps":3}' \
  --prompt 'simple-prompt={}' --prompt 'args-prompt={"city":"Lyon","state":"ARA"}' \
  -- "$MCPTAPE_BIN" record --overwrite -o "$out/everything-tools-stdio.jsonl" -- "$NODE" "$SE" stdio >/dev/null
say "py-tools-stdio-2026-07-28.jsonl"
timeout 120 "$PY" "$servers/py_client.py" --mode auto --reads 2 \
  --tool 'add={"a":2,"b":3}' --tool 'bump={"by":2}' --tool 'add={"a":40,"b":2}' \
  --prompt 'review={"topic":"replay"}' \
  -- "$MCPTAPE_BIN" record --overwrite -o "$out/py-tools-stdio-2026-07-28.jsonl" -- "$PY" "$servers/py_server.py" stdio >/dev/null

# 3. Streamable HTTP through `mcptape record --listen --target-url`: server-everything
#    (forced onto 127.0.0.1 by corpus/servers/loopback-preload.cjs) and the Python SDK
#    server (both eras), each driven by the Python SDK client.
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "record-corpus: nothing listens on $1" >&2; return 1; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
record_http() { # NAME UPSTREAM_URL CLIENT_ARGS...
  local name="$1" upstream="$2"; shift 2
  local port; port="$(free_port)"
  "$MCPTAPE_BIN" record --overwrite -o "$out/$name" --listen "127.0.0.1:$port" --target-url "$upstream" 2>/dev/null &
  local rec=$!
  wait_port "$port"
  timeout 120 "$PY" "$servers/py_client.py" --url "http://127.0.0.1:$port/mcp" "$@" >/dev/null
  kill -TERM "$rec"; wait "$rec"
}
se_port="$(free_port)"
PORT="$se_port" "$NODE" --require "$servers/loopback-preload.cjs" "$SE" streamableHttp >/dev/null 2>&1 &
pids+=($!)
py_port="$(free_port)"
"$PY" "$servers/py_server.py" http --port "$py_port" >/dev/null 2>&1 &
pids+=($!)
wait_port "$se_port"; wait_port "$py_port"
say "everything-http.jsonl"
record_http everything-http.jsonl "http://127.0.0.1:$se_port/mcp" --mode legacy --reads 100 \
  --template demo://resource/dynamic/blob/1 --template demo://resource/dynamic/text/1
for era in 2025-11-25 2026-07-28; do
  mode=legacy; [ "$era" = 2026-07-28 ] && mode=auto
  say "py-http-$era.jsonl"
  record_http "py-http-$era.jsonl" "http://127.0.0.1:$py_port/mcp" --mode "$mode" --reads 100 \
    --template mcptape://items/42 --template mcptape://bytes/300
done

say "py-tools-http-2025-11-25.jsonl"
record_http py-tools-http-2025-11-25.jsonl "http://127.0.0.1:$py_port/mcp" --mode legacy --reads 2 \
  --tool 'add={"a":2,"b":3}' --tool 'add={"a":40,"b":2}' --prompt 'review={"topic":"replay"}'

# 4. `mcptape crawl` (mcptape as the client) of each server.
say "crawl-everything-stdio.jsonl"
"$MCPTAPE_BIN" crawl --overwrite -o "$out/crawl-everything-stdio.jsonl" \
  --expand 'demo://resource/dynamic/blob/{resourceId}' resourceId=1,2 \
  --expand 'demo://resource/dynamic/text/{resourceId}' resourceId=1 \
  -- "$NODE" "$SE" stdio 2>/dev/null
say "crawl-everything-http-2026-07-28-fallback.jsonl"
"$MCPTAPE_BIN" crawl --overwrite -o "$out/crawl-everything-http-2026-07-28-fallback.jsonl" --protocol 2026-07-28 \
  --target-url "http://127.0.0.1:$se_port/mcp" 2>/dev/null
say "crawl-py-stdio-2026-07-28.jsonl"
"$MCPTAPE_BIN" crawl --overwrite -o "$out/crawl-py-stdio-2026-07-28.jsonl" --protocol 2026-07-28 \
  --expand 'mcptape://items/{id}' id=1,2 -- "$PY" "$servers/py_server.py" stdio 2>/dev/null

say "done: $(ls "$out" | tr '\n' ' ')"
