//! The one place the rules call into `mcptape-wire`: the strict envelope
//! parser, base64 canonical decoding, media sniffing and the read-error
//! classes. Keeping it here means a rule never re-implements a parser.

use mcptape_wire::classify::{LEGACY_RESOURCE_NOT_FOUND, ReadErrorClass, classify_read_error};
use mcptape_wire::codec::{self, ScannedEntry, base64};
use mcptape_wire::envelope::{self, ErrorObject, Scanned};
use mcptape_wire::media::{self, MediaMatch};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Result of the strict envelope check of one record's bytes.
pub(crate) enum Envelope {
    /// Valid; for a batch, the indexes of bad elements and why.
    Ok(Vec<(usize, String)>),
    /// The whole record is not a JSON-RPC message.
    Bad(String),
}

/// `mcptape_wire::envelope::scan_frame` on the record's bytes (the
/// envelope rules, one strict pass, no `Value` of any member).
pub(crate) fn envelope(raw: &[u8]) -> Envelope {
    match envelope::scan_frame(raw) {
        Ok(Scanned::Batch(items)) => Envelope::Ok(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.as_ref().err().map(|e| (i, e.to_string())))
                .collect(),
        ),
        // The rules read ids as `serde_json::Value`s, where an integer past
        // `i64` would be a rounded float: such a message goes the way of
        // [`big_id_masked`] (the engine reads it with the id masked).
        Ok(Scanned::Single(e)) => {
            match e.id.filter(|id| !id.is_string() && id.as_i64().is_none()) {
                Some(id) => Envelope::Bad(format!("integer id {id} past i64")),
                None => Envelope::Ok(Vec::new()),
            }
        }
        Err(e) => Envelope::Bad(e.to_string()),
    }
}

/// [`envelope`] (the one reader reads a single message and a batch alike).
pub(crate) fn envelope_scanned(raw: &[u8]) -> Envelope {
    envelope(raw)
}

/// What an integer id past `i64` is read as inside `check` (a string no
/// recorded id is: it starts with NUL): this prefix, then the id's digits as
/// sent. Findings print the digits ([`unmask_big_ids`]).
pub(crate) const BIG_ID_MARK: &str = "\u{0}mcptape:integer-id:";

/// [`BIG_ID_MARK`] as JSON string text prints it, opening quote included.
const BIG_ID_MARK_JSON: &str = "\"\\u0000mcptape:integer-id:";

/// `raw` (one JSON-RPC object) with its top-level `id`, when that is an
/// integer outside `i64` (`18446744073709551616`: legal JSON-RPC 2.0 §4,
/// which sets no range, and once not an id of the wire's reader),
/// replaced by the string [`BIG_ID_MARK`] + its digits, so the id keeps its
/// exact text through the envelope and the rules. `None` for any other id.
pub(crate) fn big_id_masked(raw: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct IdProbe<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    if first_byte(raw) != Some(b'{') {
        return None;
    }
    let probe: IdProbe<'_> = serde_json::from_str(raw).ok()?;
    let id = probe.id?.get();
    let digits = id.strip_prefix('-').unwrap_or(id);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || id.parse::<i64>().is_ok()
    {
        return None;
    }
    // `id` borrows from `raw`: its offset is the distance between the two.
    let start = (id.as_ptr() as usize).checked_sub(raw.as_ptr() as usize)?;
    let end = start.checked_add(id.len())?;
    Some(format!(
        "{}{BIG_ID_MARK_JSON}{id}\"{}",
        raw.get(..start)?,
        raw.get(end..)?
    ))
}

