//! Fuzz target `contents_structured`: an `arbitrary`-derived `resources/read` result (mixed
//! text/blob entries, odd uris, `_meta`, unknown fields) → serialize → parse round-trips exactly.
//! The property lives in `mcptape_wire::fuzzing::contents_structured`.
#![no_main]
libfuzzer_sys::fuzz_target!(|r: mcptape_wire::fuzzing::StructuredResult| {
    mcptape_wire::fuzzing::contents_structured(r)
});
