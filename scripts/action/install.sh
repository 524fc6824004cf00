#!/usr/bin/env bash
# Installs mcptape from the action's own checkout: `cargo install --locked
# --path ACTION_PATH --root INSTALL_ROOT` (skipped when INSTALL_ROOT/bin/mcptape
# exists, i.e. the cache hit), then puts INSTALL_ROOT/bin on the job's PATH.
# Env: ACTION_PATH (the action's checkout; default: this repository),
# INSTALL_ROOT (required), GITHUB_PATH (set by the runner; optional locally).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ACTION_PATH="${ACTION_PATH:-$(cd "$here/../.." && pwd)}"
: "${INSTALL_ROOT:?INSTALL_ROOT is required}"
bin="$INSTALL_ROOT/bin/mcptape"
if [ -x "$bin" ]; then
  echo "mcptape action: using cached $bin ($("$bin" --version))"
else
  cargo install --locked --path "$ACTION_PATH/crates/mcptape" --root "$INSTALL_ROOT"
fi
"$bin" --version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$INSTALL_ROOT/bin" >>"$GITHUB_PATH"
fi
