//! Fuzz entry points (rustls style: the fuzz targets in `fuzz/` are one line
//! each and call these). Hidden from the docs; not a stable API.
//!
//! * [`contents_parse`]: arbitrary bytes into the strict `resources/read`
//!   parser; must never panic, and whatever parses must round-trip
//!   (serialize → parse gives an equal value). The lenient parser's output
//!   must round-trip through the *strict* parser.
//! * [`json_check`]: differential check of the strict JSON pre-check against serde_json.
//! * [`jsonrpc_parse`]: arbitrary bytes into the one JSON-RPC reader's typed view, same
//!   round-trip rule, the id's raw text kept.
//! * [`envelope_vs_jsonrpc`]: the one JSON-RPC reader against serde_json as the outside oracle.
//! * [`string_stop`] (in the two above): the lexer's string kernel and scan
//!   against their references, and [`prescan_agrees`]: the line prescan against
//!   `memchr` and its hinted envelope scan against the plain one.
//! * `contents_structured` (feature `arbitrary`): a structured result with
//!   mixed text/blob entries, odd uris, `_meta` and unknown fields is
//!   serialized, parsed, and must come back exactly.

use crate::envelope::{self, Frame};
use crate::resources::{parse_read_result, parse_read_result_lenient};

/// A `resources/read` reply (`"id":7`, one line, no `\n`) with one blob entry per item of
/// `blobs`, each a base64 string of about that many bytes (`QUJD` repeated): the shape of
/// the seeds' 160 MB directory read, for tests of the long-line paths (prescan, framing).
pub fn blob_reply(blobs: &[usize]) -> Vec<u8> {
    let contents: Vec<String> = blobs
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            format!(
                r#"{{"uri":"file:///b{i}","mimeType":"image/png","blob":"{}"}}"#,
                "QUJD".repeat(n / 4)
            )
        })
        .collect();
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"result":{{"contents":[{}]}}}}"#,
        contents.join(",")
    )
    .into_bytes()
}

/// The line prescan on `data` fed in two pieces (cut where its first byte says): the `\n` it
/// finds is `memchr`'s, every string it keeps starts and ends with `"` and holds no `"`, `\`,
/// control or non-ASCII byte, and the envelope scan with its hints gives what the plain one
/// gives (result and error). Run by [`string_stop`].
///
/// # Panics
/// When one of these does not hold (the finding).
pub fn prescan_agrees(data: &[u8]) {
    let cut = usize::from(data.first().copied().unwrap_or(0)).min(data.len());
    let mut p = crate::prescan::LinePrescan::new();
    let nl = match p.feed(&data[..cut]) {
        Some(i) => Some(i),
        None => p.feed(&data[cut..]).map(|i| cut + i),
    };
    assert_eq!(nl, memchr::memchr(b'\n', data), "line end");
    let line = &data[..nl.unwrap_or(data.len())];
    let hints = p.finish(line.len());
    for k in &hints.strings {
        assert!(
            line[k.start] == b'"' && line[k.end - 1] == b'"',
            "hint ends"
        );
        assert!(
            line[k.start + 1..k.end - 1]
                .iter()
                .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\'),
            "hint inside"
        );
    }
    assert_eq!(
        envelope::scan_envelope_hinted(line, &hints).map_err(|e| e.to_string()),
        envelope::scan_envelope(line).map_err(|e| e.to_string()),
        "hinted scan"
    );
}

