//! The stdio recording proxy: `mcptape record -o FILE -- CMD ARGS...`.
//!
//! A host launches mcptape in place of the server. mcptape starts the server
//! as a child and copies bytes both ways **unchanged** (raw chunks are
//! forwarded as soon as they are read; the recorder only observes them), the
//! child's stderr is passed through to mcptape's stderr and recorded, and the
//! child's exit code is mcptape's exit code (128 + N when it died of signal N,
//! as shells report it). SIGINT, SIGTERM and SIGHUP sent to mcptape are
//! forwarded to the child, and the session ends: the client side stops
//! (nothing more is forwarded), closing the child's stdin, then the shutdown
//! sequence below runs for a child the signal did not end. The exit record
//! names the signal ([`ServerExit::forwarded`]) beside the code the child
//! exited with.
//!
//! Shutdown (MCP spec 2025-11-25, "Lifecycle" §Shutdown, stdio): when the
//! client closes mcptape's stdin, mcptape closes the child's stdin, waits
//! [`StdioOptions::grace`], sends SIGTERM, waits [`StdioOptions::term_grace`],
//! then sends SIGKILL. A real server may otherwise wait a minute on a request
//! the client never answered (server-everything does, for `roots/list`).
//!
//! Buffering is bounded: one line buffer per direction, holding the line
//! being received and one read of up to [`CHUNK_BYTES`] (at most
//! [`MAX_LINE_BYTES`] + 1 + [`CHUNK_BYTES`] bytes). A slow reader on one
//! side stalls the other side's reads (back-pressure), never grows a queue.
//! Record times are taken when a line's last byte arrives.
//!
//! **One copy of a line in mcptape, one scan of it.** Each read lands in the
//! line buffer right after the part of the line already held, so a 16 MiB
//! line is read into place, scanned there as each read arrives (one pass,
//! while the read is in cache: the line's end, whether it is exactly one JSON
//! value, and for client lines the revision pre-filter; see `crate::scan`,
//! whose verdicts are those of `mcptape_transport::stdio::LineFramer`),
//! written to the transcript from there (`writev(2)` of record prefix, the
//! line's bytes and `}\n`, in pieces of at most
//! [`crate::sink::TRANSCRIPT_WRITE_BYTES`], with no further pass over the
//! line) and forwarded. The pipes mcptape reads and writes are grown to
//! [`PIPE_BYTES`] where the kernel allows it, so a big line moves in 1 MiB
//! reads and writes.
//!
//! **No copy out of mcptape between pipes** (Linux; `crate::forward`): when
//! the client side is a pipe (what a host gives a stdio server; the server's
//! side always is), a chunk is peeked with `tee(2)` into a private pipe and
//! read from there into the line buffer, and forwarded afterwards by
//! `splice(2)`, which hands the pipe's pages to the peer instead of copying
//! them out of the line buffer into freshly allocated pipe pages. Anything
//! else (a file, a terminal, a socket, [`run_stdio_proxy_with`]'s streams) is
//! written out of the line buffer.
//!
//! **Record before forward.** Each chunk read is scanned first; every line it
//! completes is written to the transcript file (`write(2)`/`writev(2)` from
//! the line buffer, no user-space queue: [`TranscriptSink::record_message_at`]) **before** the
//! chunk is forwarded to the peer (spliced chunks too: `tee(2)` does not
//! consume, the `splice(2)` comes after the record). A line reaches the peer only when the
//! chunk holding its `\n` is forwarded, so every line the peer has received
//! is already in the kernel's page cache, which survives a SIGKILL of
//! mcptape (a user-space queue would not). A SIGKILL while a record is being
//! written leaves a cut last line (the reader drops it and says so), and that
//! line was not forwarded yet. A request is thus always recorded before the
//! server can answer it. A transcript that can no longer be written (disk
//! full, file size limit, EIO) ends the session at once: the chunk whose
//! lines failed is not forwarded, the server's stdin is closed and the
//! shutdown sequence runs, and `record` exits with the write error, so no
//! line reaches a peer unrecorded. When the server exits, the client-side pump is
//! stopped (never aborted) only at a read or a write, then the exit record
//! is written.

use std::sync::Arc;
use std::time::Duration;

use mcptape_transcript::{Direction, Event};
use mcptape_transport::child::{EndedBy, StdioChild, spawn_stdio_group};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::{RecordError, RecordErrorKind};
use crate::forward::{Ends, Sink, Source};
use crate::scan::{LineScan, Scanned, Verdict};
use crate::sink::TranscriptSink;
use mcptape_transport::FrameError;
use mcptape_transport::framed::MAX_LINE_BYTES;
use mcptape_transport::stdio::{FrameRef, is_exact_json};

