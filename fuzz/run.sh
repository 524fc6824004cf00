#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...]
# fuzz/run.sh --duration SECONDS [--out FILE] [--coverage] [TARGET...]
#
# Runs every fuzz target in turn (the list comes from `cargo +nightly fuzz list`; naming
# targets restricts the run to those), SECONDS each (default 30), one job, one worker. Per
# target it:
#   1. copies the committed seeds corpus/fuzz/<target>/ into the scratch corpus
#      ${FUZZ_CORPUS:-fuzz/corpus}/<target>/ (git-ignored; it grows across runs),
#   2. fuzzes with the dictionary corpus/fuzz/<target>.dict, writing new inputs to a
#      temporary directory and crash/timeout/oom inputs to fuzz/artifacts/<target>/,
#   3. merges the new inputs into the scratch corpus (`-merge=1`: only inputs adding
#      coverage are kept),
#   4. prints execs/s (per wall-clock second, and per second of the fuzzer's own CPU time,
#      which does not depend on what else the machine runs), coverage (cov = edges,
#      ft = features), corpus size and crashes.
# The duration mode (a campaign, e.g. `--duration 600`: ten minutes per target) also writes
# the table in markdown to FILE (default fuzz/artifacts/campaign-<UTC time>.md, git-ignored)
# with the command, commit, machine and load; with --coverage it adds per target the lines
# and regions of the crate under test (the `mcptape_*` crate the target calls) that the
# scratch corpus reaches (`cargo fuzz coverage`, then llvm-cov from the nightly sysroot:
# `rustup component add llvm-tools-preview --toolchain nightly`), and keeps each target's
# per-file llvm-cov report beside FILE (FILE without .md, plus .coverage/<target>.txt).
# Exit status: 0 when no target crashed, 1 otherwise (crash inputs are listed; each must
# become a regression test in the owning crate's tests/ with the input as a file).
#
# Environment: FUZZ_TOOLCHAIN (default "+nightly"), FUZZ_CORPUS (scratch corpus root),
# FUZZ_RSS_LIMIT_MB (default 2048), FUZZ_TIMEOUT_S (per input, default 10),
# FUZZ_SANITIZER (cargo fuzz -s, default address), FUZZ_BIN_DIR (run the target binaries
# in this directory instead of building them: binaries of an earlier commit), FUZZ_LOGS (a directory to keep each
# target's fuzz and merge logs in; by default they go to a temporary directory removed on
# exit, interrupted or not: a failing target's log tail is printed first).
set -euo pipefail

usage() {
  echo "usage: fuzz/run.sh [SECONDS] [TARGET...]" >&2
  echo "       fuzz/run.sh --duration SECONDS [--out FILE] [--coverage] [TARGET...]" >&2
  exit 2
}
secs=30
out=
coverage=0
campaign=0
command_line="fuzz/run.sh $*"
if [ "${1:-}" = --duration ]; then
  campaign=1
  secs=${2:-}
  shift 2 || usage
  while [ $# -gt 0 ]; do
    case "$1" in
      --out) out=${2:-}; [ -n "$out" ] || usage; shift 2 ;;
      --coverage) coverage=1; shift ;;
      --*) usage ;;
      *) break ;;
    esac
  done
elif [ $# -gt 0 ]; then
  secs=$1
  shift
fi
case "$secs" in '' | *[!0-9]*) usage ;; esac

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

if [ -n "${FUZZ_BIN_DIR:-}" ]; then
  # Binaries built before (e.g. copies from an earlier commit, to measure it again).
  bin_dir=$FUZZ_BIN_DIR
  echo "== using the fuzz binaries in $bin_dir (no build)"
else
  echo "== building ${#targets[@]} fuzz targets (cargo fuzz build -O -s $san)"
  build_start=$(date +%s)
  for t in "${targets[@]}"; do
    cargo "$tc" fuzz build -O -s "$san" "$t"
  done
  echo "== build took $(( $(date +%s) - build_start ))s"
  bin_dir=$root/fuzz/target/x86_64-unknown-linux-gnu/release
fi
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
if [ "$campaign" -eq 1 ]; then
  [ -n "$out" ] || out=$root/fuzz/artifacts/campaign-$(date -u +%Y%m%dT%H%M%SZ).md
  mkdir -p "$(dirname "$out")"
  cov_dir=${out%.md}.coverage
  load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
  started=$(date -u +%FT%TZ)
fi
if [ "$coverage" -eq 1 ]; then
  llvm_bin=$(rustc "$tc" --print sysroot)/lib/rustlib/$(rustc "$tc" -vV | sed -n 's/^host: //p')/bin
  [ -x "$llvm_bin/llvm-cov" ] || {
    echo "no llvm-cov in $llvm_bin: rustup component add llvm-tools-preview --toolchain nightly" >&2
    exit 2
  }
  mkdir -p "$cov_dir"
fi

