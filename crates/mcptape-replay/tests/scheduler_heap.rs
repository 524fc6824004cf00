//! The serve scheduler's deadline heap and deadline arithmetic, checked on
//! tokio's paused (virtual) clock with [`TimerMode::Virtual`]: no real time
//! is measured, every figure is exact.

use crate::common;

use common::server;
use mcptape_replay::ReplayError;
use mcptape_replay::latency::{FaultSpec, LatencyModel};
use mcptape_replay::schedule::{DeadlineHeap, Scheduler, deadline_after};
use mcptape_replay::serve::{Server, StreamEnd, serve_stream};
use mcptape_report::server::Precision;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;
use tokio::time::{Duration, Instant};

/// The reply lines and the request writer of one end of a duplex pipe, and the task
/// serving the other end.
type Pipe = (
    Lines<BufReader<ReadHalf<DuplexStream>>>,
    WriteHalf<DuplexStream>,
    JoinHandle<Result<StreamEnd, ReplayError>>,
);

/// Serves `srv` as a line stream (stdio's path) on one end of a duplex pipe.
fn pipe(srv: Arc<Server>) -> Pipe {
    let (a, b) = tokio::io::duplex(1 << 20);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let h = tokio::spawn(serve_stream(srv, ar, aw));
    (BufReader::new(br).lines(), bw, h)
}

/// Serves `fixed:12ms` (seed 1, virtual clock) on one end of a duplex pipe: the reply
/// lines and the request writer of the other end.
fn pipe_12ms() -> (
    Lines<BufReader<ReadHalf<DuplexStream>>>,
    WriteHalf<DuplexStream>,
) {
    let (lines, bw, _) = pipe(server("fixed:12ms", "", 1));
    (lines, bw)
}

/// The next reply line of `lines`, parsed (the stream must not have ended).
async fn next_reply(lines: &mut Lines<BufReader<ReadHalf<DuplexStream>>>) -> Value {
    serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap()
}

/// Writes `last` and closes the request side; then the one reply left is to `id`, the
/// stream ends, and the serve task `h` ends without error.
async fn send_last_then_only_reply(
    lines: &mut Lines<BufReader<ReadHalf<DuplexStream>>>,
    bw: &mut WriteHalf<DuplexStream>,
    h: JoinHandle<Result<StreamEnd, ReplayError>>,
    last: &str,
    id: Value,
) {
    bw.write_all(last.as_bytes()).await.unwrap();
    bw.shutdown().await.unwrap();
    assert_eq!(next_reply(lines).await["id"], id);
    assert_eq!(lines.next_line().await.unwrap(), None);
    h.await.unwrap().unwrap();
}

/// `notifications/cancelled` of request id 1, one line.
const CANCEL_1: &str =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n";

fn read_line(id: &Value) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"resources/read\",\"params\":{{\"uri\":\"file:///project/a.md\"}}}}\n"
    )
}

#[test]
fn heap_pops_earliest_deadline_first_and_ties_in_push_order() {
    let mut h: DeadlineHeap<u64, &str> = DeadlineHeap::new();
    h.push(30, "c");
    h.push(10, "a1");
    h.push(20, "b");
    h.push(10, "a2");
    h.push(10, "a3");
    let mut order = Vec::new();
    while let Some((d, _, item)) = h.pop_due(u64::MAX) {
        order.push((d, item));
    }
    assert_eq!(
        order,
        vec![(10, "a1"), (10, "a2"), (10, "a3"), (20, "b"), (30, "c")]
    );
    assert!(h.is_empty());
}

#[test]
fn heap_never_pops_before_the_deadline() {
    let mut h: DeadlineHeap<u64, u8> = DeadlineHeap::new();
    h.push(12_000, 1);
    assert_eq!(h.pop_due(11_999), None);
    assert_eq!(h.next_deadline(), Some(12_000));
    assert_eq!(h.pop_due(12_000), Some((12_000, 0, 1)));
    assert_eq!(h.pop_due(u64::MAX), None);
}

#[test]
fn heap_cancel_removes_a_job_and_the_next_deadline_skips_it() {
    let mut h: DeadlineHeap<u64, &str> = DeadlineHeap::new();
    let first = h.push(5, "first");
    h.push(9, "second");
    assert_eq!(h.cancel(first), Some("first"));
    assert_eq!(h.cancel(first), None);
    assert_eq!(h.len(), 1);
    assert_eq!(h.next_deadline(), Some(9));
    assert_eq!(h.pop_due(8), None);
    assert_eq!(h.pop_due(9).map(|(_, _, s)| s), Some("second"));
}

