//! One CLI convention across the commands: `--allow RULE` takes one rule per flag, duration
//! flags read `5s`/`800ms`/`250us` through one parser, caps are stated in `--help` and refused
//! past them (the cap in the message), network errors are words (no Rust debug structs), and a
//! debug build says so on stderr before it measures.

use crate::record_support as support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use support::*;

fn run(args: &[&str]) -> Output {
    let mut cmd = Command::new(mcptape());
    cmd.args(args).current_dir(repo_root());
    run_bounded(&mut cmd, Duration::from_secs(60)).0
}

/// `mcptape SUB -o OUT ARGS...` as [`run`] runs it, `args` split at white space.
fn run_out(sub: &str, out: &Path, args: &str) -> Output {
    let mut all = vec![sub, "-o", out.to_str().unwrap()];
    all.extend(args.split_whitespace());
    run(&all)
}

use support::{stderr_text as stderr, stdout_text as stdout};

/// Regression: `--allow RULE...` took every following word as a rule, so the path after it
/// was swallowed and `check` had nothing to check.
#[test]
fn allow_then_a_path_checks_the_path() {
    let o = run(&["check", "--allow", "error-id-null", "corpus/transcripts"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let last = stdout(&o).lines().last().unwrap_or_default().to_owned();
    assert!(last.starts_with("PASS: "), "{last}");
    // Two rules take two flags; both rule names are checked as rules, the path as a path.
    let o = run(&words(
        "check --allow error-id-null --allow no-such-rule corpus/transcripts",
    ));
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("no-such-rule"), "{}", stderr(&o));
}

#[test]
fn record_grace_takes_250us_and_refuses_a_bare_number_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let o = run_out("record", &t, "--grace 250us --term-grace 250us -- true");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(t.exists());
    let t2 = tmp.path().join("t2.jsonl");
    let o = run_out("record", &t2, "--grace 250 -- true");
    let e = refusal(&o);
    assert_has(&e, "--grace 250");
    // Refused before the transcript file is created.
    assert!(!t2.exists());
}

#[test]
fn crawl_timeout_is_a_duration_capped_at_60s_with_the_cap_in_the_message() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let o = run_out("crawl", &t, "--timeout 61s --url http://127.0.0.1:1/mcp");
    let e = refusal(&o);
    assert!(
        e.contains("--timeout 61s") && e.contains("at most 60s"),
        "{e}"
    );
    assert!(!t.exists());
    // The old integer flag is gone.
    let o = run_out("crawl", &t, "--timeout-ms 100");
    assert_has(&refusal(&o), "--timeout-ms");
}

