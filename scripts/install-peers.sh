#!/usr/bin/env bash
# Installs the real MCP peers mcptape's tests record and check against, into ./.tools
# (nothing global): Node 22 from the npm registry, the reference servers and clients
# from npm (pinned), and the official Python SDK from PyPI in a venv.
# Idempotent: a second run only checks versions. Prints the paths it set up.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"

NODE_VERSION=22.23.3
SERVER_EVERYTHING_VERSION=2026.8.31
INSPECTOR_VERSION=2.12.0
CONFORMANCE_VERSION=0.2.0-alpha.12
MCP_PY_VERSION=2.3.0

# Node 22 (the Inspector CLI and the conformance suite need >= 22.19; the machine has 20).
if [ ! -x "$tools/node22/node_modules/node/bin/node" ]; then
  npm install --silent --no-audit --no-fund --prefix "$tools/node22" "node@$NODE_VERSION" >/dev/null
fi
node22="$tools/node22/node_modules/node/bin/node"
"$node22" --version >/dev/null

# npm peers, installed and run with Node 22.
if [ ! -f "$tools/npm/.installed-$SERVER_EVERYTHING_VERSION-$INSPECTOR_VERSION-$CONFORMANCE_VERSION" ]; then
  mkdir -p "$tools/npm"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/npm" \
    "@modelcontextprotocol/server-everything@$SERVER_EVERYTHING_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >/dev/null
  touch "$tools/npm/.installed-$SERVER_EVERYTHING_VERSION-$INSPECTOR_VERSION-$CONFORMANCE_VERSION"
fi

# Python SDK in a venv.
if [ ! -x "$tools/venv/bin/python" ]; then
  python3 -m venv "$tools/venv"
fi
if ! "$tools/venv/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$MCP_PY_VERSION'" 2>/dev/null; then
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_PY_VERSION"
fi

cat > "$tools/env.sh" <<ENV
# Sourced by tests and scripts: where the real peers are.
export MCPTAPE_NODE22="$node22"
export MCPTAPE_NPM_PREFIX="$tools/npm"
export MCPTAPE_PYTHON="$tools/venv/bin/python"
ENV
echo "peers ready: node $("$node22" --version), server-everything $SERVER_EVERYTHING_VERSION, inspector $INSPECTOR_VERSION, conformance $CONFORMANCE_VERSION, mcp $MCP_PY_VERSION (env: $tools/env.sh)"
