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
//! Buffering is bounded: one [`CHUNK_BYTES`] read buffer per direction, the
//! framer's line buffer (at most [`MAX_LINE_BYTES`] + 1), and
//! [`RECORD_QUEUE_BYTES`] of completed lines waiting for the transcript-writer
//! thread (recording is off the forwarding path; a slow disk stalls
//! forwarding only once that much is queued). A slow reader on one side
//! stalls the other side's reads (back-pressure), never grows a queue.
//! Record times are taken when a line's last byte arrives.
//!
//! Nothing forwarded goes unrecorded: each chunk's completed lines are queued
//! for the transcript **before** the chunk is forwarded, so a request is
//! always queued before the server can answer it, and when the server exits
//! the client-side pump is stopped (never aborted) only at a read or a write,
//! after which every queued record is written, then the exit record.

use std::sync::Arc;
use std::time::Duration;

use mcptape_transcript::{Direction, Event};
use mcptape_transport::child::{EndedBy, StdioChild, spawn_stdio_group};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::error::{RecordError, RecordErrorKind};
use crate::sink::TranscriptSink;
use mcptape_transport::framed::{FramedReader, MAX_LINE_BYTES};
use mcptape_transport::stdio::Frame;

/// Size of the read buffer of each proxied stream, in bytes (64 KiB).
pub const CHUNK_BYTES: usize = 64 * 1024;

/// Bytes of completed lines queued between the forwarding tasks and the
/// transcript-writer thread (64 MiB + 64 KiB). Forwarding never waits for the
/// disk until this much is queued; beyond it, it does (bounded buffering).
pub const RECORD_QUEUE_BYTES: usize = MAX_LINE_BYTES + CHUNK_BYTES;

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

    // Lines are recorded by a writer thread, off the forwarding path.
    let (queue, writer) = RecordQueue::start(sink.clone());
    // Turns true when the server has exited: the server-side pumps then stop
    // after DRAIN_AFTER_EXIT_MS without data.
    let (exited_tx, exited) = tokio::sync::watch::channel(false);
    // Turns true once the server side is drained: the client-side pump then
    // stops at its next read or write (the client may keep its stdin open).
    let (stop_c2s_tx, stop_c2s) = tokio::sync::watch::channel(false);
    // client → server
    let (eof_tx, mut eof_rx) = tokio::sync::oneshot::channel::<()>();
    let q = queue.clone();
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
    let (q, x) = (queue.clone(), exited.clone());
    let s2c = tokio::spawn(async move {
        pump(
            child_out,
            client_out,
            &q,
            Stop::IdleAfterExit(x),
            Dir::Message(Direction::S2c),
            "client stdout",
        )
        .await
    });
    // server stderr → our stderr
    let (q, x) = (queue.clone(), exited);
    let err = tokio::spawn(async move {
        pump(
            child_err,
            client_err,
            &q,
            Stop::IdleAfterExit(x),
            Dir::Stderr,
            "client stderr",
        )
        .await
    });
    drop(queue);

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
    // write (never mid-record: a chunk's lines are queued before it is
    // forwarded), then every queued line is recorded, then the exit.
    let _ = stop_c2s_tx.send(true);
    let _ = c2s.await;
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
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

