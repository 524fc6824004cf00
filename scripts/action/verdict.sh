#!/usr/bin/env bash
# The job's verdict: one line per step that ran (from REPORT_DIR/status/),
# also appended to GITHUB_STEP_SUMMARY on a runner; exits 1 if any step
# failed, 2 if no step ran (no input chose one). Env: REPORT_DIR.
source "$(dirname "$0")/common.sh"
ran=0
failed=0
summary="| step | status | command |"$'\n'"|---|---|---|"
for step in check verify bench; do
  f="$REPORT_DIR/status/$step"
  [ -f "$f" ] || continue
  ran=$((ran + 1))
  rc="$(cat "$f")"
  if [ "$rc" -eq 0 ]; then verdict=pass; else verdict="FAIL (exit $rc)"; failed=$((failed + 1)); fi
  echo "mcptape $step: $verdict"
  summary+=$'\n'"| $step | $verdict | \`$(tr -d '\n' <"$f.cmd")\` |"
done
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  printf '## mcptape\n\n%s\n' "$summary" >>"$GITHUB_STEP_SUMMARY"
fi
if [ "$ran" -eq 0 ]; then
  echo "mcptape action: no step ran (set check-paths, verify-transcript or bench-transcript)" >&2
  exit 2
fi
echo "mcptape action: $ran step(s), $failed failed"
[ "$failed" -eq 0 ]
