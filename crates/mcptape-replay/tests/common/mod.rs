//! Shared helpers of the replay integration tests: the tapes under `tests/data/`, servers
//! of them, in-process clients of them, a raw Streamable HTTP POST.
#![allow(dead_code)]

use std::sync::Arc;

use mcptape_replay::bench::{self, BenchConfig, Client};
use mcptape_replay::latency::{FaultSpec, LatencyModel};
use mcptape_replay::schedule::TimerMode;
use mcptape_replay::serve::{Server, serve_stream};
use mcptape_replay::tape::Tape;
use mcptape_report::run::Load;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Duration;

/// `tests/data/tiny-two-reads.jsonl`: an initialize and reads of `a.md`, `img/b.png` and a
/// recorded not-found `missing.md`.
pub const TINY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/tiny-two-reads.jsonl"
);

/// The tape of the transcript at `path` (read strictly; panics on any error).
pub fn tape_of(path: &str) -> Tape {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let t = mcptape_transcript::reader::read(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    Tape::from_transcript(&t).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A server of [`TINY`] on the virtual clock ([`TimerMode::Virtual`]): latency model `model`
/// (`LatencyModel::parse` syntax), faults `fault` (`FaultSpec::parse` syntax, `""` for none),
/// RNG seed `seed`. Panics on a spec that does not parse.
pub fn server(model: &str, fault: &str, seed: u64) -> Arc<Server> {
    let faults = if fault.is_empty() {
        FaultSpec::default()
    } else {
        FaultSpec::parse(fault).unwrap()
    };
    Arc::new(
        Server::new(
            tape_of(TINY),
            LatencyModel::parse(model).unwrap(),
            faults,
            seed,
            &[],
        )
        .unwrap()
        .with_timer(TimerMode::Virtual),
    )
}

/// A server of `tape` with latency model `model` (`LatencyModel::parse` syntax), no faults,
/// seed 1, on the real timer. Panics on a model that does not parse.
pub fn server_of(tape: Tape, model: &str) -> Server {
    Server::new(
        tape,
        LatencyModel::parse(model).unwrap(),
        FaultSpec::default(),
        1,
        &[],
    )
    .unwrap()
}

/// [`server_of`] on the virtual clock ([`TimerMode::Virtual`]).
pub fn virtual_server(tape: Tape, model: &str) -> Server {
    server_of(tape, model).with_timer(TimerMode::Virtual)
}

/// A server of `tape` answering at once (`fixed:0ms`, no faults, seed 1, real timer).
pub fn instant_server(tape: Tape) -> Arc<Server> {
    Arc::new(server_of(tape, "fixed:0ms"))
}

/// The recorded reply line (raw JSON text, no `\n`) of the first exchange of `tape` whose
/// request method is `method`; panics when there is none.
pub fn recorded_reply<'a>(tape: &'a Tape, method: &str) -> &'a str {
    &tape
        .exchanges
        .iter()
        .find(|e| tape.request(e).method == method)
        .unwrap_or_else(|| panic!("no recorded {method} exchange"))
        .reply_raw
}

/// `corpus/transcripts/NAME` of the repository, as a path string.
pub fn corpus(name: &str) -> String {
    format!(
        "{}/../../corpus/transcripts/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Serves `srv` ([`serve_stream`]) on one end of an in-memory duplex pipe (1 MiB buffer; the
/// serve task's result is not looked at) and returns a client on the other end, no handshake
/// sent.
pub fn piped_client(srv: &Arc<Server>) -> Arc<Client> {
    let (a, b) = tokio::io::duplex(1 << 20);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let s = srv.clone();
    tokio::spawn(async move {
        let _ = serve_stream(s, ar, aw).await;
    });
    Arc::new(Client::over(br, bw))
}

/// A [`piped_client`] of `srv`, its handshake ([`bench::handshake`]) done within
/// `handshake_within`. Panics when the handshake fails.
pub async fn duplex_client(srv: &Arc<Server>, handshake_within: Duration) -> Arc<Client> {
    let client = piped_client(srv);
    bench::handshake(&client, srv.tape(), handshake_within)
        .await
        .unwrap();
    client
}

/// Serves `srv` over Streamable HTTP (`serve_http_allowing`) on a fresh loopback port
/// (`127.0.0.1:0`), also accepting the Origins `allowed`, until the test's runtime ends; the
/// bound address. Panics when the port cannot be bound or serving fails.
pub async fn serve_on_loopback(srv: Arc<Server>, allowed: &[&str]) -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let allowed: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
    tokio::spawn(async move {
        mcptape_replay::http::serve_http_allowing(srv, l, &allowed, std::future::pending())
            .await
            .unwrap();
    });
    addr
}

/// One `POST /mcp` of the JSON `body` to `127.0.0.1:port` with the raw header lines
/// `headers` (each ending CRLF, `Host` included) and `Connection: close`; the whole
/// response text, read within 10 s (panics past that).
pub async fn post_raw(port: u16, headers: &str, body: &str) -> String {
    post_bytes(port, headers, body.as_bytes()).await
}

/// [`post_raw`] of a body of any bytes (not UTF-8, say).
pub async fn post_bytes(port: u16, headers: &str, body: &[u8]) -> String {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        s.read_to_string(&mut out),
    )
    .await
    .expect("answered within 10 s")
    .unwrap();
    out
}

/// A bench config on a closed loop of concurrency 1: `reads` single reads, then
/// `turns` turns of `parallel` reads each, deadline 800 ms, read timeout `timeout_us` (µs),
/// each phase capped at 600 s; the rest [`BenchConfig::default`].
pub fn closed_cfg(reads: u64, turns: u64, parallel: u32, timeout_us: u64) -> BenchConfig {
    BenchConfig {
        reads,
        turns,
        parallel,
        deadline_us: 800_000,
        timeout_us,
        load: Load::Closed { concurrency: 1 },
        max_phase: Duration::from_secs(600),
        // Paused-clock tests: open-loop sends wait on tokio's (virtual) timer.
        pacing: mcptape_replay::schedule::TimerMode::Virtual,
        ..BenchConfig::default()
    }
}
