//! A transcript that can no longer be written ends the recording session:
//! `mcptape record` never forwards a line it could not record (issue 15,
//! "nothing recorded is lost"; a reviewer saw 200 lines forwarded and 59
//! recorded on a full tmpfs, reported only at exit).
//!
//! The failure is a real one, without a mount: the recorder runs under a file
//! size limit (`ulimit -f`) with SIGXFSZ ignored (a disposition `exec` keeps),
//! so the write that would pass the limit fails with `EFBIG`, as a full disk
//! fails with `ENOSPC`. The test is the client, `cat` the server.

use crate::record_support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use mcptape_transcript::Direction;
use record_support::*;

/// Lines the client sends (far more than the size limit holds).
const LINES: usize = 2000;
/// Bytes of padding per line (~1 KiB lines).
const PAD: usize = 1000;
/// The file size limit, in `ulimit -f` blocks (512 bytes for dash, 1024 for
/// bash: 64–128 KiB, room for the header and some dozens of records).
const LIMIT_BLOCKS: u32 = 128;

#[test]
fn transcript_write_failure_ends_the_session_and_forwards_no_line_unrecorded() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let mut child =
        spawn_record_under_file_limit(&t, LIMIT_BLOCKS, "-- cat", Stdio::piped(), Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    // One line at a time, each echo awaited: records accumulate up to the limit
    // on both sides, then the session must end.
    let pad = "x".repeat(PAD);
    let mut received = Vec::new();
    let mut echo = String::new();
    for i in 0..LINES as u64 {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"i\":{i},\"pad\":\"{pad}\"}}}}\n"
        );
        if stdin.write_all(line.as_bytes()).is_err() {
            break;
        }
        echo.clear();
        match stdout.read_line(&mut echo) {
            Ok(n) if n > 0 => {
                let v: serde_json::Value =
                    serde_json::from_str(&echo).expect("an echoed line is JSON");
                received.push(v["params"]["i"].as_u64().expect("numbered line"));
            }
            _ => break,
        }
    }
    drop(stdin);
    let status = wait_bounded(&mut child, Duration::from_secs(60)).unwrap_or_else(|| {
        let _ = child.kill();
        panic!("mcptape record did not end after its transcript failed");
    });
    let stderr = err.join().unwrap();

    assert_eq!(
        status.code(),
        Some(2),
        "a transcript failure is an error exit; stderr:\n{stderr}"
    );
    assert!(
        stderr.contains("File too large") && stderr.contains("t.jsonl"),
        "the error names the transcript and the cause:\n{stderr}"
    );
    assert!(
        received.len() < LINES,
        "the limit was hit before the end ({} of {LINES} echoed)",
        received.len()
    );
    let transcript = read_transcript(&t);
    let numbers = |dir| -> Vec<u64> {
        messages(&transcript, dir)
            .iter()
            .map(|m| m["params"]["i"].as_u64().unwrap())
            .collect()
    };
    let (c2s, s2c) = (numbers(Direction::C2s), numbers(Direction::S2c));
    assert!(!s2c.is_empty(), "some records fit under the limit");
    // Every line the client received is recorded, in order, both ways.
    assert_eq!(
        &s2c[..received.len().min(s2c.len())],
        &received[..],
        "lines received by the client but missing from the transcript (s2c {} records, received {})",
        s2c.len(),
        received.len()
    );
    assert!(received.len() <= s2c.len());
    assert!(
        c2s.starts_with(&s2c),
        "each echoed line was recorded as a request first"
    );
}
