//! `mcptape record` as a stdio proxy, with real MCP clients and servers:
//! bytes each side saw equal the transcript's messages, shutdown is prompt,
//! stress and crash behaviour.

use crate::record_support;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use mcptape_transcript::{Direction, Event};
use record_support::*;

/// Runs `client_argv... -- tap(client side) -- mcptape record -o T -- tap(server side) -- server...`
/// and returns (client c2s, client s2c, server c2s, server s2c) byte logs.
fn tapped_chain(
    dir: &Path,
    transcript: &Path,
    server: &[String],
) -> (Vec<String>, [std::path::PathBuf; 4]) {
    let p = peers();
    let logs = ["client-c2s", "client-s2c", "server-c2s", "server-s2c"].map(|n| dir.join(n));
    let tap = p.script("tap.py").display().to_string();
    let py = p.python.display().to_string();
    let mut argv = vec![
        py.clone(),
        tap.clone(),
        "--c2s".into(),
        logs[0].display().to_string(),
        "--s2c".into(),
        logs[1].display().to_string(),
        "--".into(),
        mcptape().display().to_string(),
        "record".into(),
        "-o".into(),
        transcript.display().to_string(),
        "--".into(),
        py,
        tap,
        "--c2s".into(),
        logs[2].display().to_string(),
        "--s2c".into(),
        logs[3].display().to_string(),
        "--".into(),
    ];
    argv.extend(server.iter().cloned());
    (argv, logs)
}

/// server-everything over stdio, as an argv.
fn everything_stdio(p: &Peers) -> Vec<String> {
    vec![
        p.node.display().to_string(),
        p.server_everything().display().to_string(),
        "stdio".into(),
    ]
}

fn assert_bytes_match(t: &mcptape_transcript::Transcript, logs: &[std::path::PathBuf; 4]) {
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let c2s = stream_of(t, Direction::C2s);
    let s2c = stream_of(t, Direction::S2c);
    assert!(!c2s.is_empty() && !s2c.is_empty());
    for (log, want, what) in [
        (
            0,
            &c2s,
            "client-sent bytes differ from the transcript's c2s messages",
        ),
        (
            2,
            &c2s,
            "server-received bytes differ from the transcript's c2s messages",
        ),
        (
            3,
            &s2c,
            "server-sent bytes differ from the transcript's s2c messages",
        ),
        (
            1,
            &s2c,
            "client-received bytes differ from the transcript's s2c messages",
        ),
    ] {
        assert!(read(&logs[log]) == *want, "{what}");
    }
}

#[test]
fn python_sdk_client_through_record_sees_transcript_bytes_exactly() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let t_path = dir.path().join("t.jsonl");
    let server = everything_stdio(&p);
    let (chain, logs) = tapped_chain(dir.path(), &t_path, &server);
    let mut cmd = py_client_cmd(&p, &everything_two_template_args());
    cmd.arg("--").args(&chain);
    let summary = run_json(&mut cmd, Duration::from_secs(90));
    assert_eq!(summary["missing"]["code"], -32602);

    let t = read_transcript(&t_path);
    assert!(t.dropped.is_none());
    assert_bytes_match(&t, &logs);
    assert_eq!(t.protocol_version(), Some("2025-11-25"));
    let reads = Reads::of(&t);
    // 7 listed documents + 2 template expansions + 1 missing URI.
    assert_eq!(reads.reads.len(), 10, "{reads:?}");
    assert_eq!(reads.blob_reads(), 1);
    assert_eq!(
        reads.errors(),
        vec![(
            "demo://resource/static/document/mcptape-does-not-exist".to_owned(),
            -32602
        )]
    );
    assert_eq!(listed_uris(&t).len(), 7);
    assert_eq!(exit_of(&t), (Some(0), None));
    // server-everything announces itself on stderr; the proxy records it.
    assert!(
        t.records
            .iter()
            .any(|r| matches!(&r.event, Event::Stderr { line } if line.contains("STDIO")))
    );
}

