//! Issue 15: a transcript with no `exit` record is reported as "recording
//! ended without an exit record" by `check` and `inspect`. A real
//! `mcptape record` of the real Python SDK server (stdio), driven by this
//! test as the client (initialize, initialized, one `resources/read`), is
//! SIGKILLed once the read's answer has come back (the kill lands on a line
//! boundary: the recorder writes each record before it forwards the line);
//! the same session ended normally (stdin closed, the server exits) gets the
//! recorder's exit record and neither command says it.

use crate::record_support;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcptape_transcript::reader::NO_EXIT_RECORD;
use mcptape_transcript::{Direction, Event};
use record_support::*;

/// The uri the session reads (a text resource of `corpus/servers/py_server.py`).
const URI: &str = "mcptape://docs/notes.txt";

/// Bound of each child process.
const LIMIT: Duration = Duration::from_secs(60);

/// How the recording ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum End {
    /// SIGKILL of the recorder after the read's answer arrived.
    Sigkill,
    /// The client closes stdin; the server exits and the recorder with it.
    Normal,
}

/// Records one session through `mcptape record -o T -- python py_server.py stdio`
/// and ends it as `end` says.
fn record_session(t_path: &Path, end: End) {
    let p = peers();
    let script = p.script("py_server.py");
    let server = [
        p.python.as_os_str(),
        script.as_os_str(),
        OsStr::new("stdio"),
    ];
    let mut guard = spawn_record(t_path, &server, Stdio::null());
    let mut stdin = guard.0.stdin.take().unwrap();
    let mut stdout = BufReader::new(guard.0.stdout.take().unwrap());
    let mut answer = |id: u64| -> serde_json::Value {
        loop {
            let mut line = String::new();
            let n = stdout.read_line(&mut line).expect("read the server's line");
            assert!(n > 0, "the server closed stdout before answering id {id}");
            let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            if v["id"] == id {
                return v;
            }
        }
    };
    let send = |stdin: &mut std::process::ChildStdin, m: serde_json::Value| {
        stdin
            .write_all(format!("{m}\n").as_bytes())
            .expect("write to the recorder");
        stdin.flush().unwrap();
    };
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"issue-15-test","version":"1"}}}),
    );
    assert_eq!(answer(1)["result"]["protocolVersion"], "2025-11-25");
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":URI}}),
    );
    assert_eq!(answer(2)["result"]["contents"][0]["uri"], URI);
    let child = &mut guard.0;
    match end {
        End::Sigkill => {
            // Nothing in flight at the kill: the transcript ends on a line boundary
            // (the answer's record is written before the answer is forwarded; wait for
            // the state, not a fixed time).
            wait_until("the transcript ends with a whole line", LIMIT, || {
                std::fs::read(t_path).is_ok_and(|b| b.last() == Some(&b'\n'))
            });
            child.kill().expect("SIGKILL the recorder");
            let status = wait_bounded(child, LIMIT).expect("the recorder ends after SIGKILL");
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(9));
        }
        End::Normal => {
            drop(stdin);
            let status = wait_bounded(child, LIMIT).expect("the recorder ends after EOF");
            assert_eq!(status.code(), Some(0));
        }
    }
}

/// `mcptape SUB T`: (exit code, stdout).
fn run(sub: &str, t_path: &Path) -> (Option<i32>, String) {
    let mut cmd = Command::new(mcptape());
    cmd.arg(sub).arg(t_path);
    let (out, _) = run_bounded(&mut cmd, LIMIT);
    (
        out.status.code(),
        String::from_utf8(out.stdout).expect("UTF-8 output"),
    )
}

/// Records and ends one session; returns the transcript path (in `dir`) and
/// the outputs of `check` and `inspect`.
fn session(dir: &Path, end: End) -> (mcptape_transcript::Transcript, String, String) {
    let t_path = dir.join(format!("{end:?}.jsonl"));
    record_session(&t_path, end);
    let t = read_transcript(&t_path);
    let (code, check) = run("check", &t_path);
    assert_eq!(
        code,
        Some(0),
        "{end:?}: check exits 0 (warnings never fail):\n{check}"
    );
    let (code, inspect) = run("inspect", &t_path);
    assert_eq!(code, Some(0), "{end:?}: inspect exits 0:\n{inspect}");
    assert_has(
        &inspect,
        &format!("(requested {URI}): resources/read result, 1 entry"),
    );
    (t, check, inspect)
}

#[test]
fn sigkill_of_the_recorder_on_a_line_boundary_says_recording_ended_without_an_exit_record() {
    let dir = tempfile::tempdir().unwrap();
    let (t, check, inspect) = session(dir.path(), End::Sigkill);
    // The case: whole records only, the read's answer among them, no exit record.
    assert!(
        t.dropped.is_none(),
        "the kill landed on a line boundary: {:?}",
        t.dropped
    );
    assert!(
        !t.records
            .iter()
            .any(|r| matches!(r.event, Event::Exit { .. })),
        "a killed recorder writes no exit record"
    );
    let answered = t
        .records
        .iter()
        .any(|r| r.dir() == Some(Direction::S2c) && r.msg().is_some_and(|m| m.contains(URI)));
    assert!(
        answered,
        "the read's answer was recorded before it was forwarded"
    );

    let last_line = t.records.len() + 1;
    assert!(
        check.contains(&format!(
            ":{last_line}: warning[recording-no-exit] {NO_EXIT_RECORD} ("
        )),
        "{check}"
    );
    assert_eq!(check.matches(NO_EXIT_RECORD).count(), 1, "{check}");
    assert_has(&check, "0 error(s), 1 warning(s)");
    assert!(
        inspect.contains(&format!("line {last_line}: {NO_EXIT_RECORD} (")),
        "{inspect}"
    );
    assert_has(&inspect, ", 0 bad lines, 0 bad results");
}

#[test]
fn server_exiting_normally_gets_an_exit_record_and_neither_says_it() {
    let dir = tempfile::tempdir().unwrap();
    let (t, check, inspect) = session(dir.path(), End::Normal);
    assert!(
        matches!(
            t.records.last().map(|r| &r.event),
            Some(Event::Exit { code: Some(0), .. })
        ),
        "the exit record is last: {:?}",
        t.records.last()
    );
    assert!(!check.contains(NO_EXIT_RECORD), "{check}");
    assert_has(&check, "0 error(s), 0 warning(s)");
    assert!(!inspect.contains(NO_EXIT_RECORD), "{inspect}");
}
