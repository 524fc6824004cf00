//! Fuzz target `contents_parse`: arbitrary bytes into the `resources/read` result parser; never panics, and a parsed value round-trips (serialize → parse gives the same value).
//! The property lives in `mcptape_wire::fuzzing::contents_parse`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::fuzzing::contents_parse(data));
