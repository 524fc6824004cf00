#!/usr/bin/env bash
# `mcptape bench BENCH_TRANSCRIPT BENCH_ARGS [--slo SLO] --out REPORT_DIR/bench`:
# plays the recorded client against the target (default: the embedded replay
# server; `--target-cmd CMD` in BENCH_ARGS for a live one) and writes
# report.json, latency.hlog and latency.svg; the log to REPORT_DIR/bench.txt.
# Env: BENCH_TRANSCRIPT (required), BENCH_ARGS (whitespace-split), SLO (one
# `--slo` value, passed as is, e.g. `read.p99<50ms,errors<1%`; needs a bench
# that takes --slo), MCPTAPE_BIN, REPORT_DIR. Status: bench's exit.
source "$(dirname "$0")/common.sh"
: "${BENCH_TRANSCRIPT:?BENCH_TRANSCRIPT is required}"
split_args extra "${BENCH_ARGS:-}"
cmd=("$MCPTAPE_BIN" bench "$BENCH_TRANSCRIPT" "${extra[@]}")
if [ -n "${SLO:-}" ]; then
  cmd+=(--slo "$SLO")
fi
cmd+=(--out "$REPORT_DIR/bench")
set +e
"${cmd[@]}" 2>&1 | tee "$REPORT_DIR/bench.txt"
rc=${PIPESTATUS[0]}
set -e
record bench "$rc" "${cmd[@]}"
