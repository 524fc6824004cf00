#!/usr/bin/env bash
# The README's main job: replay the shipped real transcript of server-everything at the
# seeds' docs-server latency (lognormal p50=12ms p99=40ms, 4 parallel reads, 800 ms
# deadline, 5 s timeout) and print single-read and 4-read-turn p50/p99 with the F(t)^4
# prediction beside them; then feed the run's own HdrHistogram log back as an
# `empirical:` model. Bounded: 300 reads + 300 turns (~15 s), then 50 + 20.
# Duration: the release build of mcptape (~5 min on 2 idle cores; 14 min measured on a
# 2-core machine shared with other builds) + ~20 s of bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck disable=SC1091
source .tools/env.sh # MCPTAPE_PYTHON (installed by scripts/install-peers.sh, run first by .ci/run)
out="${CARGO_TARGET_DIR:-target}/ci-replay"
rm -rf "$out"
timeout 1800 cargo run --release --quiet -p mcptape -- bench corpus/transcripts/everything-stdio.jsonl --out "$out"
"$MCPTAPE_PYTHON" - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["single"]["count"] == 300, r["single"]
assert r["turns"] == 300 and r["turn"]["count"] == 300, r["turns"]
assert [p["q"] for p in r["prediction"]] == [0.5, 0.99], r["prediction"]
# The main job ran in full: no phase cut at --max-phase, the target stayed up.
assert not r["singleCut"] and not r["turnsCut"] and not r["targetClosed"], r
assert r["recordedReads"] == 12 and r["recordedReadErrors"] == 1, r
# Issue 12: every read is counted once per phase: ok + error answers + timeouts == sent.
for ph in ("singlePhase", "turnPhase"):
    c = r[ph]
    assert c["answeredOk"] + sum(c["errorAnswers"].values()) + c["timedOut"] + c["closed"] == c["sent"], (ph, c)
    assert c["lateResponses"] <= c["cancellationsSent"], (ph, c)
assert r["singlePhase"]["sent"] == 300 and r["turnPhase"]["sent"] == 1200, r["singlePhase"]
assert r["singleOk"]["count"] == r["singlePhase"]["answeredOk"] and not r["partial"], r["singleOk"]
s = r["server"]
assert s is not None and s["requests"] == s["matched"] == 1 + 300 + 1200, s
assert s["model"] == "lognormal:p50=12ms,p99=40ms", s["model"]
print("30-replay: report.json ok: single p50 %.3f ms p99 %.3f ms; turn p50 %.3f ms p99 %.3f ms"
      % (r["single"]["p50Us"] / 1e3, r["single"]["p99Us"] / 1e3, r["turn"]["p50Us"] / 1e3, r["turn"]["p99Us"] / 1e3))
PY
timeout 300 cargo run --release --quiet -p mcptape -- bench corpus/transcripts/everything-stdio.jsonl \
  --latency "empirical:$out/latency.hlog" --reads 50 --turns 20 --out "$out/empirical"
"$MCPTAPE_PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['single']['count']==50 and r['server']['model'].startswith('empirical:'), r" "$out/empirical/report.json"
echo "30-replay: ok"
