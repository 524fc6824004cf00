//! Fuzz target `jsonrpc_parse`: arbitrary bytes into the JSON-RPC 2.0 envelope parser; never
//! panics, and an accepted single message round-trips (serialize → parse gives the same value).
//! The property lives in `mcptape_wire::fuzzing::jsonrpc_parse`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::fuzzing::jsonrpc_parse(data));
