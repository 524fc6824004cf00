#!/usr/bin/env bash
# The GitHub Action's step scripts (scripts/action/*.sh, called by action.yml)
# run locally with the environment the action sets, against the debug binary,
# on this repository's corpus: check (SARIF + JUnit + text, with the corpus
# baseline), verify against the live server-everything, bench on the embedded
# replay server, then the verdict. The structure of action.yml and of
# .github/workflows/mcptape.yml is checked by crates/mcptape/tests/action_scripts.rs
# (part of `cargo test --workspace`); this step is the same run as a user's.
# First actionlint (installed by scripts/install-peers.sh) on every workflow: it also reads
# action.yml, the metadata of the `uses: ./` step, and checks the inputs passed to it
# (actionlint lints workflows; an action's metadata file alone is not a workflow).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .tools/env.sh
actionlint="${MCPTAPE_ACTIONLINT:-.tools/venv/bin/actionlint}"
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
if [ "${#workflows[@]}" -gt 0 ]; then
  "$actionlint" "${workflows[@]}"
  echo "actionlint: ${workflows[*]} (and action.yml through \`uses: ./\`): clean"
fi
cargo build -q -p mcptape
export MCPTAPE_BIN="$PWD/${CARGO_TARGET_DIR:-target}/debug/mcptape"
export REPORT_DIR=target/action-report
export SARIF_FILE=target/action-report/mcptape.sarif
rm -rf "$REPORT_DIR"

# check-args, verify-args and bench-args: one argument per line.
CHECK_PATHS=corpus/transcripts CHECK_ARGS=$'--baseline\ncorpus/check-baseline.json' \
  bash scripts/action/check.sh
VERIFY_TRANSCRIPT=corpus/transcripts/everything-stdio.jsonl \
  VERIFY_TARGET_CMD="$MCPTAPE_NODE22 $MCPTAPE_NPM_PREFIX/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio" \
  VERIFY_ARGS=$'--ignore\n/result/contents/*/text\n--ignore\n/result/contents/*/blob' \
  bash scripts/action/verify.sh
BENCH_TRANSCRIPT=corpus/transcripts/everything-stdio.jsonl BENCH_ARGS=$'--reads\n100\n--turns\n50' \
  bash scripts/action/bench.sh
bash scripts/action/verdict.sh

for f in "$SARIF_FILE" "$REPORT_DIR/check.xml" "$REPORT_DIR/verify.json" "$REPORT_DIR/bench/report.json"; do
  [ -s "$f" ] || { echo "missing or empty: $f" >&2; exit 1; }
done
echo "action scripts: SARIF and report dir written ($(find "$REPORT_DIR" -type f | wc -l) files)"