#[test]
fn inspector_cli_calls_through_record_return_promptly_with_exact_bytes() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let server = everything_stdio(&p);
    let calls: [&[&str]; 3] = [
        &["--method", "resources/list"],
        &[
            "--method",
            "resources/read",
            "--uri",
            "demo://resource/static/document/features.md",
        ],
        &[
            "--method",
            "resources/read",
            "--uri",
            "demo://resource/dynamic/blob/7",
        ],
    ];
    for (i, call) in calls.iter().enumerate() {
        let sub = dir.path().join(format!("call{i}"));
        std::fs::create_dir(&sub).unwrap();
        let t_path = sub.join("t.jsonl");
        let (chain, logs) = tapped_chain(&sub, &t_path, &server);
        let mut cmd = Command::new(&p.node);
        cmd.arg(p.inspector())
            .arg("--cli")
            .args(*call)
            .arg("--")
            .args(&chain)
            .env("MCP_CATALOG_PATH", sub.join("catalog.json"))
            .current_dir(&sub);
        let (out, _) = run_bounded(&mut cmd, Duration::from_secs(60));
        assert!(
            out.status.success(),
            "inspector {call:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t = read_transcript(&t_path);
        // server-everything waits ~60 s on the roots/list the Inspector never answers; the
        // proxy ends it (SIGTERM after the stdin-close grace) so each call returns promptly:
        // the exit record says the signal, not an exit of its own (no clock read here).
        assert_eq!(exit_of(&t), (None, Some(15)), "inspector {call:?}");
        assert_bytes_match(&t, &logs);
        let s2c = messages(&t, Direction::S2c);
        assert!(
            s2c.iter().any(|m| m["method"] == "roots/list"),
            "server-everything asked for roots"
        );
        let printed: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("inspector prints JSON");
        let c2s = messages(&t, Direction::C2s);
        let last = c2s
            .iter()
            .rev()
            .find(|m| m.get("id").is_some() && m["method"] == call[1])
            .expect("the call");
        let reply = s2c
            .iter()
            .find(|m| m["id"] == last["id"] && m.get("method").is_none())
            .expect("its reply");
        assert_eq!(
            printed, reply["result"],
            "the Inspector printed the recorded result"
        );
    }
}

/// `mcptape record -o T -- python echo_lines.py ECHO_ARGS...` with all three pipes.
fn record_echo(t_path: &Path, echo_args: &[&str]) -> Guard {
    let p = peers();
    let script = p.script("echo_lines.py");
    let mut server = vec![p.python.as_os_str(), script.as_os_str()];
    server.extend(echo_args.iter().map(OsStr::new));
    spawn_record(t_path, &server, Stdio::piped())
}

/// One 16 MiB JSON-RPC message line (without `\n`).
fn big_line(k: usize) -> Vec<u8> {
    const SIXTEEN_MIB: usize = 16 * 1024 * 1024;
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"big-{k}\",\"result\":{{\"blob\":\"");
    let tail = "\"}}";
    let mut v = head.into_bytes();
    let fill = SIXTEEN_MIB - v.len() - tail.len();
    v.extend((0..fill).map(|i| {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i + k) % 64]
    }));
    v.extend_from_slice(tail.as_bytes());
    assert_eq!(v.len(), SIXTEEN_MIB);
    v
}

