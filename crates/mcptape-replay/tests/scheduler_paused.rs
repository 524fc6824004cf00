//! The scheduler checked exactly on tokio's paused (virtual) clock: `serve`
//! and `bench` run in-process over an in-memory duplex pipe, so every delay
//! is virtual time and every figure is exact.

use crate::common;

use std::sync::Arc;

use common::{closed_cfg, duplex_client, piped_client, server};
use mcptape_replay::bench::{self, BenchConfig, Client};
use mcptape_replay::serve::{Server, Unrecorded, serve_stream};
use mcptape_report::run::{BenchResult, Load};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::{Duration, Instant};

/// `srv` and a [`duplex_client`] of it, its handshake done within 5 s of virtual time.
async fn handshaken(srv: Arc<Server>) -> (Arc<Server>, Arc<Client>) {
    let client = duplex_client(&srv, Duration::from_secs(5)).await;
    (srv, client)
}

/// Runs `bench` with `c` against `srv` on a handshaken client; the server and the result.
async fn bench_on(srv: Arc<Server>, c: &BenchConfig) -> (Arc<Server>, BenchResult) {
    let (srv, client) = handshaken(srv).await;
    let res = bench::run(client, srv.tape(), c, &|_| {}).await.unwrap();
    (srv, res)
}

/// [`closed_cfg`] with a 5 s timeout.
fn cfg(reads: u64, turns: u64, parallel: u32) -> BenchConfig {
    closed_cfg(reads, turns, parallel, 5_000_000)
}

#[tokio::test(start_paused = true)]
async fn fixed_12ms_answers_one_request_after_exactly_12ms() {
    let (a, b) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(a);
    let (br, mut bw) = tokio::io::split(b);
    let srv = server("fixed:12ms", "", 1);
    tokio::spawn(serve_stream(srv, ar, aw));
    let mut lines = BufReader::new(br).lines();
    let t0 = Instant::now();
    bw.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///project/a.md\"}}\n")
        .await
        .unwrap();
    let line = lines.next_line().await.unwrap().unwrap();
    assert_eq!(Instant::now() - t0, Duration::from_millis(12));
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["id"], json!(77));
    assert_eq!(v["result"]["contents"][0]["text"], json!("# A\n"));
}

#[tokio::test(start_paused = true)]
async fn fixed_12ms_gives_12ms_single_reads_and_12ms_turns() {
    let (srv, res) = bench_on(server("fixed:12ms", "", 1), &cfg(30, 10, 4)).await;
    assert_eq!(res.single.len(), 30);
    // HdrHistogram keeps 3 significant digits: `equivalent` = same bucket.
    assert!(res.single.equivalent(res.single.min(), 12_000));
    assert!(res.single.equivalent(res.single.max(), 12_000));
    assert_eq!(res.turn.len(), 10);
    assert!(res.turn.equivalent(res.turn.min(), 12_000));
    assert!(res.turn.equivalent(res.turn.max(), 12_000));
    assert_eq!(res.turns_hit_deadline, 0);
    assert_eq!(res.cancellations, 0);
    // The recorded missing.md read is replayed as its recorded -32602 error.
    assert_eq!(res.errors.get("not-found (-32602 + data.uri)"), Some(&23));
    // 30 single + 40 turn reads cycle a, b.png, missing: 10 + 13 missing.
    let s = srv.summary();
    assert_eq!(s.achieved.count, 1 + 30 + 40);
    assert_eq!(s.lateness.max_us, 1);
}

#[tokio::test(start_paused = true)]
async fn a_stall_is_cancelled_at_the_deadline_and_abandoned_at_the_timeout() {
    let (srv, client) = handshaken(server("fixed:12ms", "stall=100%", 1)).await;
    let t0 = Instant::now();
    let res = bench::run(client.clone(), srv.tape(), &cfg(0, 1, 1), &|_| {})
        .await
        .unwrap();
    assert_eq!(res.turns, 1);
    assert_eq!(res.turns_hit_deadline, 1);
    assert!(res.turn.equivalent(res.turn.min(), 800_000));
    assert!(res.turn.equivalent(res.turn.max(), 800_000));
    assert_eq!(res.cancellations, 1);
    assert_eq!(res.abandoned, 1);
    assert_eq!(res.abandoned_after_us, vec![5_000_000]);
    assert_eq!(res.late_responses, 0);
    // run() waits for the straggler's timeout before returning.
    assert_eq!(Instant::now() - t0, Duration::from_secs(5));
    assert_eq!(srv.summary().stalled, 1);
}

