//! The stdio recording proxy: `mcptape record -o FILE -- CMD ARGS...`.
//!
//! A host launches mcptape in place of the server. mcptape starts the server
//! as a child and copies bytes both ways **unchanged** (raw chunks are
//! forwarded as soon as they are read; the recorder only observes them), the
//! child's stderr is passed through to mcptape's stderr and recorded, and the
//! child's exit code is mcptape's exit code (128 + N when it died of signal N,
//! as shells report it). SIGINT, SIGTERM and SIGHUP sent to mcptape are
//! forwarded to the child.
//!
//! Shutdown (MCP spec 2025-11-25, "Lifecycle" §Shutdown, stdio): when the
//! client closes mcptape's stdin, mcptape closes the child's stdin, waits
//! [`StdioOptions::grace`], sends SIGTERM, waits [`StdioOptions::term_grace`],
//! then sends SIGKILL. A real server may otherwise wait a minute on a request
//! the client never answered (server-everything does, for `roots/list`).
//!
//! Buffering is bounded: one [`CHUNK_BYTES`] read buffer per direction and
//! the framer's line buffer (at most [`MAX_LINE_BYTES`] + 1). A slow reader on
//! one side stalls the other side's reads (back-pressure), never grows a
//! queue. Record times are taken when a line's last byte arrives.
//!
//! **Record before forward.** Each chunk read is framed first; every line it
//! completes is written to the transcript file (one `write(2)` per record,
//! no user-space buffer: [`TranscriptSink::record_message_at`]) **before** the
//! chunk is forwarded to the peer. A line reaches the peer only when the
//! chunk holding its `\n` is forwarded, so every line the peer has received
//! is already in the kernel's page cache, which survives a SIGKILL of
//! mcptape (a user-space queue would not). A SIGKILL while a record is being
//! written leaves a cut last line (the reader drops it and says so), and that
//! line was not forwarded yet. A request is thus always recorded before the
//! server can answer it. When the server exits, the client-side pump is
//! stopped (never aborted) only at a read or a write, then the exit record
//! is written.

use std::sync::Arc;
use std::time::Duration;

use mcptape_transcript::{Direction, Event};
use mcptape_transport::child::{EndedBy, StdioChild, spawn_stdio_group};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{RecordError, RecordErrorKind};
use crate::sink::TranscriptSink;
use mcptape_transport::framed::MAX_LINE_BYTES;
use mcptape_transport::stdio::{FrameRef, LineFramer};

/// Size of the read buffer of each proxied stream, in bytes (64 KiB).
pub const CHUNK_BYTES: usize = 64 * 1024;

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
/// server's pipes. Client-side pipe failures (the host went away) end the
/// session like an EOF, they are not errors.
pub async fn run_stdio_proxy(
    opts: StdioOptions,
    sink: Arc<TranscriptSink>,
) -> Result<ServerExit, RecordError> {
    run_stdio_proxy_with(
        opts,
        sink,
        client_stdin(),
        client_stdout(),
        tokio::io::stderr(),
    )
    .await
}

/// mcptape's stdin as an async reader: a nonblocking pipe when stdin is a
/// pipe/FIFO (what hosts give a server), otherwise tokio's blocking-thread stdin.
fn client_stdin() -> Box<dyn AsyncRead + Send + Unpin> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned();
    if let Ok(rx) = fd.and_then(tokio::net::unix::pipe::Receiver::from_owned_fd) {
        return Box::new(rx);
    }
    Box::new(tokio::io::stdin())
}

/// mcptape's stdout as an async writer: a nonblocking pipe when stdout is a
/// pipe/FIFO, otherwise tokio's blocking-thread stdout.
fn client_stdout() -> Box<dyn AsyncWrite + Send + Unpin> {
    use std::os::fd::AsFd;
    let fd = std::io::stdout().as_fd().try_clone_to_owned();
    if let Ok(tx) = fd.and_then(tokio::net::unix::pipe::Sender::from_owned_fd) {
        return Box::new(tx);
    }
    Box::new(tokio::io::stdout())
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
    let mut child = spawn_server(&opts.command)?;
    let io = |what| RecordError::io("server process", std::io::Error::other(what));
    let child_in = child.stdin.take().ok_or_else(|| io("no stdin pipe"))?;
    let child_out = child.stdout.take().ok_or_else(|| io("no stdout pipe"))?;
    let child_err = child.stderr.take().ok_or_else(|| io("no stderr pipe"))?;

    // Turns true when the server has exited: the server-side pumps then stop
    // after DRAIN_AFTER_EXIT_MS without data.
    let (exited_tx, exited) = tokio::sync::watch::channel(false);
    // Turns true once the server side is drained: the client-side pump then
    // stops at its next read or write (the client may keep its stdin open).
    let (stop_c2s_tx, stop_c2s) = tokio::sync::watch::channel(false);
    // client → server
    let (eof_tx, mut eof_rx) = tokio::sync::oneshot::channel::<()>();
    let q = sink.clone();
    let c2s = tokio::spawn(async move {
        let r = pump(
            client_in,
            child_in,
            &q,
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
        (child_out, client_out),
        sink.clone(),
        Stop::IdleAfterExit(exited.clone()),
        Dir::Message(Direction::S2c),
        "client stdout",
    );
    // server stderr → our stderr
    let err = spawn_pump(
        (child_err, client_err),
        sink.clone(),
        Stop::IdleAfterExit(exited),
        Dir::Stderr,
        "client stderr",
    );

    let mut signals = ForwardSignals::new();
    let mut killed_by_proxy = false;
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
                    let _ = child.signal(sig);
                }
            }
        }
    };
    use std::os::unix::process::ExitStatusExt;
    let exit = ServerExit {
        code: status.code(),
        signal: status.signal(),
        killed_by_proxy,
    };

    // Drain what the child wrote before it died: the server-side pumps end at EOF, or
    // after DRAIN_AFTER_EXIT_MS without data (a grandchild may hold the pipes open).
    let _ = exited_tx.send(true);
    let _ = s2c.await;
    let _ = err.await;
    // The client side no longer matters: stop its pump at its next read or
    // write (never mid-record: a chunk's lines are recorded before it is
    // forwarded), then the exit.
    let _ = stop_c2s_tx.send(true);
    let _ = c2s.await;
    sink.record(Event::Exit {
        code: exit.code,
        signal: exit.signal,
    });
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

