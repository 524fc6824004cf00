//! The rule engine: one pass over a transcript's records, pairing requests
//! with responses by id and running every rule of [`crate::rules`].
//!
//! Order of work for one transcript, streamed ([`check_stream`]: one line
//! held at a time, from memory, a mapped file or a reader):
//! 1. the header line (`transcript-unreadable` when it is not one);
//! 2. the protocol revision is decided ([`crate::revision`]): with `--spec
//!    auto` a first pass feeds wire's detector until a record settles it (the
//!    handshake, near the top) or the file ends; an HTTP transcript's first
//!    pass also notes the exchanges answered with an event stream;
//! 3. every record in file order (`mcptape_transcript::reader::parse_record_line`,
//!    lenient: a malformed complete line fires `transcript-unreadable` and the
//!    rest is still checked): stdio framing rules, the envelope
//!    (`mcptape_wire::envelope::scan_frame`, the one reader), then the
//!    message rules;
//! 4. at the end, requests still open fire `request-unanswered`.

use std::collections::{BTreeSet, HashSet};
use std::ops::ControlFlow;

use mcptape_transcript::reader;
use mcptape_transcript::{Direction, Event, HttpMeta, HttpNote, Transport};
use std::borrow::Cow;

use mcptape_wire::codec::{Member, ScannedEntry};
use mcptape_wire::envelope::{self, EnvelopeKind, ErrorObject};
use mcptape_wire::error::{WireError, WireErrorKind};
use mcptape_wire::protocol::method;
use mcptape_wire::resources::ContentsErrorKind;
use serde_json::Value;

use crate::notfound::NotFound;
use crate::report::{FileReport, Finding};
use crate::revision::{Revision, RevisionSource, SpecChoice};
use crate::rules::{self, Rule};
use crate::wireview::{self, Envelope};

pub(crate) mod findings;
mod idless;
pub(crate) mod pipeline;
mod pre;
mod requests;
mod sse;
mod view;

use findings::{Findings, Fmt, Text};
pub(crate) use pre::{Pre, Prep, Prepared, ReadPre};
pub(crate) use requests::{Hashed, RingIndex};
use requests::{Lookup, Requests};
pub(crate) use view::decode_string_token;
use view::{IdKey, Msg};

/// Blobs larger than this many decoded bytes fire `blob-over-size-threshold`
/// unless `--blob-threshold` says otherwise: 1 MiB (1,048,576 bytes, which
/// travel as 1,398,104 base64 characters). Source: seed binary-contents-qa.
pub const DEFAULT_BLOB_THRESHOLD_BYTES: u64 = 1024 * 1024;

/// The methods whose complete 2026-07-28 results carry `ttlMs` and
/// `cacheScope` (SEP-2549; seed resources-primitive-lesson: "one of the six
/// methods"): [`mcptape_wire::protocol::method::CACHEABLE`].
pub const CACHEABLE_METHODS: [&str; 6] = method::CACHEABLE;

/// The `_meta` key carrying a request's protocol revision (2026-07-28):
/// [`mcptape_wire::protocol::meta::PROTOCOL_VERSION`].
pub const META_PROTOCOL_VERSION: &str = mcptape_wire::protocol::meta::PROTOCOL_VERSION;

/// Most consecutive non-JSON lines that are tried as one pretty-printed
/// message (`stdio-embedded-newline`): 4,096 lines. A message split over more
/// lines is judged line by line (`stdio-non-jsonrpc-line` on each), so a
/// long banner costs at most 4,096 joins per line.
pub const MAX_SPLIT_MESSAGE_LINES: usize = 4096;

/// How to check.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--spec`.
    pub spec: SpecChoice,
    /// `--allow RULE...`: these rules still report, but never fail the check.
    pub allow: BTreeSet<String>,
    /// `--blob-threshold BYTES` (decoded bytes), default [`DEFAULT_BLOB_THRESHOLD_BYTES`].
    pub blob_threshold_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            spec: SpecChoice::Auto,
            allow: BTreeSet::new(),
            blob_threshold_bytes: DEFAULT_BLOB_THRESHOLD_BYTES,
        }
    }
}

/// Checks one transcript held in memory. `file` is the name findings carry.
///
/// Never fails and never panics: an unreadable file is a
/// `transcript-unreadable` finding.
pub fn check_bytes(file: &str, bytes: &[u8], opts: &Options) -> FileReport {
    // Reading a slice cannot fail; were it to, the report says so.
    check_stream(file, &mut || Ok(SliceLines::new(bytes, None)), opts)
        .and_then(|(head, rest)| whole_report(head, rest))
        .unwrap_or_else(|e| unreadable(file, opts, 1, &e))
}

/// The report [`check_stream`]'s two parts make: its findings are those of
/// `head` (a report made before any record was read) followed by `rest`, in
/// report order.
///
/// # Errors
/// Reading spilled findings back.
pub(crate) fn whole_report(mut head: FileReport, rest: Findings) -> std::io::Result<FileReport> {
    for f in rest.into_sorted(&head.file) {
        head.findings.push(f?);
    }
    Ok(head)
}

/// A report of one `transcript-unreadable` finding at `line` (nothing else checked).
fn unreadable(file: &str, opts: &Options, line: usize, why: &dyn std::fmt::Display) -> FileReport {
    let f = Cx::new(file, opts, &mut Findings::default()).make(
        rules::TRANSCRIPT_UNREADABLE,
        Place::file_line(line),
        None,
        String::new(),
        format!("{why}"),
    );
    let (revision, revision_source) = match &opts.spec {
        SpecChoice::Fixed(r) => (r.clone(), RevisionSource::CommandLine),
        SpecChoice::Auto => (Revision::v2026_07_28(), RevisionSource::Assumed),
    };
    FileReport {
        file: file.to_owned(),
        revision,
        revision_source,
        records: 0,
        messages: 0,
        findings: vec![f],
    }
}

/// Where [`check_stream`] reads a transcript's lines from, one at a time:
/// [`SliceLines`] (bytes in memory or a mapped file, each line borrowed) or
/// [`BufLines`] (a reader, each line copied into one buffer).
pub(crate) trait LineSource {
    /// Moves to the next line: `Some(terminated)` (whether it ended with
    /// `\n`), `None` at the end.
    ///
    /// # Errors
    /// The reader's I/O error.
    fn advance(&mut self) -> std::io::Result<Option<bool>>;
    /// The current line, without its `\n`.
    fn line(&self) -> &[u8];
    /// 1-based number of the current line.
    fn line_no(&self) -> usize;
    /// Byte offset of the current line's first byte.
    fn offset(&self) -> usize;
    /// `Some((len, limit))` when the current line is longer than the
    /// source's limit: `len` bytes (without its `\n`), over `limit` bytes
    /// ([`MAX_LINE_BYTES`] unless a test set another). Such a line is not a
    /// record to read: it is given as [`Framed::too_long`], and
    /// [`LineSource::line`] may hold none of it ([`BufLines`] keeps no
    /// bytes of it).
    fn over_limit(&self) -> Option<(usize, usize)> {
        let len = self.line().len();
        (len > MAX_LINE_BYTES).then_some((len, MAX_LINE_BYTES))
    }
    /// Gives every line after the current one to `each` in file order,
    /// until it breaks or the lines end (the source is then at the last
    /// line given): framed ([`Framed::frame`]) when shorter than
    /// `frame_below` bytes, else cut only ([`Line::Long`], for `each` to
    /// frame its own way). This one frames each line as it is read;
    /// [`SliceLines::mapped`] frames on a second thread ahead of `each`
    /// ([`pipeline`]).
    ///
    /// # Errors
    /// The reader's I/O error.
    fn for_each_line(
        &mut self,
        frame_below: usize,
        prep: Prep,
        each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
    ) -> std::io::Result<()> {
        frame_each(self, frame_below, prep, each)
    }

    /// [`LineSource::for_each_line`] with every line framed, with what
    /// the rules read when the framing has time for it ([`Prep::WhenAhead`]).
    ///
    /// # Errors
    /// The reader's I/O error.
    fn for_each_framed(
        &mut self,
        each: &mut dyn FnMut(&mut Framed<'_>) -> ControlFlow<()>,
    ) -> std::io::Result<()> {
        self.for_each_line(usize::MAX, Prep::WhenAhead, &mut |l| match l {
            Line::Framed(f) => each(f),
            Line::Long(cut) => each(&mut cut.frame(Prep::Nothing)),
        })
    }
}

/// [`LineSource::for_each_line`] on the caller's thread: each line framed
/// as it is read.
///
/// # Errors
/// The reader's I/O error.
fn frame_each<S: LineSource + ?Sized>(
    lines: &mut S,
    frame_below: usize,
    prep: Prep,
    each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
) -> std::io::Result<()> {
    while let Some(terminated) = lines.advance()? {
        let cut = Cut {
            line_no: lines.line_no(),
            offset: lines.offset(),
            terminated,
            line: lines.line(),
        };
        let flow = match lines.over_limit() {
            Some((len, limit)) => each(Line::Framed(&mut Framed::too_long(cut, len, limit))),
            None => cut.give(frame_below, prep, each),
        };
        if flow.is_break() {
            break;
        }
    }
    Ok(())
}

/// Longest line (bytes, without its `\n`) [`check_stream`] and inspect
/// read as a record: the transcript format's streaming limit
/// ([`reader::MAX_RECORD_LINE_BYTES`], 256 MiB, which holds a message of
/// the wire's [`MAX_MESSAGE_BYTES`](mcptape_wire::limits::MAX_MESSAGE_BYTES)
/// in a `msg` member). A longer line is reported as
/// [`reader::ErrorKind::LineTooLong`] with its length, and skipped: a
/// reader ([`BufLines`]) keeps at most this many bytes of it, whatever its
/// length, and a file in memory reports it alike.
pub(crate) const MAX_LINE_BYTES: usize = reader::MAX_RECORD_LINE_BYTES;

/// The finding text of a line skipped for `e` (`check`'s
/// `transcript-unreadable`, inspect's bad line): `e`, and the line's length
/// when it was longer than the limit (`len` bytes).
pub(crate) fn skipped_text(
    e: &dyn std::fmt::Display,
    kind: &reader::ErrorKind,
    len: usize,
) -> String {
    match kind {
        reader::ErrorKind::LineTooLong { .. } => format!("{e} (the line is {len} bytes)"),
        _ => e.to_string(),
    }
}

/// One line after the header, cut ([`LineSource::for_each_line`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cut<'a> {
    /// 1-based line number.
    pub(crate) line_no: usize,
    /// Byte offset of the line's first byte.
    pub(crate) offset: usize,
    /// Whether the line ended with `\n`.
    pub(crate) terminated: bool,
    /// The line, without its `\n`.
    pub(crate) line: &'a [u8],
}

impl<'a> Cut<'a> {
    /// Gives the line to `each`: framed (in place, lent; with `prep`)
    /// when shorter than `frame_below` bytes, else as it is.
    pub(crate) fn give(
        self,
        frame_below: usize,
        prep: Prep,
        each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        // A line over the limit is framed (as too long), never read long.
        if self.line.len() < frame_below || self.line.len() > MAX_LINE_BYTES {
            each(Line::Framed(&mut self.frame(prep)))
        } else {
            each(Line::Long(self))
        }
    }

    /// [`Framed::frame`] of the line.
    pub(crate) fn frame(self, prep: Prep) -> Framed<'a> {
        Framed::frame(self.line, self.line_no, self.offset, self.terminated, prep)
    }
}

/// A line as [`LineSource::for_each_line`] gives it: a framed line is lent
/// where it lies (a [`Framed`] is some hundred bytes: handing it over by
/// value was a copy per line, on the 500,000-message bench the largest cost
/// left on the rules' thread).
pub(crate) enum Line<'r, 'a> {
    /// Framed.
    Framed(&'r mut Framed<'a>),
    /// At least the bytes asked for: cut only.
    Long(Cut<'a>),
}

/// One line after the header as the first stage of a pass leaves it: cut,
/// framed as a record (`reader::parse_record_line`, lenient) with the one
/// envelope scan of its message ([`scan_strict`]). Borrows the line; copies
/// no message bytes.
pub(crate) struct Framed<'a> {
    /// 1-based line number.
    pub(crate) line_no: usize,
    /// Byte offset of the line's first byte.
    pub(crate) offset: usize,
    /// Whether the line ended with `\n`.
    pub(crate) terminated: bool,
    /// The line, without its `\n` (empty when its source did not keep a
    /// line over the limit: [`Framed::too_long`]).
    pub(crate) line: &'a [u8],
    /// The line's length in bytes, without its `\n` (`line.len()` unless
    /// its source did not keep it).
    pub(crate) len: usize,
    /// The record, or why the line is not one.
    pub(crate) parsed: Result<reader::RecordRef<'a>, reader::TranscriptError>,
    /// The envelope scan of the record's message, when the reader's fast
    /// path took it (else `None`: the rules scan it themselves).
    pub(crate) scanned: Option<Result<envelope::Scanned, WireError>>,
    /// What the rules (or inspect's report) read of a single message that
    /// is a pure function of it ([`Prepared::of`]), when framed with
    /// [`Prep::Rules`] (or [`Prep::Inspect`]) and `scanned` is a single
    /// message's (else `None`: they compute it themselves).
    pub(crate) pre: Option<Prepared<'a>>,
}

