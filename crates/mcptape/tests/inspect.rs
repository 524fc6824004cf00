//! `mcptape inspect` run as the built binary on the seed examples.
//!
//! The seed PNG (`file:///repo/architecture.png`, 1,834,208 bytes) is a real,
//! valid PNG built deterministically here (grayscale 1024 x 1700, stored
//! zlib blocks, a `tEXt` chunk sizing it to the exact byte count). The test
//! writes it into a temp file and also checks that the shipped
//! `corpus/inspect/seed-png.jsonl` is byte-identical to what the generator
//! produces (regenerate with `MCPTAPE_REGEN_CORPUS=1 cargo test -p mcptape --test integration -- inspect::`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;

use crate::record_support::{assert_has, assert_has_all};

const SEED_PNG_BYTES: usize = 1_834_208;

fn crc32(chunks: &[&[u8]]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let mut crc = 0xFFFF_FFFFu32;
    for chunk in chunks {
        for &b in *chunk {
            crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
        }
    }
    crc ^ 0xFFFF_FFFF
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32(&[kind, data]).to_be_bytes());
}

/// A valid PNG of exactly `total` bytes (PNG spec: signature, IHDR, tEXt, IDAT, IEND).
fn seed_png(total: usize) -> Vec<u8> {
    let (w, h) = (1024usize, 1700usize);
    let mut raw = Vec::with_capacity(h * (w + 1));
    for y in 0..h {
        raw.push(0); // filter: none
        raw.extend((0..w).map(|x| ((x * 7 + y * 3) ^ (x >> 3)) as u8));
    }
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, b) in blocks.iter().enumerate() {
        z.push(u8::from(i + 1 == blocks.len()));
        let len = b.len() as u16;
        z.extend_from_slice(&len.to_le_bytes());
        z.extend_from_slice(&(!len).to_le_bytes());
        z.extend_from_slice(b);
    }
    z.extend_from_slice(&adler32(&raw).to_be_bytes());
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&(w as u32).to_be_bytes());
    ihdr.extend_from_slice(&(h as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit grayscale
    let fixed = 8 + (12 + 13) + 12 + (12 + z.len()) + 12;
    let mut text = b"Comment\0".to_vec();
    let pad = total - fixed - text.len();
    text.extend((0..pad).map(|i| b"mcptape seed architecture.png "[i % 30]));
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"tEXt", &text);
    chunk(&mut png, b"IDAT", &z);
    chunk(&mut png, b"IEND", &[]);
    assert_eq!(png.len(), total);
    png
}

/// The seed's PNG exchange as two JSONL lines: the request (id 8) and its response.
fn seed_png_jsonl() -> String {
    let blob = base64::engine::general_purpose::STANDARD.encode(seed_png(SEED_PNG_BYTES));
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{{"uri":"file:///repo/architecture.png"}}}}"#,
            "\n",
            r#"{{"jsonrpc":"2.0","id":8,"result":{{"contents":[{{"uri":"file:///repo/architecture.png","mimeType":"image/png","blob":"{}"}}]}}}}"#,
            "\n"
        ),
        blob
    )
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/inspect")
        .join(name)
}

fn inspect(path: &Path, extra: &[&str]) -> (Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcptape"))
        .arg("inspect")
        .args(extra)
        .arg(path)
        .output()
        .expect("run mcptape");
    let text = String::from_utf8(out.stdout.clone()).expect("utf-8 output");
    (out, text)
}

/// The output of `mcptape inspect` on `corpus/inspect/NAME`, which must exit `code`.
fn inspect_corpus(name: &str, code: i32) -> String {
    let (out, text) = inspect(&corpus(name), &[]);
    assert_eq!(out.status.code(), Some(code), "{text}");
    text
}

#[test]
fn seed_png_generator_is_a_real_png_of_the_seed_size() {
    let png = seed_png(SEED_PNG_BYTES);
    assert_eq!(png.len(), 1_834_208);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(&png[png.len() - 8..png.len() - 4], b"IEND");
}