/// The lexer's string scan against its references, on `data`: the string
/// kernels (SSE2, AVX2) against the scalar one; the lexer's `string` and
/// `string_cow` from every `"` against the scan before the kernel (a
/// `memchr2` and a control/UTF-8 check per run: same result, end, error kind
/// and offset); and, for a single message, the contents scan that reuses the
/// envelope scan's strings ([`crate::codec::scan_result_contents`], every
/// string recorded) against the plain one, and the line break the scan noted
/// against a search, and inspect's read summary built from the envelope
/// scan's ranges against the walk of the result. Run by the `envelope_vs_jsonrpc` and `jsonrpc_parse`
/// targets.
///
/// # Panics
/// When a kernel or scan disagrees with its reference (the finding).
pub fn string_stop(data: &[u8]) {
    crate::stop::kernels_agree(data);
    crate::lex::strings_agree_with_reference(data);
    prescan_agrees(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(envelope::Scanned::Single(env)) = envelope::scan_recording(data, Some(text), false, 2)
    else {
        return;
    };
    assert_eq!(
        env.members.line_break,
        crate::json::find_line_break(data),
        "line break"
    );
    if let Some(raw) = env
        .members
        .result_contents
        .clone()
        .and_then(|r| text.get(r))
    {
        assert_eq!(
            crate::codec::scan_result_contents(text, &env),
            Some(crate::codec::scan_contents_str(raw)),
            "contents scan with the envelope's strings"
        );
    }
    // inspect's read summary from the scan's ranges (`contents_entries`) against the walk
    // of the result text.
    if let Some(result) = env.result.clone().and_then(|r| text.get(r)) {
        assert_eq!(
            crate::read_summary::summarize_result_of(text, &env),
            crate::read_summary::summarize_scanned_read_result(result),
            "read summary from the envelope's ranges"
        );
    }
}

/// Runs the strict and lenient contents parsers on `data`. Panics (a fuzz
/// finding) only when an accepted input does not round-trip.
pub fn contents_parse(data: &[u8]) {
    if let Ok(r) = parse_read_result(data) {
        let json = r.to_json();
        let again = parse_read_result(json.as_bytes())
            .unwrap_or_else(|e| panic!("re-parse of serialized result failed: {e}\n{json}"));
        assert_eq!(r, again, "round trip changed the result: {json}");
    }
    if let Ok((r, _report)) = parse_read_result_lenient(data) {
        let json = r.to_json();
        let again = parse_read_result(json.as_bytes())
            .unwrap_or_else(|e| panic!("strict re-parse of lenient result failed: {e}\n{json}"));
        assert_eq!(r, again, "lenient round trip changed the result: {json}");
    }
}

/// Runs the one JSON-RPC reader's typed view ([`envelope::parse`]) on
/// `data`. Panics only when an accepted single message does not round-trip
/// (serialize → parse gives an equal message), or its id's text is not the
/// text at its range.
pub fn jsonrpc_parse(data: &[u8]) {
    string_stop(data);
    if let Ok(Frame::Single(m)) = envelope::parse(data) {
        let json = m.to_json();
        let again = envelope::parse_message(json.as_bytes())
            .unwrap_or_else(|e| panic!("re-parse of serialized message failed: {e}\n{json}"));
        assert_eq!(m, again, "round trip changed the message: {json}");
        let env = envelope::scan_envelope(data).expect("parsed, so scanned");
        if let Some(id) = m.id() {
            let at = env.id_range.clone().expect("an id has a range");
            assert_eq!(id.as_json().as_bytes(), &data[at], "id text");
        }
    }
}

/// Differential check of the strict JSON pre-check against serde_json:
/// whatever [`json::check`](crate::json::check) accepts, serde_json must
/// accept; whatever serde_json accepts and the check rejects must be one of
/// the rules serde_json does not enforce (duplicate key, nesting limit).
pub fn json_check(data: &[u8]) {
    use crate::error::JsonErrorKind;
    let ours = crate::json::check(data);
    let theirs = serde_json::from_slice::<serde_json::Value>(data);
    match (&ours, &theirs) {
        (Ok(_), Err(e)) => panic!("json::check accepted what serde_json rejects: {e}"),
        (Err(e), Ok(_)) => assert!(
            matches!(
                e.kind(),
                JsonErrorKind::DuplicateKey { .. } | JsonErrorKind::NestingTooDeep { .. }
            ),
            "json::check rejected valid JSON: {e}"
        ),
        _ => {}
    }
}

#[cfg(any(feature = "arbitrary", test))]
pub use structured::*;

#[cfg(any(feature = "arbitrary", test))]
mod structured {
    use serde_json::{Map, Value};

    use crate::resources::{
        BlobResourceContents, CacheScope, ReadResourceResult, ResourceContents, ResultType,
        TextResourceContents, parse_read_result,
    };

    /// A JSON value small enough to stay far from the nesting limit.
    #[derive(Debug, Clone, arbitrary::Arbitrary)]
    pub enum Scalar {
        /// `null`.
        Null,
        /// `true` / `false`.
        Bool(bool),
        /// An integer.
        Int(i64),
        /// A string (any Unicode, escapes exercised by serialization).
        Str(String),
        /// An array of strings.
        List(Vec<String>),
        /// A flat object.
        Object(Vec<(String, i64)>),
    }

    impl Scalar {
        fn to_value(&self) -> Value {
            match self {
                Scalar::Null => Value::Null,
                Scalar::Bool(b) => Value::Bool(*b),
                Scalar::Int(i) => Value::from(*i),
                Scalar::Str(s) => Value::String(s.clone()),
                Scalar::List(l) => Value::Array(l.iter().cloned().map(Value::String).collect()),
                Scalar::Object(o) => Value::Object(
                    o.iter()
                        .filter(|(k, _)| k != SERDE_JSON_RAW_VALUE_KEY)
                        .map(|(k, v)| (k.clone(), Value::from(*v)))
                        .collect(),
                ),
            }
        }
    }

    /// One entry's payload.
    #[derive(Debug, Clone, arbitrary::Arbitrary)]
    pub enum Payload {
        /// A `text` entry.
        Text(String),
        /// A `blob` entry (these bytes, base64-encoded on the wire).
        Blob(Vec<u8>),
    }

    /// One `contents` entry.
    #[derive(Debug, Clone, arbitrary::Arbitrary)]
    pub struct StructuredEntry {
        /// Index into a list of odd uri prefixes (empty, `file:///`, emoji scheme, a data URI, ...).
        pub uri_prefix: u8,
        /// The rest of the uri.
        pub uri: String,
        /// `mimeType`.
        pub mime_type: Option<String>,
        /// `text` or `blob`.
        pub payload: Payload,
        /// `_meta` members.
        pub meta: Option<Vec<(String, Scalar)>>,
        /// Unknown members (reserved names are skipped).
        pub extra: Vec<(String, Scalar)>,
    }

    /// A whole `ReadResourceResult`, for structure-aware fuzzing.
    #[derive(Debug, Clone, arbitrary::Arbitrary)]
    pub struct StructuredResult {
        /// The entries, mixed shapes.
        pub entries: Vec<StructuredEntry>,
        /// 0 = absent (legacy), 1 = complete, 2 = input_required, else `result_type_other`.
        pub result_type: u8,
        /// The other `resultType` string.
        pub result_type_other: String,
        /// `ttlMs` (negative values exercise the clamp).
        pub ttl_ms: Option<i64>,
        /// `cacheScope`: `Some(true)` = public.
        pub cache_scope: Option<bool>,
        /// `_meta` members.
        pub meta: Option<Vec<(String, Scalar)>>,
        /// Unknown members (reserved names are skipped).
        pub extra: Vec<(String, Scalar)>,
    }

    const ODD_URI_PREFIXES: [&str; 8] = [
        "",
        "file:///",
        "docs://team/../",
        "\u{1F600}://",
        "data:text/plain;base64,",
        " ",
        "file:///a%2F..%2F",
        "urn:x:\"quoted\"\\",
    ];

    /// The object key serde_json reserves for a raw value (its `raw_value`
    /// feature, on in this workspace): an object whose member has this name is
    /// read as raw JSON text, so such an object does not round-trip through
    /// `serde_json::Value`. A real message holding it is refused with an error
    /// (never a panic: `serde_json_raw_value_key_is_an_error_not_a_panic`); the
    /// generated results leave it out.
    pub const SERDE_JSON_RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

    fn object(members: &[(String, Scalar)], reserved: &[&str]) -> Map<String, Value> {
        members
            .iter()
            .filter(|(k, _)| !reserved.contains(&k.as_str()) && k != SERDE_JSON_RAW_VALUE_KEY)
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect()
    }

    impl StructuredResult {
        /// The result this input describes.
        pub fn build(&self) -> ReadResourceResult {
            const ENTRY: [&str; 5] = ["uri", "mimeType", "text", "blob", "_meta"];
            const RESULT: [&str; 5] = ["contents", "resultType", "ttlMs", "cacheScope", "_meta"];
            let contents = self
                .entries
                .iter()
                .map(|e| {
                    let uri = format!(
                        "{}{}",
                        ODD_URI_PREFIXES[usize::from(e.uri_prefix) % ODD_URI_PREFIXES.len()],
                        e.uri
                    );
                    let meta = e.meta.as_ref().map(|m| object(m, &[]));
                    let extra = object(&e.extra, &ENTRY);
                    match &e.payload {
                        Payload::Text(t) => ResourceContents::Text(TextResourceContents {
                            uri,
                            mime_type: e.mime_type.clone(),
                            text: t.clone(),
                            meta,
                            extra,
                        }),
                        Payload::Blob(b) => ResourceContents::Blob(BlobResourceContents {
                            uri,
                            mime_type: e.mime_type.clone(),
                            bytes: b.clone(),
                            meta,
                            extra,
                        }),
                    }
                })
                .collect();
            let mut r = ReadResourceResult::new(contents);
            match self.result_type {
                0 => r.legacy_result_type = true,
                1 => r.result_type = ResultType::Complete,
                2 => r.result_type = ResultType::InputRequired,
                _ => {
                    r.result_type = match self.result_type_other.as_str() {
                        "complete" => ResultType::Complete,
                        "input_required" => ResultType::InputRequired,
                        s => ResultType::Other(s.to_owned()),
                    }
                }
            }
            match self.ttl_ms {
                Some(t) if t < 0 => {
                    r.ttl_ms = Some(0);
                    r.ttl_ms_negative = Some(t);
                }
                Some(t) => r.ttl_ms = Some(t.unsigned_abs()),
                None => {}
            }
            r.cache_scope = self.cache_scope.map(|p| {
                if p {
                    CacheScope::Public
                } else {
                    CacheScope::Private
                }
            });
            r.meta = self.meta.as_ref().map(|m| object(m, &[]));
            r.extra = object(&self.extra, &RESULT);
            r
        }
    }

    /// Serializes the structured result, parses it strictly, and asserts the
    /// parse gives back exactly the built value (order, shapes, bytes, `_meta`,
    /// unknown members). Panics on any difference (a fuzz finding).
    pub fn contents_structured(input: StructuredResult) {
        let built = input.build();
        let json = built.to_json();
        let parsed = parse_read_result(json.as_bytes()).unwrap_or_else(|e| {
            panic!("parse of serialized structured result failed: {e}\n{json}")
        });
        assert_eq!(built, parsed, "structured round trip differs: {json}");
    }
}

#[cfg(test)]
mod tests {
    use arbitrary::{Arbitrary, Unstructured};

    use super::*;

    /// Regression (fuzz finding of `contents_structured`, crash-816a2901):
    /// a `_meta` member named serde_json's reserved raw-value key is refused
    /// with an error, not a panic, and the generator never emits one.
    #[test]
    fn serde_json_raw_value_key_is_an_error_not_a_panic() {
        let text = format!(
            r#"{{"contents":[{{"uri":"urn:x","text":""}}],"_meta":{{"{}":{{"":1}}}}}}"#,
            structured::SERDE_JSON_RAW_VALUE_KEY
        );
        assert!(parse_read_result(text.as_bytes()).is_err());
    }

    /// Deterministic xorshift byte streams fed to `Arbitrary`.
    fn streams(n: usize, len: usize) -> Vec<Vec<u8>> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        (0..n)
            .map(|_| {
                (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state.to_le_bytes()[0]
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn contents_structured_round_trips_arbitrary_inputs() {
        let (mut texts, mut blobs) = (0, 0);
        for bytes in streams(300, 768) {
            let input = StructuredResult::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
            for e in &input.entries {
                match e.payload {
                    Payload::Text(_) => texts += 1,
                    Payload::Blob(_) => blobs += 1,
                }
            }
            contents_structured(input);
        }
        assert!(
            texts > 0 && blobs > 0,
            "generator must mix shapes: {texts} text, {blobs} blob"
        );
    }

    #[test]
    fn contents_structured_output_is_fed_to_contents_parse() {
        for bytes in streams(50, 512) {
            let input = StructuredResult::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
            contents_parse(input.build().to_json().as_bytes());
        }
    }
}

/// One accepted entry: `(uri, mimeType, Ok(text) or Err(decoded blob))`.
pub type AcceptedEntry = (String, Option<String>, Result<String, Vec<u8>>);

/// The class both `resources/read` validators must agree on for one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted, with the entries as `(uri, mimeType, text or decoded blob)`.
    Accepted(Vec<AcceptedEntry>),
    /// Not strict JSON: a grammar-level kind and its byte offset.
    NotJson(&'static str, usize),
    /// Valid JSON, rejected inside `contents` entry `index` (shape or base64).
    BadEntry(Option<usize>),
    /// Valid JSON, rejected for a rule only one of the two validators has
    /// (codec: the `jsonrpc`/`id` envelope; resources: `ttlMs`, `cacheScope`,
    /// `_meta`, `resultType`): not compared.
    OutOfScope,
    /// Valid JSON, rejected at the `result` / `contents` level.
    BadResult,
}

fn resources_verdict(data: &[u8]) -> Verdict {
    use crate::error::JsonErrorKind as J;
    use crate::resources::{ContentsErrorKind as K, ResourceContents, parse_read_response};
    match parse_read_response(data) {
        Ok(r) => Verdict::Accepted(
            r.contents
                .into_iter()
                .map(|c| match c {
                    ResourceContents::Text(t) => (t.uri, t.mime_type, Ok(t.text)),
                    ResourceContents::Blob(b) => (b.uri, b.mime_type, Err(b.bytes)),
                })
                .collect(),
        ),
        Err(e) => match e.kind() {
            K::Json(j) => Verdict::NotJson(
                match j {
                    J::DuplicateKey { .. } => "duplicate key",
                    J::LoneSurrogate { .. } => "lone surrogate",
                    J::InvalidUtf8 => "invalid utf-8",
                    J::NestingTooDeep { .. } => "too deep",
                    J::NumberOutOfRange => "number out of range",
                    J::MessageTooLarge { .. } => "too large",
                    _ => "syntax",
                },
                e.offset().unwrap_or(0),
            ),
            K::InvalidTtl
            | K::UnknownCacheScope { .. }
            | K::MetaNotObject
            | K::InputRequired
            | K::NotAString {
                field: "resultType" | "cacheScope",
            } => Verdict::OutOfScope,
            _ if e.index().is_some() => Verdict::BadEntry(e.index()),
            _ => Verdict::BadResult,
        },
    }
}

fn codec_verdict(data: &[u8]) -> Verdict {
    use crate::codec::{CodecErrorKind as C, CodecPath, Content, decode_read_result};
    match decode_read_result(CodecPath::Fused, data) {
        Ok(r) => Verdict::Accepted(
            r.entries()
                .map(|e| {
                    (
                        e.uri.to_owned(),
                        e.mime_type.map(str::to_owned),
                        match e.content {
                            Content::Text(t) => Ok(t.to_owned()),
                            Content::Blob(b) => Err(b.to_vec()),
                        },
                    )
                })
                .collect(),
        ),
        Err(e) => match &e.kind {
            C::DuplicateKey { .. } => Verdict::NotJson("duplicate key", e.offset),
            C::LoneSurrogate => Verdict::NotJson("lone surrogate", e.offset),
            C::InvalidUtf8 => Verdict::NotJson("invalid utf-8", e.offset),
            C::TooDeep => Verdict::NotJson("too deep", e.offset),
            C::NumberOutOfRange => Verdict::NotJson("number out of range", e.offset),
            C::UnexpectedEnd
            | C::UnexpectedByte { .. }
            | C::TrailingCharacters
            | C::InvalidNumber
            | C::ControlCharacterInString
            | C::InvalidEscape => Verdict::NotJson("syntax", e.offset),
            C::WrongJsonRpcVersion
            | C::MissingField {
                field: "jsonrpc" | "id",
            }
            | C::WrongType {
                field: "jsonrpc" | "id" | "response",
                ..
            } => Verdict::OutOfScope,
            _ if e.entry.is_some() => Verdict::BadEntry(e.entry),
            _ => Verdict::BadResult,
        },
    }
}

/// Fuzz target `resources_vs_codec`: [`resources::parse_read_response`](crate::resources::parse_read_response)
/// against [`codec::decode_read_result`](crate::codec::decode_read_result) (fused path) on the
/// same bytes. They must give the same [`Verdict`]: the same entries when
/// both accept, the same grammar-level kind and byte offset when the input is
/// not strict JSON, the same entry index when an entry is bad. Rules only one
/// of them has ([`Verdict::OutOfScope`]) are not compared; the input is first
/// required to be strict JSON by both for schema verdicts to be compared.
pub fn resources_vs_codec(data: &[u8]) {
    let r = resources_verdict(data);
    let c = codec_verdict(data);
    if matches!(r, Verdict::OutOfScope) || matches!(c, Verdict::OutOfScope) {
        return;
    }
    match (&r, &c) {
        (Verdict::NotJson(..), _) | (_, Verdict::NotJson(..)) => {
            // A schema error the streaming codec meets before a later grammar
            // error is not a disagreement about the grammar; compare only
            // when the codec reached a grammar error itself.
            if matches!(c, Verdict::NotJson(..)) || matches!(r, Verdict::Accepted(_)) {
                assert_eq!(r, c, "grammar verdicts differ");
            }
        }
        _ => assert_eq!(r, c, "resources and codec disagree"),
    }
}

/// Fuzz target `envelope_vs_jsonrpc`: the one JSON-RPC reader
/// ([`crate::envelope::scan_frame`]) against serde_json as the outside
/// oracle, on every input:
/// * the JSON grammar: serde_json rejects ⇒ the reader rejects with a JSON
///   error; serde_json accepts ⇒ the reader's only JSON errors are the rules
///   serde_json does not enforce (a duplicate key, the nesting limit),
///   found by an independent serde walk of the same input;
/// * the envelope: on strict JSON, the JSON-RPC 2.0 rules applied to
///   serde_json's top-level members (a small reference model of the rules
///   the reader's docs list) give the same verdict and error kind, and for
///   an accepted message the same kind, the same id text and `method`,
///   `params`, `result`, `error` ranges as serde_json's `RawValue`s;
/// * the `&str` entry point: on UTF-8 input `scan_frame_str` gives what
///   `scan_frame` gives, and `scan_frame_str_into` written over a slot that
///   held another scan gives the same.
///
/// # Panics
/// When the reader and the oracle disagree (that is the finding).
pub fn envelope_vs_jsonrpc(input: &[u8]) {
    /// A read result of two entries (text, blob): what a slot holds before
    /// [`crate::envelope::scan_frame_str_into`] writes over it.
    const USED_SLOT: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"a://x","mimeType":"text/plain","text":"x"},{"uri":"a://y","blob":"AAAA"}]}}"#;
    use crate::envelope::{Scanned, scan_frame};
    use crate::error::{JsonErrorKind, WireErrorKind};
    let show = || String::from_utf8_lossy(input).into_owned();
    string_stop(input);
    let ours = scan_frame(input);
    // The `&str` entry point (UTF-8 not checked again) agrees on UTF-8 input.
    if let Ok(text) = std::str::from_utf8(input) {
        assert_eq!(
            crate::envelope::scan_frame_str(text),
            ours,
            "scan_frame_str: {}",
            show()
        );
        // Written over a slot that held another message's scan (its
        // `contents` entries and buffers reused), the scan ends the same.
        let mut slot = crate::envelope::scan_frame_str(USED_SLOT);
        crate::envelope::scan_frame_str_into(text, &mut slot);
        assert_eq!(slot, ours, "scan_frame_str_into: {}", show());
    }
    // serde_json's `Value` also refuses JSON whose object has serde_json's
    // private raw-value token as a key (`{"$serde_json::private::RawValue":2}`:
    // the `raw_value` feature reads that member as a `RawValue`); such a text
    // is JSON to the walk, which reads every key as a key.
    if serde_json::from_slice::<serde_json::Value>(input).is_err() && !oracle::walk_is_json(input) {
        match &ours {
            Err(e) if matches!(e.kind(), WireErrorKind::Json(_)) => {}
            _ => panic!("serde_json rejects, the reader gives {ours:?}: {}", show()),
        }
        return;
    }
    let walk = oracle::strict_walk(input);
    if walk != oracle::Strict::Clean {
        match &ours {
            Err(e)
                if matches!(
                    e.kind(),
                    WireErrorKind::Json(
                        JsonErrorKind::DuplicateKey { .. } | JsonErrorKind::NestingTooDeep { .. }
                    )
                ) => {}
            _ => panic!("{walk:?} missed, the reader gives {ours:?}: {}", show()),
        }
        return;
    }
    if let Err(e) = &ours {
        assert!(
            !matches!(e.kind(), WireErrorKind::Json(_)),
            "the reader rejects strict JSON: {e}: {}",
            show()
        );
    }
    let expected = oracle::frame(input);
    match (&ours, &expected) {
        (Ok(Scanned::Single(e)), Ok(oracle::Frame::Single(Ok(m)))) => m.same(input, e, &show),
        (Ok(Scanned::Batch(items)), Ok(oracle::Frame::Batch(want))) => {
            assert_eq!(items.len(), want.len(), "batch length: {}", show());
            for (i, (got, want)) in items.iter().zip(want).enumerate() {
                match (got, want) {
                    (Ok(e), Ok(m)) => m.same(input, e, &show),
                    (Err(e), Err(k)) => {
                        assert_eq!(e.kind(), k, "element {i}: {}", show());
                        assert_eq!(e.index(), Some(i), "element {i}: {}", show());
                    }
                    _ => panic!("element {i}: reader {got:?}, oracle {want:?}: {}", show()),
                }
            }
        }
        (Err(e), Ok(oracle::Frame::Single(Err(k)))) | (Err(e), Err(k)) => {
            assert_eq!(e.kind(), k, "{}", show())
        }
        _ => panic!("reader {ours:?}, oracle {expected:?}: {}", show()),
    }
}