#[test]
fn stress_10000_messages_and_16_mib_lines_pass_through_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let t_path = dir.path().join("t.jsonl");
    let mut guard = record_echo(&t_path, &[]);
    let child = &mut guard.0;
    let mut lines: Vec<Vec<u8>> = vec![b"banner: not JSON".to_vec()];
    for i in 0..10_000usize {
        if i > 0 && i % 2500 == 0 {
            lines.push(big_line(i / 2500));
        }
        lines.push(format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\",\"params\":{{\"n\":\"{i:08}\"}}}}").into_bytes());
    }
    lines.push(big_line(4));
    let mut input = Vec::new();
    for l in &lines {
        input.extend_from_slice(l);
        input.push(b'\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let to_write = input.clone();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&to_write).unwrap();
        drop(stdin);
    });
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        stdout.read_to_end(&mut v).unwrap();
        v
    });
    writer.join().unwrap();
    let echoed = reader.join().unwrap();
    let status = wait_bounded(child, Duration::from_secs(120)).expect("mcptape record ended");
    assert!(status.success(), "{status:?}");
    assert!(
        echoed == input,
        "echoed bytes differ from the input ({} vs {} bytes)",
        echoed.len(),
        input.len()
    );

    let t = read_transcript(&t_path);
    for dir in [Direction::C2s, Direction::S2c] {
        let recorded: Vec<&[u8]> = t
            .records
            .iter()
            .filter_map(|r| match &r.event {
                Event::Message { dir: d, msg, .. } if *d == dir => Some(msg.get().as_bytes()),
                Event::Noise { dir: d, line } if *d == dir => Some(line.as_bytes()),
                _ => None,
            })
            .collect();
        assert_eq!(
            recorded.len(),
            10_005,
            "{dir:?}: 10,000 messages + 4 big lines + 1 banner"
        );
        for (i, (got, want)) in recorded.iter().zip(&lines).enumerate() {
            assert!(*got == want.as_slice(), "{dir:?} record {i} differs");
        }
    }
    let noise = t
        .records
        .iter()
        .filter(|r| matches!(r.event, Event::Noise { .. }))
        .count();
    assert_eq!(noise, 2, "the banner, once each way");
    assert_monotonic(&t, "t.jsonl");
}