#[test]
fn inspect_seed_png_prints_the_seed_figures() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seed-png.jsonl");
    std::fs::write(&path, seed_png_jsonl()).unwrap();
    let (out, text) = inspect(&path, &[]);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_has_all(
        &text,
        &[
            "pairing: responses to resources/read requests by id",
            "line 2: id 8 (requested file:///repo/architecture.png): resources/read result, 1 entry",
            "[0] uri       file:///repo/architecture.png",
            "mimeType  image/png",
            "shape     blob",
            "decoded   1834208 bytes",
            "encoded   2445612 chars base64, padding 1",
            "sniffed   image/png vs declared image/png: match",
            "(absent: legacy peer, assumed complete)",
        ],
    );
}

#[test]
fn shipped_seed_png_corpus_matches_generator() {
    let expected = seed_png_jsonl();
    let path = corpus("seed-png.jsonl");
    if std::env::var_os("MCPTAPE_REGEN_CORPUS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let shipped = std::fs::read_to_string(&path).expect("corpus/inspect/seed-png.jsonl");
    assert_eq!(shipped.len(), expected.len());
    assert!(
        shipped == expected,
        "corpus/inspect/seed-png.jsonl differs from the generator"
    );
    let (out, text) = inspect(&path, &[]);
    assert!(out.status.success());
    assert_has_all(
        &text,
        &[
            "decoded   1834208 bytes",
            "encoded   2445612 chars base64, padding 1",
        ],
    );
}

#[test]
fn inspect_mixed_text_and_blob() {
    assert_has_all(
        &inspect_corpus("mixed.jsonl", 0),
        &[
            "resources/read result, 2 entries, resultType complete",
            "[0] uri       file:///srv/reports/q3.md",
            "shape     text",
            "decoded   28 bytes",
            "[1] uri       file:///srv/reports/q3-chart.png",
            "decoded   70 bytes",
            "encoded   96 chars base64, padding 2",
            "sniffed   image/png vs declared image/png: match",
            "entry uri differs from the requested uri",
        ],
    );
}

#[test]
fn inspect_flags_jpeg_declared_png_and_undeclared_blob() {
    assert_has_all(
        &inspect_corpus("jpeg-declared-png.jsonl", 0),
        &[
            "pairing: none",
            "sniffed   image/jpeg vs declared image/png: MISMATCH",
            "mimeType  (none)",
            "vs declared (none): undeclared; bytes kept as bytes, application/octet-stream (defaulted)",
            "text holds a data:...;base64, URI",
            "1 media mismatches",
        ],
    );
}

#[test]
fn inspect_classifies_errors_and_reports_empty() {
    assert_has_all(
        &inspect_corpus("errors.jsonl", 0),
        &[
            "error -32602 \"Resource not found\" -> NotFound uri=docs://gone: drop the attachment",
            "-> NotFound uri=docs://old (legacy -32002)",
            "-> InvalidParams: client bug",
            "-> Internal: retry with backoff",
            "-> Other code=-32001",
            "empty: contents []",
            "resources/read id \"never\" (docs://pending) has no response",
        ],
    );
}

#[test]
fn inspect_reports_bad_lines_with_numbers_and_never_panics() {
    let (out, text) = inspect(&corpus("bad-lines.jsonl"), &[]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_has_all(
        &text,
        &[
            "line 3: bad JSON-RPC message: JSON syntax error",
            "line 4: bad JSON-RPC message: duplicate key \"id\"",
            "line 5: bad JSON-RPC message: request id is null",
            "line 6: id 2 (requested docs://b): invalid resources/read result: entry has both text and blob in contents[0] (uri \"docs://b\")",
            "line 8: id 3 (requested docs://c): invalid resources/read result: blob: invalid base64 byte 0x2a at offset 4",
            "line 9: bad JSON-RPC message: lone surrogate",
            "line 10: bad batch element: message is not a JSON object in batch element 1",
        ],
    );
    assert_eq!(out.stderr, b"", "no panic output");
}

#[test]
fn inspect_lenient_mode_reports_what_it_accepted() {
    let path = corpus("lenient-blob.jsonl");
    let (out, text) = inspect(&path, &[]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let (out, text) = inspect(&path, &["--lenient"]);
    assert!(out.status.success(), "{text}");
    assert_has_all(
        &text,
        &[
            "lenient: contents[0] (file:///x.bin): accepted 3 whitespace characters stripped",
            "accepted 2 URL-safe characters (-, _) mapped to +, /",
        ],
    );
    assert!(!text.contains("count:"), "no Rust debug formatting: {text}");
    assert_has(&text, "decoded   8 bytes");
}

fn shipped_transcript(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/transcripts")
        .join(name)
}

/// The fresh-user report: `inspect corpus/transcripts/everything-stdio.jsonl`
/// failed on every line ("unknown member mcptapeTranscript/tUs"). Now the
/// header is detected and the message records are inspected, numbered by
/// transcript line. The expected line number and sizes are computed here
/// from the file itself (serde_json + the base64 crate), independently of
/// mcptape's reader, and the blob size is the recorded server's real PNG.
#[test]
fn inspect_reads_mcptape_transcript_py_stdio_2026_07_28_large_png() {
    let path = shipped_transcript("py-stdio-2026-07-28.jsonl");
    let file = std::fs::read_to_string(&path).expect("shipped transcript");
    let (line_no, blob) = file
        .lines()
        .enumerate()
        .find_map(|(i, l)| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            let entry = &v["msg"]["result"]["contents"][0];
            (v["dir"] == "s2c" && entry["uri"] == "mcptape://blobs/large.png")
                .then(|| (i + 1, entry["blob"].as_str().unwrap().to_owned()))
        })
        .expect("the large.png response is recorded");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&blob)
        .unwrap();
    assert_eq!((bytes.len(), blob.len()), (2_099_087, 2_798_784));
    assert_eq!(line_no, 18);

    let (out, text) = inspect(&path, &[]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with(
            "source: mcptape transcript (format 1, transport stdio, 27 records, 24 message records)"
        ),
        "{text}"
    );
    assert_has(
        &text,
        &format!(
            "line {line_no}: id 8 (requested mcptape://blobs/large.png): resources/read result, 1 entry, resultType complete, ttlMs 0, cacheScope private\n  [0] uri       mcptape://blobs/large.png\n      mimeType  image/png\n      shape     blob\n      decoded   2099087 bytes\n      encoded   2798784 chars base64, padding 1\n      sniffed   image/png vs declared image/png: match\n"
        ),
    );
    assert_has_all(
        &text,
        &[
            "error -32602 \"Unknown resource: mcptape://docs/mcptape-does-not-exist\" -> NotFound uri=mcptape://docs/mcptape-does-not-exist: drop the attachment and tell the user",
            "summary: 24 message records, 24 messages, 8 read results (8 entries), 1 error responses, 0 bad lines",
        ],
    );
    assert!(!text.contains("unknown member"), "{text}");
}

/// Every shipped transcript (the output of `record`/`crawl`) inspects clean.
#[test]
fn inspect_reads_every_shipped_transcript_without_bad_lines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/transcripts");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        n += 1;
        let (out, text) = inspect(&path, &[]);
        assert_eq!(out.status.code(), Some(0), "{}: {text}", path.display());
        assert!(text.starts_with("source: mcptape transcript"), "{text}");
        assert_has(&text, ", 0 bad lines, 0 bad results");
        assert!(
            !text.contains(" 0 read results"),
            "{}: {text}",
            path.display()
        );
    }
    assert!(n >= 5, "{n} transcripts");
}

