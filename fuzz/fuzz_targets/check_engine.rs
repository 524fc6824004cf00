//! Fuzz target `check_engine`: the check engine's and the inspect report's properties on arbitrary bytes.
//! The property lives in `mcptape_check::fuzzing::check_engine`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_check::fuzzing::check_engine(data));