/// The outside oracle of [`envelope_vs_jsonrpc`]: serde_json's reading of
/// the input and the JSON-RPC 2.0 rules applied to it.
mod oracle {
    use std::fmt;
    use std::ops::Range;

    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
    use serde_json::Value;
    use serde_json::value::RawValue;

    use crate::codec::serde_path::Strict as StrictSeed;
    use crate::envelope::{Envelope, EnvelopeKind};
    use crate::error::WireErrorKind;

    /// What serde_json does not check itself.
    #[derive(Debug, PartialEq, Eq)]
    pub(super) enum Strict {
        Clean,
        DuplicateKey,
        TooDeep,
    }

    /// Walks the (serde-valid) input with serde: a duplicate key in any
    /// object, nesting past [`MAX_NESTING_DEPTH`].
    pub(super) fn strict_walk(input: &[u8]) -> Strict {
        // serde_json refuses past 128 levels itself (checked first).
        let mut de = serde_json::Deserializer::from_slice(input);
        match (StrictSeed { depth: 1 }).deserialize(&mut de) {
            Ok(()) => Strict::Clean,
            Err(e) if e.to_string().starts_with("duplicate") => Strict::DuplicateKey,
            Err(_) => Strict::TooDeep,
        }
    }

    /// Whether serde_json reads `input` as one JSON text through the walk
    /// (keys read as strings, never as serde_json's private tokens; nothing
    /// but whitespace after it), duplicate keys and depth aside.
    pub(super) fn walk_is_json(input: &[u8]) -> bool {
        let mut de = serde_json::Deserializer::from_slice(input);
        match (StrictSeed { depth: 1 }).deserialize(&mut de) {
            Ok(()) => de.end().is_ok(),
            Err(e) => {
                let m = e.to_string();
                m.starts_with("duplicate") || m.starts_with("too deep")
            }
        }
    }

