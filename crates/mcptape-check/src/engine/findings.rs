//! The findings of one transcript as they are found, held in bounded memory:
//! at most [`SPILL_CHUNK_FINDINGS`] in memory, the rest written to an
//! anonymous temporary file in sorted runs and merged back in report order
//! ([`Findings::into_sorted`]). Report order is `(record, line)`, ties in the
//! order the findings were found (a sequence number each: a finding completed
//! later, like `http-protocol-version-mismatch`, keeps the number of the
//! moment it was found).
//!
//! A finding is encoded as it is pushed ([`Parts`]: no `Finding`, file name
//! or id string built per finding), and read back borrowed from the merge's
//! buffers ([`Sorted::next_ref`]): the human and JSON writers print it from
//! there (issue 22: 125,000 findings of a long transcript were 20 % of
//! `check`, each four strings built, spilled, read back and dropped).

use std::io::{Read, Seek, SeekFrom, Write};

use crate::report::{Finding, FindingRef};
use crate::rules::Severity;

/// Findings held in memory before a sorted run of them is written to the
/// temporary file: 16,384 (a few MB; a transcript with fewer findings never
/// touches the disk).
pub const SPILL_CHUNK_FINDINGS: usize = 16_384;

/// Read buffer of one run while merging (16 KiB).
const RUN_READ_BYTES: usize = 16 << 10;

/// Write buffer of a run being spilled (64 KiB).
const RUN_WRITE_BYTES: usize = 64 << 10;

/// Bytes of an encoded finding before its texts: its length, sequence,
/// record and line (u64 each), flags (u8).
const FIXED_BYTES: usize = 8 * 4 + 1;

/// Longest pointer or message (bytes) a spilled run writes as a reference
/// to the same text written shortly before (256).
const RECENT_TEXT_MAX_BYTES: usize = 256;

/// Distinct recent texts of each kind (pointer, message) a run's reference
/// can name (8).
const RECENT_TEXTS: usize = 8;

/// Tag bit of a text's length in a spilled run: the text is recent text
/// number `length & 7` of its kind (written at most [`RECENT_TEXTS`]
/// distinct texts of that kind before).
const RECENT_REF: u64 = 1 << 63;

/// Report order of a finding: (record, line, sequence number).
type Key = (usize, usize, u64);

/// A finding as [`Findings`] takes it: its parts, borrowed (the file name
/// is the same for all and not kept; the id is written as JSON text).
pub(crate) struct Parts<'p> {
    pub(crate) rule: &'static str,
    pub(crate) severity: Severity,
    pub(crate) allowed: bool,
    pub(crate) record: usize,
    pub(crate) line: usize,
    pub(crate) request_id: Option<&'p dyn Text>,
    /// Written straight into the store ([`Text`]: no string built).
    pub(crate) pointer: &'p dyn Text,
    pub(crate) message: &'p dyn Text,
}

/// A finding's text (id, pointer, message) written straight into the
/// findings' store, piece by piece: no `core::fmt` machinery per piece
/// (issue 22: 30,000 findings of a long transcript, three texts each, were
/// a tenth of `check` through `write!`). A tuple is its pieces in order; an
/// integer is written by `itoa` (the same digits as its `Display`); [`Fmt`]
/// takes any `Display` for the texts of rare findings.
pub(crate) trait Text {
    /// Appends the text's UTF-8 bytes to `out`.
    fn put(&self, out: &mut Vec<u8>);
}

impl Text for str {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

impl Text for String {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

impl<T: Text + ?Sized> Text for &T {
    fn put(&self, out: &mut Vec<u8>) {
        (**self).put(out);
    }
}

macro_rules! int_text {
    ($($t:ty),*) => {$(
        impl Text for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(itoa::Buffer::new().format(*self).as_bytes());
            }
        }
    )*};
}
int_text!(u64, usize, i64);

