import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter, Rate, Trend } from 'k6/metrics';

// What to replay, read from the recording.
const PLAN = PLAN_JSON;

const MCP_URL = __ENV.MCP_URL || PLAN.url;

export const options = {
  scenarios: SCENARIOS,
  thresholds: THRESHOLDS,
  // A turn sends its reads at once: let http.batch open that many connections.
  batch: PLAN.parallel,
  batchPerHost: PLAN.parallel,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'p(99.9)', 'max', 'count'],
};

// Single requests (ms, from the request's send to its last byte): every recorded method in
// the recorded mix, tagged method, mcp_name (tool or prompt name), uri_class, class.
const readTrend = new Trend('mcp_read', true);
// Turn completion time (ms): the slowest of its reads, or the deadline when one hit it.
const turnTrend = new Trend('mcp_turn', true);
// The reads inside turns that were answered before the deadline (ms).
const turnReadTrend = new Trend('mcp_turn_read', true);
// Reads whose outcome was not a result, by class.
const errors = new Counter('mcp_errors');
// Reads whose outcome differs from the recorded one (the `errors` SLO).
const unexpected = new Rate('mcp_unexpected');
const turnDeadline = new Counter('mcp_turn_deadline');
const handshakeFailed = new Counter('mcp_handshake_failed');
// One point per k6 instance (segment), tagged with the plan, for `mcptape import k6`.
const planInfo = new Counter('mcp_plan');

export function setup() {
  planInfo.add(1, {
    transcript: PLAN.transcript,
    era: PLAN.era,
    parallel: String(PLAN.parallel),
    deadline_ms: String(PLAN.deadlineMs),
    timeout_ms: String(PLAN.timeoutMs),
    load: PLAN.load,
    recorded_reads: String(PLAN.reads.length),
    recorded_read_errors: String(PLAN.reads.filter((r) => r.recordedClass !== 'ok').length),
    mix: PLAN.mix,
  });
}

// Per VU: one client, one session (2025 era) and its own JSON-RPC ids.
let session = null;
let seq = 0;

function nextId() {
  seq += 1;
  return seq;
}

function headersFor(step) {
  const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  for (const [k, v] of step.headers) h[k] = v;
  if (PLAN.era === 'session' && session !== null) {
    if (session.sid) h['Mcp-Session-Id'] = session.sid;
    if (session.initialized) h['MCP-Protocol-Version'] = session.version;
  }
  return h;
}

function bodyFor(step, id) {
  const m = { jsonrpc: '2.0' };
  if (id !== null) m.id = id;
  m.method = step.method;
  if (step.params !== null && step.params !== undefined) m.params = step.params;
  return JSON.stringify(m);
}

