//! The shipped recordings in `corpus/transcripts/` (made by
//! `scripts/record-corpus.sh` from the real servers) parse and hold the
//! expected reads. CI's `.ci/steps/20-record.sh` re-records into a temp dir and
//! runs this test on the fresh files with `MCPTAPE_FRESH_CORPUS=DIR`.
//! Content that embeds a clock (server-everything's dynamic resources) is not compared.

use crate::record_support;

use std::path::PathBuf;

use mcptape_transcript::{Direction, Event, Transport};
use record_support::*;

/// One shipped recording: (file, transport, protocol, listed resources, blob reads,
/// the missing URI, whether the largest blob is the Python server's 2 MB PNG,
/// whether a failed `server/discover` precedes `initialize`).
type Expect = (
    &'static str,
    Transport,
    &'static str,
    usize,
    usize,
    &'static str,
    bool,
    bool,
);

const EVERYTHING_MISSING: &str = "demo://resource/static/document/mcptape-does-not-exist";
const PY_MISSING: &str = "mcptape://docs/mcptape-does-not-exist";

#[rustfmt::skip]
const CORPUS: &[Expect] = &[
    ("everything-stdio.jsonl",                          Transport::Stdio, "2025-11-25", 7, 2, EVERYTHING_MISSING, false, false),
    ("everything-http.jsonl",                           Transport::Http,  "2025-11-25", 7, 1, EVERYTHING_MISSING, false, false),
    ("py-stdio-2025-11-25.jsonl",                       Transport::Stdio, "2025-11-25", 6, 4, PY_MISSING,         true,  false),
    ("py-stdio-2026-07-28.jsonl",                       Transport::Stdio, "2026-07-28", 6, 4, PY_MISSING,         true,  false),
    ("py-http-2025-11-25.jsonl",                        Transport::Http,  "2025-11-25", 6, 4, PY_MISSING,         true,  false),
    ("py-http-2026-07-28.jsonl",                        Transport::Http,  "2026-07-28", 6, 4, PY_MISSING,         true,  false),
    ("crawl-everything-stdio.jsonl",                    Transport::Stdio, "2025-11-25", 7, 2, EVERYTHING_MISSING, false, false),
    ("crawl-everything-http-2026-07-28-fallback.jsonl", Transport::Http,  "2025-11-25", 7, 0, EVERYTHING_MISSING, false, true),
    ("crawl-py-stdio-2026-07-28.jsonl",                 Transport::Stdio, "2026-07-28", 6, 3, PY_MISSING,         true,  false),
];

#[test]
fn corpus_transcripts_parse_and_hold_the_expected_reads() {
    let dir = match std::env::var_os("MCPTAPE_FRESH_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => repo_root().join("corpus/transcripts"),
    };
    for &(f, transport, protocol, listed_n, blob_reads, missing, large_png, discover_fallback) in
        CORPUS
    {
        let path = dir.join(f);
        let t = read_transcript(&path);
        assert!(t.dropped.is_none(), "{f}: cut tail {:?}", t.dropped);
        assert_eq!(t.header.transport, transport, "{f}");
        assert_eq!(t.protocol_version(), Some(protocol), "{f}");
        let listed = listed_uris(&t);
        assert_eq!(listed.len(), listed_n, "{f}: listed {listed:?}");
        let reads = Reads::of(&t);
        let ok = reads.ok_uris();
        for uri in &listed {
            assert!(ok.contains(uri), "{f}: listed {uri} not read");
        }
        assert_eq!(reads.blob_reads(), blob_reads, "{f}: {reads:?}");
        assert_eq!(reads.errors(), vec![(missing.to_owned(), -32602)], "{f}");
        if large_png {
            assert_eq!(
                largest_blob_chars(&t),
                Some(2_798_784),
                "{f}: the 2,099,087-byte PNG as base64"
            );
        }
        if discover_fallback {
            let c2s = messages(&t, Direction::C2s);
            assert_eq!(c2s[0]["method"], "server/discover", "{f}");
            assert_eq!(c2s[1]["method"], "initialize", "{f}");
        }
        match transport {
            Transport::Stdio => {
                assert_eq!(
                    exit_of(&t).0,
                    Some(0),
                    "{f}: the server exited by itself when its stdin closed"
                );
            }
            Transport::Http => {
                assert!(
                    t.header
                        .server
                        .url
                        .as_deref()
                        .is_some_and(|u| u.starts_with("http://127.0.0.1:")),
                    "{f}"
                );
                assert!(
                    t.records
                        .iter()
                        .all(|r| !matches!(&r.event, Event::Message { http: None, .. })),
                    "{f}: every HTTP message record has HttpMeta"
                );
            }
        }
        assert_monotonic(&t, f);
    }
}