macro_rules! tuple_text {
    ($($n:tt $t:ident),+) => {
        impl<$($t: Text),+> Text for ($($t,)+) {
            fn put(&self, out: &mut Vec<u8>) {
                $(self.$n.put(out);)+
            }
        }
    };
}
tuple_text!(0 A, 1 B);
tuple_text!(0 A, 1 B, 2 C);
tuple_text!(0 A, 1 B, 2 C, 3 D);
tuple_text!(0 A, 1 B, 2 C, 3 D, 4 E);
tuple_text!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_text!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_text!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);

/// Any `Display` as a [`Text`], through `core::fmt` (rare findings).
pub(crate) struct Fmt<D>(pub(crate) D);

impl<D: std::fmt::Display> Text for Fmt<D> {
    fn put(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail.
        let _ = write!(out, "{}", self.0);
    }
}

/// The findings of one transcript, in memory (encoded, [`encode`]) and
/// spilled: no allocation per finding, whatever its strings.
#[derive(Default)]
pub(crate) struct Findings {
    /// The encoded findings held in memory, in the order they came.
    mem: Vec<u8>,
    /// Report order key and byte offset in `mem` of each held finding.
    index: Vec<(Key, usize)>,
    /// Whether `index` is in report order (it is when findings come in
    /// order: a run is then written as it lies, unsorted).
    in_order: bool,
    next_seq: u64,
    spill: Option<Spill>,
    /// The first error writing a run (findings then stay in memory).
    error: Option<std::io::Error>,
}

/// The temporary file and where each sorted run lies in it.
struct Spill {
    file: std::fs::File,
    /// (byte offset, byte length) of each run, in order.
    runs: Vec<(u64, u64)>,
    end: u64,
}

impl Findings {
    /// Takes the next sequence number (for a finding pushed later with
    /// [`Self::push_at`]).
    pub(crate) fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Adds a finding found now.
    pub(crate) fn push_parts(&mut self, f: &Parts<'_>) {
        let seq = self.reserve();
        self.push_parts_at(seq, f);
    }

    /// Adds a finding found earlier, at sequence number `seq`. A failure to
    /// write a run is kept for [`Self::take_error`].
    pub(crate) fn push_at(&mut self, seq: u64, f: Finding) {
        let id = f.request_id.as_deref();
        self.push_parts_at(
            seq,
            &Parts {
                rule: f.rule,
                severity: f.severity,
                allowed: f.allowed,
                record: f.record,
                line: f.line,
                request_id: id.as_ref().map(|id| id as &dyn Text),
                pointer: &f.pointer,
                message: &f.message,
            },
        );
    }

    fn push_parts_at(&mut self, seq: u64, f: &Parts<'_>) {
        let k = (f.record, f.line, seq);
        if self.index.is_empty() {
            self.in_order = true;
        } else if self.in_order && self.index.last().is_some_and(|(last, _)| *last > k) {
            self.in_order = false;
        }
        self.index.push((k, self.mem.len()));
        encode(seq, f, &mut self.mem);
        if self.index.len() >= SPILL_CHUNK_FINDINGS
            && self.error.is_none()
            && let Err(e) = self.write_run()
        {
            self.error = Some(e);
        }
    }

    /// The error of writing a run, if one failed.
    pub(crate) fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    /// Puts the held findings in report order.
    fn sort(&mut self) {
        if !self.in_order {
            self.index.sort_unstable_by_key(|(k, _)| *k);
            self.in_order = true;
        }
    }