/// `text` (a finding's message or id) with every id masked by
/// [`big_id_masked`], as JSON prints it, back to its digits.
pub(crate) fn unmask_big_ids(text: String) -> String {
    if !text.contains(BIG_ID_MARK_JSON) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find(BIG_ID_MARK_JSON) {
        out.push_str(&rest[..i]);
        let after = &rest[i + BIG_ID_MARK_JSON.len()..];
        match after.find('"') {
            Some(j) => {
                out.push_str(&after[..j]);
                rest = &after[j + 1..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Byte offset of the first `\n` or `\r` (SIMD search: a 160 MB message is
/// scanned at memory speed).
pub(crate) fn line_break(raw: &[u8]) -> Option<usize> {
    mcptape_wire::json::find_line_break(raw)
}

fn first_byte(raw: &str) -> Option<u8> {
    raw.bytes().find(|b| !b.is_ascii_whitespace())
}

/// One message as a `Value` with its `result.contents` taken out and
/// returned raw, in one serde pass: the rules read the small members as
/// values and the contents through the wire's scanner ([`scan_contents`]),
/// so a 160 MB read is never copied into a `Value`.
fn slim_one(raw: &str) -> Result<(Value, Option<&RawValue>), serde_json::Error> {
    if first_byte(raw) != Some(b'{') {
        return Ok((serde_json::from_str(raw)?, None));
    }
    let mut de = serde_json::Deserializer::from_str(raw);
    let out = de.deserialize_map(Slim { top: true })?;
    de.end()?;
    Ok(out)
}

/// Visitor of [`slim_one`]: at the top a map whose `result` is visited with
/// `top: false`; there a map whose `contents` is kept raw. Any other value
/// becomes a `Value`.
struct Slim {
    top: bool,
}

impl<'de> DeserializeSeed<'de> for Slim {
    type Value = (Value, Option<&'de RawValue>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Slim {
    type Value = (Value, Option<&'de RawValue>);
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut m = Map::new();
        let mut contents = None;
        while let Some(k) = map.next_key::<String>()? {
            if self.top && k == "result" {
                let (v, c) = map.next_value_seed(Slim { top: false })?;
                contents = c;
                m.insert(k, v);
            } else if !self.top && k == "contents" {
                contents = Some(map.next_value::<&'de RawValue>()?);
            } else {
                m.insert(k, map.next_value::<Value>()?);
            }
        }
        Ok((Value::Object(m), contents))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element::<Value>()? {
            v.push(x);
        }
        Ok((Value::Array(v), None))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(b), None))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok((Value::from(n), None))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok((Value::from(n), None))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
        Ok((Value::from(n), None))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok((Value::String(s.to_owned()), None))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, None))
    }
}

/// The messages of a record (one, or each batch element) as slim values
/// (see [`slim_one`]) with their raw `result.contents`.
pub(crate) type SlimMessages<'a> = Vec<(Value, Option<&'a RawValue>)>;

/// The record's message(s): `Ok((is_batch, messages))`.
pub(crate) fn slim_messages(raw: &str) -> Result<(bool, SlimMessages<'_>), serde_json::Error> {
    if first_byte(raw) == Some(b'[') {
        let items: Vec<&RawValue> = serde_json::from_str(raw)?;
        let out = items
            .into_iter()
            .map(|i| slim_one(i.get()))
            .collect::<Result<_, _>>()?;
        return Ok((true, out));
    }
    Ok((false, vec![slim_one(raw)?]))
}

/// The wire's strict scan of one raw `contents` value
/// (`mcptape_wire::codec::scan_contents`).
pub(crate) fn scan_contents(raw: &str) -> Result<Vec<ScannedEntry<'_>>, codec::CodecError> {
    codec::scan_contents(raw.as_bytes())
}

/// One message read by the wire's one-pass scan
/// (`mcptape_wire::codec::scan_message`) while the transcript was framed.
pub(crate) struct Prescan<'a> {
    contents: Option<std::ops::Range<usize>>,
    /// [`Self::slim_text`], computed once at scan time.
    slim: Option<String>,
    /// The `result.contents` entries (offsets relative to the array).
    entries: Vec<ScannedEntry<'a>>,
}

impl<'a> Prescan<'a> {
    /// The wire's strict one-pass scan of the message text `msg`
    /// (`codec::scan_message`), kept for the rules; `None` when `msg` is not
    /// strict JSON (the reader's serde path and the rules' own reading then
    /// decide, with exact errors).
    pub(crate) fn of(msg: &'a str) -> Option<Prescan<'a>> {
        let m = codec::scan_message(msg.as_bytes()).ok()?;
        let slim = Prescan::make_slim(m.contents.clone(), msg);
        Some(Prescan {
            contents: m.contents,
            slim,
            entries: m.entries,
        })
    }

    /// The message with its `result.contents` array replaced by `[]`, for
    /// the envelope check and the slim `Value` (small), or `None` when the
    /// message has no such array.
    pub(crate) fn slim_text(&self) -> Option<&str> {
        self.slim.as_deref()
    }

    fn make_slim(contents: Option<std::ops::Range<usize>>, raw: &str) -> Option<String> {
        let r = contents?;
        let mut s = String::with_capacity(raw.len() - r.len() + 2);
        s.push_str(raw.get(..r.start)?);
        s.push_str("[]");
        s.push_str(raw.get(r.end..)?);
        Some(s)
    }

    /// The scanned `result.contents` entries, or `None` when the message
    /// has no `result.contents` array (then the rules scan what is there).
    pub(crate) fn into_entries(self) -> Option<Vec<ScannedEntry<'a>>> {
        self.contents.map(|_| self.entries)
    }

    /// The raw `result.contents` array of `raw`.
    pub(crate) fn contents_raw(&self, raw: &'a str) -> &'a str {
        self.contents
            .clone()
            .and_then(|r| raw.get(r))
            .unwrap_or("[]")
    }
}

/// The JSON type of a raw value, for messages (`an array`, `a number`, ...).
pub(crate) fn raw_type(raw: &str) -> &'static str {
    first_byte(raw)
        .and_then(codec::JsonType::of_first_byte)
        .map_or("not JSON", codec::JsonType::with_article)
}

/// What the blob rules need from a valid blob: its decoded size (from base64
/// arithmetic), the first decoded bytes (for sniffing), and the whole decoded
/// bytes only when asked (a text-like declared type).
pub(crate) fn blob_prefix(b64: &str) -> Vec<u8> {
    // 4,096 characters decode to the first 3,072 bytes: more than any signature needs.
    let n = b64.len().min(4096) / 4 * 4;
    base64::decode(base64::Path::Simd, &b64.as_bytes()[..n]).unwrap_or_default()
}

/// Whether a valid blob decodes to UTF-8 text (decodes it: only asked for
/// text-like declared types).
pub(crate) fn decodes_to_utf8(b64: &str) -> bool {
    base64::decode(base64::Path::Simd, b64.as_bytes())
        .is_ok_and(|bytes| std::str::from_utf8(&bytes).is_ok())
}

/// The type sniffed from `bytes` (`mcptape_wire::media::verdict`) when it
/// has a recognised signature and disagrees with `declared`. The rule's own
/// policy on top: `application/octet-stream` claims nothing, and common
/// aliases (`image/jpg`) name the sniffed type.
pub(crate) fn sniff_mismatch(declared: &str, bytes: &[u8]) -> Option<&'static str> {
    let v = media::verdict(Some(declared), bytes);
    if v.status != MediaMatch::Mismatch {
        return None;
    }
    let sniffed = v.sniffed?;
    let essence = declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == media::DEFAULT_BLOB_MIME_TYPE || local::alias(&essence) == Some(sniffed) {
        None
    } else {
        Some(sniffed)
    }
}

