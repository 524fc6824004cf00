//! The pass over a mapped transcript on two threads (the design of
//! simdjson's `parse_many`: one thread finds and parses the documents a
//! batch ahead of the one that uses them), sharing the framing.
//!
//! The lines are cut in batches of at most [`Shape::batch_lines`] lines
//! from one cursor ([`Shared`]: one `memchr` a line under a lock), each
//! batch numbered, and framed outside the lock ([`Framed::frame`]: the
//! record, the one envelope scan of its message). Stage 1, on a worker
//! thread: cuts and frames batch after batch and sends them to stage 2.
//! Stage 2, on the calling thread: gives each framed line to the pass (the
//! rules, findings, output) in file order, tells the map's `release` what
//! lies behind the line it is at, never what has been framed ahead of it;
//! when the next batch has not arrived, it cuts and frames the next one
//! itself instead of waiting. So neither thread waits while lines are left
//! to frame: a worker slowed or descheduled by another process costs no more
//! than framing on one thread, and on an idle machine the framing is shared
//! by whichever thread is free.
//!
//! A batch borrows its lines from the map (no message byte is copied); at
//! most [`Shape::batches`] wait in the channel and stage 2 holds at most
//! `batches + 2` before their turn, so batches are framed at most
//! `2 × batches + 3` ahead of the rules: with [`Shape::DEFAULT`], at most
//! 9 × 512 framed lines (about 700 bytes each: 3.2 MB) and 9 ×
//! ([`BATCH_BYTES`] + [`LONG_LINE_BYTES`]) = 11.25 MiB of mapped pages read
//! ahead of the rules, on top of the [`SliceLines::RELEASE_STEP`] not yet
//! released behind them.
//! A line longer than [`Shape::long_line_bytes`] ends a batch and is left to
//! stage 2, which reads and frames it itself and then lets batches be cut
//! after it: the pages of a long line are brought in once, while stage 2
//! needs them, as the plain loop does. When stage 2 stops (a cut last
//! record, the pass breaks, a panic), it drops its ends of the channels and
//! closes the cursor: stage 1's next send, cut or wait fails and it
//! returns; [`std::thread::scope`] joins it.

use std::ops::ControlFlow;
use std::sync::mpsc;

use super::{Cut, Framed, Line, LineSource, SliceLines};

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
    /// Whether stage 1 runs on a worker thread (else the caller's thread
    /// cuts and frames every batch: tests).
    pub(crate) worker: bool,
}

impl Shape {
    /// [`BATCH_LINES`], [`BATCH_BYTES`], [`BATCHES_AHEAD`], [`LONG_LINE_BYTES`].
    pub(crate) const DEFAULT: Shape = Shape {
        batch_lines: BATCH_LINES,
        batch_bytes: BATCH_BYTES,
        batches: BATCHES_AHEAD,
        long_line_bytes: LONG_LINE_BYTES,
        worker: true,
    };
}

/// Small batch shapes: one line a batch, a few lines, a byte bound that
/// ends batches first, and lines over 16 bytes left to stage 2; then the
/// first and the last without a worker (the caller's thread frames every
/// batch, as it does when the next batch is not framed yet).
#[cfg(test)]
pub(crate) const TEST_SHAPES: [Shape; 6] = [
    Shape {
        batch_lines: 1,
        batch_bytes: usize::MAX,
        batches: 1,
        long_line_bytes: usize::MAX,
        worker: true,
    },
    Shape {
        batch_lines: 3,
        batch_bytes: usize::MAX,
        batches: 2,
        long_line_bytes: usize::MAX,
        worker: true,
    },
    Shape {
        batch_lines: 1000,
        batch_bytes: 40,
        batches: 3,
        long_line_bytes: usize::MAX,
        worker: true,
    },
    Shape {
        batch_lines: 2,
        batch_bytes: usize::MAX,
        batches: 1,
        long_line_bytes: 16,
        worker: true,
    },
    Shape {
        batch_lines: 1,
        batch_bytes: usize::MAX,
        batches: 1,
        long_line_bytes: usize::MAX,
        worker: false,
    },
    Shape {
        batch_lines: 2,
        batch_bytes: usize::MAX,
        batches: 1,
        long_line_bytes: 16,
        worker: false,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// Another batch.
    More,
    /// A line longer than [`Shape::long_line_bytes`] (or not to be framed:
    /// [`LineSource::for_each_line`]'s `frame_below`), for stage 2 to read;
    /// no batch is cut until stage 2 says where the next line starts.
    Long,
    /// Nothing: the input ends.
    End,
}

/// Lines framed by either thread, the `seq`th batch of the input.
struct Batch<'a> {
    seq: usize,
    lines: Vec<Framed<'a>>,
    then: Then,
}

