//! Differential checks for the fuzz targets (`fuzz/fuzz_targets/*.rs` call
//! these in one line each): every codec path must give the same answer on
//! every input — equal results, or equal errors (kind, byte offset, entry).
//! They panic on a disagreement, which is what the fuzzer looks for.

use super::base64::{self, Path};
use super::{CodecPath, Decoder, Kernel, decode_read_result};

/// Decodes `data` as base64 with every [`Path`], and as the `blob` of a
/// response with every [`CodecPath`] and kernel; asserts they all agree.
/// Also asserts both encoders give the same text and that it round-trips.
///
/// # Panics
/// On any disagreement (the fuzz target's finding).
pub fn base64_differential(data: &[u8]) {
    let want = base64::decode(Path::Scalar, data);
    assert_eq!(
        want.is_ok(),
        base64::first_error(data).is_none(),
        "reference scan"
    );
    for path in Path::ALL {
        assert_eq!(base64::decode(path, data), want, "decode {path:?}");
    }
    // The same text as a blob string, when it holds no `"` or `\`.
    if !data.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20)
        && let Ok(text) = std::str::from_utf8(data)
    {
        {
            let mut json =
                br#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"a:b","blob":""#.to_vec();
            let at = json.len();
            json.extend_from_slice(text.as_bytes());
            json.extend_from_slice(b"\"}]}}");
            let results = json_all(&json);
            match &want {
                Ok(bytes) => {
                    let r = results[0].as_ref().expect("valid base64 in a blob");
                    assert_eq!(
                        r.get(0).map(|e| e.content),
                        Some(super::Content::Blob(bytes))
                    );
                }
                Err(e) => {
                    let err = results[0].as_ref().expect_err("invalid base64 in a blob");
                    assert_eq!(err.kind, super::CodecErrorKind::Base64(e.clone()));
                    let off = match e {
                        base64::Base64Error::InvalidLength { len } => at + len,
                        e => at + e.offset(),
                    };
                    assert_eq!(err.offset, off, "blob error offset");
                }
            }
        }
    }
    let enc = base64::encode(Path::Scalar, data);
    for path in Path::ALL {
        assert_eq!(base64::encode(path, data), enc, "encode {path:?}");
    }
    assert_eq!(
        base64::decode(Path::Simd, enc.as_bytes()).as_deref(),
        Ok(data)
    );
}

/// Decodes `data` as a `resources/read` response with every [`CodecPath`]
/// (the fused path once per available kernel, the detected one among them);
/// asserts all results are equal, that `scan_contents_str` and
/// `scan_contents` agree on it when it is UTF-8, and that
/// `scan_contents_shape` gives `scan_contents`'s errors and entries (type,
/// `text` / `blob` types).
///
/// # Panics
/// On any disagreement (the fuzz target's finding).
pub fn json_differential(data: &[u8]) {
    json_all(data);
    // The contents scanner's `&str` entry point (UTF-8 not checked again)
    // agrees with the byte one on UTF-8 input.
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(
            super::scan_contents_str(text),
            super::scan_contents(data),
            "scan_contents_str: {text:?}"
        );
    }
    let shapes = super::scan_contents_shape(data);
    let entries = super::scan_contents(data);
    let ty = |m: &super::Member<'_>| match m {
        super::Member::Absent => None,
        super::Member::Str { .. } | super::Member::Raw { .. } => Some(super::JsonType::String),
        super::Member::Other { found, .. } => Some(*found),
    };
    let from_entries = entries.map(|es| {
        es.iter()
            .map(|e| super::EntryShape {
                found: e.found,
                text: ty(&e.text),
                blob: ty(&e.blob),
            })
            .collect::<Vec<_>>()
    });
    assert_eq!(
        shapes,
        from_entries,
        "scan_contents_shape: {:?}",
        String::from_utf8_lossy(data)
    );
}

fn json_all(data: &[u8]) -> Vec<Result<super::DecodedReadResult, super::CodecError>> {
    let mut all = Vec::new();
    // `decode_read_result(CodecPath::Fused, _)` is the fused path with the detected kernel,
    // which the loop below runs again among every available kernel: it ran twice per input.
    for &path in CodecPath::ALL.iter().filter(|&&p| p != CodecPath::Fused) {
        all.push(decode_read_result(path, data));
    }
    for k in Kernel::available() {
        let mut d = Decoder::with_kernel(CodecPath::Fused, k);
        all.push(d.decode(data).cloned());
    }
    for (i, r) in all.iter().enumerate().skip(1) {
        assert_eq!(
            r,
            &all[0],
            "path #{i} disagrees with scalar on {:?}",
            String::from_utf8_lossy(data)
        );
    }
    all
}
