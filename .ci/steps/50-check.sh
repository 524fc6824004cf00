#!/usr/bin/env bash
# mcptape check over the real recordings in corpus/transcripts: the human
# report goes to the CI log, the JUnit XML to target/junit/check.xml (where CI
# systems pick it up), the SARIF log to target/sarif/check.sarif. Fails on any error-severity finding. Then the hand-made
# corpus/violations must fail (each fires its rule; the test suite checks
# "exactly its rule"). Takes a few seconds after `cargo test --workspace`.
# (`mcptape verify` of a recording against its live server is the replay step's.)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q -p mcptape
bin="${CARGO_TARGET_DIR:-target}/debug/mcptape"

# Expected error findings are in corpus/check-baseline.json (explained in
# corpus/README.md): only a finding not in it fails; one that no longer occurs
# is reported as fixed. `--allow` still works (checked just after).
baseline=(--baseline corpus/check-baseline.json)
echo "--- mcptape check corpus/transcripts ${baseline[*]}"
"$bin" check corpus/transcripts "${baseline[@]}"
mkdir -p target/junit target/sarif
"$bin" check corpus/transcripts "${baseline[@]}" --format junit --output target/junit/check.xml
"$bin" check corpus/transcripts "${baseline[@]}" --format sarif --output target/sarif/check.sarif
echo "--- mcptape check corpus/transcripts --allow error-id-null"
"$bin" check corpus/transcripts --allow error-id-null --format json --output target/junit/check-allow.json

echo "--- mcptape check corpus/violations (must fail)"
set +e
"$bin" check corpus/violations --format json --output target/junit/violations.json
rc=$?
set -e
if [ "$rc" -ne 1 ]; then
  echo "expected exit 1 from the violations corpus, got $rc" >&2
  exit 1
fi
echo "violations corpus: exit 1 as expected"
