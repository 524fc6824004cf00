//! Replay: serve, bench, verify (being written).