    fn write_run(&mut self) -> std::io::Result<()> {
        // In order as they came: the held bytes are the run as they lie.
        let as_came = self.in_order;
        self.sort();
        let spill = match &mut self.spill {
            Some(s) => s,
            None => self.spill.insert(Spill {
                file: tempfile::tempfile()?,
                runs: Vec::new(),
                end: 0,
            }),
        };
        spill.file.seek(SeekFrom::Start(spill.end))?;
        let mut w = std::io::BufWriter::with_capacity(RUN_WRITE_BYTES, &spill.file);
        // Each finding as it lies, but for a pointer or message repeated
        // from a few findings before, written as a reference to it (the
        // findings of a long transcript repeat a handful of texts: fewer
        // bytes through the file).
        let mut recent: [Recent; 2] = Default::default();
        let mut one = Vec::new();
        let mut len = 0u64;
        let mut at_next = 0;
        loop {
            let at = if as_came {
                if at_next >= self.mem.len() {
                    break;
                }
                at_next
            } else {
                match self.index.get(at_next) {
                    Some(&(_, at)) => at,
                    None => break,
                }
            };
            let b = &self.mem[at..at + encoded_len(&self.mem[at..])];
            at_next = if as_came { at + b.len() } else { at_next + 1 };
            one.clear();
            transcode(b, &mut recent, &mut one)?;
            w.write_all(&one)?;
            len += one.len() as u64;
        }
        w.flush()?;
        drop(w);
        self.mem.clear();
        self.index.clear();
        spill.runs.push((spill.end, len));
        spill.end += len;
        Ok(())
    }

    /// Every finding in report order; `file` is the name each carries.
    pub(crate) fn into_sorted(mut self, file: &str) -> Sorted {
        self.sort();
        let mut runs = Vec::new();
        if let Some(spill) = self.spill.take() {
            let file = std::sync::Arc::new(spill.file);
            for (offset, len) in spill.runs {
                runs.push(Run {
                    file: file.clone(),
                    next: offset,
                    end: offset + len,
                    buf: Vec::new(),
                    pos: 0,
                    head: None,
                    recent: Default::default(),
                });
            }
        }
        let mut sorted = Sorted {
            file: file.to_owned(),
            mem: self.mem,
            index: self.index,
            at: 0,
            runs,
            taken: None,
            failed: None,
            damaged: std::sync::atomic::AtomicBool::new(false),
        };
        for i in 0..sorted.runs.len() {
            if let Err(e) = sorted.runs[i].load_head() {
                sorted.failed.get_or_insert(Some(e));
            }
        }
        sorted
    }
}

/// Length of the encoded finding at the start of `b` (its first 8 bytes;
/// written by [`encode`], so present).
fn encoded_len(b: &[u8]) -> usize {
    b.get(..8)
        .and_then(|l| l.try_into().ok())
        .map_or(0, |l| u64::from_le_bytes(l) as usize)
}

/// Where the finding a [`Sorted::next_ref`] handed out came from.
#[derive(Clone, Copy)]
enum Source {
    Mem,
    Run(usize),
}

/// The findings of one transcript in report order: the in-memory ones and the spilled runs
/// merged by `(record, line, sequence)`.
pub struct Sorted {
    file: String,
    /// The encoded findings left in memory and their sorted index; `at`:
    /// the next one.
    mem: Vec<u8>,
    index: Vec<(Key, usize)>,
    at: usize,
    runs: Vec<Run>,
    /// The source of the finding handed out last, moved past at the next call.
    taken: Option<Source>,
    /// A run failed to read: the error, handed out once (`Some(None)` then).
    failed: Option<Option<std::io::Error>>,
    /// A finding read back damaged (handed out as an error): the merge ends.
    /// (Set through `&self` while the finding borrows the merge; atomic so
    /// that `Sorted` stays `Sync`.)
    damaged: std::sync::atomic::AtomicBool,
}