impl<'a> Framed<'a> {
    /// Frames line `line_no` (`line`, at byte `offset`, `terminated` by
    /// `\n` or not): the per-line work before the rules, and what `prep`
    /// asks for.
    pub(crate) fn frame(
        line: &'a [u8],
        line_no: usize,
        offset: usize,
        terminated: bool,
        prep: Prep,
    ) -> Self {
        // One way of framing a line: a new frame is an empty one framed
        // over (what a line's framing computes goes in `frame_into`).
        let mut f = Framed {
            line_no,
            offset,
            terminated,
            line,
            len: line.len(),
            parsed: Err(reader::TranscriptError {
                kind: reader::ErrorKind::EmptyLine,
                line: line_no,
                offset,
            }),
            scanned: None,
            pre: None,
        };
        f.frame_into(line, line_no, offset, terminated, prep);
        f
    }

    /// Line `cut` (`len` bytes, of which `cut.line` holds all or none)
    /// longer than `limit` bytes: not read, its error
    /// [`reader::ErrorKind::LineTooLong`] at its line and offset.
    pub(crate) fn too_long(cut: Cut<'a>, len: usize, limit: usize) -> Self {
        Framed {
            line_no: cut.line_no,
            offset: cut.offset,
            terminated: cut.terminated,
            line: cut.line,
            len,
            parsed: Err(reader::TranscriptError {
                kind: reader::ErrorKind::LineTooLong { limit },
                line: cut.line_no,
                offset: cut.offset,
            }),
            scanned: None,
            pre: None,
        }
    }

    /// [`Framed::frame`] written over this one, field by field: the scan is
    /// made where it lies (the envelope of the line framed here before is
    /// overwritten, its buffers reused), so nothing of some hundred bytes
    /// is built elsewhere and copied in. Used by [`pipeline`], which keeps
    /// its batches' slots: whatever a slot held, it ends as a fresh frame
    /// of the line (`framing_in_place_equals_a_fresh_frame`). Everything a
    /// line's framing computes is computed here.
    pub(crate) fn frame_into(
        &mut self,
        line: &'a [u8],
        line_no: usize,
        offset: usize,
        terminated: bool,
        prep: Prep,
    ) {
        self.line_no = line_no;
        self.offset = offset;
        self.terminated = terminated;
        self.line = line;
        self.len = line.len();
        if line.len() > MAX_LINE_BYTES {
            let cut = Cut {
                line_no,
                offset,
                terminated,
                line,
            };
            *self = Framed::too_long(cut, line.len(), MAX_LINE_BYTES);
            return;
        }
        let scanned = &mut self.scanned;
        let mut message = None;
        let validate = |m| {
            message = Some(m);
            scan_strict(m, scanned)
        };
        reader::parse_record_line_into(line, line_no, offset, validate, &mut self.parsed);
        if message.is_none() {
            self.scanned = None;
        }
        self.pre = match (message, &self.scanned) {
            (Some(m), Some(s)) => Prepared::of(prep.now(false), m, s),
            _ => None,
        };
    }
}

impl LineSource for Box<dyn LineSource + '_> {
    fn advance(&mut self) -> std::io::Result<Option<bool>> {
        (**self).advance()
    }

    fn line(&self) -> &[u8] {
        (**self).line()
    }

    fn line_no(&self) -> usize {
        (**self).line_no()
    }

    fn offset(&self) -> usize {
        (**self).offset()
    }

    fn over_limit(&self) -> Option<(usize, usize)> {
        (**self).over_limit()
    }

    fn for_each_line(
        &mut self,
        frame_below: usize,
        prep: Prep,
        each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
    ) -> std::io::Result<()> {
        (**self).for_each_line(frame_below, prep, each)
    }
}

/// Lines borrowed from bytes in memory (or a mapped file). Every
/// [`SliceLines::RELEASE_STEP`] bytes, `release(from, upto)` is told that
/// nothing before byte `upto` is read again, the bytes before `from` having
/// been released by the call before (a mapping drops those pages: the memory
/// of a check stays bounded by the longest line, not the file; each page is
/// dropped once, not again at every step).
pub(crate) struct SliceLines<'a> {
    data: &'a [u8],
    pos: usize,
    start: usize,
    end: usize,
    line_no: usize,
    released: usize,
    release: Option<&'a Release<'a>>,
    step: usize,
    /// How [`LineSource::for_each_framed`] frames on a second thread
    /// ([`SliceLines::mapped`]); `None`: on the caller's.
    pipe: Option<pipeline::Shape>,
    /// What every line is framed with, whatever the pass asks (tests:
    /// [`Prep::Rules`] on every line, to compare with none).
    prep: Option<Prep>,
}

/// The `release(from, upto)` of [`SliceLines`]: bytes `from..upto` are not
/// read again.
pub(crate) type Release<'a> = dyn Fn(usize, usize) + Sync + 'a;

impl<'a> SliceLines<'a> {
    /// Bytes read between two calls of `release` (8 MiB: the mapped pages
    /// held stay under that plus the longest line).
    pub(crate) const RELEASE_STEP: usize = 8 << 20;

    pub(crate) fn new(data: &'a [u8], release: Option<&'a Release<'a>>) -> Self {
        SliceLines {
            data,
            pos: 0,
            start: 0,
            end: 0,
            line_no: 0,
            released: 0,
            release,
            step: Self::RELEASE_STEP,
            pipe: None,
            prep: None,
        }
    }

    /// The lines of a mapped file (borrowed for the whole pass): as
    /// [`SliceLines::new`], and [`LineSource::for_each_framed`] frames
    /// each line on a second thread, a few batches ahead of the rules
    /// ([`pipeline`]), when the machine has more than one CPU.
    pub(crate) fn mapped(data: &'a [u8], release: &'a Release<'a>) -> Self {
        SliceLines {
            pipe: Some(pipeline::Shape::DEFAULT),
            ..SliceLines::new(data, Some(release))
        }
    }

    /// The same with another release step (tests).
    #[cfg(test)]
    fn with_step(mut self, step: usize) -> Self {
        self.step = step;
        self
    }

    /// The same framing on a second thread in batches of this shape (tests:
    /// small batches over small inputs).
    #[cfg(test)]
    pub(crate) fn with_pipe(mut self, shape: pipeline::Shape) -> Self {
        self.pipe = Some(shape);
        self
    }

    /// Every line framed with `prep`, whatever the pass asks (tests).
    #[cfg(test)]
    pub(crate) fn with_prep(mut self, prep: Prep) -> Self {
        self.prep = Some(prep);
        self
    }

    /// Moves to line `f` (framed ahead by [`pipeline`]'s stage 1), as
    /// [`LineSource::advance`] would have.
    fn at(&mut self, f: &Framed<'_>) {
        self.line_no = f.line_no;
        self.start = f.offset;
        self.release_behind();
        self.end = f.offset + f.line.len();
        self.pos = self.end + usize::from(f.terminated);
    }

    /// Tells `release` that nothing before the current line is read again,
    /// once [`SliceLines::RELEASE_STEP`] bytes have been read since it was
    /// last told.
    fn release_behind(&mut self) {
        if let Some(release) = self.release
            && self.start - self.released >= self.step
        {
            release(self.released, self.start);
            self.released = self.start;
        }
    }
}

impl LineSource for SliceLines<'_> {
    fn advance(&mut self) -> std::io::Result<Option<bool>> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        self.line_no += 1;
        self.start = self.pos;
        self.release_behind();
        let terminated = match memchr::memchr(b'\n', &self.data[self.pos..]) {
            Some(n) => {
                self.end = self.pos + n;
                self.pos = self.end + 1;
                true
            }
            None => {
                self.end = self.data.len();
                self.pos = self.end;
                false
            }
        };
        Ok(Some(terminated))
    }

    fn line(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    fn line_no(&self) -> usize {
        self.line_no
    }

    fn offset(&self) -> usize {
        self.start
    }

    fn for_each_line(
        &mut self,
        frame_below: usize,
        prep: Prep,
        each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
    ) -> std::io::Result<()> {
        let prep = self.prep.unwrap_or(prep);
        match self.pipe {
            Some(shape) if pipeline::worth_a_thread() => {
                pipeline::run(self, shape, frame_below, prep, each)
            }
            _ => frame_each(self, frame_below, prep, each),
        }
    }
}

/// Lines of a [`BufReader`](std::io::BufReader), cut where they lie in its
/// buffer (`memchr`'s SIMD search): a line is copied, into one buffer of its
/// own, only when it straddles a refill (it does not end in what the reader
/// holds). A line longer than [`MAX_LINE_BYTES`] is not kept: once past
/// the limit its bytes are counted and skipped up to its `\n`, and it is
/// given as too long ([`LineSource::over_limit`]) with its length. Memory:
/// the reader's buffer and the longest line that straddled one, at most
/// the limit. The same lines, numbers and offsets as [`SliceLines`] of the
/// bytes.
pub(crate) struct BufLines<R> {
    r: std::io::BufReader<R>,
    /// The current line when it straddled a refill (`copied`).
    buf: Vec<u8>,
    copied: bool,
    /// Longest line kept, in bytes without the `\n` ([`MAX_LINE_BYTES`];
    /// tests set less).
    max_line: usize,
    /// The current line's length when it is longer than `max_line` (none
    /// of it is kept).
    too_long: Option<usize>,
    /// Bytes of the current line in the reader's buffer (when not `copied`).
    len: usize,
    /// Bytes of the reader's buffer to consume before the next line: the
    /// current line and its `\n` (when not `copied`).
    pending: usize,
    line_no: usize,
    offset: usize,
    next_offset: usize,
}

impl<R> BufLines<R> {
    pub(crate) fn new(r: std::io::BufReader<R>) -> Self {
        BufLines {
            r,
            buf: Vec::new(),
            copied: false,
            max_line: MAX_LINE_BYTES,
            too_long: None,
            len: 0,
            pending: 0,
            line_no: 0,
            offset: 0,
            next_offset: 0,
        }
    }

    /// The same, keeping lines of at most `max_line` bytes (tests).
    #[cfg(test)]
    pub(crate) fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }
}

