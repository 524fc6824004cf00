//! Fuzz target `json_differential`: the scalar and SIMD JSON paths for `resources/read` agree on accept/reject and on the parsed result.
//! The property lives in `mcptape_wire::codec::fuzzing::json_differential`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::codec::fuzzing::json_differential(data));