/// A transcript with a stderr record, a client→server answer reusing a read's
/// id, a malformed record (line 6), a duplicate key inside a `msg` (line 9)
/// and a cut last line (line 10): line numbers are transcript lines, the
/// client's answer is not taken as a read result, exit 1.
#[test]
fn inspect_transcript_bad_record_and_cut_tail_keeps_transcript_line_numbers() {
    let text = inspect_corpus("transcript-bad-record-and-cut-tail.jsonl", 1);
    assert_has_all(
        &text,
        &[
            "(format 1, transport stdio, 7 records, 6 message records)",
            "line 4: id 1 (requested mcptape://docs/a.txt): resources/read result, 1 entry",
        ],
    );
    assert!(!text.contains("mcptape://client/answer"), "{text}");
    assert_has_all(
        &text,
        &[
            "line 6: bad transcript record: invalid record at column 21",
            "line 8: id 3 (requested mcptape://blobs/x.png): resources/read result",
            "decoded   8 bytes",
            "line 9: bad JSON-RPC message: duplicate key \"id\" in object at byte 24",
            "line 10: last line cut (73 bytes, no newline), dropped:",
            "summary: 6 message records, 5 messages, 2 read results (2 entries), 0 error responses, 3 bad lines",
        ],
    );
}

/// Nothing to inspect (an empty file, blank lines, a header-only transcript):
/// "no messages" on stderr, exit 1.
#[test]
fn inspect_empty_input_says_no_messages_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, b"").unwrap();
    for path in [
        empty,
        corpus("blank-lines-only.jsonl"),
        corpus("transcript-header-only.jsonl"),
    ] {
        let (out, text) = inspect(&path, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {text}", path.display());
        assert_has(&text, "no messages: nothing to inspect");
        assert!(
            err.starts_with("mcptape inspect: no messages in ")
                && err.ends_with(": nothing to inspect\n"),
            "{err}"
        );
    }
}

