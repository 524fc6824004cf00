//! Fuzz target `transcript_read`: arbitrary bytes never panic the transcript reader; a valid transcript truncated anywhere reads back as its complete records.
//! The property lives in `mcptape_transcript::fuzzing::transcript_read`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcptape_transcript::fuzzing::transcript_read(data));
