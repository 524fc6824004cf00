#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...]
#
# Runs every fuzz target in turn (the list comes from `cargo +nightly fuzz list`; naming
# targets after SECONDS restricts the run to those), SECONDS each (default 30), one job, one
# worker. Per target it:
#   1. copies the committed seeds corpus/fuzz/<target>/ into the scratch corpus
#      ${FUZZ_CORPUS:-fuzz/corpus}/<target>/ (git-ignored; it grows across runs),
#   2. fuzzes with the dictionary corpus/fuzz/<target>.dict, writing new inputs to a
#      temporary directory and crash/timeout/oom inputs to fuzz/artifacts/<target>/,
#   3. merges the new inputs into the scratch corpus (`-merge=1`: only inputs adding
#      coverage are kept),
#   4. prints execs/s, coverage (cov = edges, ft = features), corpus size and crashes.
# Exit status: 0 when no target crashed, 1 otherwise (crash inputs are listed; each must
# become a regression test in the owning crate's tests/ with the input as a file).
#
# Environment: FUZZ_TOOLCHAIN (default "+nightly"), FUZZ_CORPUS (scratch corpus root),
# FUZZ_RSS_LIMIT_MB (default 2048), FUZZ_TIMEOUT_S (per input, default 10),
# FUZZ_SANITIZER (cargo fuzz -s, default address), FUZZ_LOGS (a directory to keep each
# target's fuzz and merge logs in; by default they go to a temporary directory removed on
# exit, interrupted or not: a failing target's log tail is printed first).
set -euo pipefail

secs=${1:-30}
[ $# -gt 0 ] && shift
case "$secs" in '' | *[!0-9]*) echo "usage: fuzz/run.sh [SECONDS] [TARGET...]" >&2; exit 2 ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# cargo-fuzz looks for the binaries under fuzz/target; a global target dir would hide them.
unset CARGO_TARGET_DIR
tc=${FUZZ_TOOLCHAIN:-+nightly}
san=${FUZZ_SANITIZER:-address}
scratch_root=${FUZZ_CORPUS:-$root/fuzz/corpus}
rss=${FUZZ_RSS_LIMIT_MB:-2048}
timeout_s=${FUZZ_TIMEOUT_S:-10}

mapfile -t all < <(cargo "$tc" fuzz list)
if [ $# -gt 0 ]; then
  targets=("$@")
  for t in "${targets[@]}"; do
    printf '%s\n' "${all[@]}" | grep -qx -- "$t" || { echo "unknown fuzz target: $t" >&2; exit 2; }
  done
else
  targets=("${all[@]}")
fi

echo "== building ${#targets[@]} fuzz targets (cargo fuzz build -O -s $san)"
build_start=$(date +%s)
for t in "${targets[@]}"; do
  cargo "$tc" fuzz build -O -s "$san" "$t"
done
echo "== build took $(( $(date +%s) - build_start ))s"

bin_dir=$root/fuzz/target/x86_64-unknown-linux-gnu/release
if [ -n "${FUZZ_LOGS:-}" ]; then
  logs=$FUZZ_LOGS
  mkdir -p "$logs"
else
  # The logs and each run's new inputs (merged into the scratch corpus below): megabytes
  # that nothing needs once the run is over.
  logs=$(mktemp -d "${TMPDIR:-/tmp}/mcptape-fuzz.XXXXXX")
  trap 'rm -rf "$logs"' EXIT
  # Interrupted: exit (running the EXIT trap) as the shell would have died.
  trap 'exit 130' INT
  trap 'exit 143' TERM
fi
rows=()
failed=()
for t in "${targets[@]}"; do
  scratch=$scratch_root/$t
  new=$logs/$t.new
  arts=$root/fuzz/artifacts/$t
  mkdir -p "$scratch" "$new" "$arts"
  seeds=$root/corpus/fuzz/$t
  [ -d "$seeds" ] && cp -n "$seeds"/* "$scratch"/ 2>/dev/null || true
  dict=()
  [ -f "$root/corpus/fuzz/$t.dict" ] && dict=("-dict=$root/corpus/fuzz/$t.dict")
  before=$(find "$arts" -type f | wc -l)
  echo "== $t: ${secs}s, seeds $(find "$seeds" -type f 2>/dev/null | wc -l), scratch $(find "$scratch" -type f | wc -l) inputs"
  t0=$(date +%s)
  set +e
  "$bin_dir/$t" "$new" "$scratch" "${dict[@]}" \
    -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb="$rss" -timeout="$timeout_s" \
    -artifact_prefix="$arts/" >"$logs/$t.log" 2>&1
  rc=$?
  set -e
  took=$(( $(date +%s) - t0 ))
  # Merge what this run found into the scratch corpus (keeps only coverage-adding inputs).
  "$bin_dir/$t" -merge=1 "$scratch" "$new" -rss_limit_mb="$rss" -timeout="$timeout_s" \
    >"$logs/$t.merge.log" 2>&1 || true
  last=$(grep -E '^#[0-9]+' "$logs/$t.log" | grep 'cov:' | tail -n 1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  execs=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$logs/$t.log" | tail -n 1)
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$logs/$t.log" | tail -n 1)
  size=$(find "$scratch" -type f | wc -l)
  crashes=$(( $(find "$arts" -type f | wc -l) - before ))
  status=ok
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    status="FAIL(rc=$rc)"
    failed+=("$t")
    echo "---- $t failed; log tail (FUZZ_LOGS=DIR keeps the whole log):"
    tail -n 40 "$logs/$t.log"
    find "$arts" -type f -newermt "@$t0" | sed 's/^/  crash input: /'
  fi
  printf '   %s: %ss, %s execs, %s execs/s, cov %s, ft %s, corpus %s, crashes %s, %s\n' \
    "$t" "$took" "${runs:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$size" "$crashes" "$status"
  rows+=("$(printf '| %-20s | %5s | %10s | %8s | %6s | %6s | %6s | %7s | %s |' \
    "$t" "$took" "${runs:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$size" "$crashes" "$status")")
done

echo
echo "| target               | secs  |      execs |  execs/s |    cov |     ft | corpus | crashes | status |"
echo "|----------------------|-------|------------|----------|--------|--------|--------|---------|--------|"
printf '%s\n' "${rows[@]}"
[ -n "${FUZZ_LOGS:-}" ] && echo "logs: $logs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]} (crash inputs under fuzz/artifacts/<target>/)" >&2
  exit 1
fi
