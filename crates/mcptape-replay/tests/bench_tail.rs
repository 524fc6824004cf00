//! Issue 12, "bench reports the whole tail", on tokio's paused clock: `serve` and `bench`
//! in-process over a duplex pipe, every delay virtual and every figure exact.

use crate::common;

use std::sync::Arc;

use common::{closed_cfg, duplex_client, server};
use mcptape_replay::bench::{self, BenchConfig};
use mcptape_replay::serve::Server;
use mcptape_report::run::{BenchResult, Load};
use mcptape_report::stats::PhaseCounters;
use tokio::time::{Duration, Instant};

/// [`closed_cfg`] with a 1 s timeout.
fn cfg(reads: u64, turns: u64, parallel: u32) -> BenchConfig {
    closed_cfg(reads, turns, parallel, 1_000_000)
}

async fn run(srv: &Arc<Server>, c: &BenchConfig) -> BenchResult {
    let client = duplex_client(srv, Duration::from_secs(5)).await;
    bench::run(client, srv.tape(), c, &|_| {}).await.unwrap()
}

fn assert_consistent(c: &PhaseCounters, drained: bool) {
    assert_eq!(
        c.answered_ok + c.error_answers_total() + c.timed_out + c.closed,
        c.sent,
        "{c:?}"
    );
    assert!(c.late_responses <= c.cancellations_sent, "{c:?}");
    if drained {
        assert_eq!(
            c.late_responses + c.abandoned,
            c.cancellations_sent,
            "{c:?}"
        );
    }
}

/// The first report: `--fault stall=5% --timeout 1s` printed p99 = max = 1.46 ms with
/// `timeout: 4` beside it. Timed-out reads are now in the distribution, censored at 1 s.
#[tokio::test(start_paused = true)]
async fn censored_timeouts_show_in_p99_max_and_in_the_prediction() {
    let srv = server("fixed:1ms", "stall=20%", 3);
    let c = cfg(200, 0, 4);
    let res = run(&srv, &c).await;
    let timed_out = res.single_phase.timed_out;
    assert!(timed_out > 10 && timed_out < 80, "{timed_out}");
    // Every read is in `single`; the timed-out ones exactly at the timeout.
    assert_eq!(res.single.len(), 200);
    assert_eq!(res.single_censored_from_us, Some(1_000_000));
    assert_eq!(res.single_by_class["timeout"].len(), timed_out);
    assert!(res.single.equivalent(res.single.max(), 1_000_000));
    assert_eq!(res.errors.get("timeout"), Some(&timed_out));
    assert_consistent(&res.single_phase, true);
    assert_eq!(res.single_phase.cancellations_sent, timed_out);
    assert_eq!(res.single_phase.abandoned, timed_out);
    let r = res.report(&c, "t", "x", None, 3, None);
    let cens = r.single.censored.expect("censored");
    assert_eq!((cens.bound_us, cens.count), (1_000_000, timed_out));
    assert!(cens.p99 && cens.p999 && cens.max && !cens.p50, "{cens:?}");
    let table = r.table();
    assert!(table.contains("> 1000 "), "{table}");
    // F(t)^4 from the full distribution: p99 needs the 99.75th single percentile, a timeout:
    // the prediction is the deadline (a survivors-only prediction said ~1 ms).
    let p = predicted(&res, &c, 0.99);
    assert_eq!(p, 800_000);
    let share = mcptape_report::stats::predict_deadline_share(&res.single, 4, 800_000).unwrap();
    let f = 1.0 - timed_out as f64 / 200.0;
    assert!((share - (1.0 - f.powi(4))).abs() < 1e-9, "{share}");
}

fn predicted(res: &BenchResult, c: &BenchConfig, q: f64) -> u64 {
    mcptape_report::stats::predict_turn_quantile_us(&res.single, c.parallel, q, c.deadline_us)
        .unwrap()
}

/// The second report: `--fault error=-32603@100%` printed a healthy p50 and exited 0.
#[tokio::test(start_paused = true)]
async fn error_answers_are_outside_the_success_histogram() {
    let srv = server("fixed:2ms", "error=-32603@100%", 1);
    let c = cfg(10, 3, 2);
    let res = run(&srv, &c).await;
    assert_eq!(res.single.len(), 10);
    assert_eq!(res.single_ok.len(), 0);
    assert_eq!(res.turn_reads_ok.len(), 0);
    assert_eq!(res.single_phase.error_answers["internal (-32603)"], 10);
    assert_eq!(res.single_by_class["internal (-32603)"].len(), 10);
    assert_eq!(res.turn_phase.error_answers["internal (-32603)"], 6);
    assert_consistent(&res.single_phase, true);
    assert_consistent(&res.turn_phase, true);
    let r = res.report(&c, "t", "x", None, 1, None);
    assert_eq!(r.single_phase.success_ratio(), Some(0.0));
    assert_eq!(r.single_ok.count, 0);
    let table = r.table();
    assert!(table.contains("0 of 10 answered ok (0.0 %)"), "{table}");
    assert!(
        table.contains("reads 0 of 6 answered ok (0.0 %)"),
        "{table}"
    );
    let f = r.failures();
    assert!(
        f.iter().any(|x| x.contains("none answered with a result")),
        "{f:?}"
    );
}

