//! Fuzz target `base64_differential`: the scalar and SIMD base64 decoders (and encoders) agree on every input.
//! The property lives in `mcptape_wire::codec::fuzzing::base64_differential`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_wire::codec::fuzzing::base64_differential(data));
