#!/usr/bin/env bash
# Codec benches as tests: every criterion bench runs once (`--test`), and the
# peak_memory bench checks the 160 MB directory read's peak heap on the fused
# path (exits non-zero past input + output + 5%). Then the `bench-codec` binary (a
# binary of benches/, not linked into mcptape) runs once on a small response (2
# iterations) so its table stays working, and once onto a full stdout (exit 2, one line).
# Measured: ~4-6 min on 2 cores (mostly the bench-profile build), run ~30 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p mcptape-benches -- --test
cargo run -q -p mcptape-benches --bin bench-codec -- --size 300000 --entries 2 --iters 2
rc=0
cargo run -q -p mcptape-benches --bin bench-codec -- --size 3000 --iters 1 >/dev/full 2>/tmp/bench-codec-full.txt || rc=$?
if [ "$rc" != 2 ] || ! grep -q "No space left on device" /tmp/bench-codec-full.txt; then
    echo "bench-codec > /dev/full: exit $rc, want 2 with one line:" >&2
    cat /tmp/bench-codec-full.txt >&2
    exit 1
fi
