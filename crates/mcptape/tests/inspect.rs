//! `mcptape inspect` run as the built binary on the seed examples.
//!
//! The seed PNG (`file:///repo/architecture.png`, 1,834,208 bytes) is a real,
//! valid PNG built deterministically here (grayscale 1024 x 1700, stored
//! zlib blocks, a `tEXt` chunk sizing it to the exact byte count). The test
//! writes it into a temp file and also checks that the shipped
//! `corpus/inspect/seed-png.jsonl` is byte-identical to what the generator
//! produces (regenerate with `MCPTAPE_REGEN_CORPUS=1 cargo test -p mcptape --test inspect`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;

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
    assert!(
        text.contains("pairing: responses to resources/read requests by id"),
        "{text}"
    );
    assert!(
        text.contains(
            "line 2: id 8 (requested file:///repo/architecture.png): resources/read result, 1 entry"
        ),
        "{text}"
    );
    assert!(
        text.contains("[0] uri       file:///repo/architecture.png"),
        "{text}"
    );
    assert!(text.contains("mimeType  image/png"), "{text}");
    assert!(text.contains("shape     blob"), "{text}");
    assert!(text.contains("decoded   1834208 bytes"), "{text}");
    assert!(
        text.contains("encoded   2445612 chars base64, padding 1"),
        "{text}"
    );
    assert!(
        text.contains("sniffed   image/png vs declared image/png: match"),
        "{text}"
    );
    assert!(
        text.contains("(absent: legacy peer, assumed complete)"),
        "{text}"
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
    assert!(text.contains("decoded   1834208 bytes"), "{text}");
    assert!(
        text.contains("encoded   2445612 chars base64, padding 1"),
        "{text}"
    );
}

#[test]
fn inspect_mixed_text_and_blob() {
    let (out, text) = inspect(&corpus("mixed.jsonl"), &[]);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("resources/read result, 2 entries, resultType complete"),
        "{text}"
    );
    assert!(
        text.contains("[0] uri       file:///srv/reports/q3.md"),
        "{text}"
    );
    assert!(text.contains("shape     text"), "{text}");
    assert!(text.contains("decoded   28 bytes"), "{text}");
    assert!(
        text.contains("[1] uri       file:///srv/reports/q3-chart.png"),
        "{text}"
    );
    assert!(text.contains("decoded   70 bytes"), "{text}");
    assert!(
        text.contains("encoded   96 chars base64, padding 2"),
        "{text}"
    );
    assert!(
        text.contains("sniffed   image/png vs declared image/png: match"),
        "{text}"
    );
    assert!(
        text.contains("entry uri differs from the requested uri"),
        "{text}"
    );
}

#[test]
fn inspect_flags_jpeg_declared_png_and_undeclared_blob() {
    let (out, text) = inspect(&corpus("jpeg-declared-png.jsonl"), &[]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("pairing: none"), "{text}");
    assert!(
        text.contains("sniffed   image/jpeg vs declared image/png: MISMATCH"),
        "{text}"
    );
    assert!(text.contains("mimeType  (none)"), "{text}");
    assert!(
        text.contains("vs declared (none): undeclared; bytes kept as bytes, application/octet-stream (defaulted)"),
        "{text}"
    );
    assert!(text.contains("text holds a data:...;base64, URI"), "{text}");
    assert!(text.contains("1 media mismatches"), "{text}");
}

#[test]
fn inspect_classifies_errors_and_reports_empty() {
    let (out, text) = inspect(&corpus("errors.jsonl"), &[]);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(
            "error -32602 \"Resource not found\" -> NotFound uri=docs://gone: drop the attachment"
        ),
        "{text}"
    );
    assert!(
        text.contains("-> NotFound uri=docs://old (legacy -32002)"),
        "{text}"
    );
    assert!(text.contains("-> InvalidParams: client bug"), "{text}");
    assert!(text.contains("-> Internal: retry with backoff"), "{text}");
    assert!(text.contains("-> Other code=-32001"), "{text}");
    assert!(text.contains("empty: contents []"), "{text}");
    assert!(
        text.contains("resources/read id \"never\" (docs://pending) has no response"),
        "{text}"
    );
}

#[test]
fn inspect_reports_bad_lines_with_numbers_and_never_panics() {
    let (out, text) = inspect(&corpus("bad-lines.jsonl"), &[]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("line 3: bad JSON-RPC message: JSON syntax error"),
        "{text}"
    );
    assert!(
        text.contains("line 4: bad JSON-RPC message: duplicate key \"id\""),
        "{text}"
    );
    assert!(
        text.contains("line 5: bad JSON-RPC message: request id is null"),
        "{text}"
    );
    assert!(text.contains("line 6: id 2 (requested docs://b): invalid resources/read result: entry has both text and blob in contents[0] (uri \"docs://b\")"), "{text}");
    assert!(text.contains("line 8: id 3 (requested docs://c): invalid resources/read result: blob: invalid base64 byte 0x2a at offset 4"), "{text}");
    assert!(
        text.contains("line 9: bad JSON-RPC message: lone surrogate"),
        "{text}"
    );
    assert!(
        text.contains(
            "line 10: bad batch element: message is not a JSON object in batch element 1"
        ),
        "{text}"
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
    assert!(
        text.contains(
            "lenient: contents[0] (file:///x.bin): accepted StrippedWhitespace { count: 3 }"
        ),
        "{text}"
    );
    assert!(
        text.contains("accepted UrlSafeAlphabet { count: 2 }"),
        "{text}"
    );
    assert!(text.contains("decoded   8 bytes"), "{text}");
}
