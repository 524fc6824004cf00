//! Protocol revisions and how a transcript's revision is decided.
//!
//! The revision model and the one detector live in
//! [`mcptape_wire::protocol`]; this module re-exports them and adds check's
//! `--spec` choice.

pub use mcptape_wire::protocol::{Detected, Revision, RevisionSource, STATELESS_SINCE};

/// `--spec`: a fixed revision, or detect it from the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecChoice {
    /// Detect from the transcript, with the precedence of
    /// [`RevisionDetector`](mcptape_wire::protocol::RevisionDetector).
    Auto,
    /// Use this revision whatever the transcript says
    /// ([`RevisionSource::CommandLine`]).
    Fixed(Revision),
}
