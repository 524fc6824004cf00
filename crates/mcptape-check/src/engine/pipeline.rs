//! The pass over a mapped transcript in two stages on two threads (the
//! design of simdjson's `parse_many`: one thread finds and parses the
//! documents a batch ahead of the one that uses them).
//!
//! Stage 1, on a worker thread: cuts the lines and frames each
//! ([`Framed::frame`]: the record, the one envelope scan of its message),
//! in batches of [`Shape::batch_lines`] lines. Stage 2, on the calling
//! thread: gives each framed line to the pass (the rules, findings, output)
//! in file order, tells the map's `release` what lies behind the line it
//! is at, never what stage 1 has framed ahead of it.
//!
//! A batch borrows its lines from the map (no message byte is copied); at
//! most [`Shape::batches`] wait between the stages, so stage 1 is never
//! more than `batches + 2` batches ahead (one being filled, one being read):
//! with [`Shape::DEFAULT`], at most 5 × 512 framed lines (about 820 bytes
//! each: 2.1 MB, and what their scans and [`super::Prepared`] values hold)
//! and 5 × ([`BATCH_BYTES`] + [`LONG_LINE_BYTES`]) = 6.25 MiB of mapped
//! pages read ahead of the rules, on top of the
//! [`SliceLines::RELEASE_STEP`] not yet released behind them. A batch the
//! rules are done with goes back to stage 1 with its lines, which stage 1
//! drops (frees what it allocated) before it frames into the batch again.
//! A line longer than [`Shape::long_line_bytes`] is left to stage 2, which
//! reads and frames it itself and then lets stage 1 go on after it: the
//! pages of a long line are brought in once, while stage 2 needs them, as
//! the plain loop does. When stage 2 stops (a cut last record, the pass
//! breaks, a panic), it drops its ends of the channels: stage 1's next send
//! or wait fails and it returns; [`std::thread::scope`] joins it.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::{Cut, Framed, Line, LineSource, Prep, SliceLines};

/// Lines in one batch (512 lines: about 300 KB of the 500,000-message
/// bench transcript, whose lines average 590 bytes; a channel operation
/// per 512 lines costs nothing beside their framing).
pub(crate) const BATCH_LINES: usize = 512;

/// Bytes of lines after which a batch ends before [`BATCH_LINES`] lines
/// (256 KiB, plus the line that crosses it: the mapped pages stage 1 has
/// read ahead stay a few MiB whatever the lines' lengths).
pub(crate) const BATCH_BYTES: usize = 256 << 10;

/// Batches framed by stage 1 and not yet taken by stage 2 (3 batches: the
/// channel's bound; stage 1 waits when it is full).
pub(crate) const BATCHES_AHEAD: usize = 3;

/// Longest line stage 1 frames (1 MiB, without its `\n`); a longer one is
/// read and framed by stage 2 when it gets there, stage 1 waiting.
pub(crate) const LONG_LINE_BYTES: usize = 1 << 20;

/// The batches stage 1 hands over ([`SliceLines::mapped`] takes
/// [`Shape::DEFAULT`]; tests take small ones).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// Most lines in one batch.
    pub(crate) batch_lines: usize,
    /// Bytes of lines (with their `\n`) after which a batch ends.
    pub(crate) batch_bytes: usize,
    /// Batches waiting between the stages, at most.
    pub(crate) batches: usize,
    /// Longest line (bytes, without its `\n`) stage 1 frames.
    pub(crate) long_line_bytes: usize,
}

impl Shape {
    /// [`BATCH_LINES`], [`BATCH_BYTES`], [`BATCHES_AHEAD`], [`LONG_LINE_BYTES`].
    pub(crate) const DEFAULT: Shape = Shape {
        batch_lines: BATCH_LINES,
        batch_bytes: BATCH_BYTES,
        batches: BATCHES_AHEAD,
        long_line_bytes: LONG_LINE_BYTES,
    };
}

