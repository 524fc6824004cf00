//! Fuzz target `uri_sanitize`: arbitrary root and URI; an `Ok` path is inside the root by whole components, has no `.`/`..` segment, and is a fixed point of `resolve`.
//! The property lives in `mcptape_uri::fuzzing::uri_sanitize`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_uri::fuzzing::uri_sanitize(data));
