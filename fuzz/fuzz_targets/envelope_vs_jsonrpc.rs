//! Fuzz target `envelope_vs_jsonrpc`: the bench client's hot-path envelope scanner and the strict JSON-RPC parser agree (accept/reject, kind, id, error object).
//! The property lives in `mcptape_wire::fuzzing::envelope_vs_jsonrpc`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::fuzzing::envelope_vs_jsonrpc(data));