#[tokio::test(start_paused = true)]
async fn a_single_read_that_stalls_is_abandoned_at_the_timeout() {
    let (_, res) = bench_on(server("fixed:1ms", "stall=100%", 1), &cfg(2, 0, 1)).await;
    assert_eq!(res.errors.get("timeout"), Some(&2));
    assert_eq!(res.abandoned_after_us, vec![5_000_000, 5_000_000]);
    // Issue 12: the timed-out reads are in the distribution, censored at the timeout.
    assert_eq!(res.single.len(), 2);
    assert_eq!(res.single_ok.len(), 0);
    assert_eq!(res.single_censored_from_us, Some(5_000_000));
}

#[tokio::test(start_paused = true)]
async fn a_slow_read_past_the_deadline_is_cancelled_and_the_server_drops_its_answer() {
    let (srv, res) = bench_on(server("fixed:900ms", "", 1), &cfg(0, 2, 2)).await;
    assert_eq!(res.turns_hit_deadline, 2);
    assert_eq!(res.cancellations, 4);
    assert_eq!(res.late_responses, 0);
    assert_eq!(res.abandoned, 4);
    assert_eq!(srv.summary().cancelled, 4);
}

async fn lognormal_run(seed: u64) -> (Vec<u64>, Vec<u64>) {
    let (_, res) = bench_on(
        server("lognormal:p50=12ms,p99=40ms", "error=-32603@10%", seed),
        &cfg(50, 20, 4),
    )
    .await;
    let single = res
        .single
        .iter_recorded()
        .map(|v| v.value_iterated_to() * 1000 + v.count_at_value())
        .collect();
    let turn = res
        .turn
        .iter_recorded()
        .map(|v| v.value_iterated_to())
        .collect();
    (single, turn)
}

#[tokio::test(start_paused = true)]
async fn a_seed_reproduces_the_schedule() {
    let a = lognormal_run(42).await;
    let b = lognormal_run(42).await;
    let c = lognormal_run(43).await;
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// Issue 14, `--unrecorded answer` (the default): a read of a uri never
/// recorded is "Resource not found" with `data.uri` (MCP 2026-07-28
/// "Resources" §Error handling, SEP-2164), under the code the recording used
/// for its own not-found read (-32602 in `tiny-two-reads.jsonl`), counted as
/// synthesized; an unrecorded method stays -32601 naming the method.
#[tokio::test(start_paused = true)]
async fn an_unmatched_read_is_resource_not_found_with_data_uri() {
    let srv = server("fixed:0", "", 1);
    assert_eq!(srv.unrecorded(), Unrecorded::Answer);
    let client = piped_client(&srv);
    let (_, rx) = client.request(
        "resources/read",
        &json!({"uri": "file:///project/never-recorded.md"}),
    );
    let (_, v) = rx.await.unwrap();
    assert_eq!(
        v["error"],
        json!({
            "code": -32602,
            "message": "Resource not found",
            "data": {"uri": "file:///project/never-recorded.md"}
        }),
        "{v}"
    );
    assert!(v.get("result").is_none());
    let (_, rx) = client.request("tools/call", &json!({"name": "x"}));
    let (_, v) = rx.await.unwrap();
    assert_eq!(v["error"]["code"], json!(-32601));
    assert_eq!(v["error"]["data"]["method"], json!("tools/call"));
    let sum = srv.summary();
    assert_eq!(sum.synthesized.get("resources/read"), Some(&1));
    assert_eq!(sum.unmatched, 1);
}

/// `--unrecorded error` keeps the strict answer: -32602 "no recorded
/// response" naming the method and the uri in `data`.
#[tokio::test(start_paused = true)]
async fn an_unmatched_read_names_method_and_uri() {
    let srv = Arc::new(
        Arc::try_unwrap(server("fixed:0", "", 1))
            .ok()
            .unwrap()
            .with_unrecorded(Unrecorded::Error),
    );
    let client = piped_client(&srv);
    let (_, rx) = client.request(
        "resources/read",
        &json!({"uri": "file:///project/never-recorded.md"}),
    );
    let (_, v) = rx.await.unwrap();
    assert_eq!(v["error"]["code"], json!(-32602));
    assert_eq!(
        v["error"]["data"]["uri"],
        json!("file:///project/never-recorded.md")
    );
    assert_eq!(v["error"]["data"]["method"], json!("resources/read"));
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("resources/read") && msg.contains("file:///project/never-recorded.md"),
        "{msg}"
    );
    let (_, rx) = client.request("tools/call", &json!({"name": "x"}));
    let (_, v) = rx.await.unwrap();
    assert_eq!(v["error"]["code"], json!(-32601));
    assert_eq!(v["error"]["data"]["method"], json!("tools/call"));
    let sum = srv.summary();
    assert!(sum.synthesized.is_empty(), "{:?}", sum.synthesized);
    assert_eq!(sum.unmatched, 2);
}