#[tokio::test(start_paused = true)]
async fn deadline_is_arrival_plus_the_drawn_delay() {
    let t0 = Instant::now();
    assert_eq!(
        deadline_after(t0, 12_345) - t0,
        Duration::from_micros(12_345)
    );
    assert_eq!(deadline_after(t0, 0), t0);
    // A delay past what the clock can add saturates, never earlier than arrival.
    assert!(deadline_after(t0, u64::MAX) > t0 + Duration::from_secs(365 * 86_400));
}

/// Five requests read in the same (virtual) instant with `fixed:12ms` have
/// the same deadline: they are answered together at 12 ms, in arrival order.
#[tokio::test(start_paused = true)]
async fn equal_deadlines_are_answered_in_arrival_order() {
    let (mut lines, mut bw) = pipe_12ms();
    let ids: Vec<Value> = vec![json!(5), json!("b"), json!(3), json!("a\"q"), json!(1)];
    let all: String = ids.iter().map(read_line).collect();
    let t0 = Instant::now();
    bw.write_all(all.as_bytes()).await.unwrap();
    for id in &ids {
        let v: Value = next_reply(&mut lines).await;
        assert_eq!(&v["id"], id);
        assert_eq!(v["result"]["contents"][0]["text"], json!("# A\n"));
        assert_eq!(Instant::now() - t0, Duration::from_millis(12));
    }
}

/// The deadline counts from each request's own arrival: a request read
/// 5 ms after another with the same 12 ms delay is answered 5 ms later.
#[tokio::test(start_paused = true)]
async fn each_deadline_counts_from_its_own_arrival() {
    let (mut lines, mut bw) = pipe_12ms();
    let t0 = Instant::now();
    bw.write_all(read_line(&json!(1)).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    bw.write_all(read_line(&json!(2)).as_bytes()).await.unwrap();
    let first: Value = next_reply(&mut lines).await;
    assert_eq!(
        (first["id"].clone(), Instant::now() - t0),
        (json!(1), Duration::from_millis(12))
    );
    let second: Value = next_reply(&mut lines).await;
    assert_eq!(
        (second["id"].clone(), Instant::now() - t0),
        (json!(2), Duration::from_millis(17))
    );
}

/// Requests read together with different drawn delays are answered in
/// deadline order, not arrival order, each at its own drawn delay (rounded up
/// to tokio's 1 ms tick on the virtual clock), never before it.
#[tokio::test(start_paused = true)]
async fn replies_leave_in_deadline_order_at_their_drawn_delays() {
    let model = "lognormal:p50=12ms,p99=40ms";
    let seed = 7;
    let n = 12u64;
    // The same seeded schedule the server will draw.
    let mut sched = Scheduler::new(
        LatencyModel::parse(model).unwrap(),
        FaultSpec::default(),
        seed,
    );
    let delays: Vec<u64> = (0..n).map(|_| sched.plan(Some(0)).delay_us).collect();
    let mut expected: Vec<(u64, u64)> = (0..n).map(|i| (delays[i as usize], i)).collect();
    expected.sort();
    assert_ne!(
        expected.iter().map(|e| e.1).collect::<Vec<_>>(),
        (0..n).collect::<Vec<_>>(),
        "seed 7 must draw delays out of arrival order for this test to mean anything"
    );

    let srv = server(model, "", seed);
    let (mut lines, mut bw, _) = pipe(srv.clone());
    let all: String = (0..n).map(|i| read_line(&json!(i))).collect();
    let t0 = Instant::now();
    bw.write_all(all.as_bytes()).await.unwrap();
    for (delay_us, id) in &expected {
        let v: Value = next_reply(&mut lines).await;
        let at = Instant::now() - t0;
        assert_eq!(v["id"], json!(id));
        assert!(
            at >= Duration::from_micros(*delay_us),
            "{id}: {at:?} < {delay_us} µs"
        );
        assert!(at < Duration::from_micros(*delay_us) + Duration::from_millis(1));
    }
    let s = srv.summary();
    assert_eq!(s.achieved.count, n);
    // Never early: lateness is recorded as ≥ 1 µs (HdrHistogram floor), and
    // below the 1 ms tick.
    assert!(s.lateness.max_us < 1_000);
}

/// A cancelled pending answer is never sent; the others still are.
#[tokio::test(start_paused = true)]
async fn a_cancelled_reply_is_removed_from_the_heap() {
    let srv = server("fixed:12ms", "", 1);
    let (mut lines, mut bw, h) = pipe(srv.clone());
    let all = format!("{}{}{CANCEL_1}", read_line(&json!(1)), read_line(&json!(2)));
    send_last_then_only_reply(&mut lines, &mut bw, h, &all, json!(2)).await;
    let s = srv.summary();
    assert_eq!((s.cancelled, s.achieved.count), (1, 1));
}

#[test]
fn precision_flag_at_the_limit_and_one_past_it() {
    // fixed:12ms: 2 % of 12 ms + 0.2 ms = 440 µs.
    let ok = Precision::judge(12_000.0, 440, 100);
    assert_eq!(ok.limit_us, 440.0);
    assert!(!ok.machine_bound);
    assert_eq!(ok.note(), None);
    let bad = Precision::judge(12_000.0, 441, 100);
    assert!(bad.machine_bound);
    assert!(
        bad.note()
            .unwrap()
            .contains("the figures measure the machine, not the server")
    );
    // fixed:0ms: the floor alone.
    assert!(!Precision::judge(0.0, 200, 1).machine_bound);
    assert!(Precision::judge(0.0, 201, 1).machine_bound);
    // No replies: nothing to flag.
    assert!(!Precision::judge(0.0, 0, 0).machine_bound);
}

/// The summary `serve --stats` writes and `bench` embeds carries the
/// lateness verdict and the engine time of zero-delay replies.
#[tokio::test(start_paused = true)]
async fn the_serve_summary_carries_lateness_precision_and_engine_time() {
    for (model, limit_us, engine_count) in [("fixed:12ms", 440.0, 0), ("fixed:0ms", 200.0, 3)] {
        let srv = server(model, "", 1);
        let (mut lines, mut bw, h) = pipe(srv.clone());
        let all: String = (0..3).map(|i| read_line(&json!(i))).collect();
        bw.write_all(all.as_bytes()).await.unwrap();
        bw.shutdown().await.unwrap();
        let mut n = 0;
        while lines.next_line().await.unwrap().is_some() {
            n += 1;
        }
        h.await.unwrap().unwrap();
        assert_eq!(n, 3);
        let s = srv.summary();
        assert_eq!(s.precision.limit_us, limit_us, "{model}");
        assert!(!s.precision.machine_bound, "{model}");
        assert_eq!(s.engine.count, engine_count, "{model}");
        assert_eq!(s.work.count, 3);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["precision"]["machineBound"], json!(false));
        assert_eq!(v["precision"]["limitUs"], json!(limit_us));
        let lines = s.precision_lines(0.0);
        assert!(
            lines.iter().any(|l| l.starts_with("precision ok")),
            "{lines:?}"
        );
    }
}

