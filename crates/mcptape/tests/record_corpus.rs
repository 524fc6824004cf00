//! The shipped recordings in `corpus/transcripts/` (made by
//! `scripts/record-corpus.sh` from the real servers) parse and hold the
//! expected reads. CI's `.ci/steps/20-record.sh` re-records into a temp dir and
//! runs this test on the fresh files with `MCPTAPE_FRESH_CORPUS=DIR`.
//! Content that embeds a clock (server-everything's dynamic resources) is not compared.

mod record_support;

use std::path::PathBuf;

use mcptape_transcript::{Direction, Event, Transport};
use record_support::*;

struct Expect {
    file: &'static str,
    transport: Transport,
    protocol: &'static str,
    listed: usize,
    blob_reads: usize,
    missing: &'static str,
    /// Base64 length of the largest blob, when it is the Python server's 2 MB PNG.
    large_png: bool,
    /// A failed `server/discover` precedes `initialize`.
    discover_fallback: bool,
}

const EVERYTHING_MISSING: &str = "demo://resource/static/document/mcptape-does-not-exist";
const PY_MISSING: &str = "mcptape://docs/mcptape-does-not-exist";

const CORPUS: &[Expect] = &[
    Expect {
        file: "everything-stdio.jsonl",
        transport: Transport::Stdio,
        protocol: "2025-11-25",
        listed: 7,
        blob_reads: 2,
        missing: EVERYTHING_MISSING,
        large_png: false,
        discover_fallback: false,
    },
    Expect {
        file: "everything-http.jsonl",
        transport: Transport::Http,
        protocol: "2025-11-25",
        listed: 7,
        blob_reads: 1,
        missing: EVERYTHING_MISSING,
        large_png: false,
        discover_fallback: false,
    },
    Expect {
        file: "py-stdio-2025-11-25.jsonl",
        transport: Transport::Stdio,
        protocol: "2025-11-25",
        listed: 6,
        blob_reads: 4,
        missing: PY_MISSING,
        large_png: true,
        discover_fallback: false,
    },
    Expect {
        file: "py-stdio-2026-07-28.jsonl",
        transport: Transport::Stdio,
        protocol: "2026-07-28",
        listed: 6,
        blob_reads: 4,
        missing: PY_MISSING,
        large_png: true,
        discover_fallback: false,
    },
    Expect {
        file: "py-http-2025-11-25.jsonl",
        transport: Transport::Http,
        protocol: "2025-11-25",
        listed: 6,
        blob_reads: 4,
        missing: PY_MISSING,
        large_png: true,
        discover_fallback: false,
    },
    Expect {
        file: "py-http-2026-07-28.jsonl",
        transport: Transport::Http,
        protocol: "2026-07-28",
        listed: 6,
        blob_reads: 4,
        missing: PY_MISSING,
        large_png: true,
        discover_fallback: false,
    },
    Expect {
        file: "crawl-everything-stdio.jsonl",
        transport: Transport::Stdio,
        protocol: "2025-11-25",
        listed: 7,
        blob_reads: 2,
        missing: EVERYTHING_MISSING,
        large_png: false,
        discover_fallback: false,
    },
    Expect {
        file: "crawl-everything-http-2026-07-28-fallback.jsonl",
        transport: Transport::Http,
        protocol: "2025-11-25",
        listed: 7,
        blob_reads: 0,
        missing: EVERYTHING_MISSING,
        large_png: false,
        discover_fallback: true,
    },
    Expect {
        file: "crawl-py-stdio-2026-07-28.jsonl",
        transport: Transport::Stdio,
        protocol: "2026-07-28",
        listed: 6,
        blob_reads: 3,
        missing: PY_MISSING,
        large_png: true,
        discover_fallback: false,
    },
];

#[test]
fn corpus_transcripts_parse_and_hold_the_expected_reads() {
    let dir = match std::env::var_os("MCPTAPE_FRESH_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => repo_root().join("corpus/transcripts"),
    };
    for e in CORPUS {
        let path = dir.join(e.file);
        let t = read_transcript(&path);
        let f = e.file;
        assert!(t.dropped.is_none(), "{f}: cut tail {:?}", t.dropped);
        assert_eq!(t.header.transport, e.transport, "{f}");
        assert_eq!(t.protocol_version(), Some(e.protocol), "{f}");
        let listed = listed_uris(&t);
        assert_eq!(listed.len(), e.listed, "{f}: listed {listed:?}");
        let reads = Reads::of(&t);
        let ok = reads.ok_uris();
        for uri in &listed {
            assert!(ok.contains(uri), "{f}: listed {uri} not read");
        }
        assert_eq!(reads.blob_reads(), e.blob_reads, "{f}: {reads:?}");
        assert_eq!(reads.errors(), vec![(e.missing.to_owned(), -32602)], "{f}");
        let s2c = messages(&t, Direction::S2c);
        if e.large_png {
            let largest = s2c
                .iter()
                .filter_map(|m| m["result"]["contents"][0]["blob"].as_str())
                .map(str::len)
                .max();
            assert_eq!(
                largest,
                Some(2_798_784),
                "{f}: the 2,099,087-byte PNG as base64"
            );
        }
        if e.discover_fallback {
            let c2s = messages(&t, Direction::C2s);
            assert_eq!(c2s[0]["method"], "server/discover", "{f}");
            assert_eq!(c2s[1]["method"], "initialize", "{f}");
        }
        match e.transport {
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
        let mut last = 0;
        for r in &t.records {
            assert!(r.t_us >= last, "{f}: monotonic tUs");
            last = r.t_us;
        }
    }
}