/// `fill_buf` of `r`, again when interrupted (as `read_until` does).
fn fill<R: std::io::Read>(r: &mut std::io::BufReader<R>) -> std::io::Result<&[u8]> {
    use std::io::BufRead as _;
    loop {
        match r.fill_buf() {
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(r.buffer())
}

impl<R: std::io::Read> LineSource for BufLines<R> {
    fn advance(&mut self) -> std::io::Result<Option<bool>> {
        use std::io::BufRead as _;
        self.r.consume(std::mem::take(&mut self.pending));
        self.copied = false;
        self.too_long = None;
        let held = fill(&mut self.r)?;
        if held.is_empty() {
            return Ok(None);
        }
        // The bytes of the line with its `\n`, and whether it has one.
        let (n, terminated) = if let Some(i) = memchr::memchr(b'\n', held) {
            self.len = i;
            self.pending = i + 1;
            if i > self.max_line {
                self.too_long = Some(i);
            }
            (i + 1, true)
        } else {
            // The line goes on past what the reader holds: copied, up to
            // the limit; past it, counted only.
            self.buf.clear();
            self.copied = true;
            let mut len = 0usize;
            let terminated = loop {
                let held = fill(&mut self.r)?;
                if held.is_empty() {
                    break false;
                }
                let (take, found) = match memchr::memchr(b'\n', held) {
                    Some(i) => (i, true),
                    None => (held.len(), false),
                };
                len = len.saturating_add(take);
                if self.too_long.is_none() {
                    if len > self.max_line {
                        // Nothing of the line is read: its bytes go.
                        self.buf = Vec::new();
                        self.too_long = Some(len);
                    } else {
                        // Grown as a `Vec` grows, never past the limit.
                        if len > self.buf.capacity() {
                            let cap = self.buf.capacity().saturating_mul(2);
                            let cap = cap.clamp(len, self.max_line);
                            self.buf.reserve_exact(cap - self.buf.len());
                        }
                        self.buf.extend_from_slice(&held[..take]);
                    }
                }
                self.r.consume(take + usize::from(found));
                if found {
                    break true;
                }
            };
            if let Some(too_long) = &mut self.too_long {
                *too_long = len;
            }
            (len.saturating_add(usize::from(terminated)), terminated)
        };
        self.line_no += 1;
        self.offset = self.next_offset;
        self.next_offset = self.next_offset.saturating_add(n);
        Ok(Some(terminated))
    }

    fn line(&self) -> &[u8] {
        if self.too_long.is_some() {
            &[]
        } else if self.copied {
            &self.buf
        } else {
            &self.r.buffer()[..self.len]
        }
    }

    fn over_limit(&self) -> Option<(usize, usize)> {
        self.too_long.map(|len| (len, self.max_line))
    }

    fn line_no(&self) -> usize {
        self.line_no
    }

    fn offset(&self) -> usize {
        self.offset
    }
}

/// What the first pass learns before the rules run: the revision (`--spec
/// auto`) and, for HTTP transcripts, the exchanges answered with an event
/// stream.
fn first_pass<S: LineSource>(
    lines: &mut S,
    header: &mcptape_transcript::Header,
    detect: bool,
) -> std::io::Result<(Option<mcptape_wire::protocol::Detected>, sse::SseStreams)> {
    use mcptape_wire::protocol::{Observation, RevisionDetector};
    let mut detector = detect.then(RevisionDetector::new);
    let mut settled = None;
    let mut sse = sse::SseStreams::default();
    let http = header.transport == Transport::Http;
    while detector.is_some() || http {
        let Some(_) = lines.advance()? else { break };
        // A line over the limit is not read (the main pass reports it).
        if lines.over_limit().is_some() {
            continue;
        }
        // A server message cannot move a detector that waits for no answer:
        // left unread (a 160 MB read is not scanned by both passes).
        if !http
            && detector
                .as_ref()
                .is_some_and(RevisionDetector::ignores_server_messages)
            && reader::canonical_message_dir(lines.line()) == Some(Direction::S2c)
        {
            continue;
        }
        let (line_no, offset) = (lines.line_no(), lines.offset());
        let mut slim: Option<String> = None;
        let Ok(r) = reader::parse_record_line(lines.line(), line_no, offset, |m| {
            let mut s = None;
            let strict = scan_strict(m, &mut s);
            // The detector reads the message without its `result.contents`
            // array (`[]` in its place): a 160 MB read is not parsed again.
            slim = s
                .as_ref()
                .and_then(|s| match s {
                    Ok(envelope::Scanned::Single(e)) => e.members.result_contents.clone(),
                    _ => None,
                })
                .filter(|c| m.as_bytes().get(c.start) == Some(&b'['))
                .and_then(|c| Some([m.get(..c.start)?, "[]", m.get(c.end..)?].concat()));
            strict
        }) else {
            continue;
        };
        if http {
            sse.see(&r);
        }
        let Some(d) = detector.as_mut() else { continue };
        let obs = match (r.message(), r.owned_event()) {
            (Some((dir, msg, _)), _) => Observation::Json(
                mcptape_wire::protocol::Direction::from_client(dir == Direction::C2s),
                slim.as_deref().unwrap_or(msg),
            ),
            (None, Some(Event::Protocol { version })) => Observation::ProtocolRecord(version),
            _ => continue,
        };
        if let Some(done) = d.observe(obs) {
            settled = Some(done);
            detector = None;
        }
    }
    let detected = match (settled, detector) {
        (Some(d), _) => Some(d),
        (None, Some(d)) => Some(d.finish(header.protocol_version.as_deref())),
        (None, None) => None,
    };
    Ok((detected, sse))
}

/// The one envelope scan of a record's message (`envelope::scan_frame_str`),
/// made while the record is framed: whether the message is strict JSON (the
/// record reader's fast path takes it; else its own path decides), and the
/// scan in `out` when it is (`None` when not). Written in place: a scan is
/// some hundred bytes, moved once per message less.
pub(crate) fn scan_strict(m: &str, out: &mut Option<Result<envelope::Scanned, WireError>>) -> bool {
    // Scanned where it lies: an envelope already in `out` (a recycled
    // slot's) is overwritten in place, its buffers reused.
    let scanned = out.get_or_insert_with(|| Ok(envelope::Scanned::Batch(Vec::new())));
    envelope::scan_frame_str_into(m, scanned);
    let strict = match scanned {
        Ok(_) => true,
        Err(e) if !matches!(e.kind(), WireErrorKind::Json(_)) => true,
        // Not strict JSON by the envelope's scan: the fused scan, the test
        // the reader's fast path always took, decides.
        Err(_) => mcptape_wire::codec::scan_message(m.as_bytes()).is_ok(),
    };
    if !strict {
        *out = None;
    }
    strict
}

/// True when [`check_stream`] reads a transcript with this header twice (it opens its
/// `LineSource` a second time): a first pass to detect the revision (`--spec auto`) or to
/// gather an HTTP transcript's event streams, then the main pass. `check -` copies exactly
/// the passes read again ([`crate::check_read_streamed`]).
pub(crate) fn makes_first_pass(header: &mcptape_transcript::Header, opts: &Options) -> bool {
    matches!(opts.spec, SpecChoice::Auto) || header.transport == Transport::Http
}

/// [`check_bytes`] on a transcript read as a stream: `open` gives the bytes
/// from the start (called once, or twice when a first pass is needed: `--spec
/// auto` up to the handshake that settles the revision, an HTTP transcript
/// whole). Memory: one line at a time (at most [`MAX_LINE_BYTES`] of it: a
/// longer line is a `transcript-unreadable` finding, unread), the requests
/// of the conversation and the findings, never the file.
///
/// Returns the report without findings beside the findings (in memory and
/// spilled, [`findings`]): [`whole_report`] joins them; a report refused
/// before any record was read carries its one finding itself.
///
/// # Errors
/// The I/O errors of `open` and of reading; writing spilled findings.
pub(crate) fn check_stream<S: LineSource>(
    file: &str,
    open: &mut dyn FnMut() -> std::io::Result<S>,
    opts: &Options,
) -> std::io::Result<(FileReport, Findings)> {
    let mut lines = open()?;
    let header = match lines.advance()? {
        None => {
            let e = reader::TranscriptError {
                kind: reader::ErrorKind::Empty,
                line: 1,
                offset: 0,
            };
            return Ok((unreadable(file, opts, 1, &e), Findings::default()));
        }
        Some(_) if lines.over_limit().is_some() => {
            let (len, limit) = lines.over_limit().unwrap_or((0, MAX_LINE_BYTES));
            let e = reader::TranscriptError {
                kind: reader::ErrorKind::LineTooLong { limit },
                line: 1,
                offset: 0,
            };
            let why = skipped_text(&e, &e.kind, len);
            return Ok((unreadable(file, opts, 1, &why), Findings::default()));
        }
        Some(terminated) => {
            if let Some(refused) = crate::input::refuse_array_header(file, lines.line(), opts) {
                return Ok((refused, Findings::default()));
            }
            if !terminated {
                let e = reader::TranscriptError {
                    kind: reader::ErrorKind::TruncatedHeader {
                        bytes: lines.line().len(),
                    },
                    line: 1,
                    offset: 0,
                };
                return Ok((unreadable(file, opts, 1, &e), Findings::default()));
            }
            match reader::parse_header_line(lines.line()) {
                Ok(h) => h,
                Err(e) => return Ok((unreadable(file, opts, e.line, &e), Findings::default())),
            }
        }
    };
    let auto = matches!(opts.spec, SpecChoice::Auto);
    let (detected, sse) = if makes_first_pass(&header, opts) {
        let found = first_pass(&mut lines, &header, auto)?;
        lines = open()?;
        lines.advance()?;
        found
    } else {
        (None, sse::SseStreams::default())
    };
    let (revision, revision_source) = match (&opts.spec, detected) {
        (SpecChoice::Fixed(r), _) => (r.clone(), RevisionSource::CommandLine),
        (SpecChoice::Auto, Some(d)) => (d.revision, d.source),
        (SpecChoice::Auto, None) => (Revision::v2026_07_28(), RevisionSource::Assumed),
    };

    let mut findings = Findings::default();
    let mut st = State::new(header.transport, revision.clone());
    st.sse = sse;
    let mut messages = 0usize;
    let mut records = 0usize;
    let mut last_line = None;
    // The last record read: its tUs and record number (`record-time-backwards`).
    let mut last_stamp: Option<(u64, usize)> = None;
    let mut saw_exit = false;
    let mut dropped = None;
    // The latest line was unreadable and skipped: the file was not read through to its end
    // (its last line may be the exit record).
    let mut ends_unread = false;
    let mut noise = NoiseRun::default();
    lines.for_each_framed(&mut |framed| {
        let (line_no, offset, line) = (framed.line_no, framed.offset, framed.line);
        let (scanned, pre) = (
            &framed.scanned,
            framed.pre.as_ref().and_then(Prepared::check),
        );
        let r = match &framed.parsed {
            Ok(r) => r,
            // A malformed line, ended or not: only a cut record (the
            // reader's rule, `reader::is_cut_record`) is dropped below.
            Err(e)
                if framed.terminated
                    || matches!(e.kind, reader::ErrorKind::LineTooLong { .. })
                    || !reader::is_cut_record(line) =>
            {
                // A run of noise lines ends here (a message printed over
                // several lines never spans a line that does not read).
                let mut cx = Cx::new(file, opts, &mut findings);
                noise.flush(&mut cx);
                cx.push_whole(
                    rules::TRANSCRIPT_UNREADABLE,
                    Place::file_line(e.line),
                    format!(
                        "record line skipped: {}",
                        skipped_text(e, &e.kind, framed.len)
                    ),
                );
                ends_unread = true;
                return ControlFlow::Continue(());
            }
            Err(e) => {
                dropped = Some(reader::Dropped {
                    offset,
                    bytes: line.len(),
                    line: line_no,
                    reason: e.kind.to_string(),
                });
                return ControlFlow::Break(());
            }
        };
        records += 1;
        ends_unread = false;
        last_line = Some(line_no);
        // Record `n` is the `n`th line after the header, read or skipped: a
        // skipped line keeps its number, so no two lines share one.
        let place = Place::file_line(line_no);
        let t_us = r.t_us();
        if let Some((before, at)) = last_stamp
            && t_us < before
        {
            Cx::new(file, opts, &mut findings).push_whole(
                rules::RECORD_TIME_BACKWARDS,
                place,
                format!(
                    "stamped tUs {t_us} µs, {} µs before the record above it (record {at}, tUs {before} µs)",
                    before - t_us
                ),
            );
        }
        // A stamp past the limit is reported as such (below) and not compared with: the
        // records after it would each be "before" it.
        if t_us <= mcptape_transcript::MAX_RECORDED_T_US {
            last_stamp = Some((t_us, place.record));
        }
        if t_us > mcptape_transcript::MAX_RECORDED_T_US {
            Cx::new(file, opts, &mut findings).push_whole(
                rules::RECORD_TIME_BEYOND_LIMIT,
                place,
                format!(
                    "stamped tUs {t_us} µs, beyond MAX_RECORDED_T_US ({} µs, {} days since the recording started)",
                    mcptape_transcript::MAX_RECORDED_T_US,
                    mcptape_transcript::MAX_RECORDED_T_US / 86_400_000_000
                ),
            );
        }
        if header.transport == Transport::Stdio
            && let Some(Event::Noise { dir, line }) = r.owned_event()
        {
            noise.push(
                &mut Cx::new(file, opts, &mut findings),
                place,
                *dir,
                line.clone(),
            );
            return ControlFlow::Continue(());
        }
        let mut cx = Cx::new(file, opts, &mut findings);
        noise.flush(&mut cx);
        if let Some((dir, raw, http)) = r.message() {
            messages += check_message(
                &mut cx,
                &mut st,
                &header,
                place,
                dir,
                raw,
                http,
                scanned.as_ref(),
                pre,
            );
            return ControlFlow::Continue(());
        }
        match r.owned_event() {
            Some(Event::Http {
                http,
                note: HttpNote::ClientClosedStream,
                ..
            }) => {
                // Over Streamable HTTP, closing a request's event stream is
                // how a client cancels the request it carried.
                st.stream_closed_by_client(http.exchange);
            }
            Some(Event::Exit { .. }) => saw_exit = true,
            _ => {}
        }
        ControlFlow::Continue(())
    })?;
    let mut cx = Cx::new(file, opts, &mut findings);
    noise.flush(&mut cx);
    if let Some(d) = &dropped {
        cx.push_whole(
            rules::TRANSCRIPT_TRUNCATED,
            Place::file_line(d.line),
            format!(
                "the last line (byte offset {}, {} bytes) has no line terminator and is not a whole record: dropped ({})",
                d.offset, d.bytes, d.reason
            ),
        );
    }
    st.finish(&mut cx);
    // Last, so that it sorts after the findings of the last record. Not about a file whose
    // last line could not be read (transcript-unreadable says so): that line may be the exit
    // record, and the records before it are not "complete up to there".
    if header.transport == Transport::Stdio && dropped.is_none() && !ends_unread && !saw_exit {
        cx.push_whole(
            rules::RECORDING_NO_EXIT,
            Place::file_line(last_line.unwrap_or(1)),
            no_exit_message(records),
        );
    }

    if let Some(e) = findings.take_error() {
        return Err(e);
    }
    Ok((
        FileReport {
            file: file.to_owned(),
            revision,
            revision_source,
            records,
            messages,
            findings: Vec::new(),
        },
        findings,
    ))
}

/// The stdio noise lines (`Event::Noise`) of one direction seen in a row and
/// not judged yet: a run of them may be one message printed over several
/// lines (`stdio-embedded-newline`), found by [`split_message_len`] over at
/// most [`MAX_SPLIT_MESSAGE_LINES`] lines, so at most that many are held.
#[derive(Default)]
struct NoiseRun {
    dir: Option<Direction>,
    lines: std::collections::VecDeque<(Place, String)>,
}

impl NoiseRun {
    /// Adds a noise line; judges the lines whose window is complete.
    fn push(&mut self, cx: &mut Cx<'_>, place: Place, dir: Direction, line: String) {
        if self.dir != Some(dir) {
            self.judge(cx, usize::MAX);
        }
        self.dir = Some(dir);
        self.lines.push_back((place, line));
        self.judge(cx, MAX_SPLIT_MESSAGE_LINES);
    }

    /// Judges every held line (the run ended).
    fn flush(&mut self, cx: &mut Cx<'_>) {
        self.judge(cx, usize::MAX);
    }

    /// Judges the first lines while at least `min` are held (all of them
    /// when the run has ended): one message over several lines, or one line
    /// that is not JSON.
    fn judge(&mut self, cx: &mut Cx<'_>, min: usize) {
        let Some(dir) = self.dir else { return };
        while !self.lines.is_empty() && (min == usize::MAX || self.lines.len() >= min) {
            let place = self.lines[0].0;
            if let Some(n) = split_message_len(&self.lines) {
                cx.push_whole(
                    rules::STDIO_EMBEDDED_NEWLINE,
                    place,
                    format!(
                        "{} lines (records {}..={}) on {} form one JSON message: it was written with embedded newlines",
                        n,
                        place.record,
                        place.record + n - 1,
                        dir_stream(dir)
                    ),
                );
                self.lines.drain(..n);
                continue;
            }
            let (_, line) = &self.lines[0];
            cx.push_whole(
                rules::STDIO_NON_JSONRPC_LINE,
                place,
                format!(
                    "line on {} is not JSON: {}",
                    dir_stream(dir),
                    clip(line, 80)
                ),
            );
            self.lines.pop_front();
        }
    }
}

/// Whether `recording-no-exit` fires (and inspect says so): a stdio
/// transcript (HTTP recordings have no exit record by design) whose last line
/// is whole (a cut tail is transcript-truncated) and readable (an unreadable
/// last line, skipped, may be the exit record: the file was not read through),
/// and which has no exit record.
pub(crate) fn ended_without_exit_record(t: &reader::TranscriptRef<'_>) -> bool {
    // Every complete line after the header is a record or a skipped line: the
    // last one was skipped when its number is the count of both plus the header.
    let last_line = 1 + t.records.len() + t.skipped.len();
    let ends_unread = t.skipped.last().is_some_and(|e| e.line == last_line);
    t.header.transport == Transport::Stdio
        && t.dropped.is_none()
        && !ends_unread
        && matches!(t.ending(), reader::Ending::NoExitRecord { .. })
}

/// The message of `recording-no-exit` (check) and of inspect's
/// [`crate::inspect::Item::NoExitRecord`]: [`reader::NO_EXIT_RECORD`], then
/// what it means for a file of `records` whole records.
pub(crate) fn no_exit_message(records: usize) -> String {
    format!(
        "{} ({records} whole record{}, ending on a line boundary: the recorder was killed or the file was cut; \
         the records are complete up to there, the server's exit status is unknown)",
        reader::NO_EXIT_RECORD,
        if records == 1 { "" } else { "s" }
    )
}

/// The rules of one message record; returns the number of messages it held.
/// `scanned` is the envelope scan of `raw` when the reader made it (else it
/// is made here): the one scan of the message, whose ranges the rules read;
/// `pre` what the framing computed of that single message ([`Pre`]), read
/// in place of computing it.
#[allow(clippy::too_many_arguments)]
fn check_message(
    cx: &mut Cx<'_>,
    st: &mut State,
    header: &mcptape_transcript::Header,
    place: Place,
    dir: Direction,
    raw: &str,
    http: Option<&HttpMeta>,
    scanned: Option<&Result<envelope::Scanned, WireError>>,
    pre: Option<&Pre<'_>>,
) -> usize {
    let own;
    let scanned = match scanned {
        Some(s) => s,
        None => {
            own = envelope::scan_frame_str(raw);
            &own
        }
    };
    let env = wireview::envelope_of(scanned);
    if header.transport == Transport::Stdio
        && let Some(at) = wireview::line_break(raw.as_bytes(), scanned)
    {
        cx.push_whole(
            rules::STDIO_EMBEDDED_NEWLINE,
            place,
            format!(
                "message on {} contains a line break at byte {at}",
                dir_stream(dir)
            ),
        );
    }
    let bad_elements = match env {
        // A bad envelope, or a batch with a bad element (`[{"type":"hb"}]`): on an SSE stream
        // the transport's `is_json_rpc` classes either as not JSON-RPC, and so does check.
        Envelope::Bad(_)
            if sse::skip_non_jsonrpc_event(cx, &st.sse, header, place, dir, raw, http) =>
        {
            return 0;
        }
        Envelope::Ok(ref bad)
            if !bad.is_empty()
                && sse::skip_non_jsonrpc_event(cx, &st.sse, header, place, dir, raw, http) =>
        {
            return 0;
        }
        Envelope::Bad(reason) => {
            cx.push_whole(
                rules::MESSAGE_NOT_JSONRPC,
                place,
                format!("not a JSON-RPC 2.0 message: {reason}"),
            );
            return 0;
        }
        Envelope::Ok(bad) => bad,
    };
    if let Ok(envelope::Scanned::Batch(items)) = scanned
        && st.rev >= mcptape_wire::protocol::BATCHES_REMOVED_IN
    {
        cx.push_whole(
            rules::JSONRPC_BATCH_REMOVED,
            place,
            format!(
                "{} sent a JSON-RPC batch of {} message{}; revision {} has no batches (removed in {})",
                match dir {
                    Direction::C2s => "the client",
                    Direction::S2c => "the server",
                },
                items.len(),
                if items.len() == 1 { "" } else { "s" },
                st.rev,
                mcptape_wire::protocol::BATCHES_REMOVED_IN,
            ),
        );
    }
    for (k, reason) in &bad_elements {
        cx.push(
            rules::MESSAGE_NOT_JSONRPC,
            place,
            None,
            format!("/{k}"),
            format!("batch element {k} is not a JSON-RPC 2.0 message: {reason}"),
        );
    }
    let input = raw;
    let mut message = |env: &envelope::Envelope, prefix: &str, pre: Option<&Pre<'_>>| {
        let m = &Msg { input, env };
        st.message(
            cx,
            Seen {
                place,
                dir,
                http,
                m,
                prefix,
                pre,
            },
        );
    };
    match scanned {
        Ok(envelope::Scanned::Single(env)) => {
            message(env, "", pre);
            1
        }
        Ok(envelope::Scanned::Batch(items)) => {
            let mut messages = 0;
            for (k, item) in items.iter().enumerate() {
                let Ok(env) = item else { continue };
                messages += 1;
                message(env, &format!("/{k}"), None);
            }
            messages
        }
        Err(_) => 0,
    }
}

/// `params._meta["io.modelcontextprotocol/protocolVersion"]` when a string.
fn meta_version(m: &Msg<'_, '_>) -> Option<String> {
    m.meta()?
        .get(META_PROTOCOL_VERSION)?
        .as_str()
        .map(str::to_owned)
}

/// If the first `n >= 2` noise lines of `run` join (with `\n`) into one JSON
/// object or array, returns `n` (the shortest such prefix). Brackets are
/// counted outside strings so each line is scanned once and JSON is parsed
/// only when the depth returns to zero.
fn split_message_len(run: &std::collections::VecDeque<(Place, String)>) -> Option<usize> {
    let first = &run.front()?.1;
    let t = first.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    let mut depth = Depth::default();
    if depth.feed(first) {
        return None; // complete on one line: not JSON, or it would be a message
    }
    let mut joined = first.clone();
    for (k, (_, line)) in run
        .iter()
        .enumerate()
        .skip(1)
        .take(MAX_SPLIT_MESSAGE_LINES - 1)
    {
        joined.push('\n');
        joined.push_str(line);
        if depth.feed(line) {
            return mcptape_wire::json::value_from_slice(joined.as_bytes())
                .is_ok()
                .then_some(k + 1);
        }
    }
    None
}

/// Bracket depth of JSON text fed line by line, outside strings.
#[derive(Default)]
struct Depth {
    depth: i64,
    in_string: bool,
    escaped: bool,
    opened: bool,
}

impl Depth {
    /// Feeds one line; true once the outermost bracket has closed.
    fn feed(&mut self, line: &str) -> bool {
        for b in line.bytes() {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    self.opened = true;
                }
                b'}' | b']' => self.depth -= 1,
                _ => {}
            }
            if self.opened && self.depth <= 0 {
                return true;
            }
        }
        false
    }
}