#[tokio::test(start_paused = true)]
async fn a_uri_escaping_the_root_is_rejected_with_32602_and_data_uri() {
    let srv = server("fixed:0", "", 1);
    let client = piped_client(&srv);
    for uri in [
        "file:///project/%2e%2e/etc/passwd",
        "file:///project/../etc/passwd",
        "file:///projectX/a.md",
    ] {
        let (_, rx) = client.request("resources/read", &json!({"uri": uri}));
        let (_, v) = rx.await.unwrap();
        assert_eq!(v["error"]["code"], json!(-32602), "{uri}: {v}");
        assert_eq!(v["error"]["data"]["uri"], json!(uri));
        assert!(v["error"]["data"]["reason"].is_string(), "{uri}: {v}");
        assert!(v.get("result").is_none());
    }
    assert_eq!(srv.summary().rejected_uri, 3);
}

/// Issue 23: without `--root`, the root is inferred from the recorded
/// `file:` uris only; an unrecorded uri of another scheme
/// (`demo://resource/dynamic/text/7`, `http://evil/a.md`) is the
/// recording's "Resource not found" with `data.uri`, never a sanitizer
/// rejection ("EscapesRoot at byte 16").
#[tokio::test(start_paused = true)]
async fn unrecorded_non_file_uri_is_resource_not_found_not_a_root_rejection() {
    let srv = server("fixed:0", "", 1);
    let client = piped_client(&srv);
    for uri in ["demo://resource/dynamic/text/7", "http://evil/a.md"] {
        let (_, rx) = client.request("resources/read", &json!({"uri": uri}));
        let (_, v) = rx.await.unwrap();
        assert_eq!(v["error"]["code"], json!(-32602), "{uri}: {v}");
        assert_eq!(
            v["error"]["message"],
            json!("Resource not found"),
            "{uri}: {v}"
        );
        assert_eq!(v["error"]["data"], json!({"uri": uri}), "{uri}: {v}");
    }
    let s = srv.summary();
    assert_eq!(s.rejected_uri, 0);
    assert_eq!(s.synthesized.get("resources/read"), Some(&2));
}

#[tokio::test(start_paused = true)]
async fn replies_keep_the_request_id_and_match_params_without_meta() {
    let srv = server("recorded", "", 1);
    let client = piped_client(&srv);
    let t0 = Instant::now();
    let (_, rx) = client.request(
        "resources/read",
        &json!({"uri": "file:///project/img/b.png", "_meta": {"progressToken": "zz"}}),
    );
    let (_, v) = rx.await.unwrap();
    // recorded delay of that reply: 56000 - 16000 µs.
    assert_eq!(Instant::now() - t0, Duration::from_micros(40_000));
    assert_eq!(v["result"]["contents"][0]["blob"], json!("iVBORw0KGgo="));
    assert!(v["id"].is_u64());
}