/// Where the next batch starts: shared by the two threads, each of which
/// cuts a batch under the lock (one `memchr` a line) and frames it outside.
struct Cursor {
    /// Byte offset of the next line.
    pos: usize,
    /// Number of the line before it.
    line_no: usize,
    /// Number of the next batch cut.
    seq: usize,
    /// Whether a batch can be cut: [`Then::More`]; [`Then::Long`]: not
    /// until stage 2 has read the long line; [`Then::End`]: the input ended
    /// or stage 2 stopped.
    state: Then,
}

/// The [`Cursor`] and the condition stage 1 waits on while stage 2 reads a
/// long line.
struct Shared {
    cursor: std::sync::Mutex<Cursor>,
    moved: std::sync::Condvar,
}

impl Shared {
    /// The cursor, whether or not a thread panicked holding it (it is left
    /// consistent between statements).
    fn lock(&self) -> std::sync::MutexGuard<'_, Cursor> {
        self.cursor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Cuts the next batch of `data` into `cuts` (cleared first): its
    /// number and what comes after it; `None` when no batch can be cut now
    /// (the input ended, stage 2 stopped or reads a long line). Lines of
    /// `framed_below` bytes or more end a batch ([`Then::Long`]).
    fn cut<'a>(
        &self,
        data: &'a [u8],
        shape: Shape,
        framed_below: usize,
        cuts: &mut Vec<Cut<'a>>,
    ) -> Option<(usize, Then)> {
        cuts.clear();
        let mut c = self.lock();
        if c.state != Then::More {
            return None;
        }
        let mut bytes = 0usize;
        let then = loop {
            let Some(rest) = data.get(c.pos..).filter(|r| !r.is_empty()) else {
                break Then::End;
            };
            if cuts.len() >= shape.batch_lines || bytes >= shape.batch_bytes {
                break Then::More;
            }
            // A line end, or the input's end, within `framed_below` bytes.
            let window = &rest[..rest.len().min(framed_below)];
            let (len, terminated) = match memchr::memchr(b'\n', window) {
                Some(n) => (n, true),
                None if rest.len() < framed_below => (rest.len(), false),
                None => break Then::Long,
            };
            c.line_no += 1;
            cuts.push(Cut {
                line_no: c.line_no,
                offset: c.pos,
                terminated,
                line: &rest[..len],
            });
            let next = len + usize::from(terminated);
            bytes += next;
            c.pos += next;
        };
        let seq = c.seq;
        c.seq += 1;
        c.state = then;
        Some((seq, then))
    }

    /// Lets batches be cut again from byte `pos` (line `line_no` read last),
    /// after stage 2 read a long line.
    fn resume(&self, pos: usize, line_no: usize) {
        let mut c = self.lock();
        (c.pos, c.line_no, c.state) = (pos, line_no, Then::More);
        self.moved.notify_all();
    }

    /// No batch is cut any more (stage 2 stops).
    fn stop(&self) {
        self.lock().state = Then::End;
        self.moved.notify_all();
    }

    /// Waits while stage 2 reads a long line; whether batches may be cut.
    fn wait_while_long(&self) -> bool {
        let mut c = self.lock();
        while c.state == Then::Long {
            c = self
                .moved
                .wait(c)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        c.state == Then::More
    }
}

/// Frames the lines cut into `cuts` into `lines` (in their order).
fn frame_cuts<'a>(cuts: &[Cut<'a>], lines: &mut Vec<Framed<'a>>) {
    lines.extend(cuts.iter().map(|c| c.frame()));
}

/// Gives every line after `lines`' current one to `each` in file order
/// until it breaks, framed when shorter than `frame_below` bytes
/// ([`LineSource::for_each_line`]). Both threads cut and frame batches:
/// the worker (stage 1) one after another, a few ahead; the caller's
/// (stage 2, the rules) one of its own whenever the next batch is not
/// framed yet, so that neither waits for the other while lines are left to
/// frame (a worker slowed by another process costs no more than framing on
/// one thread). When the worker cannot start (or [`Shape::worker`] is
/// false), the caller's thread cuts and frames every batch.
///
/// # Errors
/// None in practice: [`SliceLines`] reads no I/O (its `advance` is called
/// for long lines).
pub(crate) fn run(
    lines: &mut SliceLines<'_>,
    shape: Shape,
    frame_below: usize,
    each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
) -> std::io::Result<()> {
    let data = lines.data;
    let shared = Shared {
        cursor: std::sync::Mutex::new(Cursor {
            pos: lines.pos,
            line_no: lines.line_no,
            seq: 0,
            state: Then::More,
        }),
        moved: std::sync::Condvar::new(),
    };
    let framed_below = frame_below.min(shape.long_line_bytes.saturating_add(1));
    let (batch_tx, batch_rx) = mpsc::sync_channel(shape.batches);
    let (recycle_tx, recycle_rx) = mpsc::sync_channel(shape.batches + 2);
    let shared = &shared;
    std::thread::scope(|s| {
        let worker = shape.worker.then(|| {
            std::thread::Builder::new()
                .name("mcptape-frame".into())
                .spawn_scoped(s, move || {
                    stage1(data, shared, framed_below, shape, &batch_tx, &recycle_rx);
                })
        });
        let batches = match worker {
            Some(Ok(_)) => Some(batch_rx),
            // No worker: the caller's thread frames every batch.
            _ => None,
        };
        let r = stage2(
            lines,
            Stage2 {
                shared,
                shape,
                frame_below,
                framed_below,
                batches,
                recycle: recycle_tx,
            },
            each,
        );
        shared.stop();
        r
    })
}

