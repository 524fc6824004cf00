#!/usr/bin/env bash
# CI step: fuzz targets. Installs cargo-fuzz if missing, exercises the ClusterFuzzLite
# build script locally into a temporary OUT (checks every target binary, seed zip and dict
# landed), then runs every target for FUZZ_CI_SECONDS (default 10 s, so the step stays a few
# minutes; long campaigns are `fuzz/run.sh --duration SECONDS --coverage`) with fuzz/run.sh.
# Exits non-zero on a build failure, a missing binary or any crash.
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$(date +%s)
say() { echo "--- [60-fuzz +$(( $(date +%s) - t0 ))s] $*"; }

if ! rustup toolchain list | grep -q '^nightly'; then
  say "installing the nightly toolchain (cargo fuzz needs -Z flags)"
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  say "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
say "$(cargo +nightly fuzz --version)"

out=$(mktemp -d "${TMPDIR:-/tmp}/mcptape-cfl-out.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/mcptape-cfl-work.XXXXXX")
trap 'rm -rf "$out" "$work"' EXIT
say "ClusterFuzzLite build.sh into $out"
env -u SRC OUT="$out" WORK="$work" bash .clusterfuzzlite/build.sh

mapfile -t targets < <(cargo +nightly fuzz list)
missing=0
for t in "${targets[@]}"; do
  if [ ! -x "$out/$t" ]; then echo "missing fuzz binary in OUT: $t" >&2; missing=1; fi
  if [ -d "corpus/fuzz/$t" ] && [ ! -s "$out/${t}_seed_corpus.zip" ]; then
    echo "missing seed zip in OUT: ${t}_seed_corpus.zip" >&2; missing=1
  fi
  if [ -f "corpus/fuzz/$t.dict" ] && [ ! -f "$out/$t.dict" ]; then
    echo "missing dict in OUT: $t.dict" >&2; missing=1
  fi
done
[ "$missing" -eq 0 ] || exit 1
say "all ${#targets[@]} targets landed in OUT"

say "running every target for ${FUZZ_CI_SECONDS:-10}s"
bash fuzz/run.sh "${FUZZ_CI_SECONDS:-10}"
say "done"
