//! Entries that are not regular files (FIFO, socket, a symlink to a FIFO) never hang `check`:
//! found under a directory they are skipped ([`Collected::skipped`]), named directly they are
//! [`CheckErrorKind::NotRegularFile`]. Every call runs in a thread bounded at 5 s, so the old
//! blocking `std::fs::read` of a FIFO fails these tests by timeout instead of hanging them.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use mcptape_check::{CheckErrorKind, Collected, Options, check_paths, collect};

/// A passing transcript (one of the crate's `tests/data/pass` cases).
fn pass_transcript() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pass/cancelled-request-never-answered.jsonl")
}

fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(st.success(), "mkfifo {} failed: {st}", path.display());
}

/// Runs `f` in a thread and waits at most 5 s for its result.
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("blocked for 5 s on a path that is not a regular file")
}

/// `dir/a.jsonl` (a real transcript) and `dir/p.jsonl` (a FIFO): the case of the
/// fresh-user report (N1).
fn dir_with_fifo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.jsonl");
    std::fs::copy(pass_transcript(), &a).unwrap();
    let p = tmp.path().join("p.jsonl");
    mkfifo(&p);
    (tmp, a, p)
}

#[test]
fn check_dir_with_fifo_jsonl_skips_it_and_checks_the_rest() {
    let (tmp, a, p) = dir_with_fifo();
    let dir = tmp.path().to_owned();
    let report = bounded(move || check_paths(&[dir], &Options::default())).unwrap();
    assert_eq!(report.summary.files, 1);
    assert_eq!(report.files[0].file, a.display().to_string());
    assert_eq!(report.summary.errors, 0, "{:?}", report.files[0].findings);
    assert!(p.exists());
}

#[test]
fn collect_dir_with_fifo_jsonl_lists_it_as_skipped() {
    let (tmp, a, p) = dir_with_fifo();
    let dir = tmp.path().to_owned();
    let got = bounded(move || collect(&[dir])).unwrap();
    assert_eq!(
        got,
        Collected {
            files: vec![a],
            skipped: vec![p],
            loops: vec![],
        }
    );
}

#[test]
fn collect_dir_with_symlink_to_fifo_and_socket_skips_both() {
    let (tmp, a, p) = dir_with_fifo();
    let link = tmp.path().join("sub/link.jsonl");
    std::fs::create_dir(tmp.path().join("sub")).unwrap();
    std::os::unix::fs::symlink(&p, &link).unwrap();
    let sock = tmp.path().join("sock.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let dir = tmp.path().to_owned();
    let got = bounded(move || collect(&[dir])).unwrap();
    assert_eq!(got.files, vec![a]);
    assert_eq!(got.skipped, vec![p, sock, link]);
}

#[test]
fn dir_holding_only_a_fifo_jsonl_has_no_transcripts() {
    let tmp = tempfile::tempdir().unwrap();
    mkfifo(&tmp.path().join("p.jsonl"));
    let dir = tmp.path().to_owned();
    let e = bounded(move || check_paths(&[dir], &Options::default())).unwrap_err();
    assert!(matches!(e.kind, CheckErrorKind::NoTranscripts), "{e}");
    assert_eq!(e.path, tmp.path());
}

#[test]
fn fifo_named_directly_is_not_a_regular_file() {
    let (_tmp, _a, p) = dir_with_fifo();
    let arg = p.clone();
    let e = bounded(move || check_paths(&[arg], &Options::default())).unwrap_err();
    assert!(matches!(e.kind, CheckErrorKind::NotRegularFile), "{e}");
    assert_eq!(e.path, p);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: not a regular file (FIFO, socket or device); read a pipe as `-` on standard input",
            p.display()
        )
    );
}

#[test]
fn regular_file_named_directly_without_jsonl_extension_is_still_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("transcript.txt");
    std::fs::copy(pass_transcript(), &t).unwrap();
    let arg = t.clone();
    let report = bounded(move || check_paths(&[arg], &Options::default())).unwrap();
    assert_eq!(report.summary.files, 1);
    assert_eq!(report.files[0].file, t.display().to_string());
}
