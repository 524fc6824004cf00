//! Fuzz target `jsonrpc_parse`: arbitrary bytes into the one JSON-RPC reader's typed view
//! (`mcptape_wire::envelope::parse`); never panics, an accepted single message round-trips
//! (serialize → parse gives the same value) and keeps its id's raw text.
//! The property lives in `mcptape_wire::fuzzing::jsonrpc_parse`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::fuzzing::jsonrpc_parse(data));
