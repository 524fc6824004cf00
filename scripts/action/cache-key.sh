#!/usr/bin/env bash
# Prints (and, on a runner, writes to GITHUB_OUTPUT as `key=`) the cache key of
# the installed mcptape: OS, arch, the action's ref, the SHA-256 of its
# Cargo.lock (hashFiles() cannot read an action checkout outside the workspace)
# and of its Rust sources and manifests (so a moving ref such as a branch
# never reuses a stale build), each cut to 16 hex digits.
# Env: ACTION_PATH, ACTION_REF (github.action_ref, or the commit for `uses: ./`),
# RUNNER_OS, RUNNER_ARCH (set by the runner; default from uname).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ACTION_PATH="${ACTION_PATH:-$(cd "$here/../.." && pwd)}"
lock="$(sha256sum "$ACTION_PATH/Cargo.lock" | cut -c1-16)"
src="$(cd "$ACTION_PATH" && find Cargo.toml crates benches -type f \( -name '*.rs' -o -name Cargo.toml \) \
  -not -path '*/target/*' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)"
key="mcptape-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-${ACTION_REF:-local}-$lock-$src"
echo "$key"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "key=$key" >>"$GITHUB_OUTPUT"
fi