/// True for media types with a faithful text representation.
pub(crate) fn is_textlike(mime: &str) -> bool {
    local::is_textlike(mime)
}

/// True when a `text` payload is a `data:` URI.
pub(crate) fn text_is_data_uri(text: &str) -> bool {
    media::text_is_data_uri(text)
}

/// How a resources/read error response reads as "resource not found".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotFound {
    /// -32602 with `data.uri`, or -32602 whose message says not found (SEP-2164).
    InvalidParams,
    /// -32002 (2025-06-18 / 2025-11-25).
    Legacy,
    /// Another code whose message says the resource was not found.
    OtherCode(i64),
}

/// Classifies a resources/read `error` object
/// (`mcptape_wire::classify::classify_read_error`, by code and `data.uri`),
/// then, for the answers it cannot call not-found, by message: -32602
/// without `data.uri` or another code whose message says the resource was
/// not found. `None` when it is not a not-found answer (a malformed-uri
/// -32602, an internal error, ...).
pub(crate) fn not_found(err: &Value) -> Option<NotFound> {
    let code = err.get("code")?.as_i64()?;
    let message = err.get("message").and_then(Value::as_str).unwrap_or("");
    let obj = ErrorObject {
        code,
        message: message.to_owned(),
        data: err.get("data").cloned(),
    };
    let says = says_not_found(message);
    match classify_read_error(&obj) {
        ReadErrorClass::NotFound { legacy: true, .. } => Some(NotFound::Legacy),
        ReadErrorClass::NotFound { legacy: false, .. } => Some(NotFound::InvalidParams),
        _ if code == LEGACY_RESOURCE_NOT_FOUND => Some(NotFound::Legacy),
        ReadErrorClass::InvalidParams if says => Some(NotFound::InvalidParams),
        ReadErrorClass::InvalidParams => None,
        _ if says => Some(NotFound::OtherCode(code)),
        _ => None,
    }
}

/// Whether an error message says a resource does not exist.
fn says_not_found(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "not found",
        "unknown resource",
        "does not exist",
        "no such resource",
        "no resource",
    ]
    .iter()
    .any(|p| m.contains(p))
}

mod local {
    //! Rule policy that is not parsing: media-type aliases and what counts as text-like.
    pub(super) fn alias(essence: &str) -> Option<&'static str> {
        match essence {
            "image/jpg" | "image/pjpeg" => Some("image/jpeg"),
            "application/x-pdf" => Some("application/pdf"),
            "application/x-gzip" => Some("application/gzip"),
            "application/x-zip-compressed" => Some("application/zip"),
            _ => None,
        }
    }

    pub(super) fn is_textlike(mime: &str) -> bool {
        let e = mime
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        e.starts_with("text/")
            || e.ends_with("+json")
            || e.ends_with("+xml")
            || matches!(
                e.as_str(),
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/ecmascript"
                    | "application/yaml"
                    | "application/x-yaml"
                    | "application/toml"
                    | "application/sql"
                    | "application/x-sh"
            )
    }
}
