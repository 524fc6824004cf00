//! `mcptape record --listen --upstream`: the Streamable HTTP recording proxy in
//! front of real servers, driven by real clients (the MCP conformance suite, the
//! Python SDK client).

use crate::record_support;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcptape_transcript::{Direction, Event, HttpNote, Transcript};
use record_support::*;

/// Starts `mcptape record` as an HTTP proxy on a free port in front of `upstream`.
fn start_proxy(t_path: &Path, upstream: &str) -> (Guard, u16) {
    record_listen(t_path, upstream, Stdio::piped())
}

/// Stops the proxy with SIGTERM (by its pid) and returns its stderr.
fn stop_proxy(mut proxy: Guard) -> String {
    let status = terminate(&mut proxy);
    let mut err = String::new();
    proxy
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "proxy exit {status:?}: {err}");
    err
}

/// Number of HTTP exchanges the proxy reported on stderr.
fn exchanges_reported(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains("HTTP exchanges"))
        .unwrap_or_else(|| panic!("no summary in {stderr}"));
    line.trim_start_matches("mcptape: ")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Exchange numbers that have a `dir` record (message with HttpMeta, or a body-less `http` record).
fn exchanges_with(t: &Transcript, dir: Direction) -> std::collections::BTreeSet<u64> {
    t.records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Message {
                dir: d,
                http: Some(h),
                ..
            } if *d == dir => Some(h.exchange),
            Event::Http { dir: d, http, .. } if *d == dir => Some(http.exchange),
            _ => None,
        })
        .collect()
}

#[test]
fn everything_http_with_loopback_preload_listens_on_127_0_0_1_only() {
    let (_server, port) = everything_http();
    let out = Command::new("ss")
        .args(["-ltnH"])
        .output()
        .expect("ss (iproute2) is needed");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let locals: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3))
        .filter(|local| local.ends_with(&format!(":{port}")))
        .collect();
    assert_eq!(
        locals,
        vec![format!("127.0.0.1:{port}")],
        "ss -ltn:\n{text}"
    );
}

fn run_conformance(p: &Peers, url: &str, out_dir: &Path) {
    let mut cmd = Command::new(&p.node);
    cmd.arg(p.conformance())
        .args(["server", "--url", url, "--timeout", "20000", "-o"])
        .arg(out_dir);
    let (out, _) = run_bounded(&mut cmd, Duration::from_secs(150));
    // The suite exits 1 when any check fails (server-everything is not the suite's
    // reference server); what matters is that it ran every scenario.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Total:"),
        "conformance did not finish: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn conformance_verdicts_through_http_record_equal_verdicts_direct() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = start_everything_http(&p);
    let upstream = format!("http://127.0.0.1:{port}/mcp");

    let direct = dir.path().join("direct");
    run_conformance(&p, &upstream, &direct);

    let t_path = dir.path().join("conformance.jsonl");
    let (proxy, proxy_port) = start_proxy(&t_path, &upstream);
    let proxied = dir.path().join("proxied");
    run_conformance(&p, &format!("http://127.0.0.1:{proxy_port}/mcp"), &proxied);
    let stderr = stop_proxy(proxy);

    let want = conformance_verdicts(&direct);
    let got = conformance_verdicts(&proxied);
    assert!(
        want.len() >= 30,
        "the suite ran its server scenarios: {:?}",
        want.keys()
    );
    assert!(want.values().flatten().any(|(_, s)| s == "SUCCESS"));
    // The same scenarios and, per scenario, the same checks in the same order.
    let ids = |v: &BTreeMap<String, Vec<(String, String)>>| -> Vec<(String, Vec<String>)> {
        v.iter()
            .map(|(k, cs)| (k.clone(), cs.iter().map(|(c, _)| c.clone()).collect()))
            .collect()
    };
    assert_eq!(ids(&got), ids(&want), "scenarios/checks through the proxy");
    // Every verdict equal but one, the intended effect of the proxy's
    // loopback guard (issue 14, MCP Streamable HTTP "Security Warning":
    // validate Origin/Host against DNS rebinding): server-everything accepts
    // a foreign Host (FAILURE direct); `record --listen` answers it 403
    // (SUCCESS through the proxy).
    let differ: Vec<(&str, &str, &str)> = want
        .iter()
        .flat_map(|(scenario, cs)| cs.iter().zip(&got[scenario]))
        .filter(|((_, d), (_, p))| d != p)
        .map(|((c, d), (_, p))| (c.as_str(), d.as_str(), p.as_str()))
        .collect();
    assert_eq!(
        differ,
        vec![("localhost-host-rebinding-rejected", "FAILURE", "SUCCESS")],
        "(check, direct, through the proxy) for the verdicts that differ"
    );

    let t = read_transcript(&t_path);
    let n = exchanges_reported(&stderr);
    assert!(n >= 100, "{n} exchanges");
    let all: std::collections::BTreeSet<u64> = (0..n).collect();
    assert_eq!(
        exchanges_with(&t, Direction::C2s),
        all,
        "a c2s record for every exchange"
    );
    assert_eq!(
        exchanges_with(&t, Direction::S2c),
        all,
        "an s2c record for every exchange"
    );
    // SSE replies are recorded per event with their event ids.
    assert!(t.records.iter().any(
        |r| matches!(&r.event, Event::Message { http: Some(h), .. } if h.sse_event_id.is_some())
    ));
}

