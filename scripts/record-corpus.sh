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
  -- "$MCPTAPE_BIN" record -o "$out/everything-stdio.jsonl" -- "$NODE" "$SE" stdio >/dev/null

# 2. The Python SDK server (corpus/servers/py_server.py) over stdio, both protocol eras,
#    driven by the Python SDK client through `mcptape record`: 3 text, 3 blob (one a
#    2,099,087-byte PNG), 2 template expansions, one missing URI.
for era in 2025-11-25 2026-07-28; do
  mode=legacy; [ "$era" = 2026-07-28 ] && mode=auto
  say "py-stdio-$era.jsonl"
  timeout 120 "$PY" "$servers/py_client.py" --mode "$mode" --reads 100 \
    --template mcptape://items/42 --template mcptape://bytes/300 \
    -- "$MCPTAPE_BIN" record -o "$out/py-stdio-$era.jsonl" -- "$PY" "$servers/py_server.py" stdio >/dev/null
done

say "done: $(ls "$out" | tr '\n' ' ')"