fn dir_stream(dir: Direction) -> &'static str {
    match dir {
        Direction::S2c => "the server's stdout",
        Direction::C2s => "the server's stdin",
    }
}

fn clip(s: &str, max_chars: usize) -> String {
    let mut out: String = s.chars().take(max_chars).collect();
    if s.chars().count() > max_chars {
        out.push('…');
    }
    format!("{out:?}")
}

/// One message as the state machine takes it: where it stands (`place`),
/// who sent it (`dir`), the HTTP exchange that carried it (`http`, none on
/// stdio), its envelope view (`m`) and its JSON Pointer within the record
/// (`prefix`: `""` for a single frame, `"/K"` for batch element K); `pre`:
/// what the framing computed of it ([`Pre`], a single message), if it did.
#[derive(Clone, Copy)]
struct Seen<'s> {
    place: Place,
    dir: Direction,
    http: Option<&'s HttpMeta>,
    m: &'s Msg<'s, 's>,
    prefix: &'s str,
    pre: Option<&'s Pre<'s>>,
}

impl Seen<'_> {
    /// The top-level id as an exact key ([`Msg::id`]), as the framing
    /// computed it when it did.
    fn id(&self) -> Option<IdKey> {
        match self.pre {
            Some(pre) => pre.id.clone(),
            None => self.m.id(),
        }
    }
}

/// Where a finding points in the file.
#[derive(Debug, Clone, Copy)]
struct Place {
    record: usize,
    line: usize,
}

impl Place {
    /// The place of file line `line`: record `line - 1` (the header is line
    /// 1, record 0; every later line is one record, read or skipped).
    fn file_line(line: usize) -> Place {
        Place {
            record: line.saturating_sub(1),
            line,
        }
    }
}

/// What the rules push findings through: the file, the options and the
/// findings' store, borrowed (made per message: nothing moved).
struct Cx<'a> {
    file: &'a str,
    opts: &'a Options,
    findings: &'a mut Findings,
}

impl<'a> Cx<'a> {
    fn new(file: &'a str, opts: &'a Options, findings: &'a mut Findings) -> Cx<'a> {
        Cx {
            file,
            opts,
            findings,
        }
    }

    /// Pushes `ids-differ-only-in-type` for the message `seen`: its `what`
    /// (`"request"` or `"response"`) id `id` has the text of the request id
    /// `other` in the other JSON type (number or string), first sent as
    /// `first_method` at record `first_record`.
    fn push_type_clash(
        &mut self,
        seen: Seen<'_>,
        what: &str,
        id: &IdKey,
        other: &IdKey,
        first_method: &str,
        first_record: usize,
    ) {
        self.push(
            rules::IDS_DIFFER_ONLY_IN_TYPE,
            seen.place,
            Some(id),
            format!("{}/id", seen.prefix),
            format!(
                "{what} id {id} differs only in type from request id {} ({first_method}, record {first_record})",
                other.json()
            ),
        );
    }

    /// Pushes a finding about a whole record or line: no id, and the empty
    /// pointer (RFC 6901: the whole document).
    fn push_whole(&mut self, rule: &Rule, place: Place, message: String) {
        self.push(rule, place, None, String::new(), message);
    }

    /// Pushes a finding; `pointer` and `message` are written straight
    /// into the findings' store ([`Text`]: a tuple of pieces builds no string).
    fn push(
        &mut self,
        rule: &Rule,
        place: Place,
        id: Option<&IdKey>,
        pointer: impl Text,
        message: impl Text,
    ) {
        // Encoded straight into the store: no `Finding`, file name or id
        // string per finding.
        self.findings.push_parts(&findings::Parts {
            rule: rule.id,
            severity: rule.severity,
            allowed: self.opts.allow.contains(rule.id),
            record: place.record,
            line: place.line,
            request_id: id.map(|id| id as &dyn Text),
            pointer: &pointer,
            message: &message,
        });
    }

    /// The finding [`Self::push`] would push.
    fn make(
        &self,
        rule: &Rule,
        place: Place,
        id: Option<&IdKey>,
        pointer: String,
        message: String,
    ) -> Finding {
        Finding {
            rule: rule.id,
            severity: rule.severity,
            allowed: self.opts.allow.contains(rule.id),
            file: self.file.to_owned(),
            record: place.record,
            line: place.line,
            request_id: id.map(IdKey::json),
            pointer,
            message,
        }
    }
}

/// Most answered request keys (sender, id) `check` remembers, 65,536: for
/// `request-answered-twice` and `ids-differ-only-in-type` against a request
/// already answered. Past that the key answered longest ago is forgotten, so
/// memory is bounded by the open requests, not by the length of the session;
/// a late duplicate answer to a forgotten request is `response-unknown-id`,
/// whose message then says so. (The answered keys sit in a ring of this many
/// slots, one per answer: the key whose answer leaves the window is dropped
/// by the answer that takes its slot.)
pub const MAX_ANSWERED_KEYS_KEPT: usize = 1 << 16;

#[derive(Debug)]
struct Pending {
    place: Place,
    /// Batch index of the request within its record (`None`: a single message),
    /// for the JSON pointer of its id ([`Pending::id_ptr`]).
    batch_index: Option<usize>,
    /// HTTP exchange the request was POSTed in (HTTP transcripts).
    exchange: Option<u64>,
    /// Its `http-protocol-version-mismatch` finding and that finding's
    /// sequence number, pushed once the server's answer completes it (or
    /// as it is when no answer does).
    mismatch_finding: Option<Box<(u64, Finding)>>,
    method: MethodName,
    uri: Option<Box<str>>,
    cancelled: bool,
    /// Record of the request of the same sender and id that was still unanswered when this
    /// one was sent (an id reused while open: the answers go to the oldest first), for the
    /// words of `request-unanswered`.
    sent_while_open: Option<usize>,
}

impl Pending {
    /// JSON pointer of the request's id within its record.
    fn id_ptr(&self) -> String {
        match self.batch_index {
            Some(k) => format!("/{k}/id"),
            None => "/id".to_owned(),
        }
    }
}

struct State {
    transport: Transport,
    rev: Revision,
    /// `rev.is_stateless_era()`, asked per result (read once).
    stateless: bool,
    /// Requests by (sender, id): the open ones, and what is remembered of
    /// answered ones (at most [`MAX_ANSWERED_KEYS_KEPT`] keys all answered).
    requests: Requests,
    /// (sender, id type, id text) already reported for ids-differ-only-in-type.
    type_clash_reported: HashSet<(Direction, String)>,
    /// initialize: the version the client offered.
    offered: Option<String>,
    /// initialize: the server chose another version (place, id, offered, chosen); reported once the client goes on.
    init_mismatch: Option<(Place, IdKey, String, String, String)>,
    /// server/discover: supportedVersions.
    supported: Option<Vec<String>>,
    /// URIs seen in resources/list results.
    listed: HashSet<String>,
    /// HTTP exchanges answered with an event stream (`sse-event-not-jsonrpc`).
    sse: sse::SseStreams,
}

/// The side that sent the requests a message going `dir` answers.
fn requester_of(dir: Direction) -> Direction {
    match dir {
        Direction::S2c => Direction::C2s,
        Direction::C2s => Direction::S2c,
    }
}

/// `: "MESSAGE"` (Rust debug-quoted) for an error response's
/// `error.message` string, or nothing when it has none.
fn error_message_suffix(m: &Msg<'_, '_>) -> String {
    m.error_message()
        .map(|t| format!(": {t:?}"))
        .unwrap_or_default()
}

impl State {
    /// Pairs a response that names no usable id with the open (unanswered)
    /// requests of `requester` that `pick` accepts: when there is exactly one,
    /// marks it answered and returns its (id, method, record index);
    /// otherwise `Err` with how many there are (none is marked).
    fn answer_only_open(
        &mut self,
        findings: &mut Findings,
        requester: Direction,
        pick: impl Fn(&Pending) -> bool,
    ) -> Result<(IdKey, MethodName, usize), usize> {
        let mut found = None;
        let mut n = 0;
        for (k, v) in self.requests.iter_open() {
            if k.0 != requester {
                continue;
            }
            for (i, p) in v.open.iter().enumerate() {
                if pick(p) {
                    n += 1;
                    found = Some((k.clone(), i));
                }
            }
        }
        let (Some((k, i)), 1) = (found, n) else {
            return Err(n);
        };
        let mut p = self.requests.take_answered(&k, i).ok_or(0usize)?;
        if let Some(m) = p.mismatch_finding.take() {
            findings.push_at(m.0, m.1);
        }
        Ok((k.1, p.method, p.place.record))
    }