# The crate a target exercises: the first `mcptape_*` crate its one-line target calls.
crate_of() {
  grep -oE 'mcptape_[a-z]+' "$root/fuzz/fuzz_targets/$1.rs" | head -n 1 | tr _ -
}

# Lines and regions of crates/<crate>/src the scratch corpus of target $1 reaches:
# "lines% (covered/total) regions%"; the per-file report goes to $cov_dir/$1.txt.
coverage_of() {
  local t=$1 crate
  crate=$(crate_of "$t")
  # Its own target dir: coverage flags differ from the fuzz build's, and in one dir each
  # build would throw the other's artifacts away.
  cargo "$tc" fuzz coverage --target-dir "$root/fuzz/target/coverage" "$t" "$scratch_root/$t" \
    >"$logs/$t.coverage.log" 2>&1 || {
    echo "coverage build/run failed (log: $logs/$t.coverage.log)"
    return
  }
  local bin
  bin=$(find "$root/fuzz/target/coverage" -path "*/release/$t" -type f | head -n 1)
  "$llvm_bin/llvm-cov" report "$bin" -instr-profile="$root/fuzz/coverage/$t/coverage.profdata" \
    "$root/crates/$crate/src" >"$cov_dir/$t.txt" 2>>"$logs/$t.coverage.log" || true
  # TOTAL regions missed cover% functions missed executed% lines missed cover% ...
  awk '$1 == "TOTAL" { printf "%s (%d/%d) | %s", $10, $8 - $9, $8, $4 }' "$cov_dir/$t.txt"
}

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
  # The fuzzer's CPU time (user + system), by bash's `time` keyword.
  TIMEFORMAT='%U %S'
  { time "$bin_dir/$t" "$new" "$scratch" "${dict[@]}" \
    -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb="$rss" -timeout="$timeout_s" \
    -artifact_prefix="$arts/" >"$logs/$t.log" 2>&1 ; } 2>"$logs/$t.cpu"
  rc=$?
  set -e
  cpu=$(awk '{ printf "%.1f", $1 + $2 }' "$logs/$t.cpu" 2>/dev/null || true)
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
  cpu_rate=$(awk -v r="${runs:-0}" -v c="${cpu:-0}" 'BEGIN { if (c > 0) printf "%d", r / c; else print "?" }')
  printf '   %s: %ss, %s execs, %s execs/s, %s execs/CPU-s, cov %s, ft %s, corpus %s, crashes %s, %s\n' \
    "$t" "$took" "${runs:-?}" "${execs:-?}" "$cpu_rate" "${cov:-?}" "${ft:-?}" "$size" "$crashes" "$status"
  covcols=
  if [ "$coverage" -eq 1 ]; then
    echo "   $t: coverage of $(crate_of "$t") over the scratch corpus"
    covcols=" $(coverage_of "$t") |"
    echo "  ${covcols}"
  fi
  rows+=("$(printf '| %-20s | %5s | %10s | %8s | %8s | %6s | %6s | %6s | %7s | %s |%s' \
    "$t" "$took" "${runs:-?}" "${execs:-?}" "$cpu_rate" "${cov:-?}" "${ft:-?}" "$size" "$crashes" "$status" \
    "$covcols")")
done

table() {
  local head='| target               | secs  |      execs |  execs/s | execs/CPU-s |    cov |     ft | corpus | crashes | status |'
  local rule='|----------------------|-------|------------|----------|----------|--------|--------|--------|---------|--------|'
  if [ "$coverage" -eq 1 ]; then
    head="$head crate lines % (covered/total) | crate regions % |"
    rule="$rule---|---|"
  fi
  echo "$head"
  echo "$rule"
  printf '%s\n' "${rows[@]}"
}
echo
table
if [ "$campaign" -eq 1 ]; then
  {
    echo "# Fuzz campaign: ${secs} s per target"
    echo
    echo "- command: \`$command_line\`"
    echo "- commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')${FUZZ_BIN_DIR:+; binaries from $FUZZ_BIN_DIR}"
    echo "- from $started to $(date -u +%FT%TZ); $(nproc) cores; load average at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
    echo "- one worker per target, sanitizer $san, \`cargo fuzz build -O\`; execs/s is per wall-clock second, execs/CPU-s per second of the fuzzer's own CPU time (the figure to compare across loads); cov = libFuzzer edges, ft = features; corpus = scratch corpus after the merge ($scratch_root)"
    [ "$coverage" -eq 1 ] && echo "- coverage: llvm-cov over crates/<crate>/src of the crate the target calls, the scratch corpus replayed by \`cargo fuzz coverage\`; per-file reports in $cov_dir/"
    echo
    table
  } >"$out"
  echo "table written to $out"
fi
[ -n "${FUZZ_LOGS:-}" ] && echo "logs: $logs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]} (crash inputs under fuzz/artifacts/<target>/)" >&2
  exit 1
fi
