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

/// A recording of a session that calls tools and gets prompts: (file, protocol, the
/// `tools/call` names in order, the `prompts/get` names in order, `notifications/progress`
/// the server sent).
type ToolsExpect = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    usize,
);

#[rustfmt::skip]
const TOOL_CORPUS: &[ToolsExpect] = &[
    ("everything-tools-stdio.jsonl", "2025-11-25",
     &["echo", "get-sum", "echo", "trigger-long-running-operation"], &["simple-prompt", "args-prompt"], 3),
    ("py-tools-stdio-2026-07-28.jsonl", "2026-07-28", &["add", "bump", "add"], &["review"], 0),
    ("py-tools-http-2025-11-25.jsonl", "2025-11-25", &["add", "add"], &["review"], 0),
];

#[test]
fn corpus_tool_sessions_hold_the_expected_calls_and_prompts() {
    let dir = match std::env::var_os("MCPTAPE_FRESH_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => repo_root().join("corpus/transcripts"),
    };
    for &(f, protocol, tools, prompts, progress) in TOOL_CORPUS {
        let t = read_transcript(&dir.join(f));
        assert!(t.dropped.is_none(), "{f}: cut tail {:?}", t.dropped);
        assert_eq!(t.protocol_version(), Some(protocol), "{f}");
        let c2s = messages(&t, Direction::C2s);
        let s2c = messages(&t, Direction::S2c);
        let named = |m: &str| -> Vec<(String, serde_json::Value)> {
            c2s.iter()
                .filter(|x| x["method"] == m)
                .map(|x| {
                    (
                        x["params"]["name"].as_str().unwrap().to_owned(),
                        x["id"].clone(),
                    )
                })
                .collect()
        };
        let calls = named("tools/call");
        let gets = named("prompts/get");
        assert_eq!(
            calls.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            tools,
            "{f}"
        );
        assert_eq!(
            gets.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            prompts,
            "{f}"
        );
        // Every call and prompt answered with a result (not a JSON-RPC error, not isError).
        for (name, id) in calls.iter().chain(&gets) {
            let reply = s2c
                .iter()
                .find(|m| m["id"] == *id && m.get("method").is_none())
                .unwrap_or_else(|| panic!("{f}: {name} unanswered"));
            assert!(reply.get("result").is_some(), "{f}: {name}: {reply}");
            assert_ne!(reply["result"]["isError"], true, "{f}: {name}: {reply}");
        }
        let listed = c2s.iter().filter(|m| m["method"] == "tools/list").count();
        assert_eq!(
            listed, 1,
            "{f}: the tools/list that bench reads readOnlyHint from"
        );
        let n_progress = s2c
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .count();
        assert_eq!(n_progress, progress, "{f}");
    }
}
