//! `mcptape check -` ([`check_read_streamed`]): a transcript read once (standard input, a
//! pipe) gets the report of the same bytes in a file, whichever passes the check makes:
//! `--spec auto` (a first pass up to the handshake), a fixed revision on stdio (one pass), an
//! HTTP transcript (a first pass over the event streams), a cut or refused file.

use std::io::Read;
use std::path::{Path, PathBuf};

use mcptape_check::{
    FileReport, Options, Revision, SpecChoice, check_paths, check_read_streamed, is_stdin,
};

use crate::support::repo;

/// A reader that gives its bytes once, in small odd-sized pieces, then only its end (as a
/// pipe: what was read cannot be read again).
struct Once {
    bytes: Vec<u8>,
    at: usize,
}

impl Read for Once {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7919).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The report of `bytes` read once, named `name`.
fn of_stdin(name: &Path, bytes: &[u8], opts: &Options) -> FileReport {
    let mut once = Once {
        bytes: bytes.to_vec(),
        at: 0,
    };
    check_read_streamed(name, &mut once, opts)
        .unwrap()
        .into_report()
        .unwrap()
}

fn of_file(path: &Path, opts: &Options) -> FileReport {
    check_paths(&[path.to_owned()], opts)
        .unwrap()
        .files
        .remove(0)
}

fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["corpus/transcripts", "corpus/violations", "corpus/inspect"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every corpus transcript (stdio and HTTP, clean, cut, unreadable, no exit record) read
/// from a one-shot reader gives the file's report, findings and counts alike, under `--spec
/// auto` and under a fixed revision.
#[test]
fn check_stdin_reports_as_the_file_for_every_corpus_transcript() {
    let specs = [
        Options::default(),
        Options {
            spec: SpecChoice::Fixed(Revision::V2025_11_25),
            ..Options::default()
        },
    ];
    let files = corpus_files();
    assert!(files.len() > 40, "{}", files.len());
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        for opts in &specs {
            let want = of_file(p, opts);
            let got = of_stdin(p, &bytes, opts);
            assert_eq!(
                serde_json::to_value(&got).unwrap(),
                serde_json::to_value(&want).unwrap(),
                "{}",
                p.display()
            );
        }
    }
}

/// `-` is standard input, taken as is by `collect` (never stat'ed), and only `-`.
#[test]
fn check_dash_is_stdin_and_dot_slash_dash_is_a_file() {
    assert!(is_stdin(Path::new("-")));
    assert!(!is_stdin(Path::new("./-")));
    assert!(!is_stdin(Path::new("--")));
    let c = mcptape_check::collect(&[PathBuf::from("-")]).unwrap();
    assert_eq!(c.files, vec![PathBuf::from("-")]);
}
