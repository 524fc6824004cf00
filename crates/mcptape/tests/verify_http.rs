//! `mcptape verify --target-url` against a real HTTP server on 127.0.0.1 that
//! answers 500: said at once, per request, with the status and the body's
//! first bytes (issue 14). Bounded time, loopback only.

use crate::record_support as support;

use crate::http_support;

use std::process::Command;
use std::time::Duration;

use support::*;

#[test]
fn http_500_is_said_at_once() {
    let server = http_support::Http500::start("boom: database down");
    let mut cmd = Command::new(mcptape());
    cmd.arg("verify")
        .arg(corpus_transcript("everything-http.jsonl"))
        // Every request answered at once, not one 60 s timeout each: a timeout waited out
        // would end the run past run_bounded's 60 s (no clock read here).
        .args(["--target-url", &server.url(), "--timeout", "60s"]);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("resources/read: HTTP 500 from the target: boom: database down"),
        "{err}"
    );
    assert!(!out.contains("no response within"), "{out}");
    assert!(server.reads() >= 1);
}
