//! What the rules read of one message that is a pure function of that
//! message and its envelope scan, computed while the line is framed
//! ([`super::Framed::frame`]: on the pipeline's first stage for a mapped
//! file, [`super::pipeline`]) instead of on the rules' thread: the id's key,
//! the scan of `result.contents` and each blob entry's media verdict
//! ([`Pre`]); for `inspect`, the read summary and each blob's sniff
//! ([`ReadPre`]). A pass asks for them when the framing runs ahead
//! ([`Prep::WhenAhead`]): the first stage computes them while the rules are
//! the longer stage, so the work moves to the thread that has time for it
//! (computed on every line, the framing became the longer stage on the
//! 500,000-message bench); whatever was not computed there the rules
//! compute as before, with the same result.
//!
//! The first stage does not know which request a response answers, so the
//! contents are scanned for every single message with a `result.contents`
//! member and read by the rules only for a `resources/read` answer: the
//! same values the rules computed before, whether used or not.

use mcptape_wire::codec::{CodecError, ScannedEntry};
use mcptape_wire::envelope::Scanned;
use mcptape_wire::error::WireError;
use mcptape_wire::read_summary::{self, Payload, ReadSummary};

use super::view::IdKey;
use crate::wireview;

/// What [`super::Framed::frame`] computes beside the record and the
/// envelope scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prep {
    /// Nothing more (`inspect`, which reads the scan its own way).
    Nothing,
    /// What `check`'s rules read ([`Pre`]), on every line.
    Rules,
    /// What `inspect`'s report reads ([`ReadPre`]), on every line.
    Inspect,
    /// [`Prep::Rules`] when the framing runs ahead of the rules on a
    /// thread of its own and would otherwise wait for them (the batches it
    /// framed fill the channel between the stages: [`super::pipeline`]),
    /// else [`Prep::Nothing`]: the work goes to whichever thread has time
    /// for it, the rules computing what was not computed for them.
    WhenAhead,
    /// [`Prep::Inspect`] when the framing runs ahead (as
    /// [`Prep::WhenAhead`]), else [`Prep::Nothing`].
    InspectWhenAhead,
}

impl Prep {
    /// What a line framed now computes: `ahead` is whether the framing
    /// runs ahead of the rules ([`Prep::WhenAhead`]).
    pub(crate) fn now(self, ahead: bool) -> Prep {
        match self {
            Prep::WhenAhead if ahead => Prep::Rules,
            Prep::InspectWhenAhead if ahead => Prep::Inspect,
            Prep::WhenAhead | Prep::InspectWhenAhead => Prep::Nothing,
            p => p,
        }
    }
}

/// What the framing computed of one line ([`Prep`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prepared<'a> {
    /// For `check`'s rules.
    Check(Pre<'a>),
    /// For `inspect`'s report: the read summary of a single message with
    /// a `result.contents` member (`None`: it has none).
    Read(Option<ReadPre<'a>>),
}

impl<'a> Prepared<'a> {
    /// What `check`'s rules read, if computed.
    pub(crate) fn check(&self) -> Option<&Pre<'a>> {
        match self {
            Prepared::Check(p) => Some(p),
            Prepared::Read(_) => None,
        }
    }

    /// What `inspect`'s report reads, if computed.
    pub(crate) fn into_read(self) -> Option<Option<ReadPre<'a>>> {
        match self {
            Prepared::Read(r) => Some(r),
            Prepared::Check(_) => None,
        }
    }

    /// What `prep` computes of `message`, whose envelope scan is `scanned`.
    pub(crate) fn of(
        prep: Prep,
        message: &'a str,
        scanned: &Result<Scanned, WireError>,
    ) -> Option<Prepared<'a>> {
        match prep {
            Prep::Rules => Pre::of(message, scanned).map(Prepared::Check),
            Prep::Inspect => ReadPre::of(message, scanned).map(Prepared::Read),
            Prep::Nothing | Prep::WhenAhead | Prep::InspectWhenAhead => None,
        }
    }
}