/// Stage 1: cuts and frames batches of `data` and sends them to `batches`
/// until no batch is left to cut or stage 2 stops; waits while stage 2
/// reads a long line.
fn stage1<'a>(
    data: &'a [u8],
    shared: &Shared,
    framed_below: usize,
    shape: Shape,
    batches: &mpsc::SyncSender<Batch<'a>>,
    recycled: &mpsc::Receiver<Vec<Framed<'a>>>,
) {
    let mut cuts = Vec::with_capacity(shape.batch_lines);
    loop {
        let Some((seq, then)) = shared.cut(data, shape, framed_below, &mut cuts) else {
            if shared.wait_while_long() {
                continue;
            }
            return;
        };
        let mut lines = recycled
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(shape.batch_lines));
        frame_cuts(&cuts, &mut lines);
        if batches.send(Batch { seq, lines, then }).is_err() {
            return;
        }
    }
}

/// What stage 2 works with beside the lines and `each`.
struct Stage2<'s, 'a> {
    shared: &'s Shared,
    shape: Shape,
    frame_below: usize,
    framed_below: usize,
    /// The worker's batches; `None` without a worker.
    batches: Option<mpsc::Receiver<Batch<'a>>>,
    recycle: mpsc::SyncSender<Vec<Framed<'a>>>,
}

/// Stage 2: gives the framed lines to `each` in order, `lines` kept at the
/// line given (its `release` told what lies behind it); frames a batch
/// itself when the next one has not arrived; reads and frames the long
/// lines. Returns when the input ends, `each` breaks or stage 1 is gone.
fn stage2<'a>(
    lines: &mut SliceLines<'a>,
    st: Stage2<'_, 'a>,
    each: &mut dyn FnMut(Line<'_, '_>) -> ControlFlow<()>,
) -> std::io::Result<()> {
    let data = lines.data;
    let mut cuts = Vec::with_capacity(st.shape.batch_lines);
    // Batches here before their turn (framed here, or sent by stage 1 while
    // this thread framed a later one): a few at most.
    let mut held: Vec<Batch<'a>> = Vec::new();
    let mut spare: Vec<Vec<Framed<'a>>> = Vec::new();
    let mut next = 0usize;
    let mut worker_gone = st.batches.is_none();
    loop {
        let mut batch = if let Some(i) = held.iter().position(|b| b.seq == next) {
            held.swap_remove(i)
        } else {
            let sent = match &st.batches {
                Some(rx) if !worker_gone => match rx.try_recv() {
                    Ok(b) => Some(b),
                    Err(mpsc::TryRecvError::Empty) => None,
                    Err(mpsc::TryRecvError::Disconnected) => {
                        worker_gone = true;
                        None
                    }
                },
                _ => None,
            };
            if let Some(b) = sent {
                held.push(b);
                continue;
            }
            // The next batch is not here: frame one (the next to cut) here,
            // unless enough are held already.
            if held.len() < st.shape.batches + 2
                && let Some((seq, then)) = st.shared.cut(data, st.shape, st.framed_below, &mut cuts)
            {
                let mut lines = spare
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(st.shape.batch_lines));
                frame_cuts(&cuts, &mut lines);
                held.push(Batch { seq, lines, then });
                continue;
            }
            // Nothing to cut (or enough held): the next batch is being
            // framed by stage 1.
            match &st.batches {
                Some(rx) if !worker_gone => match rx.recv() {
                    Ok(b) => {
                        held.push(b);
                        continue;
                    }
                    Err(_) => {
                        worker_gone = true;
                        continue;
                    }
                },
                // Stage 1 is gone and nothing is left to cut: the end (or
                // stage 1 panicked, which the scope reports).
                _ => break,
            }
        };
        next += 1;
        for f in &mut batch.lines {
            lines.at(f);
            if each(Line::Framed(f)).is_break() {
                return Ok(());
            }
        }
        batch.lines.clear();
        // Back to stage 1 when it runs and wants it; else kept here.
        if let Err(mpsc::TrySendError::Full(v) | mpsc::TrySendError::Disconnected(v)) =
            st.recycle.try_send(batch.lines)
        {
            spare.push(v);
        }
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
                if cut.give(st.frame_below, each).is_break() {
                    return Ok(());
                }
                st.shared.resume(lines.pos, lines.line_no);
            }
        }
    }
    Ok(())
}
