//! The one client session over Streamable HTTP (`Client::http`), against the
//! recorded server's own Streamable HTTP endpoint (`serve_http`, in-process on
//! a loopback port): the 2025 session era's `Mcp-Session-Id` is repeated after
//! `initialize` and ended with `DELETE`, reads go out concurrently, and a
//! cancelled read's POST is aborted so its answer never arrives.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{TINY, serve_on_loopback, server_of, tape_of};
use mcptape_replay::bench::{self, BenchConfig};
use mcptape_replay::serve::Server;
use mcptape_report::run::Load;
use mcptape_transport::http::HttpClient;
use mcptape_transport::session::{Observer, Session, WireEvent};
use tokio::time::Duration;

/// Starts the recorded server on a loopback port; returns its URL.
async fn listen(model: &str) -> (String, Arc<Server>) {
    let srv = Arc::new(server_of(tape_of(TINY), model));
    let addr = serve_on_loopback(srv.clone(), &[]).await;
    (format!("http://{addr}/mcp"), srv)
}

fn cfg(reads: u64, turns: u64, parallel: u32, deadline_ms: u64, timeout_ms: u64) -> BenchConfig {
    BenchConfig {
        reads,
        turns,
        parallel,
        deadline_us: deadline_ms * 1000,
        timeout_us: timeout_ms * 1000,
        load: Load::Closed { concurrency: 2 },
        max_phase: Duration::from_secs(60),
        max_in_flight: mcptape_report::run::DEFAULT_MAX_IN_FLIGHT,
        validate: false,
        ..BenchConfig::default()
    }
}

#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl Observer for Seen {
    fn observe(&self, e: WireEvent<'_>) {
        let line = match e {
            WireEvent::PostSent { headers, body, .. } => {
                let sid = headers.iter().any(|(n, _)| n == "mcp-session-id");
                let method = serde_json::from_str::<serde_json::Value>(body).unwrap()["method"]
                    .as_str()
                    .unwrap_or("(answer)")
                    .to_owned();
                format!("POST {method} session={sid}")
            }
            WireEvent::DeleteSent { headers, .. } => {
                format!(
                    "DELETE session={}",
                    headers.iter().any(|(n, _)| n == "mcp-session-id")
                )
            }
            WireEvent::DeleteStatus { status, .. } => format!("DELETE -> {status}"),
            _ => return,
        };
        self.0.lock().unwrap().push(line);
    }
}

#[tokio::test]
async fn http_session_era_repeats_the_session_id_after_initialize_and_ends_with_delete() {
    let (url, srv) = listen("fixed:1ms").await;
    let seen = Arc::new(Seen::default());
    let client = Session::http(
        HttpClient::new(&url).unwrap(),
        Some(seen.clone() as Arc<dyn Observer>),
    );
    bench::handshake(&client, srv.tape(), Duration::from_secs(5))
        .await
        .unwrap();
    let (o, msg) = client
        .call(
            "resources/read",
            &serde_json::json!({"uri": "file:///project/a.md"}),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(o, bench::Outcome::Ok);
    assert_eq!(msg["result"]["contents"][0]["text"], "# A\n");
    client.close(Duration::from_secs(5)).await;
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(
        seen[..3],
        [
            "POST initialize session=false",
            "POST notifications/initialized session=true",
            "POST resources/read session=true",
        ]
    );
    assert_eq!(seen[3], "DELETE session=true");
    assert!(seen[4].starts_with("DELETE -> 2"), "{seen:?}");
}

#[tokio::test]
async fn http_bench_reads_concurrently_and_a_cancelled_post_is_aborted_never_late() {
    let (url, srv) = listen("fixed:5ms").await;
    let client = Arc::new(bench::connect_http(&url, None).unwrap());
    bench::handshake(&client, srv.tape(), Duration::from_secs(5))
        .await
        .unwrap();
    let res = bench::run(
        client.clone(),
        srv.tape(),
        &cfg(6, 2, 3, 2_000, 5_000),
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!((res.single.len(), res.turns, res.cancellations), (6, 2, 0));
    assert!(!res.target_closed);

    // Every read takes 1 s, the turn deadline is 50 ms: both stragglers of
    // each turn are cancelled; their POSTs are aborted, so nothing is late
    // and each is abandoned at the 300 ms timeout.
    let (url, srv) = listen("fixed:1s").await;
    let client = Arc::new(bench::connect_http(&url, None).unwrap());
    bench::handshake(&client, srv.tape(), Duration::from_secs(5))
        .await
        .unwrap();
    let res = bench::run(client.clone(), srv.tape(), &cfg(0, 2, 2, 50, 300), &|_| {})
        .await
        .unwrap();
    assert_eq!((res.turns, res.turns_hit_deadline), (2, 2));
    assert_eq!(res.cancellations, 4);
    assert_eq!(res.late_responses, 0);
    assert_eq!(res.abandoned, 4);
}