/// Runs [`pump`] from `io.0` to `io.1` on its own task.
fn spawn_pump(
    io: (
        impl AsyncRead + Send + Unpin + 'static,
        impl AsyncWrite + Send + Unpin + 'static,
    ),
    sink: Arc<TranscriptSink>,
    stop: Stop,
    dir: Dir,
    to_name: &'static str,
) -> tokio::task::JoinHandle<Result<(), RecordError>> {
    tokio::spawn(async move { pump(io.0, io.1, &sink, stop, dir, to_name).await })
}

/// Copies `from` to `to` chunk by chunk, recording each completed line.
///
/// A chunk's completed lines are written to the transcript before the chunk
/// is written to `to` (record before forward: see the module docs), so every
/// line forwarded is recorded however the pump or the process ends, and a
/// message is recorded before its peer can answer it. Returns at EOF of
/// `from` or when `stop` says so; a write failure on `to` stops forwarding
/// but reading (and recording) goes on, so the other side is never blocked by
/// a vanished reader.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    sink: &TranscriptSink,
    mut stop: Stop,
    dir: Dir,
    to_name: &'static str,
) -> Result<(), RecordError> {
    let mut framer = LineFramer::new(MAX_LINE_BYTES);
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut forwarding = true;
    let mut first_write_error: Option<std::io::Error> = None;
    loop {
        let read = tokio::select! {
            r = read_some(&mut from, &mut buf) => r,
            () = stop.reading() => break,
        };
        // End of stream, or a read error (the server's pipe broke: nothing
        // more can be read); the unterminated last line is recorded below.
        let n = match read {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let t_us = sink.now_us();
        framer.push_with(chunk, |f| record_frame(sink, dir, t_us, f));
        if forwarding {
            let written = tokio::select! {
                r = write_chunk(&mut to, chunk) => r,
                () = stop.writing() => break,
            };
            if let Err(e) = written {
                forwarding = false;
                first_write_error = Some(e);
            }
        }
    }
    // Ended or stopped early: the line held is still recorded.
    let t_us = sink.now_us();
    framer.finish_with(|f| record_frame(sink, dir, t_us, f));
    if forwarding {
        // Bounded like the writes: a stopped pump does not wait on a stuck peer.
        tokio::select! {
            _ = to.shutdown() => {}
            () = stop.writing() => {}
        }
    }
    drop(to);
    match first_write_error {
        Some(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(RecordError::io(to_name, e)),
        _ => Ok(()),
    }
}

/// One `read` (cancel-safe), `Interrupted` retried; `Ok(0)` at end of stream.
async fn read_some(from: &mut (impl AsyncRead + Unpin), buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match from.read(buf).await {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// Resolves [`DRAIN_AFTER_EXIT_MS`] after the server exited (restarted by every read).
async fn idle_after_exit(exited: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = exited.wait_for(|e| *e).await;
    tokio::time::sleep(Duration::from_millis(DRAIN_AFTER_EXIT_MS)).await;
}

async fn write_chunk(to: &mut (impl AsyncWrite + Unpin), bytes: &[u8]) -> std::io::Result<()> {
    to.write_all(bytes).await?;
    to.flush().await
}

/// Writes the record of one framed line, stamped `t_us` (when its last byte
/// arrived). A message goes the raw path (no re-parse, one write); noise,
/// stderr and too-long markers are rare and go through the typed records.
fn record_frame(sink: &TranscriptSink, dir: Dir, t_us: u64, f: FrameRef<'_>) {
    match (dir, f) {
        // Exactly one JSON value: the framer checked it, it is not parsed again.
        (Dir::Message(d), FrameRef::Message(l)) => sink.record_message_at(Some(t_us), d, l),
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