#[test]
fn bench_caps_are_in_help_and_refused_past_them_with_the_cap_in_the_message() {
    let help = stdout(&run(&["bench", "--help"]));
    assert_has_all(&help, &["1..=1024", "at most 10000000"]);
    let t = "corpus/transcripts/everything-stdio.jsonl";
    let o = run(&["bench", t, "--parallel", "1025"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--parallel") && stderr(&o).contains("1024"));
    let o = run(&["bench", t, "--concurrency", "1025"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--concurrency") && stderr(&o).contains("1024"));
    // Regression: --reads past MAX_COUNT ran, silently clamped to it.
    let o = run(&["bench", t, "--reads", "10000001"]);
    let e = refusal(&o);
    assert!(
        e.contains("--reads 10000001") && e.contains("at most 10000000"),
        "{e}"
    );
    assert_eq!(stdout(&o), "", "refused before any run");
}

#[test]
fn root_help_states_the_duration_and_timeout_conventions() {
    let help = stdout(&run(&["--help"]));
    assert_has_all(&help, &["5s, 800ms, 250us", "bench 5s", "never clamped"]);
}

/// Regression: a crawl to a closed port printed hyper's debug struct.
#[test]
fn crawl_to_a_closed_port_says_connection_refused_in_words() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let port = free_port(); // bound then released: nothing listens there
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = run_out("crawl", &t, &format!("--url {url}"));
    assert_ne!(o.status.code(), Some(0));
    let e = stderr(&o);
    assert!(e.to_lowercase().contains("connection refused"), "{e}");
    for debug in ["{", "Error {", "kind:", "Os {", "ConnectError(", "Some("] {
        assert!(!e.contains(debug), "debug text {debug:?} in: {e}");
    }
}

#[test]
fn debug_build_warning_is_printed_by_bench_and_serve() {
    // (bench-codec is a binary of benches/ now; .ci/steps/40-benches.sh runs it.)
    let runs = [
        run(&words(
            "bench corpus/transcripts/everything-stdio.jsonl --parallel 0",
        )),
        run(&["serve", "no/such/transcript.jsonl"]),
    ];
    for o in &runs {
        let e = stderr(o);
        // The tests are built in the binary's profile: a debug test run has a debug binary.
        assert_eq!(
            e.contains("is a debug build (no optimizations)"),
            cfg!(debug_assertions),
            "{e}"
        );
    }
    // A command that does not measure does not warn.
    let o = run(&["uri", "expand", "file:///{a}", "a=x"]);
    assert!(!stderr(&o).contains("debug build"), "{}", stderr(&o));
}

/// Runs `mcptape ARGS` in the repository root with stdout on `/dev/full` (every write fails
/// with ENOSPC) and stdin closed, killed after 60 s (a hang fails): (exit code, stderr).
fn run_to_full_stdout(args: &[&str]) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let child = Command::new(mcptape())
        .args(args)
        .current_dir(repo_root())
        .env("RUST_BACKTRACE", "1")
        .stdin(std::process::Stdio::null())
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = Guard(child).output_within(
        &format!("mcptape {args:?} > /dev/full"),
        Duration::from_secs(60),
    );
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A k6 `--out json` file of one read, as `export k6` scripts write them.
fn k6_output(path: &Path) {
    let point = |metric: &str, tags: &str| {
        format!(
            r#"{{"type":"Point","data":{{"time":"2026-12-01T22:10:00.5+00:00","value":12.5,"tags":{{{tags}}}}},"metric":"{metric}"}}"#
        )
    };
    let lines = [
        r#"{"type":"Metric","data":{"name":"mcp_read","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"mcp_read"}"#.to_owned(),
        point(
            "mcp_plan",
            r#""transcript":"everything-http.jsonl","parallel":"4","deadline_ms":"800","timeout_ms":"5000","load":"k6 test","recorded_reads":"10","recorded_read_errors":"1""#,
        ),
        point("mcp_read", r#""class":"ok","method":"resources/read""#),
    ];
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Regression (issue 28): `inspect … > /dev/full` panicked ("failed printing to stdout", exit
/// 101, a backtrace), and so did every other command printing with `println!`; `--help >
/// /dev/full` exited 0 in silence. Every command that writes to stdout now exits 2 with one
/// line on stderr.
#[test]
fn every_writing_subcommand_on_a_full_stdout_exits_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let k6 = tmp.path().join("k6.json");
    k6_output(&k6);
    let d = |name: &str| tmp.path().join(name).to_str().unwrap().to_owned();
    let serve_cmd = format!(
        "{} serve corpus/transcripts/everything-stdio.jsonl --latency fixed:0ms",
        sh_quote(&mcptape())
    );
    let stdio = "corpus/transcripts/everything-stdio.jsonl";
    let runs: Vec<Vec<String>> = [
        words("inspect corpus/inspect/seed-png.jsonl"),
        words("inspect --json corpus/inspect/seed-png.jsonl"),
        // A transcript is inspected as a stream: its write error said `reading T: No space
        // left on device` (issue 28, a newcomer's retry).
        words("inspect corpus/transcripts/everything-stdio.jsonl"),
        words("inspect --json corpus/transcripts/everything-stdio.jsonl"),
        words("bench corpus/transcripts/everything-stdio.jsonl --reads 3 --turns 1 --latency fixed:1ms"),
        words("uri expand file:///docs/{+path} path=a/b.txt"),
        words("uri match file:///docs/{+path} file:///docs/a/b.txt"),
        words("uri resolve --root file:///srv/ file:///srv/a.txt"),
        vec!["import", "k6", k6.to_str().unwrap(), "--out", &d("k6out")],
        words("export k6 corpus/transcripts/everything-http.jsonl"),
        words("export har corpus/transcripts/everything-http.jsonl"),
        vec!["verify", stdio, "--target-cmd", &serve_cmd],
        words("check corpus/transcripts"),
        words("explain --list"),
        words("explain error-id-null"),
        vec![
            "merge",
            "corpus/fuzz/hlog_read/bench-run.hlog",
            "--out",
            &d("merged"),
        ],
        vec![
            "crawl",
            "--json",
            "-o",
            &d("c.jsonl"),
            "--",
            "sh",
            "-c",
            &serve_cmd,
        ],
        words("--help"),
        words("bench --help"),
        words("--version"),
    ]
    .into_iter()
    .map(|v| v.into_iter().map(str::to_owned).collect())
    .collect();
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = run_to_full_stdout(&args);
        assert_eq!(code, Some(2), "mcptape {args:?} > /dev/full: {err}");
        assert!(!err.contains("panicked"), "mcptape {args:?}: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert_eq!(
            last, "mcptape: error: writing to stdout: No space left on device (os error 28)",
            "mcptape {args:?}: {err}"
        );
    }
}

/// Issue 28, the rest of "every subcommand that writes": the stdio peers (`serve`'s replies,
/// `record`'s forwarding to its client) on a full stdout, and every file output (`-o`,
/// `--stats`, `--write-baseline`) on a full device exit 2 with one line naming what failed,
/// never a panic; `record` still writes its exit record. Each run is bounded (60 s).
#[test]
fn stdio_peers_on_a_full_stdout_and_file_outputs_on_a_full_device_exit_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let stdio = "corpus/transcripts/everything-stdio.jsonl";
    let http = "corpus/transcripts/everything-http.jsonl";
    let init = tmp.path().join("init.jsonl");
    std::fs::write(
        &init,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
    )
    .unwrap();
    let har = tmp.path().join("t.har");
    let o = run(&["export", "har", http, "-o", har.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let me = mcptape();
    let me = me.to_str().unwrap();
    let t = tmp.path().join("t.jsonl");
    let t = t.to_str().unwrap();
    let enospc = "No space left on device (os error 28)";
    // (args, stdout on /dev/full with the handshake on stdin, the last stderr line)
    let runs: Vec<(String, bool, String)> = vec![
        (
            format!("serve {stdio} --latency fixed:0ms"),
            true,
            format!("i/o: writing the replies: {enospc}"),
        ),
        (
            format!("record -o {t} -- {me} serve {stdio} --latency fixed:0ms"),
            true,
            format!("client stdout: {enospc}"),
        ),
        (
            format!("check {stdio} -o /dev/full"),
            false,
            format!("writing /dev/full: {enospc}"),
        ),
        (
            format!("check {stdio} --write-baseline /dev/full"),
            false,
            format!("baseline /dev/full: {enospc}"),
        ),
        (
            format!("export k6 {http} -o /dev/full"),
            false,
            format!("writing /dev/full: {enospc}"),
        ),
        (
            format!("export har {http} -o /dev/full"),
            false,
            format!("writing /dev/full: {enospc}"),
        ),
        (
            format!("import har {} -o /dev/full", har.display()),
            false,
            format!("writing /dev/full: {enospc}"),
        ),
        (
            "record -o /dev/full -- true".to_owned(),
            false,
            format!("transcript /dev/full: {enospc}"),
        ),
        (
            format!("crawl -o /dev/full -- {me} serve {stdio} --latency fixed:0ms"),
            false,
            format!("transcript /dev/full: {enospc}"),
        ),
        (
            format!("serve {stdio} --latency fixed:0ms --stats /dev/full"),
            false,
            format!("writing /dev/full: {enospc}"),
        ),
    ];
    for (line, full_stdout, want) in &runs {
        let args = words(line);
        let mut cmd = Command::new(mcptape());
        cmd.args(&args)
            .current_dir(repo_root())
            .env("RUST_BACKTRACE", "1");
        let (code, err) = if *full_stdout {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let child = cmd
                .stdin(std::fs::File::open(&init).unwrap())
                .stdout(full)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let o =
                Guard(child).output_within(&format!("mcptape {args:?}"), Duration::from_secs(60));
            (o.status.code(), stderr(&o))
        } else {
            let o = run_bounded(&mut cmd, Duration::from_secs(60)).0;
            (o.status.code(), stderr(&o))
        };
        assert_eq!(code, Some(2), "mcptape {args:?}: {err}");
        assert!(!err.contains("panicked"), "mcptape {args:?}: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert_eq!(
            last,
            format!("mcptape: error: {want}"),
            "mcptape {args:?}: {err}"
        );
        // Regression: `check -o /dev/full` removed its "half report", i.e. the device itself
        // (the tests run as root), and every later write to /dev/full succeeded.
        use std::os::unix::fs::FileTypeExt as _;
        let full = std::fs::symlink_metadata("/dev/full").unwrap();
        assert!(
            full.file_type().is_char_device(),
            "mcptape {args:?} removed /dev/full"
        );
    }
    // The recorder that could not reach its client still recorded the session, then the exit.
    let rec = read_transcript(Path::new(t));
    assert_eq!(exit_of(&rec), (Some(0), None));
}

/// Regression (issue 28): `--timeout -5s` got clap's "unexpected argument '-5'" while
/// `--timeout=-5s` got the duration parser's message; both now get the real one.
#[test]
fn a_negative_duration_gets_the_duration_message_not_a_clap_error() {
    let t = "corpus/transcripts/everything-stdio.jsonl";
    for args in [
        vec!["verify", t, "--target-cmd", "true", "--timeout", "-5s"],
        vec!["bench", t, "--timeout", "-5s"],
        vec!["bench", t, "--deadline", "-5s"],
        vec![
            "crawl",
            "-o",
            "/nonexistent/t.jsonl",
            "--timeout",
            "-5s",
            "--url",
            "http://127.0.0.1:1/mcp",
        ],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains("-5s: bad duration \"-5s\""), "{args:?}: {e}");
        assert!(!e.contains("unexpected argument"), "{args:?}: {e}");
    }
}

/// Regression (issue 28): `record --listen … --duration 0` ran and exited 0 with an empty
/// transcript, while `bench --max-phase 0` is refused; now it is refused too, before the
/// transcript file is created.
#[test]
fn record_listen_duration_0_is_refused_like_bench_max_phase_0() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let o = run_out(
        "record",
        &t,
        "--listen 127.0.0.1:0 --upstream http://127.0.0.1:1/mcp --duration 0",
    );
    assert_has(&refusal(&o), "--duration 0 must be longer than 0");
    assert!(!t.exists());
    let o = run(&words(
        "bench corpus/transcripts/everything-stdio.jsonl --max-phase 0",
    ));
    assert_has(&refusal(&o), "--max-phase 0 must be longer than 0");
}

/// Starts `record --listen 127.0.0.1:0` (upstream never contacted) and waits for its
/// `mcptape: recording` line: the guard and the transcript path.
fn record_listening(tmp: &Path) -> (Guard, std::path::PathBuf) {
    let t = tmp.join("t.jsonl");
    let mut child = Command::new(mcptape())
        .args(["record", "-o", t.to_str().unwrap()])
        .args(words(
            "--listen 127.0.0.1:0 --upstream http://127.0.0.1:1/mcp",
        ))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    assert!(line.starts_with("mcptape: recording http://"), "{line}");
    // Keep draining stderr so the proxy never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    (Guard(child), t)
}

/// Regression (issue 28): `record --listen` interrupted by SIGINT exited 0, where bench and
/// verify exit 130; now it exits 130 and says so. SIGTERM stays its graceful stop (exit 0, what
/// scripts send when their client is done). The transcript is kept either way.
#[test]
fn record_listen_interrupted_by_sigint_exits_130_and_stopped_by_sigterm_exits_0() {
    for (sig, code) in [("-INT", 130), ("-TERM", 0)] {
        let tmp = tempfile::tempdir().unwrap();
        let (mut g, t) = record_listening(tmp.path());
        let status = kill_and_wait(&mut g, sig);
        assert_eq!(status.code(), Some(code), "kill {sig}");
        let header = std::fs::read_to_string(&t).unwrap();
        assert_has(&header, "mcptapeTranscript");
    }
}

/// Regression (issue 28): `explain` with no argument was a clap error though its usage shows
/// `[RULE]`; it lists the rules as `explain --list` does.
#[test]
fn explain_without_a_rule_lists_the_rules() {
    let bare = run(&["explain"]);
    assert_eq!(bare.status.code(), Some(0), "{}", stderr(&bare));
    let list = run(&["explain", "--list"]);
    assert_eq!(stdout(&bare), stdout(&list));
    assert!(stdout(&bare).contains("error-id-null"), "{}", stdout(&bare));
}

/// Regression (issue 28): `merge DIR` said "not a regular file (FIFO, socket or device)"; a
/// directory is named as one, with the file to give instead.
#[test]
fn merge_a_directory_names_the_log_inside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = run(&["merge", "corpus", "--out", out.to_str().unwrap()]);
    let e = refusal(&o);
    assert_has(
        &e,
        "corpus: is a directory; give the interval log in it (corpus/latency.hlog)",
    );
    assert!(!e.contains("FIFO"), "{e}");
}

/// Regression (issue 28): a bench whose handshake failed left its embedded server's
/// `mcptape-serve-stats-*.json` in the temporary directory. The server's replies are delayed
/// 3 s and the handshake waits 1 s, so the server is up (its stats file created) when the
/// handshake fails.
#[test]
fn bench_with_a_failed_handshake_leaves_no_stats_file() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(mcptape());
    cmd.args(words(
        "bench corpus/transcripts/everything-stdio.jsonl --latency fixed:3s --timeout 1s",
    ))
    .current_dir(repo_root())
    .env("TMPDIR", tmp.path());
    let o = run_bounded(&mut cmd, Duration::from_secs(60)).0;
    assert_has(&refusal(&o), "handshake with the target");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

/// Regression (issue 28): stdio `record` on SIGINT exited with the server's status (0 for a
/// server that handles SIGINT by exiting 0) where bench and verify exit 130, and its exit record
/// said code 0 as if the server had ended by itself. The signal is still forwarded to the
/// server; the exit record names it beside the server's code.
#[test]
fn record_stdio_stopped_by_sigint_exits_130_though_the_server_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let ready = tmp.path().join("ready");
    // A server that exits 0 on SIGINT and says when its trap is set.
    let server = format!(
        "trap 'exit 0' INT; touch {}; while :; do sleep 0.05; done",
        sh_quote(&ready)
    );
    let child = Command::new(mcptape())
        .args([
            "record",
            "-o",
            t.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &server,
        ])
        .stdin(std::process::Stdio::piped()) // held open: no EOF, no grace
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut g = Guard(child);
    wait_until("the server never started", Duration::from_secs(30), || {
        ready.exists()
    });
    let status = kill_and_wait(&mut g, "-INT");
    assert_eq!(status.code(), Some(130));
    // The exit record says the session was stopped by SIGINT, beside the server's own code.
    let text = std::fs::read_to_string(&t).unwrap();
    let exit = text.lines().last().unwrap();
    assert!(exit.contains("\"exit\""), "{text}");
    assert_eq!(exit_of(&read_transcript(&t)), (Some(0), Some(2)), "{text}");
}

/// Regression (issue 28, a newcomer's retry): stdio `serve --stats F` ended by SIGTERM (how a
/// host stops a stdio server) or SIGINT left F empty: the signal killed the process before the
/// stats were written "on exit". The stats are written and the status is the signal's (143, 130).
#[test]
fn serve_stdio_stopped_by_sigterm_or_sigint_writes_its_stats() {
    for (sig, code) in [("-TERM", 143), ("-INT", 130)] {
        let tmp = tempfile::tempdir().unwrap();
        let stats = tmp.path().join("stats.json");
        // One answer read: the session (and its signal handlers) runs.
        let (mut g, stdin, _out) = serve_stdio_initialized(&["--stats", stats.to_str().unwrap()]);
        let status = kill_and_wait(&mut g, sig);
        assert_eq!(status.code(), Some(code), "{sig}");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&stats).unwrap()).expect("stats written");
        assert_eq!(json["requests"], 1, "{sig}: {json}");
        drop(stdin);
    }
}

