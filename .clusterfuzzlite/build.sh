#!/usr/bin/env bash
# ClusterFuzzLite / OSS-Fuzz build script for mcptape's fuzz targets.
#
# In the builder container (see Dockerfile) SRC=/src, OUT=/out, WORK=/work are set and the
# checkout is $SRC/mcptape. Run locally from a checkout with none of them set, it uses the
# checkout itself, OUT=<checkout>/out (git-ignored) and a temporary WORK, so `.ci/run` can
# exercise it without a container engine: `OUT=$(mktemp -d) bash .clusterfuzzlite/build.sh`.
#
# Produces in $OUT, for every target `cargo fuzz list` prints:
#   <target>                  the libFuzzer binary (cargo fuzz build -O)
#   <target>_seed_corpus.zip  the committed seeds corpus/fuzz/<target>/ (when present)
#   <target>.dict             the dictionary corpus/fuzz/<target>.dict (when present)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -n "${SRC:-}" ] && [ -d "$SRC/mcptape/fuzz" ]; then
  proj=$SRC/mcptape
else
  proj=$(cd "$script_dir/.." && pwd)
fi
OUT=${OUT:-$proj/out}
if [ -z "${WORK:-}" ]; then
  # A WORK of our own (outside the container): removed on exit.
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcptape-cfl-work.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$OUT" "$WORK"
cd "$proj"
# cargo-fuzz looks for the binaries under fuzz/target.
unset CARGO_TARGET_DIR

# The builder image's default toolchain is nightly (RUSTUP_TOOLCHAIN pins it); elsewhere
# ask rustup for nightly explicitly (cargo fuzz needs -Z flags).
tc=()
if [ -z "${RUSTUP_TOOLCHAIN:-}" ] && ! rustc --version | grep -q nightly; then
  tc=(+nightly)
fi

mapfile -t targets < <(cargo "${tc[@]}" fuzz list)
[ ${#targets[@]} -gt 0 ] || { echo "build.sh: cargo fuzz list printed no targets" >&2; exit 1; }

# One build for all targets; in the container the sanitizer and coverage flags come from
# the environment (SANITIZER, RUSTFLAGS), locally the default is -s address.
cargo "${tc[@]}" fuzz build -O

bin_dir=fuzz/target/x86_64-unknown-linux-gnu/release
for t in "${targets[@]}"; do
  cp "$bin_dir/$t" "$OUT/$t"
  if [ -d "corpus/fuzz/$t" ] && [ -n "$(ls -A "corpus/fuzz/$t")" ]; then
    rm -f "$OUT/${t}_seed_corpus.zip"
    (cd "corpus/fuzz/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  fi
  if [ -f "corpus/fuzz/$t.dict" ]; then
    cp "corpus/fuzz/$t.dict" "$OUT/$t.dict"
  fi
done
echo "build.sh: ${#targets[@]} targets in $OUT: ${targets[*]}"