/// Largest single read from a proxied stream, in bytes (1 MiB, the
/// [`PIPE_BYTES`] a grown pipe holds).
pub const CHUNK_BYTES: usize = 1024 * 1024;

/// Capacity mcptape asks the kernel for on the pipes it proxies, in bytes
/// ([`mcptape_transport::child::PIPE_BYTES`], 1 MiB).
pub use mcptape_transport::child::PIPE_BYTES;

/// Default time the server gets to exit by itself after its stdin is closed (2 s,
/// the Python SDK's `PROCESS_TERMINATION_TIMEOUT`;
/// [`mcptape_transport::child::STDIN_CLOSE_GRACE`]).
pub const DEFAULT_GRACE: Duration = mcptape_transport::child::STDIN_CLOSE_GRACE;

/// Default time between SIGTERM and SIGKILL (2 s;
/// [`mcptape_transport::child::SIGTERM_GRACE`]).
pub const DEFAULT_TERM_GRACE: Duration = mcptape_transport::child::SIGTERM_GRACE;

/// How long mcptape keeps draining the child's stdout/stderr after it exited
/// (a grandchild may hold the pipes open), in ms.
pub const DRAIN_AFTER_EXIT_MS: u64 = 500;

/// Options of the stdio proxy.
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// argv of the server (at least the program).
    pub command: Vec<String>,
    /// Time the server gets to exit after its stdin closed, before SIGTERM.
    pub grace: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub term_grace: Duration,
}

impl StdioOptions {
    /// Options with the default grace periods.
    pub fn new(command: Vec<String>) -> Self {
        StdioOptions {
            command,
            grace: DEFAULT_GRACE,
            term_grace: DEFAULT_TERM_GRACE,
        }
    }
}

/// How the server ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerExit {
    /// Exit code, if it exited normally.
    pub code: Option<i32>,
    /// Signal number, if a signal ended it.
    pub signal: Option<i32>,
    /// Whether mcptape had to send SIGTERM/SIGKILL after the grace period.
    pub killed_by_proxy: bool,
    /// The last signal mcptape received and forwarded to the server before it ended (2
    /// SIGINT, 15 SIGTERM, 1 SIGHUP), if one was: the session was stopped, the server did
    /// not end by itself. The exit record carries it as its `signal` (beside `code` when the
    /// server then exited by itself).
    pub forwarded: Option<i32>,
}

impl ServerExit {
    /// The exit code mcptape itself should end with: the child's code, or 128 + signal.
    pub fn proxy_exit_code(&self) -> u8 {
        match (self.code, self.signal) {
            (Some(c), _) => u8::try_from(c & 0xff).unwrap_or(1),
            (None, Some(s)) => u8::try_from((128 + s) & 0xff).unwrap_or(1),
            (None, None) => 1,
        }
    }
}

/// Runs the proxy between mcptape's own stdin/stdout/stderr and the server.
///
/// Errors: [`RecordErrorKind::EmptyCommand`], [`RecordErrorKind::Spawn`] if the
/// server cannot be started, [`RecordErrorKind::Io`] on a failure of the
/// server's pipes, or (`client stdout`, `client stderr`) on a write to the
/// client that failed other than by a closed pipe (a full disk), returned once
/// the server has ended and its exit is recorded. A closed client pipe (the
/// host went away) ends the session like an EOF, it is not an error.
pub async fn run_stdio_proxy(
    opts: StdioOptions,
    sink: Arc<TranscriptSink>,
) -> Result<ServerExit, RecordError> {
    run_proxy(
        opts,
        sink,
        client_stdin(),
        client_stdout(),
        tokio::io::stderr(),
    )
    .await
}

/// One client-side end of the proxy: a pipe (moved with `tee(2)`/`splice(2)`
/// on Linux, [`crate::forward`]) or any stream (copied).
enum Side<S> {
    /// A pipe or FIFO, grown to [`PIPE_BYTES`].
    Pipe(std::os::fd::OwnedFd),
    /// Anything else (a file, a terminal, a socket; tests and embedders).
    Stream(S),
}

/// mcptape's stdin: the pipe when stdin is a pipe/FIFO (what hosts give a
/// server), otherwise tokio's blocking-thread stdin.
fn client_stdin() -> Side<Box<dyn AsyncRead + Send + Unpin>> {
    client_pipe(&std::io::stdin()).map_or_else(
        || Side::Stream(Box::new(tokio::io::stdin()) as _),
        Side::Pipe,
    )
}

/// mcptape's stdout: the pipe when stdout is a pipe/FIFO, otherwise tokio's
/// blocking-thread stdout.
fn client_stdout() -> Side<Box<dyn AsyncWrite + Send + Unpin>> {
    client_pipe(&std::io::stdout()).map_or_else(
        || Side::Stream(Box::new(tokio::io::stdout()) as _),
        Side::Pipe,
    )
}