/// `serve --metrics` over a line stream (stdio's path): while two replies wait on the model
/// they are in flight and the stream is a live session; a cancelled one leaves in-flight too
/// (its timer job dropped) and counts as cancelled; the one written is the delay histogram's
/// only observation, 12 ms; both requests count as recorded reads.
#[tokio::test(start_paused = true)]
async fn line_stream_metrics_count_in_flight_sessions_cancels_and_delays() {
    use mcptape_replay::metrics::ServeMetrics;
    let base = server("fixed:12ms", "", 1);
    let metrics = Arc::new(ServeMetrics::new(base.recorded_methods()));
    let srv = Arc::new(
        common::virtual_server(common::tape_of(common::TINY), "fixed:12ms")
            .with_metrics(metrics.clone()),
    );
    let has = |line: &str| metrics.encode().lines().any(|l| l == line);
    let (mut lines, mut bw, h) = pipe(srv.clone());
    let both = format!("{}{}", read_line(&json!(1)), read_line(&json!(2)));
    bw.write_all(both.as_bytes()).await.unwrap();
    // Both read and scheduled (bounded: the virtual clock does not move while we wait).
    for _ in 0..1000 {
        if has("mcptape_serve_in_flight 2") {
            break;
        }
        tokio::task::yield_now().await;
    }
    let text = metrics.encode();
    assert!(has("mcptape_serve_in_flight 2"), "{text}");
    assert!(has("mcptape_serve_sessions_live 1"), "{text}");
    assert!(has("mcptape_serve_sessions_opened_total 1"), "{text}");
    send_last_then_only_reply(&mut lines, &mut bw, h, CANCEL_1, json!(2)).await;
    let text = metrics.encode();
    for line in [
        "mcptape_serve_in_flight 0",
        "mcptape_serve_sessions_live 0",
        "mcptape_serve_cancelled_total 1",
        "mcptape_serve_delay_seconds_count 1",
        "mcptape_serve_delay_seconds_sum 0.012",
        "mcptape_serve_requests_total{method=\"resources/read\",outcome=\"recorded\"} 2",
    ] {
        assert!(has(line), "no {line:?} in:\n{text}");
    }
}
