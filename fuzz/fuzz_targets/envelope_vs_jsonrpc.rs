//! Fuzz target `envelope_vs_jsonrpc`: the one JSON-RPC reader (`mcptape_wire::envelope`) against
//! serde_json as the outside oracle (accept/reject on the JSON grammar and the JSON-RPC 2.0 rules;
//! for an accepted message the kind, the id text and the member ranges serde_json sees).
//! The property lives in `mcptape_wire::fuzzing::envelope_vs_jsonrpc`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::fuzzing::envelope_vs_jsonrpc(data));