/// Small batch shapes: one line a batch, a few lines, a byte bound that
/// ends batches first, and lines over 16 bytes left to stage 2.
#[cfg(test)]
pub(crate) const TEST_SHAPES: [Shape; 4] = [
    Shape {
        batch_lines: 1,
        batch_bytes: usize::MAX,
        batches: 1,
        long_line_bytes: usize::MAX,
    },
    Shape {
        batch_lines: 3,
        batch_bytes: usize::MAX,
        batches: 2,
        long_line_bytes: usize::MAX,
    },
    Shape {
        batch_lines: 1000,
        batch_bytes: 40,
        batches: 3,
        long_line_bytes: usize::MAX,
    },
    Shape {
        batch_lines: 2,
        batch_bytes: usize::MAX,
        batches: 1,
        long_line_bytes: 16,
    },
];

/// The `*.jsonl` files under the repository's `corpus/` (tests).
#[cfg(test)]
pub(crate) fn corpus_transcripts() -> Vec<std::path::PathBuf> {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let mut files = Vec::new();
    let mut dirs = vec![corpus];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// `whole`, then `whole` cut in the middle of its last record and with an
/// unreadable line after its middle line, when it has lines for them (tests).
#[cfg(test)]
pub(crate) fn cut_and_unreadable(whole: Vec<u8>) -> Vec<Vec<u8>> {
    let mut variants = Vec::new();
    let body = whole.strip_suffix(b"\n").unwrap_or(&whole);
    if let Some(last) = memchr::memrchr(b'\n', body) {
        variants.push(whole[..last + 1 + (body.len() - last) / 2].to_vec());
    }
    let nl: Vec<usize> = memchr::memchr_iter(b'\n', &whole).collect();
    if nl.len() > 2 {
        let at = nl[nl.len() / 2] + 1;
        variants.push([&whole[..at], b"{\"tUs\":\n", &whole[at..]].concat());
    }
    variants.insert(0, whole);
    variants
}

/// Whether a second thread can run beside this one (more than one CPU
/// available to the process): else the lines are framed on the caller's.
pub(crate) fn worth_a_thread() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// What comes after a batch's lines.
enum Then {
    /// Another batch.
    More,
    /// A line longer than [`Shape::long_line_bytes`] (or not to be framed:
    /// [`LineSource::for_each_line`]'s `frame_below`), for stage 2 to read;
    /// stage 1 waits to be told where the next line starts.
    Long,
    /// Nothing: the input ends.
    End,
}

/// Lines framed by stage 1, in file order.
struct Batch<'a> {
    lines: Vec<Framed<'a>>,
    then: Then,
}

/// Gives every line after `lines`' current one to `each` in file order
/// until it breaks, framed when shorter than `frame_below` bytes
/// ([`LineSource::for_each_line`]), framing on a worker thread; on the
/// caller's when the thread cannot be started.
///
/// # Errors
/// None in practice: [`SliceLines`] reads no I/O (its `advance` is called
/// for long lines).
pub(crate) fn run(
    lines: &mut SliceLines<'_>,
    shape: Shape,
    frame_below: usize,
    prep: Prep,
    each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
) -> std::io::Result<()> {
    let data = lines.data;
    let (pos, line_no) = (lines.pos, lines.line_no);
    let (batch_tx, batch_rx) = mpsc::sync_channel(shape.batches);
    let (resume_tx, resume_rx) = mpsc::channel();
    let (recycle_tx, recycle_rx) = mpsc::sync_channel(shape.batches + 2);
    // Batches sent and not yet received: stage 1 is ahead when the channel
    // is full ([`Prep::WhenAhead`]).
    let queued = AtomicUsize::new(0);
    let queued = &queued;
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("mcptape-frame".into())
            .spawn_scoped(s, move || {
                let framed_below = frame_below.min(shape.long_line_bytes.saturating_add(1));
                let line = (pos, line_no);
                stage1(
                    data,
                    line,
                    (framed_below, prep),
                    shape,
                    (&batch_tx, queued),
                    &resume_rx,
                    &recycle_rx,
                );
            });
        match worker {
            Ok(_) => stage2(
                lines,
                (frame_below, prep),
                (batch_rx, queued),
                resume_tx,
                recycle_tx,
                each,
            ),
            Err(_) => super::frame_each(lines, frame_below, prep, each),
        }
    })
}

