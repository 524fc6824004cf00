//! `record --listen` in front of a real server (server-everything over Streamable
//! HTTP): once the transcript can no longer be written, nothing is passed on
//! unrecorded — an event stream whose event failed to record ends without it,
//! every later request is answered `503` without reaching the upstream, and
//! every answer the client did get is in the transcript. The failure is
//! real, without a mount: a file size limit (`ulimit -f`) with SIGXFSZ ignored,
//! so the write past the limit fails with `EFBIG` as a full disk does with
//! `ENOSPC` (as `record_transcript_write_fails.rs` does for stdio).

use crate::record_support;

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use mcptape_transcript::Direction;
use record_support::*;

/// Requests sent at most (the limit is hit after some dozens).
const REQUESTS: u64 = 400;
/// First JSON-RPC id (ids are unique, so an answer is found in the transcript by its id).
const FIRST_ID: u64 = 700_000;
/// The file size limit, in `ulimit -f` blocks (512 or 1024 bytes).
const LIMIT_BLOCKS: u32 = 64;

/// One raw HTTP/1.1 POST of `body` to 127.0.0.1:`port`/mcp; the status and the whole answer.
fn post(port: u16, body: &str) -> (u16, String) {
    let text = http_exchange(
        port,
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream",
        body.as_bytes(),
    );
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    (status, text)
}

#[test]
fn http_transcript_write_failure_forwards_nothing_unrecorded() {
    let (_server, up) = everything_http();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let port = free_port();
    let args = format!("--listen 127.0.0.1:{port} --upstream http://127.0.0.1:{up}/mcp");
    let child =
        spawn_record_under_file_limit(&t, LIMIT_BLOCKS, &args, Stdio::null(), Stdio::null());
    let mut proxy = Guard(child);
    wait_port(port, Duration::from_secs(30));

    let pad = "x".repeat(500);
    let mut answered = Vec::new();
    let mut refused = 0;
    for i in 0..REQUESTS {
        let id = FIRST_ID + i;
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-11-25\",\
             \"capabilities\":{{}},\"clientInfo\":{{\"name\":\"t{pad}\",\"version\":\"1\"}}}}}}"
        );
        let (status, text) = post(port, &body);
        match status {
            200 if text.contains(&format!("\"id\":{id}")) => {
                assert_eq!(refused, 0, "an answer passed on after a refusal:\n{text}");
                answered.push(id);
            }
            // An event stream whose event could not be recorded ends without it (its
            // status line was already sent); later requests get 503.
            200 | 503 => {
                if status == 503 {
                    assert_has(&text, "transcript cannot be written");
                }
                refused += 1;
                if refused == 3 {
                    break;
                }
            }
            _ => panic!("request {i}: unexpected answer:\n{text}"),
        }
    }
    let status = terminate(&mut proxy);
    let mut stderr = String::new();
    let _ = proxy.0.stderr.take().unwrap().read_to_string(&mut stderr);

    assert_eq!(
        refused,
        3,
        "the limit was hit ({} answered)",
        answered.len()
    );
    assert!(!answered.is_empty(), "some exchanges fit under the limit");
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert_has(&stderr, "File too large");
    let transcript = read_transcript(&t);
    let recorded: Vec<u64> = messages(&transcript, Direction::S2c)
        .iter()
        .filter_map(|m| m["id"].as_u64())
        .collect();
    for id in &answered {
        assert!(
            recorded.contains(id),
            "answer {id} reached the client but is not in the transcript (recorded: {recorded:?})"
        );
    }
}