/// Regression (issue 28, a newcomer's retry): `serve --listen` exited 0 on Ctrl-C where stdio
/// `serve` and `record --listen` exit 130. SIGINT exits 130, SIGTERM 0; the stats are written
/// either way.
#[test]
fn serve_listen_stopped_by_sigint_exits_130_and_by_sigterm_0() {
    for (sig, code) in [("-INT", 130), ("-TERM", 0)] {
        let tmp = tempfile::tempdir().unwrap();
        let stats = tmp.path().join("stats.json");
        let port = free_port();
        let mut cmd = Command::new(mcptape());
        cmd.arg("serve")
            .arg(repo_root().join("corpus/transcripts/everything-http.jsonl"))
            .args(["--listen", &format!("127.0.0.1:{port}"), "--stats"])
            .arg(&stats);
        let mut g = spawn_listening(&mut cmd, port);
        let status = kill_and_wait(&mut g, sig);
        assert_eq!(status.code(), Some(code), "{sig}");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&stats).unwrap()).expect("stats written");
        assert_eq!(json["requests"], 0, "{sig}: {json}");
    }
}

/// `bash fuzz/run.sh` run from a copy in `tmp/repo`, with `cargo fuzz` and the target binaries
/// stood in for by shell scripts (the real ones take a nightly sanitizer build): `cargo fuzz
/// list` names the `targets` in order, each target's binary runs its `sh` body. The command
/// has that `PATH` and `FUZZ_CORPUS` in `tmp`; the caller adds the arguments.
fn fuzz_run_sh_in_scratch(tmp: &Path, targets: &[(&str, &str)]) -> Command {
    use std::os::unix::fs::PermissionsExt;
    let exe = |path: &Path, body: &str| {
        std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let root = tmp.join("repo");
    let bins = root.join("fuzz/target/x86_64-unknown-linux-gnu/release");
    let stub = tmp.join("bin");
    for d in [&bins, &stub, &root.join("fuzz/fuzz_targets")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(repo_root().join("fuzz/run.sh"), root.join("fuzz/run.sh")).unwrap();
    let names: Vec<&str> = targets.iter().map(|(name, _)| *name).collect();
    exe(
        &stub.join("cargo"),
        &format!(
            r#"case "$2 $3" in "fuzz list") printf '%s\n' {} ;; *) exit 0 ;; esac"#,
            names.join(" ")
        ),
    );
    for (name, body) in targets {
        exe(&bins.join(name), body);
    }
    let path = format!("{}:{}", stub.display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("fuzz/run.sh"))
        .env("PATH", path)
        .env("FUZZ_CORPUS", tmp.join("corpus"));
    cmd
}

/// `fuzz/run.sh --duration SECONDS --out FILE` (issue 29's campaign mode) runs every target
/// for that long and writes the markdown table to FILE: the command, one row per target with
/// its execs/s and execs per CPU second; a crashing target still gets its row and exit 1.
/// `cargo fuzz` and the target binaries are shell scripts, ([`fuzz_run_sh_in_scratch`]).
#[test]
fn fuzz_run_sh_duration_mode_writes_the_table_to_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    // t1 reports its figures as libFuzzer does; t2 crashes.
    let t1 = "echo '#2 cov: 3 ft: 4'; echo 'stat::number_of_executed_units: 700'; \
              echo 'stat::average_exec_per_sec: 5'";
    let mut cmd = fuzz_run_sh_in_scratch(
        tmp.path(),
        &[("t1", t1), ("t2", "echo '#1 cov: 1 ft: 1'; exit 1")],
    );
    let table = tmp.path().join("campaign.md");
    cmd.args(["--duration", "1", "--out"]).arg(&table);
    let o = run_bounded(&mut cmd, Duration::from_secs(60)).0;
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(
        text.starts_with("# Fuzz campaign: 1 s per target\n"),
        "{text}"
    );
    assert_has(
        &text,
        &format!(
            "- command: `fuzz/run.sh --duration 1 --out {}`",
            table.display()
        ),
    );
    assert_has(&text, "| execs/CPU-s |");
    let row = |t: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("| {t} ")))
            .unwrap_or_else(|| panic!("no row for {t}: {text}"))
            .split('|')
            .map(str::trim)
            .collect::<Vec<_>>()
    };
    // | target | secs | execs | execs/s | execs/CPU-s | cov | ft | corpus | crashes | status |
    let t1 = row("t1");
    assert_eq!(
        (t1[3], t1[4], t1[6], t1[7], t1[10]),
        ("700", "5", "3", "4", "ok")
    );
    assert_eq!(row("t2")[10], "FAIL(rc=1)");
}