/// Stage 1: frames the lines of `data` from byte `pos` (the next line is
/// number `line_no + 1`) into batches sent to `batches`, until the input
/// ends or stage 2 stops; stops at a line of `framed_below` bytes or more
/// (stage 2's).
fn stage1<'a>(
    data: &'a [u8],
    (mut pos, mut line_no): (usize, usize),
    (framed_below, prep): (usize, Prep),
    shape: Shape,
    (batches, queued): (&mpsc::SyncSender<Batch<'a>>, &AtomicUsize),
    resume: &mpsc::Receiver<(usize, usize)>,
    recycled: &mpsc::Receiver<Vec<Framed<'a>>>,
) {
    loop {
        // A batch comes back with its lines, dropped here: what the lines
        // hold was allocated on this thread, where it is freed for less.
        let mut lines = recycled.try_recv().map_or_else(
            |_| Vec::with_capacity(shape.batch_lines),
            |mut l| {
                l.clear();
                l
            },
        );
        let mut bytes = 0usize;
        // Ahead of stage 2 (its batches fill the channel): the lines of
        // this batch are framed with what the rules would compute.
        let prep = prep.now(queued.load(Ordering::Relaxed) >= shape.batches);
        let then = loop {
            let Some(rest) = data.get(pos..).filter(|r| !r.is_empty()) else {
                break Then::End;
            };
            if lines.len() >= shape.batch_lines || bytes >= shape.batch_bytes {
                break Then::More;
            }
            // A line end, or the input's end, within `framed_below` bytes.
            let window = &rest[..rest.len().min(framed_below)];
            let (len, terminated) = match memchr::memchr(b'\n', window) {
                Some(n) => (n, true),
                None if rest.len() < framed_below => (rest.len(), false),
                None => break Then::Long,
            };
            line_no += 1;
            lines.push(Framed::frame(&rest[..len], line_no, pos, terminated, prep));
            let next = len + usize::from(terminated);
            bytes += next;
            pos += next;
        };
        let (long, end) = (matches!(then, Then::Long), matches!(then, Then::End));
        // Counted before it is sent: stage 2 counts it off once received.
        queued.fetch_add(1, Ordering::Relaxed);
        if batches.send(Batch { lines, then }).is_err() || end {
            return;
        }
        if long {
            match resume.recv() {
                Ok((p, n)) => (pos, line_no) = (p, n),
                Err(_) => return,
            }
        }
    }
}

/// Stage 2: gives the framed lines to `each` in order, `lines` kept at the
/// line given (its `release` told what lies behind it); reads and frames
/// the long lines stage 1 leaves. Returns when the input ends, `each`
/// breaks or stage 1 is gone; its channel ends are dropped then, which
/// stops stage 1.
fn stage2<'a>(
    lines: &mut SliceLines<'a>,
    (frame_below, prep): (usize, Prep),
    (batches, queued): (mpsc::Receiver<Batch<'a>>, &AtomicUsize),
    resume: mpsc::Sender<(usize, usize)>,
    recycle: mpsc::SyncSender<Vec<Framed<'a>>>,
    each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
) -> std::io::Result<()> {
    while let Ok(mut batch) = batches.recv() {
        queued.fetch_sub(1, Ordering::Relaxed);
        for f in &mut batch.lines {
            lines.at(f);
            if each(Line::Framed(f)).is_break() {
                return Ok(());
            }
        }
        // Sent back with its lines, for stage 1 to drop (full only if stage
        // 1 made more batches than it was sent back: dropped here then).
        let _ = recycle.try_send(batch.lines);
        match batch.then {
            Then::More => {}
            Then::End => break,
            Then::Long => {
                let Some(terminated) = lines.advance()? else {
                    break;
                };
                let cut = Cut {
                    line_no: lines.line_no,
                    offset: lines.start,
                    terminated,
                    line: lines.line(),
                };
                if cut.give(frame_below, prep.now(false), each).is_break()
                    || resume.send((lines.pos, lines.line_no)).is_err()
                {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}