/// A copy of `fd` when it is a pipe or FIFO, grown to [`PIPE_BYTES`].
fn client_pipe(fd: &impl std::os::fd::AsFd) -> Option<std::os::fd::OwnedFd> {
    use std::os::unix::fs::FileTypeExt;
    let fd = fd.as_fd().try_clone_to_owned().ok()?;
    let is_pipe = std::fs::File::from(fd.try_clone().ok()?)
        .metadata()
        .is_ok_and(|m| m.file_type().is_fifo());
    is_pipe.then(|| {
        grow_pipe(&fd);
        fd
    })
}

/// Grows the pipe `fd` to [`PIPE_BYTES`] ([`mcptape_transport::child::grow_pipe`]).
fn grow_pipe(fd: &impl std::os::fd::AsFd) {
    let _ = mcptape_transport::child::grow_pipe(fd);
}

/// [`run_stdio_proxy`] with explicit client-side streams (for tests and embedding).
///
/// Errors: as [`run_stdio_proxy`].
pub async fn run_stdio_proxy_with(
    opts: StdioOptions,
    sink: Arc<TranscriptSink>,
    client_in: impl AsyncRead + Send + Unpin + 'static,
    client_out: impl AsyncWrite + Send + Unpin + 'static,
    client_err: impl AsyncWrite + Send + Unpin + 'static,
) -> Result<ServerExit, RecordError> {
    run_proxy(
        opts,
        sink,
        Side::Stream(Box::new(client_in)),
        Side::Stream(Box::new(client_out)),
        client_err,
    )
    .await
}

/// The proxy between the client-side ends and a server it starts.
async fn run_proxy(
    opts: StdioOptions,
    sink: Arc<TranscriptSink>,
    client_in: Side<Source>,
    client_out: Side<Sink>,
    client_err: impl AsyncWrite + Send + Unpin + 'static,
) -> Result<ServerExit, RecordError> {
    let mut child = spawn_server(&opts.command)?;
    let io = |what| RecordError::io("server process", std::io::Error::other(what));
    let child_in = child.stdin.take().ok_or_else(|| io("no stdin pipe"))?;
    let child_out = child.stdout.take().ok_or_else(|| io("no stdout pipe"))?;
    let child_err = child.stderr.take().ok_or_else(|| io("no stderr pipe"))?;
    grow_pipe(&child_in);
    grow_pipe(&child_out);
    let pipe_error = |e| RecordError::io("server process", e);
    let c2s_ends = match client_in {
        Side::Pipe(fd) => Ends::between_pipes(fd, child_in.into_owned_fd().map_err(pipe_error)?)
            .map_err(pipe_error)?,
        Side::Stream(from) => Ends::Copy {
            from,
            to: Box::new(child_in),
        },
    };
    let s2c_ends = match client_out {
        Side::Pipe(fd) => Ends::between_pipes(child_out.into_owned_fd().map_err(pipe_error)?, fd)
            .map_err(pipe_error)?,
        Side::Stream(to) => Ends::Copy {
            from: Box::new(child_out),
            to,
        },
    };

    // Turns true when the server has exited: the server-side pumps then stop
    // after DRAIN_AFTER_EXIT_MS without data.
    let (exited_tx, exited) = tokio::sync::watch::channel(false);
    // Turns true once the server side is drained: the client-side pump then
    // stops at its next read or write (the client may keep its stdin open).
    let (stop_c2s_tx, stop_c2s) = tokio::sync::watch::channel(false);
    // client → server
    let (eof_tx, mut eof_rx) = tokio::sync::oneshot::channel::<()>();
    // Notified by a pump that met a transcript write failure: the session ends.
    let abort = Arc::new(tokio::sync::Notify::new());
    let q = sink.clone();
    let a = abort.clone();
    let c2s = tokio::spawn(async move {
        let r = pump(
            c2s_ends,
            &q,
            &a,
            Stop::Now(stop_c2s),
            Dir::Message(Direction::C2s),
            "server stdin",
        )
        .await;
        let _ = eof_tx.send(());
        r
    });
    // server → client
    let s2c = spawn_pump(
        s2c_ends,
        sink.clone(),
        abort.clone(),
        Stop::IdleAfterExit(exited.clone()),
        Dir::Message(Direction::S2c),
        "client stdout",
    );
    // server stderr → our stderr
    let err = spawn_pump(
        Ends::Copy {
            from: Box::new(child_err),
            to: Box::new(client_err),
        },
        sink.clone(),
        abort.clone(),
        Stop::IdleAfterExit(exited),
        Dir::Stderr,
        "client stderr",
    );

    let mut signals = ForwardSignals::new();
    let mut killed_by_proxy = false;
    let mut forwarded = None;
    let status = loop {
        tokio::select! {
            status = child.child.wait() => break status.map_err(|e| RecordError::io("server process", e))?,
            _ = &mut eof_rx => {
                // Client closed stdin (the pump dropped the server's stdin): grace, TERM, KILL.
                let ending = child
                    .shutdown_with(opts.grace, opts.term_grace)
                    .await
                    .map_err(|e| RecordError::io("server process", e))?;
                killed_by_proxy = ending.ended_by != EndedBy::Exit;
                break ending.status;
            }
            sig = signals.recv() => {
                if let Some(sig) = sig {
                    forwarded = Some(sig as i32);
                    let _ = child.signal(sig);
                    // The recording is being stopped: a server that outlives the signal (the
                    // Python SDK's raises KeyboardInterrupt, then waits for its stdin reader)
                    // gets the shutdown sequence: the client side stops, closing the server's
                    // stdin (the branch above then runs grace, SIGTERM, SIGKILL).
                    let _ = stop_c2s_tx.send(true);
                }
            }
            () = abort.notified() => {
                // The transcript failed: stop the client side now (it closes the
                // server's stdin; its end then takes the branch above).
                let _ = stop_c2s_tx.send(true);
            }
        }
    };
    use std::os::unix::process::ExitStatusExt;
    let exit = ServerExit {
        code: status.code(),
        signal: status.signal(),
        killed_by_proxy,
        forwarded,
    };

    // Drain what the child wrote before it died: the server-side pumps end at EOF, or
    // after DRAIN_AFTER_EXIT_MS without data (a grandchild may hold the pipes open).
    let _ = exited_tx.send(true);
    let to_client = s2c.await;
    let to_stderr = err.await;
    // The client side no longer matters: stop its pump at its next read or
    // write (never mid-record: a chunk's lines are recorded before it is
    // forwarded), then the exit.
    let _ = stop_c2s_tx.send(true);
    let _ = c2s.await;
    // A server that exits 0 on a forwarded SIGINT (server-everything does) did not end the
    // session by itself: the record says the signal beside its code (issue 28).
    sink.record(Event::Exit {
        code: exit.code,
        signal: exit.signal.or(exit.forwarded),
    });
    // What the client could not be given (its stdout on a full disk: ENOSPC; a closed pipe
    // is the client leaving, not an error) fails the session, after the exit record: every
    // line is recorded, but the client did not get them all (issue 28).
    for r in [to_client, to_stderr] {
        if let Ok(Err(e)) = r {
            return Err(e);
        }
    }
    Ok(exit)
}