/// The read summary `inspect` reports of a single message
/// ([`read_summary::summarize_result_of`]) and the media sniff of each of
/// its blobs ([`crate::inspect::sniff_blob_head`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadPre<'a> {
    /// The summary.
    pub(crate) summary: ReadSummary<'a>,
    /// Per entry (same index): a blob's sniffed type (`Some(None)`: no
    /// known signature; `None`: its first characters do not decode);
    /// `Some(None)` for a text.
    pub(crate) sniffs: smallvec::SmallVec<[Option<Option<&'static str>>; 1]>,
}

impl<'a> ReadPre<'a> {
    /// The summary of `message` (its envelope scan `scanned`), when it is
    /// a single message with a `result.contents` member: `Some(None)` when
    /// it has no summary; `None` for any other message (not computed).
    pub(crate) fn of(
        message: &'a str,
        scanned: &Result<Scanned, WireError>,
    ) -> Option<Option<ReadPre<'a>>> {
        let Ok(Scanned::Single(env)) = scanned else {
            return None;
        };
        env.members.result_contents.as_ref()?;
        let summary = read_summary::summarize_result_of(message, env);
        Some(summary.map(|summary| {
            ReadPre {
                sniffs: summary
                    .entries
                    .iter()
                    .map(|e| match e.payload {
                        Payload::Blob { base64, .. } => crate::inspect::sniff_blob_head(base64),
                        Payload::Text { .. } => Some(None),
                    })
                    .collect(),
                summary,
            }
        }))
    }
}

/// The rules' values of one single message (not a batch), computed by the
/// first stage ([`Pre::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pre<'a> {
    /// The top-level id as the rules key it ([`IdKey::from_token`] of the
    /// id token): `None` when the message has no usable id.
    pub(super) id: Option<IdKey>,
    /// The scan of `result.contents` ([`wireview::scan_result_contents`]),
    /// when the message has that member (`None`: it has not).
    pub(super) contents: Option<Result<Contents<'a>, CodecError>>,
}

/// A `result.contents` array scanned, with the media verdict of each of
/// its blob entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Contents<'a> {
    /// The entries, as the wire's contents scan gives them.
    pub(super) entries: Vec<ScannedEntry<'a>>,
    /// Per entry (same index): the verdict of its blob, when it has a
    /// valid base64 blob and a string `mimeType` (what the blob rules
    /// read); `None` otherwise.
    pub(super) blobs: smallvec::SmallVec<[Option<BlobVerdict>; 1]>,
}

/// What the blob rules conclude from an entry's declared media type and
/// its blob's bytes ([`BlobVerdict::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlobVerdict {
    /// The sniffed type when it disagrees with the declared one
    /// ([`wireview::sniff_mismatch`]: `mimetype-sniff-mismatch`).
    pub(super) sniffed: Option<&'static str>,
    /// The declared type is text-like and the blob decodes to UTF-8
    /// (`textlike-mimetype-as-blob`).
    pub(super) textlike_utf8: bool,
}

impl BlobVerdict {
    /// The verdict of a blob of base64 text `b64` (valid: its in-place
    /// check passed) declared as `mime`. Sniffing needs the first bytes
    /// only; the whole blob is decoded only for a text-like declared type
    /// (to test it as UTF-8).
    pub(crate) fn of(mime: &str, b64: &str) -> BlobVerdict {
        let head = wireview::BlobHead::new(b64);
        let essence = wireview::essence(mime);
        BlobVerdict {
            sniffed: wireview::sniff_mismatch(&essence, &head.bytes),
            textlike_utf8: wireview::is_textlike(&essence) && head.decodes_to_utf8(),
        }
    }

    /// The verdict of entry `e`, when the blob rules read one: a valid
    /// blob and a string `mimeType`.
    fn of_entry(e: &ScannedEntry<'_>) -> Option<BlobVerdict> {
        match (e.blob.as_str(), &e.blob_check, e.mime_type.as_str()) {
            (Some(b64), Some(Ok(_)), Some(mime)) => Some(BlobVerdict::of(mime, b64)),
            _ => None,
        }
    }
}

