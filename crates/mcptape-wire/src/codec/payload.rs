//! Deterministic `resources/read` response payloads for benches, the
//! `bench-codec` command and the differential tests. Same inputs →
//! same bytes on every run and machine (xorshift64* generator, no clock).
//!
//! Sizes follow the seeds (`resources-read-response`): a 1,834,208-byte PNG
//! is 2,445,612 base64 characters (one `=`); a directory of 40 mockups at
//! 3 MB each is about 160 MB of base64 in one response.

use super::base64::{Path, encode_append};

/// Size in bytes of the seeds' PNG (`file:///repo/architecture.png`).
pub const SEED_PNG_BYTES: usize = 1_834_208;
/// Entries in the seeds' directory read.
pub const DIRECTORY_ENTRIES: usize = 40;
/// Bytes per file in the seeds' directory read (3 MB).
pub const DIRECTORY_ENTRY_BYTES: usize = 3_000_000;

/// Deterministic pseudo-random generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is mapped to a fixed non-zero state).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// `n` bytes that start with the PNG signature (RFC 2083 §3.1) and an IHDR
/// chunk header, then incompressible pseudo-random bytes from `seed`.
pub fn png_like(n: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; n];
    Rng::new(seed).fill(&mut v);
    let head: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR";
    let k = head.len().min(n);
    v[..k].copy_from_slice(&head[..k]);
    v
}

/// One `contents` entry to put in a generated response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadEntry {
    /// A TextResourceContents: `uri`, `mimeType`, `text`.
    Text {
        /// `uri`.
        uri: String,
        /// `mimeType`.
        mime_type: String,
        /// `text` (escaped as JSON when serialized).
        text: String,
    },
    /// A BlobResourceContents: `uri`, `mimeType`, raw bytes (base64-encoded
    /// into `blob` when serialized).
    Blob {
        /// `uri`.
        uri: String,
        /// `mimeType`.
        mime_type: String,
        /// The bytes before encoding.
        bytes: Vec<u8>,
    },
}

/// Serializes a full JSON-RPC 2.0 response to `resources/read` (spec revision
/// 2026-07-28: `resultType`, `ttlMs`, `cacheScope`) with `id` and `entries`.
pub fn response(id: u64, entries: &[PayloadEntry]) -> Vec<u8> {
    let total: usize = entries
        .iter()
        .map(|e| match e {
            PayloadEntry::Text { text, .. } => text.len() + 128,
            PayloadEntry::Blob { bytes, .. } => bytes.len() / 3 * 4 + 132,
        })
        .sum();
    let mut s = String::with_capacity(total + 160);
    s.push_str(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","ttlMs":60000,"cacheScope":"public","contents":["#
    ));
    let q = |v: &str| serde_json::to_string(v).unwrap_or_default();
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        match e {
            PayloadEntry::Text {
                uri,
                mime_type,
                text,
            } => {
                s.push_str(&format!(
                    r#"{{"uri":{},"mimeType":{},"text":{}}}"#,
                    q(uri),
                    q(mime_type),
                    q(text)
                ));
            }
            PayloadEntry::Blob {
                uri,
                mime_type,
                bytes,
            } => {
                s.push_str(&format!(
                    r#"{{"uri":{},"mimeType":{},"blob":""#,
                    q(uri),
                    q(mime_type)
                ));
                encode_append(Path::Simd, bytes, &mut s);
                s.push_str("\"}");
            }
        }
    }
    s.push_str("]}}");
    s.into_bytes()
}

/// The seeds' single PNG read: one 1,834,208-byte blob (2,445,612 base64
/// characters) in a full response, about 2.4 MB.
pub fn seed_png_response() -> Vec<u8> {
    blob_response(1, SEED_PNG_BYTES)
}

/// One entry with a `bytes`-byte PNG-like blob.
pub fn blob_response(entries: usize, bytes: usize) -> Vec<u8> {
    let e: Vec<PayloadEntry> = (0..entries)
        .map(|i| PayloadEntry::Blob {
            uri: format!("file:///repo/mockups/screen-{i:02}.png"),
            mime_type: "image/png".into(),
            bytes: png_like(bytes, 0x5EED + i as u64),
        })
        .collect();
    response(8, &e)
}

/// The seeds' directory read: 40 entries × 3 MB PNG-like blobs, about 160 MB
/// of base64 in one response.
pub fn directory_response() -> Vec<u8> {
    blob_response(DIRECTORY_ENTRIES, DIRECTORY_ENTRY_BYTES)
}

/// Mixed text + blob read: `pairs` × (a markdown text of about `text_bytes`
/// bytes with escapes and non-ASCII, then a `blob_bytes`-byte blob).
pub fn mixed_response(pairs: usize, text_bytes: usize, blob_bytes: usize) -> Vec<u8> {
    let para = "## Q3 summary\n\nRevenue up 4% — \"quoted\", tab\there, path C:\\srv, emoji 📈.\n";
    let mut e = Vec::new();
    for i in 0..pairs {
        let mut text = String::with_capacity(text_bytes + para.len());
        while text.len() < text_bytes {
            text.push_str(para);
        }
        e.push(PayloadEntry::Text {
            uri: format!("file:///srv/reports/q{i}.md"),
            mime_type: "text/markdown".into(),
            text,
        });
        e.push(PayloadEntry::Blob {
            uri: format!("file:///srv/reports/q{i}-chart.png"),
            mime_type: "image/png".into(),
            bytes: png_like(blob_bytes, 0xC0DE + i as u64),
        });
    }
    response(9, &e)
}