#[test]
fn sigkill_mid_stream_leaves_every_complete_record_and_an_exit_record() {
    let dir = tempfile::tempdir().unwrap();
    let t_path = dir.path().join("t.jsonl");
    let mut guard = record_echo(&t_path, &["--die-after", "500"]);
    let child = &mut guard.0;
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let writer = std::thread::spawn(move || {
        for i in 0..2000 {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n");
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut echoed = Vec::new();
    stdout.read_to_end(&mut echoed).unwrap();
    let status = wait_bounded(child, Duration::from_secs(30)).expect("mcptape record ended");
    writer.join().unwrap();
    assert_eq!(
        status.code(),
        Some(128 + 9),
        "the proxy reports the server's SIGKILL as 137"
    );

    let t = read_transcript(&t_path);
    assert!(
        t.dropped.is_none(),
        "every record line is complete: {:?}",
        t.dropped
    );
    let s2c = messages(&t, Direction::S2c);
    assert_eq!(
        s2c.len(),
        500,
        "the server echoed 500 lines before it was killed"
    );
    let c2s = messages(&t, Direction::C2s);
    assert!(c2s.len() >= 500);
    for (i, m) in s2c.iter().enumerate() {
        assert_eq!(m["id"], i, "in order");
        assert_eq!(&c2s[i], m);
    }
    assert_eq!(echoed.iter().filter(|&&b| b == b'\n').count(), 500);
    assert_eq!(exit_of(&t), (None, Some(9)));
    assert!(
        matches!(t.records.last().unwrap().event, Event::Exit { .. }),
        "the exit record is last"
    );
}

/// Issue 28: Ctrl-C of `mcptape record` in front of a real server, mid-session (the client's
/// stdin held open): record exits 130 as bench and verify do, within the grace periods, and
/// the exit record names SIGINT. server-everything exits 0 on SIGINT (the record says code 0
/// and signal 2); the Python SDK server raises KeyboardInterrupt and then waits for its stdin
/// reader, so record also closes its stdin (it then dies of the SIGINT).
#[test]
fn record_interrupted_by_sigint_before_a_real_server_exits_130_and_its_exit_record_names_the_signal()
 {
    let p = peers();
    let py_server = p.script("py_server.py");
    let se = p.server_everything();
    let servers: [(&str, Vec<&OsStr>, Option<i32>); 2] = [
        (
            "server-everything",
            vec![p.node.as_os_str(), se.as_os_str(), OsStr::new("stdio")],
            Some(0),
        ),
        (
            "python sdk server",
            vec![
                p.python.as_os_str(),
                py_server.as_os_str(),
                OsStr::new("stdio"),
            ],
            None,
        ),
    ];
    for (name, server, code) in servers {
        let dir = tempfile::tempdir().unwrap();
        let t_path = dir.path().join("t.jsonl");
        let mut g = spawn_record(&t_path, &server, Stdio::null());
        let mut stdin = g.0.stdin.take().unwrap();
        let stdout = g.0.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        stdin
            .write_all(
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
            )
            .unwrap();
        // The session is up once the server answered the handshake.
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("{name}: no initialize answer: {e}"));
            if line.contains("\"id\":1") {
                break;
            }
        }
        let status = kill_and_wait(&mut g, "-INT");
        assert_eq!(status.code(), Some(130), "{name}");
        drop(stdin);
        let t = read_transcript(&t_path);
        assert_eq!(exit_of(&t), (code, Some(2)), "{name}");
        assert!(
            matches!(t.records.last().unwrap().event, Event::Exit { .. }),
            "{name}: the exit record is last"
        );
        assert_eq!(messages(&t, Direction::S2c)[0]["id"], 1, "{name}");
    }
}

/// `mcptape record -o T EXTRA... -- sh -c SCRIPT` with stdin closed, within 20 s:
/// the temp dir holding T, T, and the output.
fn record_sh(extra: &[&str], script: &str) -> (tempfile::TempDir, PathBuf, Output) {
    let dir = tempfile::tempdir().unwrap();
    let t_path = dir.path().join("t.jsonl");
    let mut args = extra.to_vec();
    args.extend(["--", "sh", "-c", script]);
    let out = run_mcptape_out("record", &t_path, &args, Duration::from_secs(20));
    (dir, t_path, out)
}

#[test]
fn exit_code_and_stderr_of_the_server_propagate() {
    let (_dir, t_path, out) = record_sh(
        &[],
        "echo '{\"jsonrpc\":\"2.0\",\"method\":\"x\"}'; echo oops >&2; exit 3",
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "oops\n");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
    let t = read_transcript(&t_path);
    assert_eq!(exit_of(&t), (Some(3), None));
    assert!(
        t.records
            .iter()
            .any(|r| matches!(&r.event, Event::Stderr { line } if line == "oops"))
    );
    assert_eq!(messages(&t, Direction::S2c).len(), 1);
}

#[test]
fn server_ignoring_eof_and_sigterm_is_killed_after_the_grace_periods() {
    // stdin is /dev/null: the client "closes" at once. The server would sleep 30 s: the
    // kill is what ends it within record_sh's bound (20 s), and the exit record says SIGKILL.
    let (_dir, t_path, out) = record_sh(
        &["--grace", "300ms", "--term-grace", "300ms"],
        "trap '' TERM; exec sleep 30",
    );
    assert_eq!(out.status.code(), Some(128 + 9));
    let t = read_transcript(&t_path);
    assert_eq!(exit_of(&t), (None, Some(9)));
}

/// Nothing recorded is ever altered: a stdout line with whitespace around its
/// JSON value passes through unchanged and is recorded as noise with its exact
/// bytes (not as a trimmed message), as `LineFramer` classifies it; the check
/// rule `stdio-non-jsonrpc-line` then flags it.
#[test]
fn line_with_whitespace_around_json_is_noise_with_exact_bytes() {
    let (_dir, t_path, out) = record_sh(
        &[],
        "printf ' {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\\t \\n{\"jsonrpc\":\"2.0\",\"method\":\"y\"}\\n'",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        out.stdout,
        b" {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\t \n{\"jsonrpc\":\"2.0\",\"method\":\"y\"}\n"
    );
    let t = read_transcript(&t_path);
    let noise: Vec<&Event> = t
        .records
        .iter()
        .map(|r| &r.event)
        .filter(|e| matches!(e, Event::Noise { .. }))
        .collect();
    assert_eq!(
        noise,
        vec![&Event::Noise {
            dir: Direction::S2c,
            line: " {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\t ".to_owned()
        }]
    );
    assert_eq!(
        messages(&t, Direction::S2c),
        vec![serde_json::json!({"jsonrpc":"2.0","method":"y"})]
    );
    // ... and `mcptape check` flags the line.
    let mut check = Command::new(mcptape());
    check.arg("check").arg(&t_path);
    let (out, _) = run_bounded(&mut check, Duration::from_secs(20));
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert_has(&report, ":2: error[stdio-non-jsonrpc-line]");
}

/// Issue 23: two `mcptape record -o T` at once on one T (the TypeScript SDK v2
/// starts the server command twice: a probe, then the session), each with the
/// real Python SDK client and server: neither truncates the other's records.
/// One writes T, the other T.1.jsonl and says so on stderr; both transcripts
/// hold every exchange of their client.
#[test]
fn two_recorders_on_one_output_keep_every_record() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let summaries: Vec<serde_json::Value> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| s.spawn(|| record_py_server(&p, "legacy", &out)))
            .collect();
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let second = dir.path().join("t.1.jsonl");
    for (path, summary) in [(&out, &summaries[0]), (&second, &summaries[1])] {
        let t = read_transcript(path);
        let reads = t
            .records
            .iter()
            .filter(|r| {
                matches!(&r.event, mcptape_transcript::Event::Message { dir: mcptape_transcript::Direction::S2c, msg, .. } if msg.get().contains("\"contents\""))
            })
            .count();
        assert_eq!(
            reads,
            summary["reads"].as_array().unwrap().len(),
            "{}: every read the client made is recorded",
            path.display()
        );
    }
}

