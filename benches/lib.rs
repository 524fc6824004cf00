//! Criterion benches of the `resources/read` codec paths live in `benches/`
//! (`codec.rs`: groups `base64_decode`, `base64_encode`, `json_parse`,
//! `read_result_decode`; `peak_memory.rs`: peak heap of decoding the 160 MB
//! directory read). This library holds the payloads they share and the `bench-codec`
//! harness ([`bench_codec`]), which this crate's `bench-codec` binary runs.

pub mod bench_codec;

use mcptape_wire::codec::payload;

/// One named bench payload: a full `resources/read` response and, for the
/// base64 groups, one blob's raw bytes and its base64 text.
#[derive(Debug, Clone)]
pub struct Payload {
    /// Short name used as the criterion parameter (`png_2.4MB`, ...).
    pub name: &'static str,
    /// The full JSON-RPC response bytes.
    pub response: Vec<u8>,
    /// Raw bytes of the blob(s) (concatenated), for `base64_encode`.
    pub raw: Vec<u8>,
    /// Base64 text of `raw`, for `base64_decode`.
    pub base64: Vec<u8>,
}

/// The seeds' 1,834,208-byte PNG as one full response (2,445,612 base64 chars).
pub fn png() -> Payload {
    let raw = payload::png_like(payload::SEED_PNG_BYTES, 0x5EED);
    Payload {
        name: "png_2.4MB",
        response: payload::seed_png_response(),
        base64: mcptape_wire::codec::base64::encode(mcptape_wire::codec::base64::Path::Simd, &raw)
            .into_bytes(),
        raw,
    }
}

/// The seeds' directory read: 40 × 3 MB blobs, about 160 MB of base64.
pub fn directory() -> Payload {
    let raw = payload::png_like(
        payload::DIRECTORY_ENTRIES * payload::DIRECTORY_ENTRY_BYTES,
        0xD1,
    );
    Payload {
        name: "dir_40x3MB_160MB",
        response: payload::directory_response(),
        base64: mcptape_wire::codec::base64::encode(mcptape_wire::codec::base64::Path::Simd, &raw)
            .into_bytes(),
        raw,
    }
}

/// Mixed text + blob read: 8 × (64 KiB markdown with escapes + 256 KiB PNG).
pub fn mixed() -> Payload {
    Payload {
        name: "mixed_8x(64KiB_text+256KiB_blob)",
        response: payload::mixed_response(8, 64 * 1024, 256 * 1024),
        raw: Vec::new(),
        base64: Vec::new(),
    }
}