// The JSON-RPC answer carrying `id` in a JSON body or an SSE stream (data: lines), or null.
function replyFor(res, id) {
  if (typeof res.body !== 'string' || res.body.length === 0) return null;
  const ct = String(res.headers['Content-Type'] || '').toLowerCase();
  let msgs = [];
  if (ct.startsWith('text/event-stream')) {
    for (const ev of res.body.split(/\r\n\r\n|\n\n|\r\r/)) {
      const data = [];
      for (const line of ev.split(/\r\n|\n|\r/)) {
        if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
      if (data.length > 0) {
        try {
          msgs.push(JSON.parse(data.join('\n')));
        } catch (e) {
          // not JSON: not an answer
        }
      }
    }
  } else {
    try {
      const v = JSON.parse(res.body);
      msgs = Array.isArray(v) ? v : [v];
    } catch (e) {
      return null;
    }
  }
  for (const m of msgs) {
    if (m !== null && typeof m === 'object' && m.jsonrpc === '2.0' && m.id === id
        && (('result' in m) !== ('error' in m))) {
      return m;
    }
  }
  return null;
}

// ok | rpc:CODE | rpc:CODE:uri | http:STATUS (no answer with our id) | timeout | transport
function classify(res, reply) {
  if (res.error_code === 1050) return 'timeout';
  if (res.status === 0) return 'transport';
  if (reply === null) return 'http:' + res.status;
  if ('error' in reply) {
    const e = reply.error || {};
    const uri = e.data !== null && typeof e.data === 'object' && typeof e.data.uri === 'string';
    return 'rpc:' + e.code + (uri ? ':uri' : '');
  }
  return 'ok';
}

function ensureSession() {
  if (session !== null) return true;
  session = { sid: null, version: PLAN.protocolVersion, initialized: false };
  for (const step of PLAN.handshake) {
    const id = step.notification ? null : nextId();
    const res = http.post(MCP_URL, bodyFor(step, id), {
      headers: headersFor(step),
      timeout: PLAN.timeout,
      tags: { name: step.method },
    });
    if (step.notification) {
      if (res.status < 200 || res.status > 299) {
        handshakeFailed.add(1, { method: step.method, class: 'http:' + res.status });
        session = null;
        return false;
      }
      continue;
    }
    const reply = replyFor(res, id);
    if (reply === null || !('result' in reply)) {
      handshakeFailed.add(1, { method: step.method, class: classify(res, reply) });
      session = null;
      return false;
    }
    const sid = res.headers['Mcp-Session-Id'];
    if (sid) session.sid = sid;
    if (step.method === 'initialize' && typeof reply.result.protocolVersion === 'string') {
      session.version = reply.result.protocolVersion;
    }
    session.initialized = true;
  }
  session.initialized = true;
  return true;
}

function request(step, timeout) {
  const id = nextId();
  return {
    id,
    req: ['POST', MCP_URL, bodyFor(step, id), { headers: headersFor(step), timeout, tags: { name: step.method } }],
  };
}

// Records one read's outcome; returns its class.
function record(step, id, res, trend, timeoutClass) {
  const reply = replyFor(res, id);
  let cls = classify(res, reply);
  if (cls === 'timeout') cls = timeoutClass;
  const tags = { method: step.method, mcp_name: step.name, uri_class: step.uriClass, class: cls };
  check(reply, { 'JSON-RPC result or error with the request id': (r) => r !== null });
  if (cls !== 'timeout' && cls !== 'deadline' && cls !== 'transport') {
    trend.add(res.timings.duration, tags);
  }
  if (cls !== 'ok' && cls !== 'deadline') errors.add(1, tags);
  if (cls !== 'deadline') unexpected.add(cls !== step.recordedClass, tags);
  // A 2025-era session the server no longer knows: start a new one.
  if (PLAN.era === 'session' && res.status === 404) session = null;
  return cls;
}

// One single request, cycling through the recorded requests (every method, recorded order).
export function singleRead() {
  if (!ensureSession()) return;
  const step = PLAN.requests[exec.scenario.iterationInTest % PLAN.requests.length];
  const { id, req } = request(step, PLAN.timeout);
  const res = http.request(req[0], req[1], req[2], req[3]);
  record(step, id, res, readTrend, 'timeout');
}

// One turn: PLAN.parallel reads at once, each cut at the deadline.
export function turn() {
  if (!ensureSession()) return;
  const n = PLAN.parallel;
  const base = exec.scenario.iterationInTest * n;
  const steps = [];
  const ids = [];
  const reqs = [];
  for (let i = 0; i < n; i++) {
    const step = PLAN.reads[(base + i) % PLAN.reads.length];
    const { id, req } = request(step, PLAN.deadline);
    steps.push(step);
    ids.push(id);
    reqs.push(req);
  }
  const responses = http.batch(reqs);
  let worst = 0;
  let hit = false;
  for (let i = 0; i < n; i++) {
    const res = responses[i];
    const cls = record(steps[i], ids[i], res, turnReadTrend, 'deadline');
    if (cls === 'deadline') {
      hit = true;
    } else {
      const t = res.timings;
      worst = Math.max(worst, t.blocked + t.connecting + t.tls_handshaking + t.duration);
    }
  }
  const tags = { parallel: String(n), deadline_ms: String(PLAN.deadlineMs), class: hit ? 'deadline' : 'complete' };
  turnTrend.add(hit ? PLAN.deadlineMs : Math.min(worst, PLAN.deadlineMs), tags);
  if (hit) turnDeadline.add(1, tags);
}

// k6 --vus/--iterations/--duration replace the scenarios: then every iteration is a read
// and, unless the script was exported with --turn-rate 0/s, a turn.
export default function () {
  singleRead();
  if (PLAN.turns) turn();
}
