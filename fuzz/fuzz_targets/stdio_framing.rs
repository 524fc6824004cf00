//! Fuzz target `stdio_framing`: arbitrary bytes split at arbitrary points frame into the same stdio messages as one unsplit read.
//! The property lives in `mcptape_transport::fuzzing::stdio_framing`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_transport::fuzzing::stdio_framing(data));