impl Sorted {
    /// The next finding in report order, borrowed from the merge's buffers.
    pub(crate) fn next_ref(&mut self) -> Option<std::io::Result<FindingRef<'_>>> {
        if self.failed.is_none()
            && let Some(Source::Run(i)) = self.taken
            && let Err(e) = self.runs[i].advance()
        {
            self.failed = Some(Some(e));
        }
        if let Some(Source::Mem) = self.taken {
            self.at += 1;
        }
        self.taken = None;
        if self.damaged.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        if let Some(e) = &mut self.failed {
            return e.take().map(Err);
        }
        // The smallest head.
        let mut best: Option<(Source, Key)> =
            self.index.get(self.at).map(|&(k, _)| (Source::Mem, k));
        for (i, r) in self.runs.iter().enumerate() {
            if let Some((k, _)) = r.head
                && best.is_none_or(|(_, b)| k < b)
            {
                best = Some((Source::Run(i), k));
            }
        }
        let (src, _) = best?;
        self.taken = Some(src);
        let f = match src {
            Source::Mem => {
                let at = self.index[self.at].1;
                let b = &self.mem[at..at + encoded_len(&self.mem[at..])];
                texts(b, None).and_then(|t| decode(b, &t, None, &self.file))
            }
            Source::Run(i) => {
                let r = &mut self.runs[i];
                let (_, len) = r.head?;
                let b = &r.buf[r.pos..r.pos + len];
                match texts(b, Some(&mut r.recent)) {
                    Ok(t) => decode(b, &t, Some(&r.recent), &self.file),
                    Err(e) => Err(e),
                }
            }
        };
        if f.is_err() {
            self.damaged
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Some(f)
    }
}

impl Iterator for Sorted {
    type Item = std::io::Result<Finding>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_ref().map(|r| r.map(|f| f.to_owned()))
    }
}

/// One sorted run in the temporary file, read through a small buffer.
struct Run {
    file: std::sync::Arc<std::fs::File>,
    next: u64,
    end: u64,
    buf: Vec<u8>,
    pos: usize,
    /// The key and encoded length of the finding at `pos` (`None`: the run
    /// is done).
    head: Option<(Key, usize)>,
    /// The recent pointers and messages of the run, as its writer kept them.
    recent: [Recent; 2],
}

/// The last [`RECENT_TEXTS`] distinct texts of one kind written to (or read
/// from) a run, each of at most [`RECENT_TEXT_MAX_BYTES`].
#[derive(Default)]
struct Recent {
    texts: [Vec<u8>; RECENT_TEXTS],
    /// Texts added so far (the next one replaces `next % RECENT_TEXTS`).
    next: usize,
}

impl Recent {
    fn find(&self, t: &[u8]) -> Option<usize> {
        let held = self.next.min(RECENT_TEXTS);
        self.texts[..held].iter().position(|x| x.as_slice() == t)
    }

    fn add(&mut self, t: &[u8]) {
        let slot = &mut self.texts[self.next % RECENT_TEXTS];
        slot.clear();
        slot.extend_from_slice(t);
        self.next += 1;
    }
}

impl Run {
    /// Ensures `n` unread bytes in the buffer (fewer only at the run's end).
    fn fill(&mut self, n: usize) -> std::io::Result<()> {
        if self.buf.len() - self.pos >= n {
            return Ok(());
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        let want = n.max(RUN_READ_BYTES) - self.buf.len();
        let take = want.min(usize::try_from(self.end - self.next).unwrap_or(usize::MAX));
        let start = self.buf.len();
        self.buf.resize(start + take, 0);
        let mut f: &std::fs::File = &self.file;
        f.seek(SeekFrom::Start(self.next))?;
        f.read_exact(&mut self.buf[start..])?;
        self.next += take as u64;
        Ok(())
    }

    /// Moves past the head and loads the next one.
    fn advance(&mut self) -> std::io::Result<()> {
        if let Some((_, len)) = self.head.take() {
            self.pos += len;
        }
        self.load_head()
    }

    /// Reads the key and length of the finding at `pos`, its bytes whole in
    /// the buffer.
    fn load_head(&mut self) -> std::io::Result<()> {
        self.fill(FIXED_BYTES)?;
        let rest = &self.buf[self.pos..];
        if rest.is_empty() {
            self.head = None;
            return Ok(());
        }
        let len = usize::try_from(u64_at(rest, 0)?).map_err(|_| corrupt())?;
        if len < FIXED_BYTES {
            return Err(corrupt());
        }
        self.fill(len)?;
        let b = self.buf.get(self.pos..self.pos + len).ok_or_else(corrupt)?;
        let key = (
            usize::try_from(u64_at(b, 16)?).map_err(|_| corrupt())?,
            usize::try_from(u64_at(b, 24)?).map_err(|_| corrupt())?,
            u64_at(b, 8)?,
        );
        self.head = Some((key, len));
        Ok(())
    }
}

fn u64_at(b: &[u8], at: usize) -> std::io::Result<u64> {
    let bytes: [u8; 8] = b
        .get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(corrupt)?;
    Ok(u64::from_le_bytes(bytes))
}

fn corrupt() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "the temporary file of spilled findings reads back damaged",
    )
}