/// The overload report: `--rate 1000000/s --max-phase 3s` ran 64-78 s and spilled its
/// backlog into the turns. The phase now ends at `max_phase` + at most one timeout, with at most
/// `max_in_flight` reads in flight, and says what rate it achieved.
#[tokio::test(start_paused = true)]
async fn max_phase_bounds_an_overloaded_open_loop_phase() {
    let srv = server("fixed:500ms", "", 1);
    let client = duplex_client(&srv, Duration::from_secs(5)).await;
    let mut c = cfg(1_000_000, 2, 2);
    c.load = Load::Open { per_s: 10_000.0 };
    c.max_phase = Duration::from_secs(1);
    c.timeout_us = 2_000_000;
    c.max_in_flight = 100;
    let t0 = Instant::now();
    let res = bench::run(client, srv.tape(), &c, &|_| {}).await.unwrap();
    assert!(res.single_cut);
    // Sends stop at 1 s; every read sent is answered 500 ms later: the drain ends by 1.5 s.
    assert!(
        res.single_elapsed_s <= 1.0 + 2.0,
        "{}",
        res.single_elapsed_s
    );
    assert!(res.single_elapsed_s >= 1.0, "{}", res.single_elapsed_s);
    let s = &res.single_phase;
    assert!(s.max_in_flight <= 100 && s.max_in_flight >= 99, "{s:?}");
    assert_consistent(s, true);
    let rate = res.send_rate.unwrap();
    assert_eq!(rate.scheduled, 10_000);
    assert_eq!(rate.sent, s.sent);
    // 100 in flight for 500 ms each: 200 sends fit in the 1 s.
    assert!((200..=300).contains(&rate.sent), "{rate:?}");
    assert_eq!(rate.dropped, 10_000 - rate.sent);
    assert!(rate.late_or_dropped_share > 0.9, "{rate:?}");
    assert!(rate.achieved_per_s < 400.0, "{rate:?}");
    let r = res.report(&c, "t", "x", None, 1, None);
    assert!(
        r.warnings.iter().any(|w| w.contains("asked 10000/s")),
        "{:?}",
        r.warnings
    );
    // No backlog reaches the turns: both turns answered in 500 ms.
    assert_eq!(res.turns, 2);
    assert_eq!(
        res.turn_phase.answered_ok + res.turn_phase.error_answers_total(),
        4
    );
    assert!(Instant::now() - t0 <= Duration::from_secs(1 + 2 + 2));
}

/// Counters per phase: with `--turns 0` the turn phase has none of the single phase's
/// cancellations (the issue: "4-read turns" showed 4 with `--turns 0`).
#[tokio::test(start_paused = true)]
async fn counters_are_per_phase_and_consistent() {
    let srv = server("fixed:1ms", "stall=10%", 5);
    let res = run(&srv, &cfg(100, 0, 4)).await;
    assert!(res.single_phase.cancellations_sent > 0);
    assert_eq!(res.turn_phase, PhaseCounters::default());
    let srv = server("fixed:1ms", "stall=10%", 5);
    let res = run(&srv, &cfg(50, 50, 4)).await;
    assert_consistent(&res.single_phase, true);
    assert_consistent(&res.turn_phase, true);
    assert_eq!(res.turn_phase.sent, 200);
    assert!(res.turn_phase.timed_out > 0);
    assert_eq!(
        res.cancellations,
        res.single_phase.cancellations_sent + res.turn_phase.cancellations_sent
    );
    // Stragglers are censored at the deadline in the turn-reads view.
    assert!(res.turn_reads.equivalent(res.turn_reads.max(), 800_000));
    assert_eq!(res.turn_reads.len(), 200);
}

/// A stop (SIGINT in `mcptape bench`) ends the run where it is, marked partial.
#[tokio::test(start_paused = true)]
async fn a_stop_returns_the_partial_result() {
    let srv = server("fixed:100ms", "", 1);
    let client = duplex_client(&srv, Duration::from_secs(5)).await;
    let c = cfg(1_000, 1_000, 2);
    let stop = tokio::time::sleep(Duration::from_millis(1_050));
    let res = bench::run_until(client, srv.tape(), &c, &|_| {}, stop)
        .await
        .unwrap();
    assert!(res.partial);
    assert_eq!(
        res.single_phase.answered_ok + res.single_phase.error_answers_total(),
        10
    );
    assert_eq!(res.turns, 0);
    let r = res.report(&c, "t", "x", None, 1, None);
    assert!(r.partial);
    assert!(r.table().contains("PARTIAL"));
}
