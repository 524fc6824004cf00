#!/usr/bin/env bash
# `mcptape check` over CHECK_PATHS: SARIF to SARIF_FILE (for
# github/codeql-action/upload-sarif; a copy goes to REPORT_DIR/check.sarif),
# JUnit XML to REPORT_DIR/check.xml, the human report to REPORT_DIR/check.txt
# and the log. Env: CHECK_PATHS (whitespace-separated paths; required),
# CHECK_ARGS (extra flags, one argument per line, as BENCH_ARGS: `--baseline` and
# FILE on the next line, `--allow` RULE, `--spec` REV), SARIF_FILE (default mcptape.sarif), MCPTAPE_BIN, REPORT_DIR.
# Status: the exit of the SARIF run (0 pass, 1 findings, 2 could not run).
source "$(dirname "$0")/common.sh"
: "${CHECK_PATHS:?CHECK_PATHS is required}"
SARIF_FILE="${SARIF_FILE:-mcptape.sarif}"
split_args paths "$CHECK_PATHS"
line_args extra "${CHECK_ARGS:-}"
mkdir -p "$(dirname "$SARIF_FILE")"
cmd=("$MCPTAPE_BIN" check "${paths[@]}" "${extra[@]}")
set +e
"${cmd[@]}" --format sarif --output "$SARIF_FILE"
rc=$?
"${cmd[@]}" --format junit --output "$REPORT_DIR/check.xml" 2>/dev/null
"${cmd[@]}" --format human 2>&1 | tee "$REPORT_DIR/check.txt"
set -e
if [ -f "$SARIF_FILE" ]; then
  cp "$SARIF_FILE" "$REPORT_DIR/check.sarif"
fi
record check "$rc" "${cmd[@]}"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "sarif-file=$SARIF_FILE" >>"$GITHUB_OUTPUT"
fi