    fn new(transport: Transport, rev: Revision) -> State {
        State {
            transport,
            stateless: rev.is_stateless_era(),
            rev,
            requests: Requests::new(),
            type_clash_reported: HashSet::new(),
            offered: None,
            init_mismatch: None,
            supported: None,
            listed: HashSet::new(),
            sse: sse::SseStreams::default(),
        }
    }

    fn message(&mut self, cx: &mut Cx<'_>, seen: Seen<'_>) {
        let m = seen.m;
        match m.kind() {
            EnvelopeKind::Request => {
                if let (Some(method), Some(id)) = (m.method(), seen.id()) {
                    self.request(cx, seen, &method, id);
                }
            }
            EnvelopeKind::Notification => {
                if let Some(method) = m.method() {
                    self.notification(seen.dir, m, &method);
                }
            }
            EnvelopeKind::Response => {
                if let Some(id) = seen.id() {
                    self.response(cx, seen, Some(&id));
                }
            }
            _ if m.env.id_range.is_some() || m.env.members.id_null => {
                let id = seen.id();
                if id.is_some() || m.env.members.id_null {
                    self.response(cx, seen, id.as_ref());
                }
            }
            _ => self.error_without_id(cx, seen),
        }
    }

    fn request(&mut self, cx: &mut Cx<'_>, seen: Seen<'_>, method: &str, key: IdKey) {
        let (place, dir, http, m, prefix) = (seen.place, seen.dir, seen.http, seen.m, seen.prefix);
        let id = &key;
        // ids-differ-only-in-type between two requests of one sender.
        let other = (dir, key.other_type());
        if let Some((first_method, first_record)) = self
            .requests
            .known(&other)
            .map(|first| (first.first_method.clone(), first.first_record))
            && self
                .type_clash_reported
                .insert((dir, key.text.as_str().to_owned()))
        {
            cx.push_type_clash(seen, "request", id, &other.1, &first_method, first_record);
        }

        let uri = m
            .str_member(&m.env.members.params_uri)
            .map(|u| Box::<str>::from(u.as_ref()));

        let mut mismatch = None;
        if dir == Direction::C2s {
            if method == method::INITIALIZE {
                self.offered = m
                    .str_member(&m.env.members.params_protocol_version)
                    .map(Cow::into_owned);
            } else if let Some((p, iid, offered, chosen, ptr)) = self.init_mismatch.take() {
                cx.push(
                    rules::PROTOCOL_VERSION_NOT_OFFERED,
                    p,
                    Some(&iid),
                    ptr,
                    format!(
                        "the client offered {offered:?} in initialize, the server answered {chosen:?}, and the client went on ({method} at record {})",
                        place.record
                    ),
                );
            }
            let meta_v = meta_version(m);
            let meta_v = meta_v.as_deref();
            if let (Some(v), Some(supported)) = (meta_v, &self.supported)
                && !supported.iter().any(|s| s == v)
            {
                cx.push(
                    rules::PROTOCOL_VERSION_NOT_OFFERED,
                    place,
                    Some(id),
                    format!("{prefix}/params/_meta/{}", mcptape_wire::protocol::escape_token(META_PROTOCOL_VERSION)),
                    format!(
                        "{method} is sent with protocol version {v:?}, which server/discover did not list (supportedVersions {supported:?})"
                    ),
                );
            }
            if let (Some(h), true) = (http, self.stateless)
                && let Some(body_v) = meta_v
            {
                let header = h
                    .headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("mcp-protocol-version"))
                    .map(|(_, v)| v.trim());
                if header != Some(body_v) {
                    let f = cx.make(
                        rules::HTTP_PROTOCOL_VERSION_MISMATCH,
                        place,
                        Some(id),
                        format!("{prefix}/params/_meta/{}", mcptape_wire::protocol::escape_token(META_PROTOCOL_VERSION)),
                        match header {
                            Some(hv) => format!(
                                "{method}: MCP-Protocol-Version header {hv:?} but _meta protocol version {body_v:?} (HTTP exchange {})",
                                h.exchange
                            ),
                            None => format!(
                                "{method}: no MCP-Protocol-Version header but _meta protocol version {body_v:?} (HTTP exchange {})",
                                h.exchange
                            ),
                        },
                    );
                    mismatch = Some(Box::new((cx.findings.reserve(), f)));
                }
            }
        }

        let pending = Pending {
            place,
            batch_index: prefix.strip_prefix('/').and_then(|k| k.parse().ok()),
            exchange: http.map(|h| h.exchange),
            mismatch_finding: mismatch,
            method: method_name(method),
            uri,
            cancelled: false,
            // Set by `Requests::push` when the key is open.
            sent_while_open: None,
        };
        let id_ptr = pending.id_ptr();
        let reused = self
            .requests
            .push((dir, key), method, place.record, pending);
        // A stdio transcript is one session (one connection, MCP lifecycle); over HTTP one
        // transcript holds many sessions and stateless requests the engine does not tell apart.
        if let (Some((first, id)), Transport::Stdio) = (reused, self.transport) {
            cx.push(
                rules::REQUEST_ID_REUSED,
                place,
                Some(id),
                id_ptr,
                format!(
                    "{method} {id} from the {} reuses the id of the request at record {first}, already answered (an id must not be used twice in a session)",
                    match dir {
                        Direction::C2s => "client",
                        Direction::S2c => "server",
                    }
                ),
            );
        }
    }

    /// The client closed the response stream of HTTP exchange `x`: its open
    /// requests count as cancelled.
    fn stream_closed_by_client(&mut self, x: u64) {
        for ((d, _), list) in self.requests.iter_open_mut() {
            if *d == Direction::C2s {
                for p in list.open.iter_mut().filter(|p| p.exchange == Some(x)) {
                    p.cancelled = true;
                }
            }
        }
    }

    fn notification(&mut self, dir: Direction, m: &Msg<'_, '_>, method: &str) {
        if method != method::NOTIFICATIONS_CANCELLED {
            return;
        }
        let Some(token) = m.raw(&m.env.members.params_request_id) else {
            return;
        };
        // The id's raw text, as requests are keyed; another number
        // (`1.0`) as `serde_json` prints it, which no request id matches.
        let Some(key) = IdKey::from_token(token).or_else(|| IdKey::of_number(token)) else {
            return;
        };
        if let Some(list) = self.requests.open_mut(&(dir, key)) {
            for p in &mut list.open {
                p.cancelled = true;
            }
        }
    }

    fn response(&mut self, cx: &mut Cx<'_>, seen: Seen<'_>, id: Option<&IdKey>) {
        let (place, dir, http, m, prefix) = (seen.place, seen.dir, seen.http, seen.m, seen.prefix);
        let requester = requester_of(dir);
        let exchange = http.map(|h| h.exchange);
        let Some(id) = id else {
            // JSON-RPC §5: null only when the request id could not be read.
            // Over HTTP the request of the same exchange is the one answered.
            let Some(x) = exchange else {
                self.error_id_null_unexchanged(cx, seen);
                return;
            };
            if let Ok((rid, method, rec)) =
                self.answer_only_open(cx.findings, requester, |p| p.exchange == Some(x))
            {
                cx.push(
                    rules::ERROR_ID_NULL,
                    place,
                    Some(&rid),
                    format!("{prefix}/id"),
                    format!(
                        "error response with id null in HTTP exchange {x}, which carried {method} with id {rid} (record {rec}){}",
                        error_message_suffix(m)
                    ),
                );
            }
            return;
        };
        let k = (requester, id.clone());
        // One hash of the key for the lookup and the take below.
        let hash = self.requests.hash(&k);
        // Prefer the open request of the same HTTP exchange (ids may repeat
        // across independent 2026-07-28 exchanges), else the oldest open one.
        let found = match self.requests.lookup_hashed(hash, &k) {
            Lookup::Open(list) => Some((
                list.info.last_record,
                list.open
                    .iter()
                    .position(|p| exchange.is_some() && p.exchange == exchange)
                    .or(if list.open.is_empty() { None } else { Some(0) }),
            )),
            Lookup::Answered(info) => Some((info.last_record, None)),
            Lookup::Unknown => None,
        };
        let Some((last_record, pos)) = found else {
            let other = (requester, k.1.other_type());
            if let Some(r) = self.requests.known(&other) {
                cx.push_type_clash(
                    seen,
                    "response",
                    id,
                    &other.1,
                    &r.first_method,
                    r.first_record,
                );
            } else {
                let forgot = if self.requests.forgotten() > 0 {
                    format!(
                        " (or it was answered before the last {MAX_ANSWERED_KEYS_KEPT} answered requests, the most check remembers)"
                    )
                } else {
                    String::new()
                };
                cx.push(
                    rules::RESPONSE_UNKNOWN_ID,
                    place,
                    Some(id),
                    format!("{prefix}/id"),
                    format!("no request with id {id} was sent by the other side{forgot}"),
                );
            }
            return;
        };
        let Some(i) = pos else {
            let first = last_record;
            cx.push(
                rules::REQUEST_ANSWERED_TWICE,
                place,
                Some(id),
                format!("{prefix}/id"),
                format!("request {id} (record {first}) was already answered"),
            );
            return;
        };
        let Some(mut req) = self.requests.take_answered_hashed(hash, &k, i) else {
            return;
        };
        if let Some(mf) = req.mismatch_finding.take() {
            let (seq, mut f) = *mf;
            let status = http.and_then(|h| h.status);
            let verdict = match (status, m.kind() == EnvelopeKind::Error) {
                (Some(400), _) => "the server rejected it with HTTP 400, as required".to_owned(),
                (Some(s), true) => {
                    format!("the server answered a JSON-RPC error with HTTP {s}, not 400")
                }
                (Some(s), false) => {
                    format!("the server accepted it (HTTP {s}) instead of answering 400")
                }
                (None, true) => "the server answered a JSON-RPC error".to_owned(),
                (None, false) => "the server accepted it instead of answering 400".to_owned(),
            };
            f.message.push_str("; ");
            f.message.push_str(&verdict);
            cx.findings.push_at(seq, f);
        }
        if req.cancelled {
            cx.push(
                rules::RESPONSE_AFTER_CANCEL,
                place,
                Some(id),
                format!("{prefix}/id"),
                format!(
                    "response to {} {id} (record {}) after its sender cancelled it",
                    req.method, req.place.record
                ),
            );
        }
        let method = req.method;
        let uri = req.uri;
        if dir != Direction::S2c {
            return;
        }
        if m.kind() == EnvelopeKind::Response {
            self.result(cx, seen, id, &method, uri.as_deref());
        } else if m.kind() == EnvelopeKind::Error
            && &*method == method::RESOURCES_READ
            && let Some(err) = m.error_object()
        {
            self.read_error(cx, place, id, uri.as_deref(), &err, prefix);
        }
    }

