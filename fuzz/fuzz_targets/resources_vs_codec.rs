//! Fuzz target `resources_vs_codec`: `resources::parse_read_response` and `codec::decode_read_result` give the same verdict.
//! The property lives in `mcptape_wire::fuzzing::resources_vs_codec`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::fuzzing::resources_vs_codec(data));