/// Regression (issue 28): the fuzz CI step left a 6.9 MB `mcptape-fuzz.*` directory (the logs
/// and each run's new inputs) in the temporary directory. `fuzz/run.sh` is run from a copy in
/// a scratch tree with `cargo fuzz` and the target binaries stood in for by shell scripts (the
/// real ones take a nightly sanitizer build): its temporary directory is gone after a clean
/// run and after a crashing target (exit 1), and kept only where `FUZZ_LOGS` asks.
#[test]
fn fuzz_run_sh_leaves_no_temporary_directory() {
    for (target_exit, want, keep) in [(0, 0, false), (1, 1, false), (0, 0, true)] {
        let tmp = tempfile::tempdir().unwrap();
        let tmpdir = tmp.path().join("tmp");
        std::fs::create_dir_all(&tmpdir).unwrap();
        let t1 = format!(
            "echo '#2 cov: 3 ft: 4'; echo 'stat::average_exec_per_sec: 5'; exit {target_exit}"
        );
        let mut cmd = fuzz_run_sh_in_scratch(tmp.path(), &[("t1", &t1)]);
        cmd.arg("1").env("TMPDIR", &tmpdir);
        let logs = tmp.path().join("logs");
        if keep {
            cmd.env("FUZZ_LOGS", &logs);
        }
        let o = run_bounded(&mut cmd, Duration::from_secs(60)).0;
        assert_eq!(o.status.code(), Some(want), "{}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("| t1 "), "{}", stdout(&o));
        let left: Vec<_> = std::fs::read_dir(&tmpdir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
        assert_eq!(logs.join("t1.log").is_file(), keep);
    }
}

/// Exit codes (issue 25): 0 ok, 1 the thing checked failed, 2 could not run. Regression: `verify`
/// against a target that cannot start (a command that fails at once, a URL where nothing
/// listens) exited 1, like "differences found"; it exits 2 with one `mcptape: error:` line.
#[test]
fn verify_against_a_target_that_cannot_start_exits_2_not_1() {
    let t = "corpus/transcripts/everything-stdio.jsonl";
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    for target in [
        ["--target-cmd", "/no/such/server"],
        ["--target-cmd", "exit 3"],
        ["--target-url", url.as_str()],
    ] {
        let o = run(&["verify", t, target[0], target[1], "--timeout", "5s"]);
        assert_eq!(o.status.code(), Some(2), "{target:?}: {}", stderr(&o));
        let e = stderr(&o);
        let errors: Vec<&str> = e
            .lines()
            .filter(|l| l.starts_with("mcptape: error:"))
            .collect();
        assert_eq!(
            errors,
            [
                "mcptape: error: verify could not run: the target closed the connection before answering any request"
            ],
            "{target:?}: {e}"
        );
    }
    // A target that answers, differently: the thing checked failed, exit 1.
    let o = run(&[
        "verify",
        t,
        "--target-cmd",
        "cat",
        "--timeout",
        "200ms",
        "--max-time",
        "2s",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// One spelling per idea (issue 25): a rate carries its unit. Regression: `--rate 200` (no
/// `/s`) was accepted by bench and export k6; it is refused, and the error says the unit.
#[test]
fn a_rate_without_its_unit_is_refused_naming_the_unit() {
    let t = "corpus/transcripts/everything-stdio.jsonl";
    let o = run(&["bench", t, "--rate", "200", "--target-cmd", "true"]);
    assert_has(
        &refusal(&o),
        "--rate \"200\": a rate needs its unit, per second: 200/s",
    );
    assert_eq!(stdout(&o), "", "refused before any run");
    let h = "corpus/transcripts/everything-http.jsonl";
    for flag in ["--rate", "--turn-rate"] {
        let o = run(&["export", "k6", h, flag, "20"]);
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", stderr(&o));
        assert_has(
            &stderr(&o),
            &format!("{flag} \"20\": a rate needs its unit, per second: 20/s"),
        );
    }
    let o = run(&["export", "k6", h, "--rate", "20/s", "--turn-rate", "0/s"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Parser errors are one line like every other error (`mcptape: error: …`, with clap's tip and
/// the subcommand's help to read), exit 2; `--help` and `--version` are clap's, intact, exit 0.
#[test]
fn clap_parser_errors_are_one_line_and_help_is_intact() {
    for (args, has) in [
        (
            vec![
                "bench",
                "corpus/transcripts/everything-stdio.jsonl",
                "--nope",
            ],
            "unexpected argument '--nope' found",
        ),
        (
            vec!["bench", "--rate"],
            "a value is required for '--rate <R/s>'",
        ),
        (
            vec!["serve"],
            "the following required arguments were not provided: <TRANSCRIPT>...",
        ),
        (vec!["nosuch"], "unrecognized subcommand 'nosuch'"),
        (
            vec!["check", "--format", "xml", "corpus"],
            "invalid value 'xml' for '--format <FORMAT>'",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {e}");
        assert!(lines[0].starts_with("mcptape: error: "), "{e}");
        assert!(lines[0].contains(has), "{args:?}: {e}");
        let help = match args[0] {
            "nosuch" => "see `mcptape --help`".to_owned(),
            sub => format!("see `mcptape {sub} --help`"),
        };
        assert!(lines[0].ends_with(&help), "{args:?}: {e}");
    }
    let o = run(&["bench", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).contains("Usage: mcptape bench"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).lines().count() > 20, "{}", stdout(&o));
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("mcptape "), "{}", stdout(&o));
}

/// One spelling per idea (issue 25): `--format json` prints JSON in every command that prints a
/// report (`--json` stays a hidden alias), and a server to talk to is `--target-url` in crawl
/// and record too (`--url` and `--upstream` stay hidden aliases).
#[test]
fn format_json_and_target_url_are_the_one_spelling_and_old_ones_are_hidden_aliases() {
    let t = "corpus/transcripts/everything-stdio.jsonl";
    for flags in [&["--format", "json"][..], &["--json"][..]] {
        let mut args = vec!["inspect"];
        args.extend(flags);
        args.push(t);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{flags:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
        assert!(v["summary"]["messages"].as_u64().unwrap() > 0, "{v}");
    }
    let o = run(&["check", "--format", "text", t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("PASS: "), "{}", stdout(&o));
    for sub in ["inspect", "crawl", "verify", "check"] {
        let help = stdout(&run(&[sub, "--help"]));
        assert!(help.contains("--format <FORMAT>"), "{sub}: {help}");
        // Hidden: no option line of its own.
        assert!(
            !help.lines().any(|l| l.trim_start().starts_with("--json")),
            "{sub}: {help}"
        );
    }
    for sub in ["crawl", "record", "bench", "verify"] {
        let help = stdout(&run(&[sub, "--help"]));
        assert!(help.contains("--target-url <URL>"), "{sub}: {help}");
        assert!(
            !help
                .lines()
                .any(|l| l.trim_start().starts_with("--url")
                    || l.trim_start().starts_with("--upstream")),
            "{sub}: {help}"
        );
    }
    // The old spellings still parse: a closed port is refused by the crawl itself, not clap.
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    for flag in ["--url", "--target-url"] {
        let out = tmp.path().join(format!("c{flag}.jsonl"));
        let o = run_out("crawl", &out, &format!("{flag} {url}"));
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(
            stderr(&o).to_lowercase().contains("connection refused"),
            "{flag}: {}",
            stderr(&o)
        );
    }
    let o = run(&words(
        "record -o x.jsonl --upstream http://127.0.0.1:1/mcp",
    ));
    // Parsed (the alias is known): --target-url requires --listen.
    assert_has(&refusal(&o), "--listen");
}

/// Progress off a terminal (issue 25): with stderr a pipe (CI logs), bench prints a status line
/// every interval (10 s; `MCPTAPE_STATUS_EVERY` sets another) with the phase, sent, ok, errors
/// and the elapsed time, and no bar frames. 40 reads at fixed:20ms take at least 800 ms, so a
/// 100 ms interval gives lines; their counts only grow.
#[test]
fn bench_off_a_terminal_prints_a_status_line_every_interval() {
    let mut cmd = Command::new(mcptape());
    cmd.current_dir(repo_root())
        .env("MCPTAPE_STATUS_EVERY", "100ms")
        .args(words("bench corpus/transcripts/everything-stdio.jsonl --reads 40 --turns 2 --latency fixed:20ms"));
    let o = run_bounded(&mut cmd, Duration::from_secs(120)).0;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    let lines: Vec<&str> = e
        .lines()
        .filter(|l| l.starts_with("mcptape bench: ") && l.contains(": sent "))
        .collect();
    assert!(!lines.is_empty(), "{e}");
    let mut last_sent = 0;
    for l in &lines {
        // mcptape bench: 0.4s: single requests: sent 17, ok 16, errors 1
        let rest = l.strip_prefix("mcptape bench: ").unwrap();
        let (elapsed, rest) = rest.split_once(": ").unwrap();
        assert!(elapsed.ends_with('s'), "{l}");
        let (phase, counts) = rest.split_once(": ").unwrap();
        assert!(
            ["single requests", "parallel-read turns"].contains(&phase),
            "{l}"
        );
        let n: Vec<u64> = counts
            .split(", ")
            .map(|kv| kv.rsplit_once(' ').unwrap().1.parse().unwrap())
            .collect();
        let [sent, ok, errors] = n[..] else {
            panic!("{l}")
        };
        assert!(ok + errors <= sent, "{l}");
        if phase == "single requests" {
            assert!(sent >= last_sent && sent <= 40, "{l}");
            last_sent = sent;
        }
    }
    assert!(!e.contains('\r'), "no bar frames off a terminal: {e:?}");
    // A bad interval is refused, naming the variable.
    let mut cmd = Command::new(mcptape());
    cmd.current_dir(repo_root())
        .env("MCPTAPE_STATUS_EVERY", "5ms")
        .args(words(
            "bench corpus/transcripts/everything-stdio.jsonl --reads 1",
        ));
    let o = run_bounded(&mut cmd, Duration::from_secs(120)).0;
    assert_has(
        &refusal(&o),
        "mcptape: error: MCPTAPE_STATUS_EVERY=5ms: at least 100ms",
    );
}

/// Regression: stdio `serve` started with standard output closed (`>&-`) served every reply
/// into the `/dev/null` the Rust runtime puts on a closed fd 1 and exited 0. It refuses before
/// serving (exit 2, one error line); a shell's `>/dev/null` is still served.
#[test]
fn serve_stdio_with_stdout_closed_fails_before_serving() {
    let transcript = repo_root().join("corpus/transcripts/everything-stdio.jsonl");
    let serve = |redirect: &str| {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                r#"exec "$0" serve "$1" --latency fixed:0ms {redirect}"#
            ))
            .arg(mcptape())
            .arg(&transcript);
        run_bounded(&mut cmd, Duration::from_secs(60)).0
    };
    let closed = serve(">&-");
    let err = stderr(&closed);
    assert_eq!(closed.status.code(), Some(2), "{err}");
    assert_eq!(
        err.lines().last().unwrap_or_default(),
        "mcptape: error: standard output (fd 1) is closed: stdio serve has nowhere to write its \
         replies (give the client a pipe, or serve over HTTP with --listen)",
        "{err}"
    );
    let null = serve(">/dev/null");
    assert_eq!(null.status.code(), Some(0), "{}", stderr(&null));
}

/// Regression: a client that closed its read end of stdio `serve`'s stdout mid-session (its
/// stdin still open) left serve reading requests it could not answer, then exiting 2
/// ("writing the replies: Broken pipe") at stdin's end. A peer that hung up ends the session,
/// as a closed pipe ends `record` and the printing commands: serve stops at the failed write,
/// quietly, exit 0, with stdin still open.
#[test]
fn serve_stdio_client_closing_stdout_mid_session_ends_it_with_exit_0() {
    use std::io::Write as _;
    let (g, mut stdin, out) = serve_stdio_initialized(&[]);
    // The client hangs up its read end, then asks once more: that answer cannot be written.
    drop(out);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":99,"method":"ping"}}"#).unwrap();
    let o = g.output_within(
        "serve after its client closed stdout",
        Duration::from_secs(60),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("error"), "{err}");
    drop(stdin);
}

/// stdio `mcptape serve` of the shipped everything-stdio recording at `fixed:0ms` with `extra`
/// arguments, its three streams piped, its recorded `initialize` sent and answered with a
/// result (within 30 s, else the test fails and the guard ends serve): the guard, serve's stdin
/// (held open: no EOF) and its stdout past the answer.
fn serve_stdio_initialized(
    extra: &[&str],
) -> (
    Guard,
    std::process::ChildStdin,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::{BufRead as _, Write as _};
    let transcript = repo_root().join("corpus/transcripts/everything-stdio.jsonl");
    let initialize = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["msg"]["method"] == "initialize")
        .unwrap()["msg"]
        .to_string();
    let child = Command::new(mcptape())
        .arg("serve")
        .arg(&transcript)
        .args(["--latency", "fixed:0ms"])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut g = Guard(child);
    let mut stdin = g.0.stdin.take().unwrap();
    writeln!(stdin, "{initialize}").unwrap();
    let mut out = std::io::BufReader::new(g.0.stdout.take().unwrap());
    let answer = std::thread::spawn(move || {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        (line, out)
    });
    wait_until("no answer to initialize", Duration::from_secs(30), || {
        answer.is_finished()
    });
    let (line, out) = answer.join().unwrap();
    assert_has(&line, "\"result\"");
    (g, stdin, out)
}

/// Regression (fresh-user trial, 2026-12-05): `--listen localhost:PORT` was refused as "invalid
/// socket address syntax" without a word on what to write; and limits in messages named a
/// constant without its value (`at most MAX_TRANSCRIPTS (1000)`, `the limit (MAX_TEMPLATE_BYTES)`).
#[test]
fn listen_localhost_suggests_127_0_0_1_and_limits_give_their_value() {
    let t = corpus_transcript("everything-http.jsonl");
    let t = t.to_str().unwrap();
    for args in [
        vec!["serve", t, "--listen", "localhost:8931"],
        vec!["serve", t, "--stdio", "--metrics", "LOCALHOST:8931"],
        vec![
            "record",
            "-o",
            "/nonexistent/t.jsonl",
            "--listen",
            "localhost:8931",
            "--upstream",
            "http://127.0.0.1:1/mcp",
        ],
    ] {
        let (code, _, err) = mcptape_text(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("write 127.0.0.1:8931"), "{args:?}: {err}");
    }
    let long = "a".repeat(mcptape_uri::template::MAX_TEMPLATE_BYTES + 1);
    let (code, _, err) = mcptape_text(&["uri", "expand", &long]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("longer than 4096 bytes (MAX_TEMPLATE_BYTES)"),
        "{err}"
    );
}