    fn result(
        &mut self,
        cx: &mut Cx<'_>,
        seen: Seen<'_>,
        id: &IdKey,
        method: &str,
        uri: Option<&str>,
    ) {
        let (place, m, prefix) = (seen.place, seen.m, seen.prefix);
        if !m.result_is_object() {
            return;
        }
        let members = &m.env.members;
        let stateless = self.stateless;
        let ptr = ResultPtr {
            prefix,
            entry: None,
        };
        let result_type = m.env.result_type(m.input.as_bytes());
        if stateless && members.result_result_type.is_none() {
            cx.push(
                rules::RESULT_MISSING_RESULT_TYPE,
                place,
                Some(id),
                ptr.to_string(),
                format!("{method} result has no resultType (revision {})", self.rev),
            );
        }
        if result_type.as_deref() == Some("input_required") {
            return;
        }
        if stateless && CACHEABLE_METHODS.contains(&method) {
            let missing: Vec<&str> = [
                ("ttlMs", &members.result_ttl_ms),
                ("cacheScope", &members.result_cache_scope),
            ]
            .into_iter()
            .filter(|(_, r)| r.is_none())
            .map(|(k, _)| k)
            .collect();
            if !missing.is_empty() {
                cx.push(
                    rules::RESULT_MISSING_CACHE_HINTS,
                    place,
                    Some(id),
                    ptr.to_string(),
                    format!("{method} result has no {}", missing.join(" and no ")),
                );
            }
        }
        if let Some(ttl) = m.value(&members.result_ttl_ms)
            && ttl.as_u64().is_none()
        {
            cx.push(
                rules::CACHE_HINTS_INVALID,
                place,
                Some(id),
                format!("{ptr}/ttlMs"),
                format!("ttlMs is {ttl}, not a non-negative integer"),
            );
        }
        if let Some(scope) = m.value(&members.result_cache_scope)
            && !matches!(scope.as_str(), Some("public" | "private"))
        {
            cx.push(
                rules::CACHE_HINTS_INVALID,
                place,
                Some(id),
                format!("{ptr}/cacheScope"),
                format!("cacheScope is {scope}, not \"public\" or \"private\""),
            );
        }
        match method {
            method::RESOURCES_READ => {
                self.read_result(cx, place, id, uri, m, ptr, seen.pre);
            }
            method::INITIALIZE | method::SERVER_DISCOVER | "resources/list" => {
                let Some(Value::Object(r)) = m.value(&m.env.result) else {
                    return;
                };
                self.small_result(place, id, method, &r, ptr);
            }
            _ => {}
        }
    }

    /// The results read whole as a `Value` (one each per session): the
    /// handshake's and `resources/list`'s.
    fn small_result(
        &mut self,
        place: Place,
        id: &IdKey,
        method: &str,
        r: &serde_json::Map<String, Value>,
        ptr: ResultPtr<'_>,
    ) {
        match method {
            method::INITIALIZE => {
                let chosen =
                    mcptape_wire::protocol::HandshakeResult::of_object(r).protocol_version();
                if let (Some(off), Some(ch)) = (&self.offered, chosen)
                    && off != ch
                {
                    self.init_mismatch = Some((
                        place,
                        id.clone(),
                        off.clone(),
                        ch.to_owned(),
                        format!("{ptr}/protocolVersion"),
                    ));
                }
            }
            method::SERVER_DISCOVER => {
                if let Some(list) =
                    mcptape_wire::protocol::HandshakeResult::of_object(r).supported_versions()
                {
                    self.supported = Some(list.iter().map(|v| v.as_str().to_owned()).collect());
                }
            }
            _ => {
                if let Some(list) = r.get("resources").and_then(Value::as_array) {
                    for res in list {
                        if let Some(u) = res.get("uri").and_then(Value::as_str) {
                            self.listed.insert(u.to_owned());
                        }
                    }
                }
            }
        }
    }

    /// `pre`: the message's contents as the framing scanned them, if it
    /// did ([`Pre::contents`]).
    #[allow(clippy::too_many_arguments)]
    fn read_result(
        &mut self,
        cx: &mut Cx<'_>,
        place: Place,
        id: &IdKey,
        uri: Option<&str>,
        m: &Msg<'_, '_>,
        ptr: ResultPtr<'_>,
        pre: Option<&Pre<'_>>,
    ) {
        let contents = m.raw(&m.env.members.result_contents);
        // `contents` is read by the wire's scanner (strict JSON, per-entry
        // members, blobs checked in place) from its range in the message.
        let Some(raw) = contents else {
            cx.push(
                rules::READ_RESULT_MALFORMED,
                place,
                Some(id),
                ptr.to_string(),
                "resources/read result has no contents".to_owned(),
            );
            return;
        };
        let own;
        let scanned = match pre.and_then(|p| p.contents.as_ref()) {
            Some(c) => c.as_ref().map(|c| (&c.entries[..], Some(&c.blobs[..]))),
            None => {
                own = wireview::scan_result_contents(m.input, m.env, raw);
                own.as_ref().map(|c| (&c[..], None))
            }
        };
        let (contents, blobs) = match scanned {
            Ok(c) => c,
            Err(e) => {
                let message = match e.kind {
                    mcptape_wire::codec::CodecErrorKind::WrongType { .. } => {
                        format!("contents is {}, not an array", wireview::raw_type(raw))
                    }
                    _ => format!("contents is not strict JSON: {e}"),
                };
                cx.push(
                    rules::READ_RESULT_MALFORMED,
                    place,
                    Some(id),
                    format!("{ptr}/contents"),
                    message,
                );
                return;
            }
        };
        if contents.is_empty() {
            let listed = match uri {
                Some(u) if self.listed.contains(u) => "it was listed by resources/list",
                Some(_) if self.listed.is_empty() => "no resources/list result was seen",
                Some(_) => "it is not in any resources/list result (a missing resource)",
                None => "the request had no uri",
            };
            cx.push(
                rules::READ_EMPTY_CONTENTS,
                place,
                Some(id),
                format!("{ptr}/contents"),
                format!(
                    "resources/read of {} answered with contents: [] ({listed}); absence is error -32602 with data.uri, a blank resource is one entry with text \"\"",
                    uri.map_or_else(|| "?".to_owned(), |u| format!("{u:?}"))
                ),
            );
            return;
        }
        for (i, entry) in contents.iter().enumerate() {
            let eptr = ResultPtr {
                entry: Some(entry.index),
                ..ptr
            };
            let verdict = blobs.and_then(|b| b.get(i).copied());
            self.entry(cx, place, id, entry, eptr, verdict);
        }
    }

    /// The entry rules, on the wire scanner's result: each issue kind the
    /// scanner reports maps to one rule (entry index → JSON Pointer).
    /// `verdict`: its blob's verdict as the framing computed it
    /// ([`pre::Contents::blobs`]; `Some(None)`: it has none to compute),
    /// `None` when it did not.
    fn entry(
        &mut self,
        cx: &mut Cx<'_>,
        place: Place,
        id: &IdKey,
        e: &ScannedEntry<'_>,
        eptr: ResultPtr<'_>,
        verdict: Option<Option<pre::BlobVerdict>>,
    ) {
        let entry_uri = e.uri.as_str().unwrap_or("?");
        let found = |m: &Member<'_>| match m {
            Member::Other { found, .. } => found.with_article(),
            _ => "a string",
        };
        let mut bad_field = false;
        for (kind, _offset) in e.issues() {
            match kind {
                ContentsErrorKind::EntryNotObject => cx.push(
                    rules::READ_RESULT_MALFORMED,
                    place,
                    Some(id),
                    eptr.to_string(),
                    format!(
                        "contents entry is {}, not an object",
                        e.found.with_article()
                    ),
                ),
                ContentsErrorKind::UriNotString => cx.push(
                    rules::CONTENTS_MISSING_URI,
                    place,
                    Some(id),
                    format!("{eptr}/uri"),
                    format!("uri is {}, not a string", found(&e.uri)),
                ),
                ContentsErrorKind::MissingUri => cx.push(
                    rules::CONTENTS_MISSING_URI,
                    place,
                    Some(id),
                    eptr.to_string(),
                    "contents entry has no uri".to_owned(),
                ),
                ContentsErrorKind::NotAString { field } => {
                    bad_field = true;
                    let m = match field {
                        "text" => &e.text,
                        "blob" => &e.blob,
                        _ => &e.mime_type,
                    };
                    cx.push(
                        rules::READ_RESULT_MALFORMED,
                        place,
                        Some(id),
                        format!("{eptr}/{field}"),
                        format!("{field} is {}, not a string", found(m)),
                    );
                }
                ContentsErrorKind::BothTextAndBlob => {
                    cx.push(
                        rules::CONTENTS_TEXT_AND_BLOB,
                        place,
                        Some(id),
                        eptr.to_string(),
                        format!("entry {entry_uri:?} has both text and blob"),
                    );
                    return;
                }
                ContentsErrorKind::NeitherTextNorBlob => {
                    cx.push(
                        rules::CONTENTS_NEITHER_TEXT_NOR_BLOB,
                        place,
                        Some(id),
                        eptr.to_string(),
                        format!("entry {entry_uri:?} has neither text nor blob"),
                    );
                    return;
                }
                ContentsErrorKind::InvalidBase64(_) if !bad_field => {
                    // Said of the blob as recorded (offset from the byte after its
                    // opening quote, escapes as written): `RecordedBase64Error`.
                    let Some(bad) = e.blob_error_as_recorded() else {
                        continue;
                    };
                    cx.push(
                        rules::BLOB_NOT_CANONICAL_BASE64,
                        place,
                        Some(id),
                        format!("{eptr}/blob"),
                        format!(
                            "entry {entry_uri:?}: blob is not canonical base64 at byte {}: {bad}",
                            bad.offset
                        ),
                    );
                    return;
                }
                _ => {}
            }
        }
        if bad_field {
            return;
        }
        // The text is unescaped only when its first bytes may start a data URI.
        let text = match &e.text {
            Member::Raw { token, .. } if !wireview::text_may_be_data_uri(token) => None,
            m => m.decode(),
        };
        if let Some(t) = text
            && wireview::text_is_data_uri(&t)
        {
            cx.push(
                rules::DATA_URI_IN_TEXT,
                place,
                Some(id),
                format!("{eptr}/text"),
                format!(
                    "entry {entry_uri:?} ships a data: URI ({} chars) in text; send the bytes as blob",
                    t.len()
                ),
            );
        }
        if let (Some(b), Some(Ok(n))) = (e.blob.as_str(), &e.blob_check) {
            self.blob_rules(
                cx,
                place,
                id,
                eptr,
                entry_uri,
                e.mime_type.as_str(),
                b,
                *n,
                verdict.flatten(),
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn blob_rules(
        &self,
        cx: &mut Cx<'_>,
        place: Place,
        id: &IdKey,
        eptr: ResultPtr<'_>,
        entry_uri: &str,
        mime: Option<&str>,
        b64: &str,
        decoded_len: usize,
        verdict: Option<pre::BlobVerdict>,
    ) {
        let n = decoded_len as u64;
        let uri_q = Quoted(entry_uri);
        if n > cx.opts.blob_threshold_bytes {
            cx.push(
                rules::BLOB_OVER_SIZE_THRESHOLD,
                place,
                Some(id),
                (eptr, "/blob"),
                (
                    ("entry ", uri_q, ": blob of ", n, " bytes ("),
                    4 * n.div_ceil(3),
                    " base64 chars) is over the ",
                    cx.opts.blob_threshold_bytes,
                    "-byte threshold; publish a derived resource",
                ),
            );
        }
        if let Some(declared) = mime {
            let declared_q = Quoted(declared);
            // As the framing computed it, else here.
            let verdict = verdict.unwrap_or_else(|| pre::BlobVerdict::of(declared, b64));
            if let Some(sniffed) = verdict.sniffed {
                cx.push(
                    rules::MIMETYPE_SNIFF_MISMATCH,
                    place,
                    Some(id),
                    (eptr, "/mimeType"),
                    (
                        "entry ",
                        uri_q,
                        ": declared ",
                        declared_q,
                        " but the bytes look like ",
                        Quoted(sniffed),
                    ),
                );
            }
            if verdict.textlike_utf8 {
                cx.push(
                    rules::TEXTLIKE_MIMETYPE_AS_BLOB,
                    place,
                    Some(id),
                    (eptr, "/blob"),
                    (
                        "entry ",
                        uri_q,
                        ": ",
                        declared_q,
                        " content that is valid UTF-8 (",
                        n,
                        " bytes) shipped as blob; send it as text",
                    ),
                );
            }
        }
    }

    fn read_error(
        &mut self,
        cx: &mut Cx<'_>,
        place: Place,
        id: &IdKey,
        uri: Option<&str>,
        err: &ErrorObject,
        prefix: &str,
    ) {
        let Some(nf) = crate::notfound::classify(err) else {
            return;
        };
        let stateless = self.stateless;
        match nf {
            NotFound::Legacy if stateless => cx.push(
                rules::NOT_FOUND_CODE,
                place,
                Some(id),
                format!("{prefix}/error/code"),
                format!(
                    "resource not found answered with legacy code -32002 under {}; use -32602 with data.uri",
                    self.rev
                ),
            ),
            NotFound::Guessed(code) => {
                cx.push(
                    rules::NOT_FOUND_GUESSED_FROM_MESSAGE,
                    place,
                    Some(id),
                    (prefix, "/error/message"),
                    (
                        "the message says not found but code ",
                        code,
                        if code == -32602 { " without data.uri" } else { "" },
                        " does not: guessed, not checked as a not-found; if the resource is missing use -32602 with data.uri",
                        if stateless { "" } else { " (or legacy -32002)" },
                    ),
                );
                return;
            }
            _ => {}
        }
        let ptr = format!("{prefix}/error");
        match err.data.as_ref().and_then(|d| d.get("uri")) {
            Some(Value::String(du)) => {
                if let Some(u) = uri
                    && du != u
                {
                    cx.push(
                        rules::NOT_FOUND_DATA_URI,
                        place,
                        Some(id),
                        format!("{ptr}/data/uri"),
                        format!("data.uri {du:?} differs from the requested uri {u:?}"),
                    );
                }
            }
            other => {
                if stateless {
                    cx.push(
                        rules::NOT_FOUND_DATA_URI,
                        place,
                        Some(id),
                        if err.data.is_some() {
                            format!("{ptr}/data")
                        } else {
                            ptr.clone()
                        },
                        match other {
                            Some(v) => format!("data.uri is {}, not a string", json_type(v)),
                            None => format!(
                                "not-found error for {} has no data.uri",
                                uri.map_or_else(|| "?".to_owned(), |u| format!("{u:?}"))
                            ),
                        },
                    );
                }
            }
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) {
        // Mismatch findings no answer completed, as they were found.
        for (_, list) in self.requests.iter_open_mut() {
            for p in &mut list.open {
                if let Some(m) = p.mismatch_finding.take() {
                    cx.findings.push_at(m.0, m.1);
                }
            }
        }
        // Keys in the order first seen, each key's requests in order.
        let mut open: Vec<(u64, usize, &(Direction, IdKey), &Pending)> = self
            .requests
            .iter_open()
            .flat_map(|(k, list)| {
                list.open
                    .iter()
                    .enumerate()
                    .map(move |(i, p)| (list.info.key_seq, i, k, p))
            })
            .filter(|(_, _, _, p)| !p.cancelled)
            .collect();
        open.sort_by_key(|(seq, i, _, _)| (*seq, *i));
        for (_, _, key, p) in open {
            let sender = key.0;
            cx.push(
                rules::REQUEST_UNANSWERED,
                p.place,
                Some(&key.1),
                p.id_ptr(),
                format!(
                    "{} {} from the {} got no response and was not cancelled{}{}",
                    p.method,
                    key.1,
                    match sender {
                        Direction::C2s => "client",
                        Direction::S2c => "server",
                    },
                    if self.transport == Transport::Http {
                        ""
                    } else {
                        " before the transcript ended"
                    },
                    match p.sent_while_open {
                        Some(r) => format!(
                            "; it was sent with the id of the request at record {r}, still unanswered then (an id in use must not be sent again: the answer went to the first)"
                        ),
                        None => String::new(),
                    }
                ),
            );
        }
    }
}

/// A string as `{:?}` writes it, in one piece when nothing in it is
/// escaped (printable ASCII other than `"` and `\`): the hot rules' messages
/// quote a uri or media type per finding.
#[derive(Clone, Copy)]
struct Quoted<'a>(&'a str);

/// Whether `{:?}` of `s` is `s` between double quotes: every byte
/// printable ASCII other than `"` and `\\` (nothing escaped).
fn debug_is_quoted(s: &str) -> bool {
    // Every byte tested, no early exit: the loop vectorizes.
    s.bytes().fold(true, |plain, b| {
        plain & matches!(b, b' '..=b'~') & (b != b'"') & (b != b'\\')
    })
}

/// Pushes `{:?}` of `s` to `o`: in pieces when nothing in it is escaped
/// ([`Quoted`]'s rule), else through the formatter.
pub(crate) fn push_debug_str(o: &mut String, s: &str) {
    if debug_is_quoted(s) {
        o.push('"');
        o.push_str(s);
        o.push('"');
    } else {
        use std::fmt::Write as _;
        let _ = write!(o, "{s:?}");
    }
}

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if debug_is_quoted(self.0) {
            f.write_str("\"")?;
            f.write_str(self.0)?;
            f.write_str("\"")
        } else {
            write!(f, "{:?}", self.0)
        }
    }
}

