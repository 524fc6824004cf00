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
//! more than `batches + 2` batches ahead (one being filled, one being read).
//! A line longer than [`Shape::long_line_bytes`] is left to stage 2, which
//! reads and frames it itself and then lets stage 1 go on after it: the
//! pages of a long line are brought in once, while stage 2 needs them, as
//! the plain loop does. When stage 2 stops (a cut last record, the pass
//! breaks, a panic), it drops its ends of the channels: stage 1's next send
//! or wait fails and it returns; [`std::thread::scope`] joins it.

use std::ops::ControlFlow;
use std::sync::mpsc;

use super::{Framed, LineSource, SliceLines};

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

/// Whether a second thread can run beside this one (more than one CPU
/// available to the process): else the lines are framed on the caller's.
pub(crate) fn worth_a_thread() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// What comes after a batch's lines.
enum Then {
    /// Another batch.
    More,
    /// A line longer than [`Shape::long_line_bytes`], for stage 2 to read;
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

/// Gives every line after `lines`' current one, framed, to `each` in file
/// order until it breaks ([`LineSource::for_each_framed`]), framing on a
/// worker thread; on the caller's when the thread cannot be started.
///
/// # Errors
/// None in practice: [`SliceLines`] reads no I/O (its `advance` is called
/// for long lines).
pub(crate) fn run(
    lines: &mut SliceLines<'_>,
    shape: Shape,
    each: &mut dyn FnMut(Framed<'_>) -> ControlFlow<()>,
) -> std::io::Result<()> {
    let data = lines.data;
    let (pos, line_no) = (lines.pos, lines.line_no);
    let (batch_tx, batch_rx) = mpsc::sync_channel(shape.batches);
    let (resume_tx, resume_rx) = mpsc::channel();
    let (recycle_tx, recycle_rx) = mpsc::sync_channel(shape.batches + 2);
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("mcptape-frame".into())
            .spawn_scoped(s, move || {
                stage1(
                    data,
                    pos,
                    line_no,
                    shape,
                    &batch_tx,
                    &resume_rx,
                    &recycle_rx,
                );
            });
        match worker {
            Ok(_) => stage2(lines, batch_rx, resume_tx, recycle_tx, each),
            Err(_) => super::frame_each(lines, each),
        }
    })
}

/// Stage 1: frames the lines of `data` from byte `pos` (the next line is
/// number `line_no + 1`) into batches sent to `batches`, until the input
/// ends or stage 2 stops.
fn stage1<'a>(
    data: &'a [u8],
    mut pos: usize,
    mut line_no: usize,
    shape: Shape,
    batches: &mpsc::SyncSender<Batch<'a>>,
    resume: &mpsc::Receiver<(usize, usize)>,
    recycled: &mpsc::Receiver<Vec<Framed<'a>>>,
) {
    loop {
        let mut lines = recycled
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(shape.batch_lines));
        let mut bytes = 0usize;
        let then = loop {
            let Some(rest) = data.get(pos..).filter(|r| !r.is_empty()) else {
                break Then::End;
            };
            if lines.len() >= shape.batch_lines || bytes >= shape.batch_bytes {
                break Then::More;
            }
            // A line end within `long_line_bytes`, or the input's end.
            let window = &rest[..rest.len().min(shape.long_line_bytes.saturating_add(1))];
            let (len, terminated) = match memchr::memchr(b'\n', window) {
                Some(n) => (n, true),
                None if window.len() == rest.len() => (rest.len(), false),
                None => break Then::Long,
            };
            line_no += 1;
            lines.push(Framed::frame(&rest[..len], line_no, pos, terminated));
            let next = len + usize::from(terminated);
            bytes += next;
            pos += next;
        };
        let (long, end) = (matches!(then, Then::Long), matches!(then, Then::End));
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
    batches: mpsc::Receiver<Batch<'a>>,
    resume: mpsc::Sender<(usize, usize)>,
    recycle: mpsc::SyncSender<Vec<Framed<'a>>>,
    each: &mut dyn FnMut(Framed<'_>) -> ControlFlow<()>,
) -> std::io::Result<()> {
    while let Ok(mut batch) = batches.recv() {
        for f in batch.lines.drain(..) {
            lines.at(&f);
            if each(f).is_break() {
                return Ok(());
            }
        }
        // Full only if stage 1 made more batches than it was sent back.
        let _ = recycle.try_send(batch.lines);
        match batch.then {
            Then::More => {}
            Then::End => break,
            Then::Long => {
                let Some(terminated) = lines.advance()? else {
                    break;
                };
                let f = Framed::frame(lines.line(), lines.line_no, lines.start, terminated);
                if each(f).is_break() || resume.send((lines.pos, lines.line_no)).is_err() {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}
