//! Fuzz target `serve_decide`: arbitrary bytes as one incoming message to the recorded server; `decide_bytes` never panics and every reply is one JSON-RPC 2.0 response under the answer's id (400 for bytes that are not JSON).
//! The property lives in `mcptape_replay::fuzzing::serve_decide`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_replay::fuzzing::serve_decide(data));
