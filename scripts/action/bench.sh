#!/usr/bin/env bash
# `mcptape bench BENCH_TRANSCRIPT BENCH_ARGS [--slo SLO] [--baseline BASELINE] --out
# REPORT_DIR/bench`: plays the recorded client against the target (default: the embedded replay
# server; `--target-cmd` and the command on the next line of BENCH_ARGS for a live one) and
# writes report.json, latency.hlog, latency.svg and report.html (slo.xml with an SLO or a
# baseline); the log to REPORT_DIR/bench.txt.
# Env: BENCH_TRANSCRIPT (required), BENCH_ARGS (one argument per line), SLO (one `--slo` value,
# passed as is, e.g. `read.p99<50ms,errors<1%`), BASELINE (a previous run's bench directory,
# report.json or latency.hlog: the regression gate; a path that does not exist — the first run,
# no baseline saved yet — is skipped with a warning), MCPTAPE_BIN, REPORT_DIR.
# Outputs: verdict (pass: exit 0; regressed: the gate found a regression; fail: any other
# failure), read-p50-ms and read-p99-ms (from report.json; empty without one).
# Status: bench's exit.
source "$(dirname "$0")/common.sh"
: "${BENCH_TRANSCRIPT:?BENCH_TRANSCRIPT is required}"
line_args extra "${BENCH_ARGS:-}"
cmd=("$MCPTAPE_BIN" bench "$BENCH_TRANSCRIPT" "${extra[@]}")
if [ -n "${SLO:-}" ]; then
  cmd+=(--slo "$SLO")
fi
if [ -n "${BASELINE:-}" ]; then
  if [ -e "$BASELINE" ]; then
    cmd+=(--baseline "$BASELINE")
  else
    echo "mcptape action: no baseline at $BASELINE: the regression gate is skipped this run" >&2
    if [ -n "${GITHUB_ACTIONS:-}" ]; then
      echo "::warning title=mcptape bench::no baseline at $BASELINE: the regression gate is skipped this run"
    fi
  fi
fi
cmd+=(--out "$REPORT_DIR/bench")
set +e
"${cmd[@]}" 2>&1 | tee "$REPORT_DIR/bench.txt"
rc=${PIPESTATUS[0]}
set -e
report="$REPORT_DIR/bench/report.json"
verdict=fail
if [ "$rc" -eq 0 ]; then
  verdict=pass
elif [ -s "$report" ] && [ "$(jq -r '.regression.verdict // ""' "$report")" = regressed ]; then
  verdict=regressed
fi
output verdict "$verdict"
# resources/read's quantile (byMethod; the whole single phase when it has no such row), in ms;
# censored (timeouts) as `>BOUND`, the way the table prints `> 5000 ms`.
ms() {
  [ -s "$report" ] && jq -r --arg q "$1" '
    (((.byMethod // []) | map(select(.method == "resources/read")) | .[0].latency) // .single)
    | if .count > 0 then
        (if ((.censored // {})[$q] // false) then ">" + (.censored.boundUs / 1000 | tostring)
         else (.[$q + "Us"] / 1000 | tostring) end)
      else "" end' "$report"
}
output read-p50-ms "$(ms p50 || true)"
output read-p99-ms "$(ms p99 || true)"
record bench "$rc" "${cmd[@]}"
