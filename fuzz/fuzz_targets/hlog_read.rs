//! Fuzz target `hlog_read`: an untrusted HdrHistogram interval log never panics the reader, and a log it accepts round-trips through the writer.
//! The property lives in `mcptape_report::fuzzing::hlog_read`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_report::fuzzing::hlog_read(data));
