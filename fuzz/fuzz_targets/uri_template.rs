//! Fuzz target `uri_template`: arbitrary RFC 6570 template and variables; expansion never panics, a match of an expansion expands back to it exactly, and matching the expansion of a simple `{var}` template yields the variables back.
//! The property lives in `mcptape_uri::fuzzing::uri_template`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_uri::fuzzing::uri_template(data));