#[tokio::test(start_paused = true)]
async fn parallel_reads_per_turn_at_and_past_the_limit() {
    use mcptape_report::run::MAX_PARALLEL;
    let (srv, client) = handshaken(server("fixed:12ms", "", 1)).await;
    let res = bench::run(
        client.clone(),
        srv.tape(),
        &cfg(0, 1, MAX_PARALLEL),
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!(res.turn_reads.len(), u64::from(MAX_PARALLEL));
    assert!(res.turn.equivalent(res.turn.max(), 12_000));
    let err = bench::run(
        client.clone(),
        srv.tape(),
        &cfg(0, 1, MAX_PARALLEL + 1),
        &|_| {},
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err.kind, mcptape_replay::ReplayErrorKind::ParallelOutOfRange(n) if n == MAX_PARALLEL + 1)
    );
}

#[tokio::test(start_paused = true)]
async fn open_loop_sends_on_schedule_and_measures_from_the_intended_send_time() {
    let (srv, client) = handshaken(server("fixed:25ms", "", 1)).await;
    let mut c = cfg(10, 0, 1);
    c.load = Load::Open { per_s: 100.0 };
    let t0 = Instant::now();
    let res = bench::run(client.clone(), srv.tape(), &c, &|_| {})
        .await
        .unwrap();
    // 10 sends 10 ms apart, not waiting for the 25 ms answers: the last is
    // sent at 90 ms and answered at 115 ms (closed loop would take 250 ms).
    assert_eq!(Instant::now() - t0, Duration::from_millis(115));
    assert_eq!(res.single.len(), 10);
    assert!(res.single.equivalent(res.single.min(), 25_000));
    assert!(res.single.equivalent(res.single.max(), 25_000));
}

#[tokio::test(start_paused = true)]
async fn a_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    let (a, b) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(a);
    let (br, mut bw) = tokio::io::split(b);
    tokio::spawn(serve_stream(server("fixed:0", "", 1), ar, aw));
    let mut lines = BufReader::new(br).lines();
    bw.write_all(b"this is not json\n\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(first["error"]["code"], json!(-32700));
    assert_eq!(first["id"], Value::Null);
    // ping was not recorded in this tape: answered `{}` all the same (MCP
    // "Utilities / Ping"), after the parse error, not dropped.
    let second: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(second["id"], json!(5));
    assert_eq!(second["result"], json!({}));
}

/// Fresh-user report bug 11: `--rate 2/s --reads 4 --latency fixed:1ms`
/// printed 2.7/s (4 answers over the 1.501 s from first send to last answer).
#[tokio::test(start_paused = true)]
async fn open_loop_throughput_is_not_above_the_offered_rate() {
    let (srv, client) = handshaken(server("fixed:1ms", "", 1)).await;
    let mut c = cfg(4, 0, 1);
    c.load = Load::Open { per_s: 2.0 };
    let res = bench::run(client.clone(), srv.tape(), &c, &|_| {})
        .await
        .unwrap();
    assert_eq!(res.single.len(), 4);
    // Sends at 0, 0.5, 1.0, 1.5 s; last answer at 1.501 s; offering 4 at 2/s takes 2 s.
    assert_eq!(res.single_elapsed_s, 1.501);
    assert_eq!(res.single_window_s, 2.0);
    assert_eq!(res.throughput_per_s(), 2.0);
    // A target slower than the rate: the last answer bounds the window.
    let (srv, client) = handshaken(server("fixed:3s", "", 1)).await;
    let res = bench::run(client.clone(), srv.tape(), &c, &|_| {})
        .await
        .unwrap();
    assert_eq!(res.single_window_s, 4.5);
    assert_eq!(res.throughput_per_s(), 4.0 / 4.5);
}

/// Fresh-user report bug 5: a phase cut by `max_phase` says so.
#[tokio::test(start_paused = true)]
async fn max_phase_cut_is_flagged_for_each_phase() {
    let (srv, client) = handshaken(server("fixed:100ms", "", 1)).await;
    let mut c = cfg(1_000, 1_000, 2);
    c.max_phase = Duration::from_millis(1_000);
    let res = bench::run(client.clone(), srv.tape(), &c, &|_| {})
        .await
        .unwrap();
    assert!(res.single_cut && res.turns_cut);
    // 100 ms each: 10 reads and 10 turns fit in the 1 s bound.
    assert_eq!((res.reads_sent, res.turns), (10, 10));
    assert_eq!((res.reads_asked, res.turns_asked), (1_000, 1_000));
    let full = bench::run(client.clone(), srv.tape(), &cfg(2, 2, 2), &|_| {})
        .await
        .unwrap();
    assert!(!full.single_cut && !full.turns_cut);
}

