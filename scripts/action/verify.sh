#!/usr/bin/env bash
# `mcptape verify VERIFY_TRANSCRIPT --target-cmd VERIFY_TARGET_CMD`: replays the
# recording against a live stdio server and diffs the responses. The JSON
# report goes to REPORT_DIR/verify.json, the text one to REPORT_DIR/verify.txt.
# Env: VERIFY_TRANSCRIPT, VERIFY_TARGET_CMD (run with `sh -c`; both required),
# VERIFY_ARGS (extra flags, one argument per line, as BENCH_ARGS: `--ignore` and POINTER
# on the next line, `--max-time` 10s),
# MCPTAPE_BIN, REPORT_DIR. Status: verify's exit (0 = no difference).
source "$(dirname "$0")/common.sh"
: "${VERIFY_TRANSCRIPT:?VERIFY_TRANSCRIPT is required}"
: "${VERIFY_TARGET_CMD:?VERIFY_TARGET_CMD is required}"
line_args extra "${VERIFY_ARGS:-}"
cmd=("$MCPTAPE_BIN" verify "$VERIFY_TRANSCRIPT" --target-cmd "$VERIFY_TARGET_CMD" "${extra[@]}")
set +e
"${cmd[@]}" --json >"$REPORT_DIR/verify.json"
rc=$?
"${cmd[@]}" 2>&1 | tee "$REPORT_DIR/verify.txt"
set -e
record verify "$rc" "${cmd[@]}"