/// Messages but no `resources/read` result: not an error (exit 0), said on
/// stdout and stderr.
#[test]
fn inspect_no_read_results_is_not_an_error_but_says_so() {
    let (out, text) = inspect(&corpus("no-read-results.jsonl"), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_has(&text, "no resources/read result in this file (2 messages)");
    assert_has(&err, "no resources/read result in ");
    assert!(err.ends_with("(2 messages)\n"), "{err}");
}

/// With TMPDIR missing (or a file), `inspect` of a transcript whose report
/// passes the in-memory chunk printed nothing and exited 2 (`the report's
/// temporary file`); it now reads the file again and prints the same
/// bytes, text and JSON.
#[test]
fn inspect_transcript_with_tmpdir_missing_or_a_file_prints_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many-unanswered.jsonl");
    let mut t = String::from(
        r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#,
    );
    t.push('\n');
    for id in 0..20_000 {
        t.push_str(&format!(
            r#"{{"tUs":{id},"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///a/rather/long/path/to/resource/number/{id:08}.txt"}}}}}}"#
        ));
        t.push('\n');
    }
    std::fs::write(&path, &t).unwrap();
    for extra in [&[][..], &["--json"][..]] {
        let run = |tmpdir: Option<&Path>| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_mcptape"));
            c.arg("inspect").args(extra).arg(&path);
            if let Some(d) = tmpdir {
                c.env("TMPDIR", d);
            }
            c.output().expect("run mcptape")
        };
        let normal = run(None);
        assert!(
            normal.stdout.len() > mcptape_check::inspect::REPORT_SPILL_CHUNK_BYTES,
            "{extra:?}: {} bytes do not pass the chunk",
            normal.stdout.len()
        );
        for tmpdir in [Path::new("/nonexistent"), path.as_path()] {
            let fallback = run(Some(tmpdir));
            let err = String::from_utf8_lossy(&fallback.stderr);
            assert_eq!(fallback.status.code(), normal.status.code(), "{err}");
            assert!(
                fallback.stdout == normal.stdout,
                "{extra:?} {tmpdir:?}: {err}"
            );
        }
    }
}
