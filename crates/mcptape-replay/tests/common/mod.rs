//! Shared helpers of the replay integration tests: the tapes under `tests/data/`.
#![allow(dead_code)]

use mcptape_replay::tape::Tape;

/// `tests/data/tiny-two-reads.jsonl`: an initialize and reads of `a.md`, `img/b.png` and a
/// recorded not-found `missing.md`.
pub const TINY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/tiny-two-reads.jsonl"
);

/// The tape of the transcript at `path` (read strictly; panics on any error).
pub fn tape_of(path: &str) -> Tape {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let t = mcptape_transcript::reader::read(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    Tape::from_transcript(&t).unwrap_or_else(|e| panic!("{path}: {e}"))
}
