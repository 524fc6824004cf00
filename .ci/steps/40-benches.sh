#!/usr/bin/env bash
# Codec benches as tests: every criterion bench runs once (`--test`), and the
# peak_memory bench checks the 160 MB directory read's peak heap on the fused
# path (exits non-zero past input + output + 5%). Then `mcptape bench-codec`
# runs once on a small response (2 iterations) so the CLI table stays working.
# Measured: ~4-6 min on 2 cores (mostly the bench-profile build), run ~30 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p mcptape-benches -- --test
cargo run -q -p mcptape -- bench-codec --size 300000 --entries 2 --iters 2