/// Spawns the server `argv` in its own process group
/// ([`mcptape_transport::child::spawn_stdio_group`]: signals and the shutdown
/// sequence reach a launcher's children too).
///
/// Errors: [`RecordErrorKind::EmptyCommand`], [`RecordErrorKind::Spawn`].
pub(crate) fn spawn_server(argv: &[String]) -> Result<StdioChild, RecordError> {
    let (program, args) = argv.split_first().ok_or(RecordErrorKind::EmptyCommand)?;
    spawn_stdio_group(program, args).map_err(|source| {
        RecordError::new(RecordErrorKind::Spawn {
            program: program.clone(),
            source,
        })
    })
}

#[derive(Clone, Copy)]
enum Dir {
    Message(Direction),
    Stderr,
}

/// When a pump stops reading before EOF.
enum Stop {
    /// [`DRAIN_AFTER_EXIT_MS`] without data after the server exited (the
    /// server's stdout/stderr: a grandchild may hold them open). Writes to
    /// the client are not interrupted.
    IdleAfterExit(tokio::sync::watch::Receiver<bool>),
    /// As soon as the flag turns true, also during a write (the client's
    /// stdin: the server it fed is gone).
    Now(tokio::sync::watch::Receiver<bool>),
}

impl Stop {
    /// Resolves when a pending read should be given up.
    async fn reading(&mut self) {
        match self {
            Stop::IdleAfterExit(exited) => idle_after_exit(exited).await,
            Stop::Now(stop) => {
                let _ = stop.wait_for(|s| *s).await;
            }
        }
    }

    /// Resolves when a pending write should be given up.
    async fn writing(&mut self) {
        match self {
            Stop::IdleAfterExit(_) => std::future::pending().await,
            Stop::Now(stop) => {
                let _ = stop.wait_for(|s| *s).await;
            }
        }
    }
}

/// Runs [`pump`] on `ends` on its own task.
fn spawn_pump(
    ends: Ends,
    sink: Arc<TranscriptSink>,
    abort: Arc<tokio::sync::Notify>,
    stop: Stop,
    dir: Dir,
    to_name: &'static str,
) -> tokio::task::JoinHandle<Result<(), RecordError>> {
    tokio::spawn(async move { pump(ends, &sink, &abort, stop, dir, to_name).await })
}

