// Saves a HAR of headless Chromium driving an MCP session against `mcptape serve --listen`.
//
// usage: node capture.js PLAYWRIGHT_CORE_DIR CHROMIUM SERVE_URL PAGE_PORT REQUESTS.json OUT.har
//
// A tiny HTTP server on 127.0.0.1:PAGE_PORT serves index.html and app.js (not MCP:
// the importer must skip them) and forwards POST /mcp to SERVE_URL, so the page POSTs
// JSON-RPC same-origin. The page sends REQUESTS.json ([{body, headers}] in order) with fetch
// and reads each answer to its end (an answer's Mcp-Session-Id is sent on the later requests). Playwright's recordHar captures the HAR through the
// DevTools protocol (Network.* events). Every step is bounded; loopback only.
'use strict';
const http = require('http');
const path = require('path');
const fs = require('fs');

const [pwDir, chromiumPath, serveUrl, pagePort, requestsFile, outHar] = process.argv.slice(2);
const { chromium } = require(path.resolve(pwDir));
const requests = JSON.parse(fs.readFileSync(requestsFile, 'utf8'));
const upstream = new URL(serveUrl);
if (upstream.hostname !== '127.0.0.1') throw new Error('loopback only: ' + serveUrl);

const page = `<!doctype html><html><head><meta charset="utf-8"><title>mcp har</title>
<script src="/app.js"></script></head><body><pre id="log"></pre></body></html>`;
const app = `
window.runSession = async function (requests) {
  const answers = [];
  let session = null;
  for (const r of requests) {
    const headers = { ...r.headers };
    if (session) headers['mcp-session-id'] = session;
    const res = await fetch('/mcp', { method: 'POST', headers, body: r.body });
    session = res.headers.get('mcp-session-id') || session;
    answers.push({ status: res.status, type: res.headers.get('content-type'), text: await res.text() });
  }
  document.getElementById('log').textContent = JSON.stringify(answers.map(a => a.status));
  return answers;
};`;

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return res.end(page);
  }
  if (req.method === 'GET' && req.url === '/app.js') {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    return res.end(app);
  }
  if (req.url === '/mcp') {
    const headers = { ...req.headers, host: upstream.host };
    const up = http.request(
      { host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers, timeout: 20000 },
      (ur) => { res.writeHead(ur.statusCode, ur.headers); ur.pipe(res); });
    up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
    return req.pipe(up);
  }
  res.writeHead(404);
  res.end();
});

// The timer is cleared once `p` settles: a pending timer keeps node's event loop alive, so
// an uncleared 100 s launch bound would hold the process (and the test) for 100 s after it is done.
function bounded(p, ms, what) {
  let timer;
  const limit = new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(what + ': timed out')), ms); });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

(async () => {
  await new Promise((ok) => server.listen(Number(pagePort), '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const userDataDir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'mcptape-har-'));
  const ctx = await bounded(chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    recordHar: { path: outHar, content: 'embed' },
    timeout: 90000,
  }), 100000, 'launch');
  try {
    const p = ctx.pages()[0] || await ctx.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(String(e)));
    await bounded(p.goto(origin + '/'), 60000, 'goto');
    const answers = await bounded(p.evaluate((r) => window.runSession(r), requests), 60000, 'session');
    if (errors.length) throw new Error('page errors: ' + errors.join('; '));
    process.stdout.write(JSON.stringify({ origin, answers: answers.map((a) => ({ status: a.status, type: a.type })) }) + '\n');
  } finally {
    await bounded(ctx.close(), 30000, 'close');
    server.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
})().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