#[test]
fn python_sdk_client_through_http_record_both_eras_against_python_server() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = start_py_http(&p);
    for (mode, era) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let t_path = dir.path().join(format!("{era}.jsonl"));
        let (proxy, proxy_port) = start_proxy(&t_path, &format!("http://127.0.0.1:{port}/mcp"));
        let mut cmd = py_client_cmd(
            &p,
            &[
                "--mode",
                mode,
                "--reads",
                "100",
                "--template",
                "mcptape://items/9",
            ],
        );
        cmd.args(["--url", &format!("http://127.0.0.1:{proxy_port}/mcp")]);
        let summary = run_json(&mut cmd, Duration::from_secs(90));
        stop_proxy(proxy);

        let t = read_transcript(&t_path);
        assert_eq!(t.protocol_version(), Some(era));
        assert_eq!(summary["protocolVersion"], era);
        let reads = Reads::of(&t);
        assert_eq!(
            reads.reads.len(),
            8,
            "6 listed + 1 template + 1 missing: {reads:?}"
        );
        assert_eq!(reads.blob_reads(), 3);
        assert_eq!(reads.errors().len(), 1);
        assert_eq!(reads.errors()[0].1, -32602);
        // The 2,099,087-byte PNG came through whole: 2,798,784 base64 chars.
        let large = report_read(&summary, "mcptape://blobs/large.png");
        assert_eq!(large["contents"][0]["base64Chars"], 2_798_784);
        assert_eq!(largest_blob_chars(&t), Some(2_798_784));
        if era == "2026-07-28" {
            let c2s = messages(&t, Direction::C2s);
            assert_eq!(c2s[0]["method"], "server/discover");
            assert!(!c2s.iter().any(|m| m["method"] == "initialize"));
        }
        // Body-less HTTP events are typed `http` records, never free-text noise.
        assert!(
            !t.records
                .iter()
                .any(|r| matches!(r.event, Event::Noise { .. })),
            "no noise records"
        );
        let notes = http_notes(&t);
        // Every event stream's end is noted once, with why it ended.
        let sse_posts: std::collections::BTreeSet<u64> = t
            .records
            .iter()
            .filter_map(|r| match &r.event {
                Event::Message { http: Some(h), .. } | Event::Http { http: h, .. }
                    if h.headers.iter().any(|(n, v)| {
                        n == "content-type" && v.starts_with("text/event-stream")
                    }) =>
                {
                    Some(h.exchange)
                }
                _ => None,
            })
            .collect();
        let ended: std::collections::BTreeSet<u64> = notes
            .iter()
            .filter(|(_, _, n)| {
                matches!(
                    n,
                    HttpNote::ServerClosedStream | HttpNote::ClientClosedStream
                )
            })
            .map(|(_, x, _)| *x)
            .collect();
        assert_eq!(ended, sse_posts, "{notes:?}");
        if era == "2025-11-25" {
            // The Python SDK server answers the older era's POSTs with event streams.
            assert!(!sse_posts.is_empty(), "{notes:?}");
            // The older era: the client opens the GET stream and ends the session with DELETE.
            for m in ["GET", "DELETE"] {
                assert!(
                    notes
                        .iter()
                        .any(|(d, _, n)| *d == (Direction::C2s, m.to_owned())
                            && *n == HttpNote::NoBody),
                    "a c2s noBody {m}: {notes:?}"
                );
            }
        }
    }
}

/// `(direction, method)`, exchange and note of every `http` record.
fn http_notes(t: &Transcript) -> Vec<((Direction, String), u64, HttpNote)> {
    t.records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Http {
                dir, http, note, ..
            } => Some((
                (*dir, http.method.clone().unwrap_or_default()),
                http.exchange,
                *note,
            )),
            _ => None,
        })
        .collect()
}

/// Fresh-user report bug 8: `record --listen 0.0.0.0:8931` was accepted though
/// the help and README say loopback only (the proxy forwards, and with
/// `--no-redact` stores, credentials). Non-loopback addresses are refused with
/// a clear error before the transcript file is created; loopback is accepted.
#[test]
fn record_listen_on_a_non_loopback_address_is_refused_before_the_transcript_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let record = |t_path: &Path, listen: &str| {
        let out = run_mcptape_out(
            "record",
            t_path,
            &[
                "--listen",
                listen,
                "--upstream",
                "http://127.0.0.1:1/mcp",
                "--duration",
                "1s",
            ],
            Duration::from_secs(20),
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    };
    for listen in ["0.0.0.0:8931", "[::]:8931", "192.0.2.1:8931"] {
        let t_path = dir.path().join("refused.jsonl");
        let (code, stderr) = record(&t_path, listen);
        assert_eq!(code, Some(2), "{listen}: {stderr}");
        assert!(
            stderr.contains("--listen must be a loopback address (127.0.0.1 or ::1), got"),
            "{listen}: {stderr}"
        );
        assert!(!t_path.exists(), "{listen}: no transcript file is left");
    }
    let t_path = dir.path().join("loopback.jsonl");
    let (code, stderr) = record(&t_path, "127.0.0.1:0");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("mcptape: recording http://127.0.0.1:"),
        "{stderr}"
    );
    assert_eq!(read_transcript(&t_path).records.len(), 0);
}