fn put_text(s: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// `d`'s text as [`put_text`] writes a text: written in place, its length
/// patched after.
fn put_text_of(d: &dyn Text, out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    d.put(out);
    let n = (out.len() - at - 8) as u64;
    out[at..at + 8].copy_from_slice(&n.to_le_bytes());
}

/// One finding as bytes (all integers little-endian u64): its length in
/// bytes (this one included), sequence, record, line, flags (u8: 1 error, 2
/// allowed, 4 has an id), rule id, [id], pointer, message (each text: its
/// length, then its bytes). The file name is the same for all and not
/// written.
fn encode(seq: u64, f: &Parts<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(f.record as u64).to_le_bytes());
    out.extend_from_slice(&(f.line as u64).to_le_bytes());
    let flags = u8::from(f.severity == Severity::Error)
        | (u8::from(f.allowed) << 1)
        | (u8::from(f.request_id.is_some()) << 2);
    out.push(flags);
    put_text(f.rule, out);
    if let Some(id) = f.request_id {
        put_text_of(id, out);
    }
    put_text_of(f.pointer, out);
    put_text_of(f.message, out);
    let len = (out.len() - start) as u64;
    out[start..start + 8].copy_from_slice(&len.to_le_bytes());
}

/// Where one text of an encoded finding lies: a byte range of it, or a
/// recent text (pointer `0` or message `1`, number `n`).
#[derive(Clone, Copy)]
enum TextAt {
    Bytes(usize, usize),
    Recent(usize, usize),
}

/// Reads texts off an encoded finding.
struct Cursor<'b> {
    b: &'b [u8],
    at: usize,
}

impl<'b> Cursor<'b> {
    /// The next text's length word and its range (as written; a reference's
    /// range is empty).
    fn next(&mut self) -> std::io::Result<(u64, usize, usize)> {
        let word = u64_at(self.b, self.at)?;
        let start = self.at + 8;
        if word & RECENT_REF != 0 {
            self.at = start;
            return Ok((word, start, start));
        }
        let n = usize::try_from(word).map_err(|_| corrupt())?;
        let end = start.checked_add(n).ok_or_else(corrupt)?;
        if end > self.b.len() {
            return Err(corrupt());
        }
        self.at = end;
        Ok((word, start, end))
    }

    /// The next text, which is never a reference.
    fn literal(&mut self) -> std::io::Result<(usize, usize)> {
        match self.next()? {
            (w, _, _) if w & RECENT_REF != 0 => Err(corrupt()),
            (_, start, end) => Ok((start, end)),
        }
    }
}

/// Where the rule, id, pointer and message of the encoded finding `b` lie.
/// `recent` (a spilled run's, read in order) resolves references and keeps
/// the short texts read; without it (the findings held in memory) a
/// reference is damage.
fn texts(b: &[u8], mut recent: Option<&mut [Recent; 2]>) -> std::io::Result<[Option<TextAt>; 4]> {
    let flags = *b.get(32).ok_or_else(corrupt)?;
    let mut c = Cursor { b, at: FIXED_BYTES };
    let (rs, re) = c.literal()?;
    let id = if flags & 4 != 0 {
        let (s, e) = c.literal()?;
        Some(TextAt::Bytes(s, e))
    } else {
        None
    };
    let mut out = [Some(TextAt::Bytes(rs, re)), id, None, None];
    for kind in 0..2 {
        let (word, start, end) = c.next()?;
        out[2 + kind] = Some(match recent.as_deref_mut() {
            Some(r) if word & RECENT_REF != 0 => {
                let n = usize::try_from(word & !RECENT_REF).map_err(|_| corrupt())?;
                if n >= r[kind].next.min(RECENT_TEXTS) {
                    return Err(corrupt());
                }
                TextAt::Recent(kind, n)
            }
            None if word & RECENT_REF != 0 => return Err(corrupt()),
            Some(r) => {
                if end - start <= RECENT_TEXT_MAX_BYTES {
                    r[kind].add(&b[start..end]);
                }
                TextAt::Bytes(start, end)
            }
            None => TextAt::Bytes(start, end),
        });
    }
    if c.at != b.len() {
        return Err(corrupt());
    }
    Ok(out)
}