    /// An object's members in order, values as raw text.
    struct Members<'a>(Vec<(String, &'a RawValue)>);

    impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Members<'de>, A::Error> {
                    let mut out = Vec::new();
                    while let Some(k) = a.next_key::<String>()? {
                        out.push((k, a.next_value::<&'de RawValue>()?));
                    }
                    Ok(Members(out))
                }
            }
            d.deserialize_map(V)
        }
    }

    /// What one accepted message must be, in the input's coordinates.
    #[derive(Debug)]
    pub(super) struct Expected {
        kind: EnvelopeKind,
        id: Option<Range<usize>>,
        method: Option<Range<usize>>,
        params: Option<Range<usize>>,
        result: Option<Range<usize>>,
        error: Option<Range<usize>>,
    }

    impl Expected {
        /// Panics unless `e` (scanned from `input`) is this message.
        pub(super) fn same(&self, input: &[u8], e: &Envelope, show: &dyn Fn() -> String) {
            assert_eq!(e.kind, self.kind, "kind: {}", show());
            assert_eq!(e.id_range, self.id, "id range: {}", show());
            let id_text = self.id.clone().map(|r| &input[r]);
            assert_eq!(
                e.id.as_ref().map(|i| i.as_json().as_bytes()),
                id_text,
                "id: {}",
                show()
            );
            assert_eq!(e.method, self.method, "method: {}", show());
            assert_eq!(e.params, self.params, "params: {}", show());
            assert_eq!(e.result, self.result, "result: {}", show());
            let error = e.error.as_ref().map(|_| ());
            assert_eq!(error, self.error.as_ref().map(|_| ()), "error: {}", show());
        }
    }

    #[derive(Debug)]
    pub(super) enum Frame {
        Single(Result<Expected, WireErrorKind>),
        Batch(Vec<Result<Expected, WireErrorKind>>),
    }

    /// serde_json's reading of a strict-JSON input as a JSON-RPC 2.0 frame.
    pub(super) fn frame(input: &[u8]) -> Result<Frame, WireErrorKind> {
        let root: &RawValue =
            serde_json::from_slice(input).map_err(|_| WireErrorKind::UnknownShape)?;
        let base = input.as_ptr() as usize;
        let range = |r: &RawValue| {
            let at = r.get().as_ptr() as usize - base;
            at..at + r.get().len()
        };
        match root.get().as_bytes()[0] {
            b'{' => Ok(Frame::Single(message(root, &range))),
            b'[' => {
                let items: Vec<&RawValue> = serde_json::from_str(root.get()).unwrap_or_default();
                if items.is_empty() {
                    return Err(WireErrorKind::EmptyBatch);
                }
                let items = items.iter().map(|r| {
                    if r.get().starts_with('{') {
                        message(r, &range)
                    } else {
                        Err(WireErrorKind::NotAnObject)
                    }
                });
                Ok(Frame::Batch(items.collect()))
            }
            _ => Err(WireErrorKind::NotAnObject),
        }
    }

    /// An integer id or code as JSON-RPC reads it: integer form, no `-0`.
    fn integer_form(raw: &RawValue) -> bool {
        let t = raw.get();
        matches!(serde_json::from_str::<Value>(t), Ok(Value::Number(_)))
            && !t.contains(['.', 'e', 'E'])
            && t != "-0"
    }

    /// The JSON-RPC 2.0 rules (JSON-RPC 2.0 §4–§5, MCP `schema.ts`) on one object.
    fn message(
        raw: &RawValue,
        range: &dyn Fn(&RawValue) -> Range<usize>,
    ) -> Result<Expected, WireErrorKind> {
        let Members(members) =
            serde_json::from_str(raw.get()).map_err(|_| WireErrorKind::NotAnObject)?;
        let get = |k: &str| members.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        if let Some((k, _)) = members.iter().find(|(k, _)| {
            !matches!(
                k.as_str(),
                "jsonrpc" | "id" | "method" | "params" | "result" | "error"
            )
        }) {
            return Err(WireErrorKind::UnknownMember(k.clone()));
        }
        let version = get("jsonrpc").and_then(|v| serde_json::from_str::<String>(v.get()).ok());
        if version.as_deref() != Some("2.0") {
            return Err(WireErrorKind::BadVersion);
        }
        let id = get("id");
        let valid_id = |r: &RawValue| -> Result<Range<usize>, WireErrorKind> {
            match r.get() {
                "null" => Err(WireErrorKind::NullRequestId),
                t if t.starts_with('"') || integer_form(r) => Ok(range(r)),
                _ => Err(WireErrorKind::InvalidId),
            }
        };
        let (method, params, result, error) =
            (get("method"), get("params"), get("result"), get("error"));
        let mut out = Expected {
            kind: EnvelopeKind::Request,
            id: None,
            method: method.map(range),
            params: params.map(range),
            result: result.map(range),
            error: error.map(range),
        };
        match (method, result, error) {
            (Some(m), None, None) => {
                if !m.get().starts_with('"') {
                    return Err(WireErrorKind::MethodNotString);
                }
                if let Some(p) = params
                    && !p.get().starts_with(['{', '['])
                {
                    return Err(WireErrorKind::InvalidParams);
                }
                match id {
                    None => out.kind = EnvelopeKind::Notification,
                    Some(r) => out.id = Some(valid_id(r)?),
                }
            }
            (None, Some(_), None) => {
                if params.is_some() {
                    return Err(WireErrorKind::Ambiguous("params with result"));
                }
                out.kind = EnvelopeKind::Response;
                match id {
                    None => return Err(WireErrorKind::MissingResponseId),
                    Some(r) if r.get() == "null" => return Err(WireErrorKind::MissingResponseId),
                    Some(r) => out.id = Some(valid_id(r)?),
                }
            }
            (None, None, Some(e)) => {
                if params.is_some() {
                    return Err(WireErrorKind::Ambiguous("params with error"));
                }
                out.kind = EnvelopeKind::Error;
                out.id = match id {
                    None => None,
                    Some(r) if r.get() == "null" => None,
                    Some(r) => Some(valid_id(r)?),
                };
                let Ok(Members(err)) = serde_json::from_str(e.get()) else {
                    return Err(WireErrorKind::InvalidErrorObject("not an object"));
                };
                if let Some((k, _)) = err
                    .iter()
                    .find(|(k, _)| !matches!(k.as_str(), "code" | "message" | "data"))
                {
                    return Err(WireErrorKind::UnknownMember(k.clone()));
                }
                let eget = |k: &str| err.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
                let code_ok = eget("code").is_some_and(|c| {
                    integer_form(c) && serde_json::from_str::<i64>(c.get()).is_ok()
                });
                if !code_ok {
                    return Err(WireErrorKind::InvalidErrorObject(
                        "code is missing or not an integer",
                    ));
                }
                if !eget("message").is_some_and(|m| m.get().starts_with('"')) {
                    return Err(WireErrorKind::InvalidErrorObject(
                        "message is missing or not a string",
                    ));
                }
            }
            (Some(_), _, _) => return Err(WireErrorKind::Ambiguous("method with result or error")),
            (None, Some(_), Some(_)) => return Err(WireErrorKind::Ambiguous("result and error")),
            (None, None, None) => return Err(WireErrorKind::UnknownShape),
        }
        let _ = IgnoredAny;
        Ok(out)
    }
}