/// Moves `ends`' bytes from `from` to `to` chunk by chunk ([`Ends`]: copied,
/// or spliced between two pipes), recording each completed line.
///
/// A chunk's completed lines are written to the transcript before the chunk
/// is written to `to` (record before forward: see the module docs), so every
/// line forwarded is recorded however the pump or the process ends, and a
/// message is recorded before its peer can answer it. Returns at EOF of
/// `from` or when `stop` says so; a write failure on `to` stops forwarding
/// but reading (and recording) goes on, so the other side is never blocked by
/// a vanished reader.
async fn pump(
    mut ends: Ends,
    sink: &TranscriptSink,
    abort: &tokio::sync::Notify,
    mut stop: Stop,
    dir: Dir,
    to_name: &'static str,
) -> Result<(), RecordError> {
    let mut lines = Lines::new(MAX_LINE_BYTES, matches!(dir, Dir::Message(Direction::C2s)));
    let mut forwarding = true;
    let mut first_write_error: Option<std::io::Error> = None;
    loop {
        let read = tokio::select! {
            r = ends.read_some(lines.spare()) => r,
            () = stop.reading() => break,
        };
        // End of stream, or a read error (the server's pipe broke: nothing
        // more can be read); the unterminated last line is recorded below.
        let n = match read {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let t_us = sink.now_us();
        // Record first: every line these bytes complete is in the transcript
        // before any of them is forwarded.
        lines.frame(n, |f, scanned| record_frame(sink, dir, t_us, f, scanned));
        if sink.has_failed() {
            // The transcript cannot be written (disk full, quota, EIO): these
            // bytes may complete a line it lacks, so they are not forwarded,
            // and the session ends (`TranscriptSink::finish` has the error).
            abort.notify_one();
            forwarding = false;
            break;
        }
        if forwarding {
            let written = tokio::select! {
                r = ends.forward(lines.fresh()) => r,
                () = stop.writing() => break,
            };
            if let Err(e) = written {
                forwarding = false;
                ends.stop_forwarding();
                first_write_error = Some(e);
            }
        }
        lines.consume();
    }
    // Ended or stopped early: the line held is still recorded.
    let t_us = sink.now_us();
    lines.finish(|f, scanned| record_frame(sink, dir, t_us, f, scanned));
    if forwarding {
        // Bounded like the writes: a stopped pump does not wait on a stuck peer.
        tokio::select! {
            () = ends.shutdown() => {}
            () = stop.writing() => {}
        }
    }
    drop(ends);
    match first_write_error {
        Some(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(RecordError::io(to_name, e)),
        _ => Ok(()),
    }
}

/// The line buffer of one proxied direction: the start of the line being
/// received, then the bytes of the last read, contiguous, so that a line is
/// never copied inside mcptape (see the module docs).
///
/// Each read is scanned once, as it arrives ([`LineScan`]: line ends, JSON
/// validity, the revision pre-filter), so a complete line is classified
/// without another pass over it. Its frames are those of
/// [`mcptape_transport::stdio::LineFramer::push_with`] on the same bytes, however they were read: cut
/// at `\n`, one trailing `\r` stripped, [`FrameRef::Message`] for exactly one
/// JSON value (a line the scanner does not accept is asked of
/// [`is_exact_json`], the framer's own test), [`FrameRef::Noise`] otherwise,
/// [`FrameRef::TooLong`] past the limit with the framer's line number and
/// stream offset. A line longer than `max` + 1 bytes is not held: its length
/// is counted as it comes (memory stays bounded by `max` + 1 + [`CHUNK_BYTES`]).
struct Lines {
    /// Longest line kept (bytes, `\n` and one trailing `\r` excluded).
    max: usize,
    /// `buf[..held]`: the start of the current line (no `\n`), scanned;
    /// `buf[held..held + fresh]`: the last read; the rest is room.
    buf: Vec<u8>,
    held: usize,
    fresh: usize,
    /// `buf[..framed]` is done with; [`Lines::consume`] drops it.
    framed: usize,
    /// State of the current line's scan.
    scan: LineScan,
    /// Once the current line passed `max` + 1 bytes (they are not kept): its
    /// length so far and its last byte (whether it ends in `\r`).
    overflow: Option<(usize, u8)>,
    /// 1-based number of the current line.
    line: u64,
    /// Stream offset of the current line's first byte.
    line_start: u64,
}

impl Lines {
    /// `watch`: compute the revision pre-filter of each line (client lines).
    fn new(max: usize, watch: bool) -> Self {
        Lines {
            max,
            buf: Vec::new(),
            held: 0,
            fresh: 0,
            framed: 0,
            scan: LineScan::new(watch),
            overflow: None,
            line: 1,
            line_start: 0,
        }
    }

    /// Room for the next read (up to [`CHUNK_BYTES`]), right after the bytes held.
    fn spare(&mut self) -> &mut [u8] {
        debug_assert_eq!(self.fresh, 0, "consume() after every frame()");
        let need = self.held + CHUNK_BYTES;
        if self.buf.len() < need {
            // Grows only (a new longest line); never on a line that fits.
            self.buf.resize(need, 0);
        }
        &mut self.buf[self.held..need]
    }

    /// Scans the `n` bytes just read into [`Lines::spare`], calling `emit`
    /// with every line they complete (borrowed from the buffer) and, for a
    /// message, what the scan found ([`Scanned`]; `None` for a line only
    /// serde_json accepted: the caller finds it out itself).
    fn frame(&mut self, n: usize, mut emit: impl FnMut(FrameRef<'_>, Option<Scanned>)) {
        let end = self.held + n;
        self.fresh = n;
        // Start of the current line in `buf`, first byte not scanned yet.
        let mut begin = 0;
        let mut pos = self.held;
        loop {
            let found = if self.overflow.is_some() {
                memchr::memchr(b'\n', &self.buf[pos..end])
            } else {
                self.scan.feed(&self.buf[pos..end])
            };
            let Some(k) = found else { break };
            self.end_line(begin, pos + k, &mut emit);
            pos += k + 1;
            begin = pos;
        }
        let rest = end - begin;
        if let Some((len, last)) = self.overflow.as_mut() {
            if rest > 0 {
                *len += rest;
                *last = self.buf[end - 1];
            }
            self.framed = end;
        } else if rest > self.max.saturating_add(1) {
            // +1: a trailing `\r` may still be stripped.
            self.overflow = Some((rest, self.buf[end - 1]));
            self.framed = end;
        } else {
            self.framed = begin;
        }
    }

    /// Emits the line `buf[begin..nl]` (`nl`: its `\n`, or the end of the
    /// stream), or the too-long marker of an overflowing one.
    fn end_line(
        &mut self,
        begin: usize,
        nl: usize,
        emit: &mut impl FnMut(FrameRef<'_>, Option<Scanned>),
    ) {
        let verdict = self.scan.verdict();
        self.scan.reset();
        let overflow = self.overflow.take();
        let error = |len: usize| {
            FrameRef::TooLong(FrameError::line_too_long(
                len,
                self.max,
                self.line,
                self.line_start,
            ))
        };
        let head = &self.buf[begin..nl];
        match overflow {
            Some((len, last)) => {
                let cr = head.last().map_or(last == b'\r', |&b| b == b'\r');
                emit(error(len + head.len() - usize::from(cr)), None);
            }
            None => {
                let line = head.strip_suffix(b"\r").unwrap_or(head);
                if line.len() > self.max {
                    emit(error(line.len()), None);
                } else {
                    match verdict {
                        Verdict::Json(scanned) => emit(FrameRef::Message(line), Some(scanned)),
                        Verdict::Unknown if is_exact_json(line) => {
                            emit(FrameRef::Message(line), None)
                        }
                        Verdict::Unknown => emit(FrameRef::Noise(line), None),
                    }
                }
            }
        }
        let bytes = overflow.map_or(0, |(len, _)| len) + head.len() + 1;
        self.line += 1;
        self.line_start += bytes as u64;
    }

    /// The bytes of the last read, to forward (after [`Lines::frame`]).
    fn fresh(&self) -> &[u8] {
        &self.buf[self.held..self.held + self.fresh]
    }

    /// Drops what was framed and keeps the rest of the line for the next read.
    fn consume(&mut self) {
        let end = self.held + self.fresh;
        self.buf.copy_within(self.framed..end, 0);
        self.held = end - self.framed;
        self.fresh = 0;
        self.framed = 0;
    }

    /// Ends the stream: an unterminated last line becomes a frame.
    fn finish(&mut self, mut emit: impl FnMut(FrameRef<'_>, Option<Scanned>)) {
        self.consume();
        if self.overflow.is_some() || self.held > 0 {
            let held = self.held;
            self.end_line(0, held, &mut emit);
            self.held = 0;
        }
    }
}

/// Resolves [`DRAIN_AFTER_EXIT_MS`] after the server exited (restarted by every read).
async fn idle_after_exit(exited: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = exited.wait_for(|e| *e).await;
    tokio::time::sleep(Duration::from_millis(DRAIN_AFTER_EXIT_MS)).await;
}

/// Writes the record of one framed line, stamped `t_us` (when its last byte
/// arrived). A message goes the raw path (no re-parse, no copy); noise,
/// stderr and too-long markers are rare and go through the typed records.
fn record_frame(
    sink: &TranscriptSink,
    dir: Dir,
    t_us: u64,
    f: FrameRef<'_>,
    scanned: Option<Scanned>,
) {
    match (dir, f) {
        // Exactly one JSON value: the scan checked it, it is not parsed again.
        (Dir::Message(d), FrameRef::Message(l)) => {
            sink.record_scanned_message_at(Some(t_us), d, l, scanned)
        }
        (Dir::Message(d), FrameRef::Noise(l)) => sink.record_line_at(Some(t_us), d, l, None),
        (Dir::Stderr, FrameRef::Message(l) | FrameRef::Noise(l)) => sink.record_at(
            Some(t_us),
            Event::Stderr {
                line: String::from_utf8_lossy(l).into_owned(),
            },
        ),
        (Dir::Message(d), FrameRef::TooLong(e)) => sink.record_at(
            Some(t_us),
            Event::Noise {
                dir: d,
                line: format!("<mcptape: {e}; passed through, not recorded>"),
            },
        ),
        (Dir::Stderr, FrameRef::TooLong(e)) => sink.record_at(
            Some(t_us),
            Event::Stderr {
                line: format!("<mcptape: stderr {e}; passed through, not recorded>"),
            },
        ),
    }
}

/// SIGINT/SIGTERM/SIGHUP received by mcptape, to forward to the child.
struct ForwardSignals {
    int: Option<tokio::signal::unix::Signal>,
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
}

impl ForwardSignals {
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        ForwardSignals {
            int: signal(SignalKind::interrupt()).ok(),
            term: signal(SignalKind::terminate()).ok(),
            hup: signal(SignalKind::hangup()).ok(),
        }
    }

    async fn recv(&mut self) -> Option<nix::sys::signal::Signal> {
        use nix::sys::signal::Signal;
        async fn one(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
            match s {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            Some(()) = one(&mut self.int) => Some(Signal::SIGINT),
            Some(()) = one(&mut self.term) => Some(Signal::SIGTERM),
            Some(()) = one(&mut self.hup) => Some(Signal::SIGHUP),
            else => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcptape_transcript::{ServerSpec, Transport};
    use mcptape_transport::FrameErrorKind;
    use mcptape_transport::stdio::{Frame, LineFramer};
    use tokio::io::AsyncWriteExt;

    /// Lines of exactly `LINE` bytes (newline included), numbered.
    const LINE: usize = 100;

    fn line(i: usize) -> Vec<u8> {
        let head =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\",\"params\":{{\"pad\":\"");
        let mut l = head.into_bytes();
        l.resize(LINE - 4, b'x');
        l.extend_from_slice(b"\"}}\n");
        assert_eq!(l.len(), LINE);
        l
    }

    /// `grow_pipe` makes a fresh pipe (64 KiB) hold `PIPE_BYTES` (1 MiB), as
    /// the kernel reports it back (`F_GETPIPE_SZ`).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn grown_pipe_holds_pipe_bytes() {
        use nix::fcntl::{FcntlArg, fcntl};
        let (r, w) = std::io::pipe().unwrap();
        let size = |f: &std::io::PipeWriter| fcntl(f, FcntlArg::F_GETPIPE_SZ).unwrap();
        assert_eq!(size(&w), 64 * 1024);
        grow_pipe(&w);
        assert_eq!(usize::try_from(size(&w)).unwrap(), PIPE_BYTES);
        drop(r);
    }

    /// Frames `Lines` (limit `max`) yields when `input` arrives in reads of
    /// `sizes` bytes (cycled), and the bytes it gives to forward.
    fn frames_of_lines(max: usize, input: &[u8], sizes: &[usize]) -> (Vec<Frame>, Vec<u8>) {
        let mut lines = Lines::new(max, true);
        let (mut frames, mut forwarded) = (Vec::new(), Vec::new());
        let mut rest = input;
        for k in 0.. {
            if rest.is_empty() {
                break;
            }
            let room = lines.spare();
            let n = sizes[k % sizes.len()].clamp(1, room.len()).min(rest.len());
            room[..n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            lines.frame(n, |f, _| frames.push(f.to_owned_frame()));
            forwarded.extend_from_slice(lines.fresh());
            lines.consume();
            assert!(
                lines.buf.len() <= max + 1 + CHUNK_BYTES,
                "bounded: {} bytes held",
                lines.buf.len()
            );
        }
        lines.finish(|f, _| frames.push(f.to_owned_frame()));
        (frames, forwarded)
    }

    /// Frames of the plain `LineFramer` on the same bytes in one push.
    fn frames_of_framer(max: usize, input: &[u8]) -> Vec<Frame> {
        let mut framer = LineFramer::new(max);
        let mut frames = framer.push(input);
        frames.extend(framer.finish());
        frames
    }

    /// The proxy's line buffer frames exactly as `LineFramer` does (messages,
    /// noise, `\r\n`, empty lines, lines at, one past and far past the limit,
    /// an unterminated tail) however the bytes are split into reads, and
    /// forwards every byte unchanged.
    #[test]
    fn line_buffer_frames_as_the_line_framer_for_every_split() {
        const MAX: usize = 16;
        let input: Vec<u8> = [
            &b"{\"a\":1}\n"[..],
            b"banner\r\n",
            b"\n",
            b"1234567890123456\n",
            b"12345678901234567\n",
            b"\"0123456789abcdefghijklmnopqrstuvwxyz0123456789\"\r\n",
            b"[1,2]\r",
            b"\n{\"b\":[]}\n",
            b"123\n-1.5e3\r\n",
            "[\"\u{e9}\u{10348}\",null]\n".as_bytes(),
            b"\"\xc3\"\n",
            b"12345678901234567",
        ]
        .concat();
        let want = frames_of_framer(MAX, &input);
        assert_eq!(want.len(), 13, "{want:?}");
        for sizes in [
            &[1][..],
            &[2, 3],
            &[5, 1, 7],
            &[MAX],
            &[MAX + 1],
            &[MAX + 2, 1],
            &[CHUNK_BYTES],
        ] {
            let (got, forwarded) = frames_of_lines(MAX, &input, sizes);
            assert_eq!(got, want, "reads of {sizes:?}");
            assert_eq!(forwarded, input, "reads of {sizes:?}");
        }
    }

    /// Limit of the line buffer (`MAX_LINE_BYTES` in the proxy, 8 here): a
    /// line of exactly the limit is a message (also with a `\r` stripped),
    /// one byte more is too long; both are forwarded whole.
    #[test]
    fn line_at_the_limit_is_a_message_one_past_is_too_long() {
        let at = b"12345678\n12345678\r\n";
        let (frames, forwarded) = frames_of_lines(8, at, &[3]);
        assert_eq!(
            frames,
            vec![
                Frame::Message(b"12345678".to_vec()),
                Frame::Message(b"12345678".to_vec())
            ]
        );
        assert_eq!(forwarded, at);
        let past = b"123456789\n";
        let (frames, forwarded) = frames_of_lines(8, past, &[3]);
        assert!(
            matches!(
                &frames[..],
                [Frame::TooLong(FrameError {
                    kind: FrameErrorKind::LineTooLong { len: 9, limit: 8 },
                    line: 1,
                    offset: 0,
                })]
            ),
            "{frames:?}"
        );
        assert_eq!(forwarded, past);
    }

    /// Regression (CI: `sigkill_mid_stream_leaves_every_complete_record_and_an_exit_record`
    /// found 127 c2s records for 500 echoed lines): the client-side pump was
    /// aborted when the server died, between forwarding a chunk and queueing
    /// its lines. Here the server consumes 100,000 bytes (1,000 complete
    /// lines) and SIGKILLs itself while the client keeps its stdin open: the
    /// proxy must still end, and every line it forwarded must be recorded, in
    /// order and byte-exact, then the exit record.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn server_killed_mid_stream_with_client_stdin_open_loses_no_forwarded_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let sink = Arc::new(
            TranscriptSink::create(&path, Transport::Stdio, ServerSpec::default()).unwrap(),
        );
        let (mut client, client_in) = tokio::io::duplex(1 << 20);
        let sent: Vec<Vec<u8>> = (0..3000).map(line).collect();
        client.write_all(&sent.concat()).await.unwrap();
        // `client` stays open: the host never closes the server's stdin.
        let opts = StdioOptions::new(vec![
            "sh".into(),
            "-c".into(),
            "head -c 100000 >/dev/null; kill -9 $$".into(),
        ]);
        let exit = tokio::time::timeout(
            Duration::from_secs(20),
            run_stdio_proxy_with(
                opts,
                sink.clone(),
                client_in,
                tokio::io::sink(),
                tokio::io::sink(),
            ),
        )
        .await
        .expect("the proxy ends when the server dies, though the client's stdin is open")
        .unwrap();
        assert_eq!(exit.signal, Some(9));
        sink.finish().unwrap();
        drop(client);

        let t = mcptape_transcript::read(&std::fs::read(&path).unwrap()).unwrap();
        assert!(t.dropped.is_none());
        let c2s: Vec<&str> = t
            .records
            .iter()
            .filter_map(|r| match &r.event {
                Event::Message {
                    dir: Direction::C2s,
                    msg,
                    ..
                } => Some(msg.get()),
                _ => None,
            })
            .collect();
        assert!(
            c2s.len() >= 1000,
            "the server consumed 1,000 complete lines, {} recorded",
            c2s.len()
        );
        for (i, m) in c2s.iter().enumerate() {
            assert_eq!(m.as_bytes(), &sent[i][..LINE - 1], "c2s record {i}");
        }
        assert!(matches!(
            t.records.last().unwrap().event,
            Event::Exit {
                code: None,
                signal: Some(9)
            }
        ));
    }
}
