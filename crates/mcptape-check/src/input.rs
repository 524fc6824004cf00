//! What kind of input a file is, decided from its first line: an mcptape
//! transcript (a header line that is a JSON *object* with a
//! `mcptapeTranscript` member, crates/mcptape-transcript format v1) or
//! anything else. A JSON array on the first line is never a header: serde
//! would read a struct from an array positionally, so a one-message batch
//! `[{"jsonrpc":...}]` would pass for a transcript header and a header
//! written as `[1, "0.1.0", "stdio", ...]` would be accepted. Both are
//! refused here, by looking at the first byte before any serde probe.

use crate::engine::Options;
use crate::report::{FileReport, Finding};
use crate::revision::{Revision, RevisionSource, SpecChoice};
use crate::rules;

/// The first line of `data` (without its `\n`; a `\r` before it is JSON whitespace), past a
/// UTF-8 byte order mark: a transcript saved with one is still told apart as a transcript,
/// for its reader to refuse naming the BOM (`ErrorKind::ByteOrderMark`).
fn first_line(data: &[u8]) -> &[u8] {
    let line = data.split(|&b| b == b'\n').next().unwrap_or_default();
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// The first non-whitespace byte of the first line.
fn first_byte(data: &[u8]) -> Option<u8> {
    first_line(data)
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace())
}

/// Whether the first line is an mcptape transcript header: a JSON object
/// (first byte `{`) with a `mcptapeTranscript` member (the reader then
/// checks the whole header).
pub(crate) fn is_transcript(data: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "mcptapeTranscript")]
        mcptape_transcript: Option<serde::de::IgnoredAny>,
    }
    first_byte(data) == Some(b'{')
        && serde_json::from_slice::<Probe>(first_line(data))
            .is_ok_and(|p| p.mcptape_transcript.is_some())
}

/// For `check`: a file whose first line is a JSON array is refused as a
/// transcript (`transcript-unreadable` at line 1, nothing else checked),
/// with a message saying why. `None` for every other file (the transcript
/// reader judges it).
pub(crate) fn refuse_array_header(file: &str, data: &[u8], opts: &Options) -> Option<FileReport> {
    if first_byte(data) != Some(b'[') {
        return None;
    }
    let rule = rules::TRANSCRIPT_UNREADABLE;
    let (revision, revision_source) = match &opts.spec {
        SpecChoice::Fixed(r) => (r.clone(), RevisionSource::CommandLine),
        SpecChoice::Auto => (Revision::v2026_07_28(), RevisionSource::Assumed),
    };
    Some(FileReport {
        file: file.to_owned(),
        revision,
        revision_source,
        records: 0,
        messages: 0,
        findings: vec![Finding {
            rule: rule.id,
            severity: rule.severity,
            allowed: opts.allow.contains(rule.id),
            file: file.to_owned(),
            record: 0,
            line: 1,
            request_id: None,
            pointer: String::new(),
            message: "line 1: the header is a JSON array, not an object: a transcript header is an \
                      object with named members (mcptapeTranscript, transport, ...), never positional"
                .to_owned(),
        }],
    })
}

/// Where the `result` member of the response with id `id` sits in `line` (a
/// single message, or a batch when `!single`): `(byte offset, its bytes)`,
/// so a result parsed on its own reports offsets into the input line.
/// `None` when the line is not valid UTF-8 JSON of that shape.
pub(crate) fn result_span<'a>(
    line: &'a [u8],
    single: bool,
    id: &mcptape_wire::envelope::RequestId,
) -> Option<(usize, &'a [u8])> {
    use serde_json::value::RawValue;
    type Members<'b> = std::collections::BTreeMap<std::borrow::Cow<'b, str>, &'b RawValue>;
    let text = std::str::from_utf8(line).ok()?;
    let want = serde_json::to_value(id).ok()?;
    let find = |raw: &'a str| -> Option<&'a RawValue> {
        let m: Members<'a> = serde_json::from_str(raw).ok()?;
        let rid: serde_json::Value = serde_json::from_str(m.get("id")?.get()).ok()?;
        (rid == want).then(|| m.get("result").copied()).flatten()
    };
    let result = if single {
        find(text)?
    } else {
        let items: Vec<&'a RawValue> = serde_json::from_str(text).ok()?;
        items.into_iter().find_map(|i| find(i.get()))?
    };
    let base = (result.get().as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    Some((base, result.get().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_object_first_line_is_a_transcript() {
        assert!(is_transcript(b"{\"mcptapeTranscript\":1}\n"));
        assert!(is_transcript(b" {\"mcptapeTranscript\":1}\r\n{}"));
        assert!(!is_transcript(
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]\n"
        ));
        assert!(!is_transcript(b"[1]\n"));
        assert!(!is_transcript(b"{\"jsonrpc\":\"2.0\"}\n"));
        assert!(!is_transcript(b""));
        // Regression (fresh-user trial): a transcript saved with a BOM was inspected as
        // NDJSON, every record a bad JSON-RPC message; now its reader names the BOM.
        assert!(is_transcript(b"\xEF\xBB\xBF{\"mcptapeTranscript\":1}\n"));
        assert!(!is_transcript(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\"}\n"));
    }
}
