#!/usr/bin/env bash
# How many single reads the `bench --baseline` gate needs to see a 10 % p99 shift on this
# machine (issue 25): for each read count N, REPS pairs of runs on the embedded replay server
# (a closed loop of 8), the baseline with `lognormal:p50=12ms,p99=40ms`, the other with every
# latency 10 % longer (`lognormal:p50=13.2ms,p99=44ms`, so p99 40 -> 44 ms), compared with
# `--baseline-any` (the models differ by design) at the defaults (noise 5 %, confidence 0.95);
# and as many pairs of the same model (different seeds) for the false alarms. Prints, per N, how
# often the gate said `read p99 regressed`.
# Usage: benches/regression_gate_power.sh [MCPTAPE_BIN] [REPS] [N...]
# (default: target/release/mcptape, 5, 250 500 1000 2000 4000 8000)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/mcptape}"
reps="${2:-5}"
shift 2 || true
counts=("$@")
[ "${#counts[@]}" -gt 0 ] || counts=(250 500 1000 2000 4000 8000)
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
base_model="lognormal:p50=12ms,p99=40ms"
slow_model="lognormal:p50=13.2ms,p99=44ms"
run() { # OUT MODEL SEED N [ARGS...]
  local out="$1" model="$2" seed="$3" n="$4"
  shift 4
  "$bin" bench corpus/transcripts/everything-stdio.jsonl --methods reads --turns 0 \
    --concurrency 8 --max-phase 300s --reads "$n" --latency "$model" --seed "$seed" \
    --out "$out" "$@" >/dev/null 2>"$out.err" || true
}
p99_verdict() { jq -r '.regression.series[] | select(.name == "read") | .quantiles[] | select(.q == 0.99) | .verdict' "$1/report.json"; }
printf '%7s  %-22s  %-22s  %s\n' reads "10% slower: p99 caught" "same model: p99 alarm" "p99 change (interval) of the last shifted pair"
for n in "${counts[@]}"; do
  hit=0 alarm=0 last=""
  for r in $(seq 1 "$reps"); do
    d="$t/$n-$r"
    run "$d-base" "$base_model" "$r" "$n"
    run "$d-slow" "$slow_model" "$((r + 100))" "$n" --baseline "$d-base" --baseline-any
    run "$d-same" "$base_model" "$((r + 200))" "$n" --baseline "$d-base"
    [ "$(p99_verdict "$d-slow")" = regressed ] && hit=$((hit + 1))
    [ "$(p99_verdict "$d-same")" = regressed ] && alarm=$((alarm + 1))
    last="$(jq -r '.regression.series[] | select(.name == "read") | .quantiles[] | select(.q == 0.99) | "\(.change * 1000 | round / 10) % [\(.interval.low * 1000 | round / 10), \(.interval.high * 1000 | round / 10)]"' "$d-slow/report.json")"
  done
  printf '%7s  %-22s  %-22s  %s\n' "$n" "$hit of $reps" "$alarm of $reps" "$last"
done
