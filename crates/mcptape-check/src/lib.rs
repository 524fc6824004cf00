//! Conformance rules over transcripts (being written).