/// Writes the encoded finding `b` (as held in memory) into `out` as a
/// spilled run holds it: a pointer or message of at most
/// [`RECENT_TEXT_MAX_BYTES`] among the `recent` ones of its kind as a
/// reference ([`RECENT_REF`]), any other kept as recent.
fn transcode(b: &[u8], recent: &mut [Recent; 2], out: &mut Vec<u8>) -> std::io::Result<()> {
    let t = texts(b, None)?;
    let Some(TextAt::Bytes(_, id_end)) = t[1].or(t[0]) else {
        return Err(corrupt());
    };
    // Length, sequence, record, line, flags, rule and id as they lie.
    out.extend_from_slice(b.get(..id_end).ok_or_else(corrupt)?);
    for kind in 0..2 {
        let Some(TextAt::Bytes(s, e)) = t[2 + kind] else {
            return Err(corrupt());
        };
        let text = &b[s..e];
        match (text.len() <= RECENT_TEXT_MAX_BYTES)
            .then(|| recent[kind].find(text))
            .flatten()
        {
            Some(n) => out.extend_from_slice(&(RECENT_REF | n as u64).to_le_bytes()),
            None => {
                if text.len() <= RECENT_TEXT_MAX_BYTES {
                    recent[kind].add(text);
                }
                out.extend_from_slice(&b[s - 8..e]);
            }
        }
    }
    let len = out.len() as u64;
    out[..8].copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// The finding [`encode`] wrote as `b` (its texts where [`texts`] found
/// them, in `b` or among `recent`), carrying the name `file`.
fn decode<'b>(
    b: &'b [u8],
    t: &[Option<TextAt>; 4],
    recent: Option<&'b [Recent; 2]>,
    file: &'b str,
) -> std::io::Result<FindingRef<'b>> {
    let text = |at: Option<TextAt>| -> std::io::Result<Option<&'b str>> {
        let bytes = match at {
            None => return Ok(None),
            Some(TextAt::Bytes(s, e)) => b.get(s..e),
            Some(TextAt::Recent(kind, n)) => recent.map(|r| r[kind].texts[n].as_slice()),
        };
        let bytes = bytes.ok_or_else(corrupt)?;
        // simdutf8's check: the same verdict as `std::str::from_utf8`,
        // faster on a finding's message.
        simdutf8::basic::from_utf8(bytes)
            .map(Some)
            .map_err(|_| corrupt())
    };
    let seq_record_line = (u64_at(b, 8)?, u64_at(b, 16)?, u64_at(b, 24)?);
    let flags = *b.get(32).ok_or_else(corrupt)?;
    // The rule's name is looked up where it lies (one of the rules' own).
    let rule = text(t[0])?
        .and_then(crate::rules::rule)
        .ok_or_else(corrupt)?
        .id;
    Ok(FindingRef {
        rule,
        severity: if flags & 1 != 0 {
            Severity::Error
        } else {
            Severity::Warning
        },
        allowed: flags & 2 != 0,
        file,
        record: usize::try_from(seq_record_line.1).map_err(|_| corrupt())?,
        line: usize::try_from(seq_record_line.2).map_err(|_| corrupt())?,
        request_id: text(t[1])?,
        pointer: text(t[2])?.unwrap_or_default(),
        message: text(t[3])?.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(record: usize, line: usize, message: &str) -> Finding {
        Finding {
            rule: crate::rules::RULES[0].id,
            severity: crate::rules::RULES[0].severity,
            allowed: record.is_multiple_of(3),
            file: "t.jsonl".to_owned(),
            record,
            line,
            request_id: record.is_multiple_of(2).then(|| format!("{record}")),
            pointer: format!("/p/{line}"),
            message: message.to_owned(),
        }
    }

    /// Past the chunk, findings go through sorted runs on disk and come back
    /// in the order a stable sort by (record, line) of the pushes gives,
    /// a finding pushed late at a reserved number included.
    #[test]
    fn spilled_findings_come_back_in_report_order() {
        let n = 2 * SPILL_CHUNK_FINDINGS + 17;
        let mut pushed = Vec::new();
        let mut store = Findings::default();
        let late_seq = store.reserve();
        for i in 0..n {
            // Mostly in order, every 7th out of order, ties on (record, line).
            let record = if i % 7 == 0 { n - i } else { i / 2 };
            let f = finding(record, record + 1, &format!("m{i}"));
            pushed.push(f.clone());
            let seq = store.reserve();
            store.push_at(seq, f);
        }
        let late = finding(5, 6, "late");
        store.push_at(late_seq, late.clone());
        pushed.insert(0, late);
        assert!(store.spill.is_some());
        let mut want = pushed;
        want.sort_by_key(|f| (f.record, f.line));
        let got: Vec<Finding> = store
            .into_sorted("t.jsonl")
            .collect::<std::io::Result<_>>()
            .unwrap();
        assert_eq!(got.len(), want.len());
        assert_eq!(got, want);
    }

    /// Findings pushed in report order are spilled in that order (no sort),
    /// their repeated short texts as references, and come back as pushed.
    #[test]
    fn findings_in_order_come_back_as_pushed() {
        let n = 2 * SPILL_CHUNK_FINDINGS + 3;
        let mut store = Findings::default();
        let mut want = Vec::new();
        for i in 0..n {
            // Messages repeating among 7 (named by reference), pointers
            // among 3 in a row (then evicted), every 5th message past the
            // longest named.
            let message = if i % 5 == 0 {
                format!("{i}{}", "x".repeat(RECENT_TEXT_MAX_BYTES))
            } else {
                format!("m{} \u{e9}", i % 7)
            };
            let f = finding(i / 3, i / 3 + 1, &message);
            want.push(f.clone());
            let seq = store.reserve();
            store.push_at(seq, f);
        }
        assert_eq!(store.spill.as_ref().map(|s| s.runs.len()), Some(2));
        let mut sorted = store.into_sorted("t.jsonl");
        let mut got = Vec::new();
        while let Some(f) = sorted.next_ref() {
            got.push(f.unwrap().to_owned());
        }
        assert_eq!(got, want);
    }

    /// A spilled run read back damaged is one error, then the end.
    #[test]
    fn a_damaged_run_is_one_error_then_the_end() {
        let mut store = Findings::default();
        for i in 0..SPILL_CHUNK_FINDINGS + 1 {
            let seq = store.reserve();
            store.push_at(seq, finding(i, i + 1, "m"));
        }
        let spill = store.spill.as_mut().unwrap();
        // The rule name's length of the first finding: past the run's end.
        let mut f: &std::fs::File = &spill.file;
        f.seek(SeekFrom::Start(FIXED_BYTES as u64)).unwrap();
        f.write_all(&u64::MAX.to_le_bytes()).unwrap();
        let mut sorted = store.into_sorted("t.jsonl");
        let first = sorted.next().unwrap();
        assert_eq!(first.unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        assert!(sorted.next().is_none());
    }

    /// The merge of spilled findings can be handed to another thread, or
    /// shared, as before it was read borrowed.
    #[test]
    fn sorted_findings_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Sorted>();
    }
}
