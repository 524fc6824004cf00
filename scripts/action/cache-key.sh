#!/usr/bin/env bash
# Prints (and, on a runner, writes to GITHUB_OUTPUT as `key=`) the cache key of
# the installed mcptape: OS, arch, the action's ref, and the SHA-256 of its
# Cargo.lock (hashFiles() cannot read an action checkout outside the workspace).
# Env: ACTION_PATH, ACTION_REF (github.action_ref, or the commit for `uses: ./`),
# RUNNER_OS, RUNNER_ARCH (set by the runner; default from uname).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ACTION_PATH="${ACTION_PATH:-$(cd "$here/../.." && pwd)}"
lock="$(sha256sum "$ACTION_PATH/Cargo.lock" | cut -c1-16)"
key="mcptape-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-${ACTION_REF:-local}-$lock"
echo "$key"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "key=$key" >>"$GITHUB_OUTPUT"
fi
