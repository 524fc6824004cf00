//! Fuzz target `sse_events`: arbitrary bytes split at arbitrary points parse into the same SSE events as one unsplit read.
//! The property lives in `mcptape_transport::fuzzing::sse_events`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_transport::fuzzing::sse_events(data));