/// Copies `from` to `to` chunk by chunk, recording each completed line.
///
/// A chunk's completed lines are queued for the transcript before the chunk
/// is written to `to`, so every forwarded line is recorded however the pump
/// ends, and a message is queued before its peer can answer it. Returns at
/// EOF of `from` or when `stop` says so; a write failure on `to` stops
/// forwarding but reading (and recording) goes on, so the other side is never
/// blocked by a vanished reader.
async fn pump(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    queue: &RecordQueue,
    mut stop: Stop,
    dir: Dir,
    to_name: &'static str,
) -> Result<(), RecordError> {
    let mut reader = FramedReader::new(from, MAX_LINE_BYTES);
    let mut forwarding = true;
    let mut first_write_error: Option<std::io::Error> = None;
    let mut frames = Vec::new();
    loop {
        let read = tokio::select! {
            r = reader.read_chunk(&mut frames) => r,
            () = stop.reading() => break,
        };
        let t_us = queue.sink.now_us();
        for f in frames.drain(..) {
            queue.push(Pending::of(dir, t_us, f)).await;
        }
        let chunk = match read {
            Ok(Some(chunk)) => chunk,
            // End of stream: the unterminated last line was queued above.
            Ok(None) => break,
            // A read error ends this direction (the server's pipe broke); it
            // is not the peer's end of output, but nothing more can be read.
            Err(_) => break,
        };
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
    // Stopped early or by a read error: the line held is still recorded.
    let t_us = queue.sink.now_us();
    reader.finish(&mut frames);
    for f in frames.drain(..) {
        queue.push(Pending::of(dir, t_us, f)).await;
    }
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

/// Resolves [`DRAIN_AFTER_EXIT_MS`] after the server exited (restarted by every read).
async fn idle_after_exit(exited: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = exited.wait_for(|e| *e).await;
    tokio::time::sleep(Duration::from_millis(DRAIN_AFTER_EXIT_MS)).await;
}

/// A completed line waiting to be recorded, with the time its last byte arrived.
enum Pending {
    Line(Dir, u64, Vec<u8>),
    TooLong(Dir, u64, String),
}

impl Pending {
    fn of(dir: Dir, t_us: u64, f: Frame) -> Pending {
        match f {
            Frame::Message(l) | Frame::Noise(l) => Pending::Line(dir, t_us, l),
            Frame::TooLong(e) => Pending::TooLong(dir, t_us, e.to_string()),
        }
    }

    fn cost(&self) -> u32 {
        let n = match self {
            Pending::Line(_, _, b) => b.len(),
            Pending::TooLong(..) => 0,
        };
        // Per-entry overhead counted too, so many tiny lines are bounded as well.
        u32::try_from((n + 64).min(RECORD_QUEUE_BYTES)).unwrap_or(u32::MAX)
    }
}

/// Byte-bounded queue from the forwarding tasks to the transcript-writer thread.
#[derive(Clone)]
struct RecordQueue {
    tx: tokio::sync::mpsc::UnboundedSender<(Pending, tokio::sync::OwnedSemaphorePermit)>,
    budget: Arc<tokio::sync::Semaphore>,
    sink: Arc<TranscriptSink>,
}

impl RecordQueue {
    fn start(sink: Arc<TranscriptSink>) -> (Self, std::thread::JoinHandle<()>) {
        let (tx, mut rx) =
            tokio::sync::mpsc::unbounded_channel::<(Pending, tokio::sync::OwnedSemaphorePermit)>();
        let s = sink.clone();
        let writer = std::thread::Builder::new()
            .name("mcptape-transcript".into())
            .spawn(move || {
                while let Some((p, permit)) = rx.blocking_recv() {
                    record_pending(&s, p);
                    drop(permit);
                }
            })
            .expect("spawn the transcript writer thread");
        let budget = Arc::new(tokio::sync::Semaphore::new(RECORD_QUEUE_BYTES));
        (RecordQueue { tx, budget, sink }, writer)
    }

    /// Queues `p`, waiting while more than [`RECORD_QUEUE_BYTES`] are queued.
    async fn push(&self, p: Pending) {
        if let Ok(permit) = self.budget.clone().acquire_many_owned(p.cost()).await {
            let _ = self.tx.send((p, permit));
        }
    }
}

async fn write_chunk(to: &mut (impl AsyncWrite + Unpin), bytes: &[u8]) -> std::io::Result<()> {
    to.write_all(bytes).await?;
    to.flush().await
}

fn record_pending(sink: &TranscriptSink, p: Pending) {
    match p {
        Pending::Line(Dir::Message(d), t, l) => sink.record_line_at(Some(t), d, &l, None),
        Pending::Line(Dir::Stderr, t, l) => sink.record_at(
            Some(t),
            Event::Stderr {
                line: String::from_utf8_lossy(&l).into_owned(),
            },
        ),
        Pending::TooLong(Dir::Message(d), t, e) => sink.record_at(
            Some(t),
            Event::Noise {
                dir: d,
                line: format!("<mcptape: {e}; passed through, not recorded>"),
            },
        ),
        Pending::TooLong(Dir::Stderr, t, e) => sink.record_at(
            Some(t),
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