impl Text for Quoted<'_> {
    fn put(&self, out: &mut Vec<u8>) {
        if debug_is_quoted(self.0) {
            out.push(b'"');
            out.extend_from_slice(self.0.as_bytes());
            out.push(b'"');
        } else {
            Fmt(format_args!("{:?}", self.0)).put(out);
        }
    }
}

/// The JSON Pointer of a message's `result` (`{prefix}/result`) or of one
/// entry of its `contents` (`{prefix}/result/contents/{i}`), written only
/// when a finding needs it.
#[derive(Clone, Copy)]
struct ResultPtr<'a> {
    prefix: &'a str,
    entry: Option<usize>,
}

impl std::fmt::Display for ResultPtr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.entry {
            Some(i) => write!(f, "{}/result/contents/{i}", self.prefix),
            None => write!(f, "{}/result", self.prefix),
        }
    }
}

impl Text for ResultPtr<'_> {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.prefix.as_bytes());
        out.extend_from_slice(b"/result");
        if let Some(i) = self.entry {
            out.extend_from_slice(b"/contents/");
            i.put(out);
        }
    }
}

/// A request's method as held until it is answered: the methods of MCP
/// borrowed from [`method`] (no allocation per request), any other owned.
type MethodName = Cow<'static, str>;

fn method_name(m: &str) -> MethodName {
    use method::*;
    const KNOWN: [&str; 18] = [
        RESOURCES_READ,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        RESOURCES_SUBSCRIBE,
        RESOURCES_UNSUBSCRIBE,
        INITIALIZE,
        SERVER_DISCOVER,
        PING,
        LOGGING_SET_LEVEL,
        TOOLS_CALL,
        TOOLS_LIST,
        PROMPTS_GET,
        PROMPTS_LIST,
        COMPLETION_COMPLETE,
        SAMPLING_CREATE_MESSAGE,
        ROOTS_LIST,
        ELICITATION_CREATE,
        NOTIFICATIONS_CANCELLED,
    ];
    KNOWN
        .iter()
        .find(|k| **k == m)
        .map_or_else(|| Cow::Owned(m.to_owned()), |k| Cow::Borrowed(*k))
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod quoted_tests {
    use super::{Fmt, IdKey, Quoted, ResultPtr, Text, push_debug_str};

    /// `Quoted` writes what `{:?}` writes, on strings it writes in one piece
    /// and on strings `Debug` escapes (quote, backslash, controls, DEL,
    /// non-ASCII, a single quote `Debug` leaves as is).
    #[test]
    fn quoted_is_debug_of_the_string() {
        for s in [
            "",
            "demo://resource/dynamic/blob/1",
            "text/plain; charset=utf-8",
            " ~!#$%&()*+,-./:;<=>?@[]^_`{|}",
            "a\"b",
            "a\\b",
            "it's",
            "tab\there",
            "line\n",
            "\u{7f}",
            "\u{0}x",
            "caf\u{e9}",
            "\u{301}accent first",
            "\u{200b}zero width",
        ] {
            assert_eq!(Quoted(s).to_string(), format!("{s:?}"), "{s:?}");
            let mut put = Vec::new();
            Quoted(s).put(&mut put);
            assert_eq!(String::from_utf8(put).unwrap(), format!("{s:?}"), "{s:?}");
            let mut pushed = String::new();
            push_debug_str(&mut pushed, s);
            assert_eq!(pushed, format!("{s:?}"), "{s:?}");
        }
    }

    /// A finding's texts written piece by piece are what `format!` writes.
    #[test]
    fn texts_put_what_display_writes() {
        let text = |t: &dyn Text| {
            let mut out = Vec::new();
            t.put(&mut out);
            String::from_utf8(out).unwrap()
        };
        for (prefix, entry) in [("", None), ("/3", Some(0)), ("", Some(12_345))] {
            let p = ResultPtr { prefix, entry };
            assert_eq!(text(&p), p.to_string());
        }
        for n in [0u64, 7, 10, 18_446_744_073_709_551_615] {
            assert_eq!(text(&(n, "/", n as usize)), format!("{n}/{n}"));
        }
        for code in [0i64, -32602, i64::MIN, i64::MAX] {
            assert_eq!(text(&("code ", code)), format!("code {code}"));
        }
        for t in [r#""a\"b""#, "7", "-3", r#""""#] {
            let id = IdKey::from_token(t).unwrap();
            assert_eq!(text(&id), id.to_string());
        }
        assert_eq!(text(&Fmt(format_args!("{:?}", "x\n"))), r#""x\n""#);
    }
}

#[cfg(test)]
mod line_source_tests {
    use super::*;

    fn all<S: LineSource>(mut s: S) -> Vec<(Vec<u8>, bool, usize, usize)> {
        let mut out = Vec::new();
        while let Some(t) = s.advance().unwrap() {
            out.push((s.line().to_vec(), t, s.line_no(), s.offset()));
        }
        out
    }

    /// Inputs at the edges of line cutting: none, an empty line, empty
    /// lines, `\r`, an unterminated tail, no line end at all (17 bytes), a
    /// line longer than a small reader's buffer (38 bytes).
    const EDGES: [&[u8]; 6] = [
        b"",
        b"\n",
        b"a\n\nbc\r\nd",
        b"one\ntwo\n",
        b"no newline at all",
        b"a line longer than the reader's buffer\nx\n\n",
    ];

    /// Both sources cut the same lines (empty lines, `\r`, an unterminated
    /// tail) with the same numbers and offsets.
    #[test]
    fn slice_and_buffered_lines_agree() {
        for text in EDGES {
            let sliced = all(SliceLines::new(text, None));
            for capacity in [1, 2, 3, 64] {
                let buffered = all(BufLines::new(std::io::BufReader::with_capacity(
                    capacity, text,
                )));
                assert_eq!(sliced, buffered, "{:?}", String::from_utf8_lossy(text));
            }
        }
        assert_eq!(
            all(SliceLines::new(b"a\n\nbc\r\nd", None)),
            vec![
                (b"a".to_vec(), true, 1, 0),
                (Vec::new(), true, 2, 2),
                (b"bc\r".to_vec(), true, 3, 3),
                (b"d".to_vec(), false, 4, 7),
            ]
        );
    }

    /// `release` is told, once per step, the first byte of the line being read
    /// (lines of half a step: steps start at lines 3 and 5).
    #[test]
    fn slice_lines_release_what_lies_behind_each_step() {
        let step = 1000;
        let line = vec![b'x'; step / 2 - 1];
        let mut text = Vec::new();
        for _ in 0..5 {
            text.extend_from_slice(&line);
            text.push(b'\n');
        }
        let told = std::sync::Mutex::new(Vec::new());
        let release = |from: usize, upto: usize| told.lock().unwrap().push((from, upto));
        let mut s = SliceLines::new(&text, Some(&release)).with_step(step);
        let mut n = 0;
        while s.advance().unwrap().is_some() {
            assert_eq!(s.line().len(), line.len());
            n += 1;
        }
        assert_eq!(n, 5);
        assert_eq!(*told.lock().unwrap(), vec![(0, step), (step, 2 * step)]);
    }

    /// What `for_each_line` gives (each line's number, offset, end, bytes,
    /// record or error, scan; or only the first four, for a line of
    /// `frame_below` bytes or more), up to line `stop` (its `each` breaks
    /// there), the source's line and offset after it, and what `release`
    /// was told.
    type Seen = (Vec<String>, (usize, usize), Vec<(usize, usize)>);

    fn framed(
        text: &[u8],
        shape: Option<pipeline::Shape>,
        frame_below: usize,
        stop: usize,
    ) -> Seen {
        let told = std::sync::Mutex::new(Vec::new());
        let release = |from: usize, upto: usize| told.lock().unwrap().push((from, upto));
        let mut s = SliceLines::new(text, Some(&release)).with_step(20);
        if let Some(shape) = shape {
            s = s.with_pipe(shape);
        }
        let mut seen = Vec::new();
        s.for_each_line(frame_below, Prep::Rules, &mut |l| {
            let (cut, framing) = match l {
                Line::Framed(f) => (
                    Cut {
                        line_no: f.line_no,
                        offset: f.offset,
                        terminated: f.terminated,
                        line: f.line,
                    },
                    format!("{:?} {:?} {:?}", f.parsed, f.scanned, f.pre),
                ),
                Line::Long(cut) => (cut, "long".to_owned()),
            };
            seen.push(format!("{cut:?} {framing}"));
            if cut.line_no == stop {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
        let at = (s.line_no(), s.offset());
        let told = told.lock().unwrap().clone();
        (seen, at, told)
    }

    /// The pipeline gives the lines the plain loop gives, framed alike (or
    /// not, from `frame_below` bytes on), in order; stops where `each`
    /// breaks; leaves the source on the same line; tells `release` the same
    /// ranges (never past the line given).
    #[test]
    fn pipelined_framing_equals_the_plain_loop() {
        let msg = br#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#;
        let mut text = Vec::new();
        for i in 0..9 {
            text.extend_from_slice(msg);
            text.push(b'\n');
            if i % 3 == 1 {
                text.extend_from_slice(b"not a record\n\n");
            }
        }
        let tail = b"{\"tUs\":2,\"kind\":\"mess";
        text.extend_from_slice(tail);
        let plain = framed(&text, None, usize::MAX, 0);
        assert_eq!(plain.0.len(), 9 + 3 * 2 + 1);
        assert_eq!(plain.1, (16, text.len() - tail.len()));
        // At the start of the lines after each message line (89 bytes, over
        // the 20-byte step), the last one the cut tail.
        assert_eq!(plain.2.len(), 9);
        assert_eq!(
            plain.2.last(),
            Some(&(plain.2[7].1, text.len() - tail.len()))
        );
        let long = framed(&text, None, 21, 0);
        assert_eq!(long.0.iter().filter(|l| l.ends_with(" long")).count(), 10);
        for shape in pipeline::TEST_SHAPES {
            for frame_below in [usize::MAX, 21, 0] {
                for stop in [0, 1, 2, 7, 15, 16] {
                    let plain = framed(&text, None, frame_below, stop);
                    assert_eq!(plain.0.len(), if stop == 0 { 16 } else { stop });
                    assert_eq!(
                        framed(&text, Some(shape), frame_below, stop),
                        plain,
                        "{shape:?} {frame_below} {stop}"
                    );
                }
            }
        }
        for text in EDGES {
            for shape in pipeline::TEST_SHAPES {
                for frame_below in [usize::MAX, 1, 0] {
                    assert_eq!(
                        framed(text, Some(shape), frame_below, 0),
                        framed(text, None, frame_below, 0)
                    );
                }
            }
        }
    }

    /// Lines framed in place over recycled batch slots (`Framed::frame_into`
    /// over whatever line a slot held) equal lines framed afresh
    /// (`Framed::frame`): every line of the corpus, its record and its scan,
    /// in two test batch shapes (batches of varying lengths reuse slots
    /// that held other kinds of lines), and slot by slot.
    #[test]
    fn framing_in_place_equals_a_fresh_frame() {
        let mut all = Vec::new();
        for f in pipeline::corpus_transcripts() {
            for text in pipeline::cut_and_unreadable(std::fs::read(f).unwrap()) {
                all.extend_from_slice(&text);
                if !text.ends_with(b"\n") {
                    all.push(b'\n');
                }
            }
        }
        let plain = framed(&all, None, usize::MAX, 0);
        assert!(plain.0.len() > 1000, "{} lines", plain.0.len());
        // Batches of 3 lines, and batches ended by a 40-byte bound (of
        // varying lengths: slots framed over lines of other kinds).
        for shape in [pipeline::TEST_SHAPES[1], pipeline::TEST_SHAPES[2]] {
            assert_eq!(
                framed(&all, Some(shape), usize::MAX, 0).0,
                plain.0,
                "{shape:?}"
            );
        }
        // Slot by slot, over every earlier line, against the record and
        // scan as the reader and `scan_strict` give them on their own.
        let lines: Vec<&[u8]> = all.split(|&b| b == b'\n').collect();
        let mut slot = Framed::frame(b"", 1, 0, true, Prep::Nothing);
        for (i, line) in lines.iter().enumerate() {
            // What the rules read computed on every third line: a slot that
            // held it and frames a line without it holds none.
            let prep = if i % 3 == 0 {
                Prep::Rules
            } else {
                Prep::Nothing
            };
            slot.frame_into(line, i + 2, i, i % 2 == 0, prep);
            assert_eq!(
                slot.pre,
                Framed::frame(line, i + 2, i, i % 2 == 0, prep).pre,
                "line {i}"
            );
            let mut scanned = None;
            let parsed =
                reader::parse_record_line(line, i + 2, i, |m| scan_strict(m, &mut scanned));
            assert_eq!(
                format!("{:?} {:?}", slot.parsed, slot.scanned),
                format!("{parsed:?} {scanned:?}")
            );
            assert_eq!(
                (slot.line_no, slot.offset, slot.terminated, slot.line),
                (i + 2, i, i % 2 == 0, *line)
            );
        }
    }

    /// `check_stream` over the pipeline reports what it reports over the
    /// plain loop: every transcript of the corpus (with `--spec auto` and a
    /// fixed revision: with and without a first pass), each also cut in the
    /// middle of its last record and with an unreadable line in its middle.
    #[test]
    fn pipelined_check_equals_the_plain_loop() {
        let files = pipeline::corpus_transcripts();
        assert!(files.len() > 40, "{} corpus transcripts", files.len());
        let fixed = Options {
            spec: SpecChoice::Fixed(Revision::v2026_07_28()),
            ..Options::default()
        };
        let (mut cut, mut skipped) = (0, 0);
        for f in &files {
            let variants = pipeline::cut_and_unreadable(std::fs::read(f).unwrap());
            for (v, text) in variants.iter().enumerate() {
                for opts in [&Options::default(), &fixed] {
                    let run_with = |shape: Option<pipeline::Shape>, prep: Option<Prep>| {
                        let mut open = || {
                            let mut s = SliceLines::new(text, None);
                            if let Some(prep) = prep {
                                s = s.with_prep(prep);
                            }
                            Ok(match shape {
                                Some(shape) => s.with_pipe(shape),
                                None => s,
                            })
                        };
                        let (head, rest) = check_stream("t.jsonl", &mut open, opts).unwrap();
                        whole_report(head, rest).unwrap()
                    };
                    let run = |shape| run_with(shape, None);
                    let plain = run(None);
                    // What the framing computes for the rules, on every
                    // line or on none, changes nothing.
                    for prep in [Prep::Rules, Prep::Nothing] {
                        assert_eq!(run_with(None, Some(prep)), plain, "{} {v}", f.display());
                        let shape = Some(pipeline::TEST_SHAPES[1]);
                        assert_eq!(run_with(shape, Some(prep)), plain, "{} {v}", f.display());
                    }
                    cut += usize::from(
                        v == 1
                            && plain
                                .findings
                                .iter()
                                .any(|f| f.rule == rules::TRANSCRIPT_TRUNCATED.id),
                    );
                    skipped += usize::from(
                        v == 2
                            && plain
                                .findings
                                .iter()
                                .any(|f| f.rule == rules::TRANSCRIPT_UNREADABLE.id),
                    );
                    // One line a batch (the stages' closest interleaving),
                    // and long lines left to stage 2.
                    for shape in [pipeline::TEST_SHAPES[0], pipeline::TEST_SHAPES[3]] {
                        assert_eq!(run(Some(shape)), plain, "{} {v} {shape:?}", f.display());
                    }
                }
            }
        }
        // The cut and unreadable variants were read as such (both options).
        assert!(cut > 40 && skipped > 40, "cut {cut}, skipped {skipped}");
    }

    /// A line in a reader past `BufLines`' limit: the lines around it as
    /// `SliceLines` cuts them; it is given empty, with its real length, and
    /// nothing of it is kept (the buffer never holds more than the limit):
    /// in the reader's buffer, straddling refills, unterminated at the end.
    #[test]
    fn buf_lines_line_at_the_limit_is_kept_one_past_is_too_long() {
        let limit = 10;
        let at = vec![b'x'; limit];
        let past = vec![b'y'; limit + 1];
        let far = vec![b'z'; limit * 7 + 3];
        let text = [
            &b"abc\n"[..],
            &at,
            b"\n",
            &past,
            b"\nd\n",
            &far,
            b"\n",
            &past,
        ]
        .concat();
        for capacity in [1, 3, 4, 16, 64] {
            let mut s = BufLines::new(std::io::BufReader::with_capacity(capacity, &text[..]))
                .with_max_line(limit);
            let mut seen = Vec::new();
            while let Some(terminated) = s.advance().unwrap() {
                assert!(s.buf.capacity() <= limit, "capacity {capacity}");
                seen.push((
                    s.line().to_vec(),
                    terminated,
                    s.line_no(),
                    s.offset(),
                    s.over_limit(),
                ));
            }
            let offsets = [0, 4, 15, 27, 29, 103];
            let want = vec![
                (b"abc".to_vec(), true, 1, offsets[0], None),
                (at.clone(), true, 2, offsets[1], None),
                (Vec::new(), true, 3, offsets[2], Some((limit + 1, limit))),
                (b"d".to_vec(), true, 4, offsets[3], None),
                (Vec::new(), true, 5, offsets[4], Some((far.len(), limit))),
                (Vec::new(), false, 6, offsets[5], Some((limit + 1, limit))),
            ];
            assert_eq!(seen, want, "capacity {capacity}");
            assert_eq!(offsets[5] + past.len(), text.len());
        }
    }

    /// A record line over the limit read from a stream: one
    /// `transcript-unreadable` finding with its line, offset, the limit and
    /// its real length (not `message-not-jsonrpc`), and the records after it
    /// are checked; a line at the limit is read as a record. Also as the
    /// header, and as an unterminated last line (too long, not cut).
    #[test]
    fn check_stream_line_over_the_limit_is_skipped_as_too_long() {
        let header = br#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["srv"]},"startedAt":"2026-11-30T00:00:00Z"}"#;
        let ping = |id: usize, pad: usize| {
            format!(
                r#"{{"tUs":1,"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"x":"{}"}}}}}}"#,
                "a".repeat(pad)
            )
            .into_bytes()
        };
        let limit = ping(1, 0).len() + 100;
        let at = ping(2, 100);
        assert_eq!(at.len(), limit);
        let past = ping(3, 101);
        let answer =
            br#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{}}}"#;
        let exit = br#"{"tUs":3,"kind":"exit","code":0}"#;
        // 2025-11-25: an answer needs no `resultType`.
        let opts = Options {
            spec: SpecChoice::Fixed(Revision::v2025_11_25()),
            ..Options::default()
        };
        let run = |text: &[u8], opts: &Options| {
            let mut open = || {
                Ok(BufLines::new(std::io::BufReader::with_capacity(16, text)).with_max_line(limit))
            };
            let (head, rest) = check_stream("t.jsonl", &mut open, opts).unwrap();
            whole_report(head, rest).unwrap()
        };
        let lines: [&[u8]; 5] = [header, &at, &past, answer, exit];
        let mut text = lines.join(&b"\n"[..]);
        text.push(b'\n');
        let past_offset = header.len() + 1 + at.len() + 1;
        // With a first pass (`--spec auto`, 2026-07-28 assumed) and without.
        for opts in [&opts, &Options::default()] {
            let r = run(&text, opts);
            let rules: Vec<&str> = r
                .findings
                .iter()
                .map(|f| f.rule)
                .filter(|&r| r != "result-missing-resultType")
                .collect();
            assert_eq!(rules, [rules::TRANSCRIPT_UNREADABLE.id], "{:?}", r.findings);
            assert_eq!(
                r.findings[0].message,
                format!(
                    "record line skipped: transcript line 3 (byte offset {past_offset}): line longer than the limit of {limit} bytes (the line is {} bytes)",
                    past.len()
                )
            );
            assert_eq!((r.records, r.messages), (3, 2));
        }
        // Unterminated at the end: too long, not a cut record.
        let cut = [&text[..past_offset], &past[..past.len() - 1], b"a"].concat();
        let r = run(&cut, &opts);
        let rules: Vec<&str> = r.findings.iter().map(|f| f.rule).collect();
        // Request 2's answer was after it.
        assert_eq!(
            rules,
            [
                rules::REQUEST_UNANSWERED.id,
                rules::TRANSCRIPT_UNREADABLE.id
            ],
            "{:?}",
            r.findings
        );
        assert!(r.findings[1].message.contains("line longer than the limit"));
        // The header.
        let long_header = [&vec![b' '; limit + 1][..], b"\n"].concat();
        let r = run(&long_header, &opts);
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].rule, rules::TRANSCRIPT_UNREADABLE.id);
        assert_eq!(
            r.findings[0].message,
            format!(
                "transcript line 1 (byte offset 0): line longer than the limit of {limit} bytes (the line is {} bytes)",
                limit + 1
            )
        );
    }

    /// A line in memory (a mapped file, `check_bytes`) over [`MAX_LINE_BYTES`]
    /// is framed as too long, unread, as a reader gives it; one at the limit
    /// is read as a record (these bytes are not one). The zeros are never
    /// written: the pages stay unmapped.
    #[test]
    fn line_in_memory_at_the_limit_is_read_one_past_is_too_long() {
        assert_eq!(MAX_LINE_BYTES, 256 * 1024 * 1024);
        let past = vec![0u8; MAX_LINE_BYTES + 1];
        let f = Framed::frame(&past, 2, 7, true, Prep::Rules);
        let e = f.parsed.as_ref().unwrap_err();
        assert_eq!(
            (e.kind.clone(), e.line, e.offset, f.len),
            (
                reader::ErrorKind::LineTooLong {
                    limit: MAX_LINE_BYTES
                },
                2,
                7,
                MAX_LINE_BYTES + 1
            )
        );
        let mut s = SliceLines::new(&past, None);
        s.advance().unwrap();
        assert_eq!(s.over_limit(), Some((MAX_LINE_BYTES + 1, MAX_LINE_BYTES)));
        let at = &past[..MAX_LINE_BYTES];
        let mut s = SliceLines::new(at, None);
        s.advance().unwrap();
        assert_eq!(s.over_limit(), None);
        let f = Framed::frame(at, 2, 7, true, Prep::Rules);
        let e = f.parsed.as_ref().unwrap_err();
        assert!(
            !matches!(e.kind, reader::ErrorKind::LineTooLong { .. }),
            "{e}"
        );
    }
}