impl<'a> Pre<'a> {
    /// The values of `message` whose envelope scan is `scanned`: `None`
    /// for a batch or a message the envelope refused (the rules read those
    /// themselves).
    pub(crate) fn of(message: &'a str, scanned: &Result<Scanned, WireError>) -> Option<Pre<'a>> {
        let Ok(Scanned::Single(env)) = scanned else {
            return None;
        };
        let id = env
            .id_range
            .clone()
            .and_then(|r| message.get(r))
            .and_then(IdKey::from_token);
        let contents = env
            .members
            .result_contents
            .clone()
            .and_then(|r| message.get(r))
            .map(|raw| {
                wireview::scan_result_contents(message, env, raw).map(|entries| Contents {
                    blobs: entries.iter().map(BlobVerdict::of_entry).collect(),
                    entries,
                })
            });
        Some(Pre { id, contents })
    }
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::*;
    use crate::engine::view::Msg;
    use crate::engine::{Line, LineSource, SliceLines, pipeline};

    /// The blob rules' verdict as they computed it before the framing did.
    fn verdict_as_the_rules_made_it(mime: &str, b64: &str) -> BlobVerdict {
        let head = wireview::BlobHead::new(b64);
        let essence = wireview::essence(mime);
        BlobVerdict {
            sniffed: wireview::sniff_mismatch(&essence, &head.bytes),
            textlike_utf8: wireview::is_textlike(&essence) && head.decodes_to_utf8(),
        }
    }

    /// What the framing computes of each message ([`Pre`]) equals what the
    /// rules computed from the message and its scan: the id's key, the
    /// contents scan and each blob's verdict; on every corpus transcript,
    /// also cut and with an unreadable line, over the plain loop and the
    /// pipeline. A batch or a refused message has none.
    #[test]
    fn framed_values_equal_the_rules_values() {
        let (mut ids, mut contents, mut blobs, mut sniffed, mut textlike) = (0, 0, 0, 0, 0);
        for f in pipeline::corpus_transcripts() {
            for text in pipeline::cut_and_unreadable(std::fs::read(&f).unwrap()) {
                for shape in [None, Some(pipeline::TEST_SHAPES[1])] {
                    let mut lines = SliceLines::new(&text, None);
                    if let Some(shape) = shape {
                        lines = lines.with_pipe(shape);
                    }
                    lines
                        .for_each_line(usize::MAX, Prep::Rules, &mut |l| {
                            let Line::Framed(framed) = l else {
                                panic!("every line framed")
                            };
                            let message = framed.parsed.as_ref().ok().and_then(|r| r.message());
                            let (Some((_, m, _)), Some(Ok(Scanned::Single(env)))) =
                                (message, &framed.scanned)
                            else {
                                assert!(framed.pre.is_none(), "{}", f.display());
                                return ControlFlow::Continue(());
                            };
                            let pre = framed
                                .pre
                                .as_ref()
                                .and_then(Prepared::check)
                                .expect("a single message's values");
                            let msg = Msg { input: m, env };
                            assert_eq!(pre.id, msg.id(), "{}", f.display());
                            ids += usize::from(pre.id.is_some());
                            let raw = msg.raw(&env.members.result_contents);
                            let Some(raw) = raw else {
                                assert!(pre.contents.is_none());
                                return ControlFlow::Continue(());
                            };
                            contents += 1;
                            let want = wireview::scan_result_contents(m, env, raw);
                            let got = pre.contents.as_ref().expect("contents scanned");
                            assert_eq!(got.as_ref().map(|c| &c.entries), want.as_ref());
                            let Ok(got) = got else {
                                return ControlFlow::Continue(());
                            };
                            assert_eq!(got.blobs.len(), got.entries.len());
                            for (e, v) in got.entries.iter().zip(&got.blobs) {
                                let want = match (e.blob.as_str(), &e.blob_check) {
                                    (Some(b), Some(Ok(_))) => e
                                        .mime_type
                                        .as_str()
                                        .map(|mime| verdict_as_the_rules_made_it(mime, b)),
                                    _ => None,
                                };
                                assert_eq!(*v, want, "{}", f.display());
                                blobs += usize::from(v.is_some());
                                sniffed += usize::from(v.is_some_and(|v| v.sniffed.is_some()));
                                textlike += usize::from(v.is_some_and(|v| v.textlike_utf8));
                            }
                            ControlFlow::Continue(())
                        })
                        .unwrap();
                }
            }
        }
        // The corpus exercises every value (read as such in all variants).
        assert!(
            ids > 100 && contents > 20 && blobs > 5 && sniffed > 0 && textlike > 0,
            "ids {ids}, contents {contents}, blobs {blobs}, sniffed {sniffed}, textlike {textlike}"
        );
    }

    /// What the framing computes for inspect's report ([`ReadPre`])
    /// equals what the report computed: the read summary of every single
    /// message with a `result.contents` member, and each blob's sniff.
    #[test]
    fn framed_read_summaries_equal_the_reports() {
        let (mut summaries, mut blobs) = (0, 0);
        for f in pipeline::corpus_transcripts() {
            for text in pipeline::cut_and_unreadable(std::fs::read(&f).unwrap()) {
                SliceLines::new(&text, None)
                    .for_each_line(usize::MAX, Prep::Inspect, &mut |l| {
                        let Line::Framed(framed) = l else {
                            panic!("every line framed")
                        };
                        let message = framed.parsed.as_ref().ok().and_then(|r| r.msg());
                        let got = framed.pre.clone().and_then(Prepared::into_read);
                        let (Some(m), Some(Ok(Scanned::Single(env)))) = (message, &framed.scanned)
                        else {
                            assert!(got.is_none(), "{}", f.display());
                            return ControlFlow::Continue(());
                        };
                        if env.members.result_contents.is_none() {
                            assert!(got.is_none(), "{}", f.display());
                            return ControlFlow::Continue(());
                        }
                        let got = got.expect("a read summary computed");
                        let want = read_summary::summarize_result_of(m, env);
                        assert_eq!(got.as_ref().map(|g| &g.summary), want.as_ref());
                        let Some(got) = got else {
                            return ControlFlow::Continue(());
                        };
                        summaries += 1;
                        assert_eq!(got.sniffs.len(), got.summary.entries.len());
                        for (e, sniffed) in got.summary.entries.iter().zip(&got.sniffs) {
                            let want = match e.payload {
                                Payload::Blob { base64, .. } => {
                                    blobs += 1;
                                    let k = base64
                                        .len()
                                        .min(crate::inspect::SNIFF_PREFIX_BYTES.div_ceil(3) * 4);
                                    mcptape_wire::codec::base64::decode(
                                        mcptape_wire::codec::base64::Path::Simd,
                                        &base64.as_bytes()[..k],
                                    )
                                    .ok()
                                    .map(|head| {
                                        let n = head.len().min(crate::inspect::SNIFF_PREFIX_BYTES);
                                        mcptape_wire::media::sniff(&head[..n])
                                    })
                                }
                                Payload::Text { .. } => Some(None),
                            };
                            assert_eq!(*sniffed, want, "{}", f.display());
                        }
                        ControlFlow::Continue(())
                    })
                    .unwrap();
            }
        }
        assert!(
            summaries > 20 && blobs > 5,
            "summaries {summaries}, blobs {blobs}"
        );
    }

    /// `Prep::Nothing` (inspect) computes none of it.
    #[test]
    fn nothing_asked_nothing_computed() {
        let line = br#"{"tUs":1,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}}"#;
        let framed = |prep| crate::engine::Framed::frame(line, 2, 0, true, prep);
        assert!(framed(Prep::Nothing).pre.is_none());
        assert!(framed(Prep::WhenAhead).pre.is_none());
        let Some(Prepared::Check(pre)) = framed(Prep::Rules).pre else {
            panic!("a single message")
        };
        assert_eq!(pre.id, IdKey::from_token("1"));
        assert_eq!(
            pre.contents.map(|c| c.map(|c| c.entries.len())),
            Some(Ok(0))
        );
    }
}