/// Issue 27: a `tools/call` or `prompts/get` answered `input_required` (MCP 2026-07-28 Multi
/// Round-Trip Requests) and retried is one request in bench's figures, per method too, timed
/// from its first send: 10 ms to the `input_required`, 15 ms to the retry's result = 25 ms.
#[tokio::test(start_paused = true)]
async fn input_required_tool_call_and_prompt_are_one_request_each_timed_from_the_first_send() {
    let transcript = [
        r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["x"]},"startedAt":"2026-12-03T00:00:00.000Z"}"#,
        r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}}"#,
        r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{}},"serverInfo":{"name":"t","version":"1"}}}}"#,
        r#"{"tUs":3,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{}}}}"#,
        r#"{"tUs":4,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{"content":[]}}}"#,
        r#"{"tUs":5,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"ask"}}}"#,
        r#"{"tUs":6,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":3,"result":{"messages":[]}}}"#,
    ]
    .join("\n");
    let t = mcptape_transcript::reader::read(transcript.as_bytes()).unwrap();
    let tape = mcptape_replay::tape::Tape::from_transcript(&t).unwrap();

    // A scripted 2026-07-28 server: each tools/call and prompts/get first asks for input
    // (after 10 ms), then answers the retry carrying the requestState (after 15 ms).
    let (a, b) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let aw = Arc::new(tokio::sync::Mutex::new(aw));
    tokio::spawn(async move {
        let mut lines = BufReader::new(ar).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            let m: Value = serde_json::from_str(&l).unwrap();
            let Some(id) = m.get("id").cloned() else {
                continue;
            };
            let method = m["method"].as_str().unwrap_or("").to_owned();
            let retry = m["params"].get("requestState").is_some();
            let aw = aw.clone();
            tokio::spawn(async move {
                let result = match (method.as_str(), retry) {
                    ("initialize", _) => {
                        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "prompts": {}}, "serverInfo": {"name": "t", "version": "1"}})
                    }
                    (_, false) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        json!({"resultType": "input_required", "inputRequests": {"ok": {"method": "elicitation/create", "params": {"message": "sure?"}}}, "requestState": "st"})
                    }
                    ("tools/call", true) => {
                        tokio::time::sleep(Duration::from_millis(15)).await;
                        json!({"resultType": "complete", "content": []})
                    }
                    (_, true) => {
                        tokio::time::sleep(Duration::from_millis(15)).await;
                        json!({"resultType": "complete", "messages": []})
                    }
                };
                let line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string() + "\n";
                aw.lock().await.write_all(line.as_bytes()).await.unwrap();
            });
        }
    });
    let client = Arc::new(Client::over(br, bw));
    bench::handshake(&client, &tape, Duration::from_secs(5))
        .await
        .unwrap();
    let res = bench::run(client, &tape, &cfg(6, 0, 1), &|_| {})
        .await
        .unwrap();
    assert_eq!(res.input_rounds, 6, "one round per request");
    for (m, n) in [("tools/call", 3), ("prompts/get", 3)] {
        let k = &res.by_method[m];
        assert_eq!((k.sent, k.ok, k.all.len()), (n, n, n), "{m}");
        assert!(
            k.all.equivalent(k.all.min(), 25_000),
            "{m}: {}",
            k.all.min()
        );
        assert!(
            k.all.equivalent(k.all.max(), 25_000),
            "{m}: {}",
            k.all.max()
        );
    }
    assert_eq!(res.by_key["tools/call"]["confirm"].sent, 3);
    assert_eq!(res.by_key["prompts/get"]["ask"].ok, 3);
    assert_eq!(res.single_phase.sent, 6);
    assert_eq!(res.turns, 0, "no recorded read: no turn");
}