/// tests/data/ts_v2_client.mjs (TypeScript SDK v2, `auto` negotiation) with
/// `server` as its stdio server command; its summary.
fn ts_v2_client(p: &Peers, server: &[&std::ffi::OsStr]) -> serde_json::Value {
    let prefix = std::env::var_os("MCPTAPE_TS_V2_PREFIX")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".tools/npm-ts2"));
    let mut cmd = Command::new(&p.node);
    cmd.arg(repo_root().join("crates/mcptape/tests/data/ts_v2_client.mjs"))
        .arg("--")
        .args(server)
        .env("MCPTAPE_TS_V2_PREFIX", prefix);
    run_json(&mut cmd, Duration::from_secs(120))
}

/// Issue 23: the TypeScript SDK v2 in its `auto` mode starts the server
/// command twice, one after the other: a `server/discover` probe, then the
/// session. Recorded through `mcptape record -o T`, both are kept (T and
/// T.1.jsonl; before, the session truncated the probe's records). Replayed to
/// the same client from the two transcripts (`serve T T.1.jsonl`), the client
/// sees what it saw from the real Python SDK server.
#[test]
fn typescript_sdk_v2_auto_mode_recorded_then_replayed_to_itself() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("v2.jsonl");
    let server = p.script("py_server.py");
    let live = ts_v2_client(
        &p,
        &[
            mcptape().as_os_str(),
            "record".as_ref(),
            "-o".as_ref(),
            t.as_os_str(),
            "--".as_ref(),
            p.python.as_os_str(),
            server.as_os_str(),
            "stdio".as_ref(),
        ],
    );
    assert_eq!(live["protocolVersion"], "2026-07-28", "{live}");
    assert_eq!(live["reads"].as_array().unwrap().len(), 6, "{live}");
    let second = dir.path().join("v2.1.jsonl");
    let (probe, session) = (
        client_methods(&read_transcript(&t)),
        client_methods(&read_transcript(&second)),
    );
    assert_eq!(probe, ["server/discover"], "the probe's records are kept");
    assert!(
        session.contains(&"resources/read".to_owned()),
        "{session:?}"
    );
    let replayed = ts_v2_client(
        &p,
        &[
            mcptape().as_os_str(),
            "serve".as_ref(),
            t.as_os_str(),
            second.as_os_str(),
            "--latency".as_ref(),
            "fixed:0".as_ref(),
        ],
    );
    assert_eq!(replayed, live);
}
