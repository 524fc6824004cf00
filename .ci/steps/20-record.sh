#!/usr/bin/env bash
# Re-records the corpus from the real servers into a temp dir (scripts/record-corpus.sh)
# and checks the fresh transcripts parse and hold the expected reads
# (crates/mcptape/tests/record_corpus.rs with MCPTAPE_FRESH_CORPUS). ~1 min on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bash scripts/record-corpus.sh "$tmp"
MCPTAPE_FRESH_CORPUS="$tmp" cargo test --quiet -p mcptape --test integration -- record_corpus::
echo "20-record: fresh corpus recorded and checked in $(( $(date +%s) - start ))s"
