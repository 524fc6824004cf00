# Shared by the action's step scripts (sourced, not run). The environment the
# composite action (action.yml) sets, each variable optional unless a step
# needs it:
#   MCPTAPE_BIN   the mcptape binary (default: `mcptape` on PATH)
#   REPORT_DIR    where reports go (default: mcptape-report); created
# Each step records its exit status in $REPORT_DIR/status/STEP (0 = pass) and
# its command line in $REPORT_DIR/status/STEP.cmd, then exits 0, so every
# chosen step runs and the report is uploaded; verdict.sh fails the job at
# the end if any step failed.
set -euo pipefail
MCPTAPE_BIN="${MCPTAPE_BIN:-mcptape}"
REPORT_DIR="${REPORT_DIR:-mcptape-report}"
mkdir -p "$REPORT_DIR/status"

# split_args VAR STRING: STRING split on whitespace (no quote processing) into array VAR.
split_args() {
  local -n _out="$1"
  _out=()
  if [ -n "${2:-}" ]; then
    read -r -a _out <<<"$2"
  fi
}

# line_args VAR STRING: STRING split into lines, one argument per line (white space around a
# line trimmed, empty lines and a CR at a line's end dropped; spaces and quotes inside a line
# kept as they are), into array VAR: `--target-cmd` then `node server.js stdio` on the next line
# is two arguments.
line_args() {
  local -n _lines="$1"
  _lines=()
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line%$'\r'}"
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    if [ -n "$line" ]; then _lines+=("$line"); fi
  done <<<"${2:-}"
}

# output KEY VALUE: a step output (`KEY=VALUE` in GITHUB_OUTPUT on a runner), also printed.
output() {
  echo "mcptape action: output $1=$2"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
}

# record STEP RC CMD...: keeps the status and the command line of a step.
record() {
  local step="$1" rc="$2"
  shift 2
  printf '%s\n' "$rc" >"$REPORT_DIR/status/$step"
  printf '%q ' "$@" >"$REPORT_DIR/status/$step.cmd"
  printf '\n' >>"$REPORT_DIR/status/$step.cmd"
  if [ "$rc" -eq 0 ]; then
    echo "mcptape action: $step passed"
  else
    echo "mcptape action: $step FAILED (exit $rc)" >&2
    if [ -n "${GITHUB_ACTIONS:-}" ]; then
      echo "::error title=mcptape $step::mcptape $step failed with exit $rc (see the report artifact)"
    fi
  fi
}
