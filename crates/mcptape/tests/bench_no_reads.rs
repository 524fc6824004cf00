//! `mcptape bench` on a transcript with no recorded `resources/read` names the file, as every
//! other bench error does, and starts nothing.

use crate::record_support as support;

use support::*;

/// Regression (new-user report): `bench trunc.jsonl` said `error: transcript has no recorded
/// resources/read request` without the file name.
#[test]
fn regression_bench_names_the_transcript_that_has_no_recorded_read() {
    let full = std::fs::read_to_string(corpus_transcript("everything-stdio.jsonl")).unwrap();
    // The header and the handshake only: whole records, none a resources/read.
    let head: String = full
        .split_inclusive('\n')
        .take_while(|l| !l.contains("\"resources/"))
        .collect();
    assert!(head.contains("\"initialize\""), "{head}");
    let dir = tempfile::tempdir().unwrap();
    let trunc = dir.path().join("trunc.jsonl");
    std::fs::write(&trunc, head).unwrap();
    let out = dir.path().join("out");
    let (o, _) = run_bench(&trunc, &["--reads", "1", "--turns", "0"], Some(&out));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: {}: transcript has no recorded resources/read request",
            trunc.display()
        )),
        "{stderr}"
    );
    assert!(!out.join("report.json").exists(), "ran anyway");
}
