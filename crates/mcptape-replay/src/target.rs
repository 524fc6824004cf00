//! The target of `bench` and `verify`: a stdio server started as a child in its own process
//! group (`sh -c CMD`, or a program such as the embedded `mcptape serve`), or a Streamable HTTP
//! endpoint reached by the one client session over HTTP ([`Target::connect`], [`crate::bench::connect_http`]). [`Target`] owns the process,
//! keeps the tail of its stderr and a weak handle on the session (its transport error) to explain an early
//! exit ([`Target::gone_reason`]), and ends the whole process group ([`Target::end`]).
//!
//! The caller keeps the `Target` outside the future that runs the session, so that the target
//! is ended on every exit path (success, an error, a timeout, or a signal — see
//! [`interrupted`]):
//!
//! ```no_run
//! # async fn f() -> Result<(), mcptape_replay::ReplayError> {
//! use mcptape_replay::target::{Target, TargetSpec, interrupted};
//! let mut target = Target::new();
//! tokio::select! {
//!     r = async {
//!         let (reader, writer) = target.start(&TargetSpec::Shell("my-server".into()), None)?;
//!         // … run a client session over reader/writer …
//!         # drop((reader, writer));
//!         Ok::<(), mcptape_replay::ReplayError>(())
//!     } => r?,
//!     _signal = interrupted() => {}
//! }
//! target.end().await;
//! # Ok(()) }
//! ```

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use mcptape_transport::child::{StdioChild, spawn_stdio_group};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::time::Duration;

use crate::bench::Client;
use crate::error::{ReplayError, ReplayErrorKind};
use mcptape_report::server::ServeSummary;

/// How much of a target's stderr is kept to explain its exit, bytes.
pub const STDERR_TAIL_BYTES: usize = 2048;

/// How long [`Target::gone_reason`] waits for a child's exit status.
pub const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);

/// The last [`STDERR_TAIL_BYTES`] of the target's stderr.
pub type StderrTail = Arc<Mutex<Vec<u8>>>;

/// The target's output (what the client reads).
pub type TargetReader = Box<dyn AsyncRead + Unpin + Send>;

/// The target's input (what the client writes).
pub type TargetWriter = Box<dyn AsyncWrite + Unpin + Send>;

/// Checks that `url`'s host is loopback: an IPv4 address in `127.0.0.0/8`, the IPv6 address
/// `::1` (written `[::1]`, RFC 3986 §3.2.2), or the name `localhost` (any case; RFC 6761 §6.3).
/// No name is resolved and nothing is connected. `bench` and `verify` run load and injected
/// faults against their target, so they reach loopback only.
///
/// # Errors
/// [`ReplayErrorKind::Http`] for a URL that does not parse or has no host;
/// [`ReplayErrorKind::NotLoopback`] for any other host (e.g. `192.168.1.1`, `example.com`).
pub fn check_loopback_url(url: &str) -> Result<(), ReplayError> {
    let uri: hyper::Uri = url.parse().map_err(|e: hyper::http::uri::InvalidUri| {
        ReplayError::new(ReplayErrorKind::Http(format!("{url:?}: {e}")))
    })?;
    let Some(host) = uri.host() else {
        return Err(ReplayError::new(ReplayErrorKind::Http(format!(
            "{url:?}: expected an absolute http:// URL with a host"
        ))));
    };
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let loopback = bare.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(ReplayError::new(ReplayErrorKind::NotLoopback {
            url: url.to_owned(),
            host: bare.to_owned(),
        }))
    }
}

/// What to run or reach.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetSpec {
    /// A stdio server command line, run with `sh -c`.
    Shell(String),
    /// A stdio server program with its arguments (e.g. the embedded `mcptape serve … --stdio`).
    Program {
        /// The executable.
        program: PathBuf,
        /// Its arguments.
        args: Vec<OsString>,
    },
    /// A Streamable HTTP endpoint on loopback ([`check_loopback_url`]), e.g.
    /// `http://127.0.0.1:3001/mcp`.
    Url(String),
}

/// Most bytes of the embedded server's stats read from its `--stats-fd` pipe: 16 MiB (a
/// [`ServeSummary`] is a few KiB). Past it the stats are dropped (`None`), never cut.
pub const MAX_SERVE_STATS_BYTES: u64 = 16 << 20;

/// The flag of `mcptape serve` that writes its `--stats` JSON to an inherited file descriptor
/// instead of a file ([`Target::connect_embedded`] passes the write end of a pipe).
pub const STATS_FD_FLAG: &str = "--stats-fd";

/// A started (or not yet started) target. See the module docs.
#[derive(Debug, Default)]
pub struct Target {
    child: Option<StdioChild>,
    stderr_tail: StderrTail,
    /// The session [`Target::connect`] opened (not kept alive by the target).
    session: Option<Weak<Client>>,
    /// The embedded server's stats, read from its `--stats-fd` pipe to the end
    /// ([`Target::connect_embedded`], [`Target::take_serve_stats`]).
    stats: Option<tokio::task::JoinHandle<Vec<u8>>>,
}

impl Target {
    /// A target with nothing started yet.
    pub fn new() -> Target {
        Target::default()
    }

    /// Starts (or reaches) `spec` and opens the client session over it: a stdio child's
    /// stdout/stdin ([`Client::over`], see [`start`](Self::start)), or Streamable HTTP
    /// ([`crate::bench::connect_http`]: requests POSTed concurrently, an HTTP error status
    /// said at once, a dropped connection ending only its request). `protocol_version` is the
    /// recorded `MCP-Protocol-Version`, sent from the first POST when it is 2026-07-28 or
    /// later. The target keeps only a weak handle on the session, for
    /// [`gone_reason`](Self::gone_reason).
    ///
    /// # Errors
    /// As [`start`](Self::start); [`ReplayErrorKind::NotLoopback`] for a URL whose host is not
    /// loopback ([`check_loopback_url`], checked before connecting);
    /// [`ReplayErrorKind::Http`] for a URL the client rejects.
    pub fn connect(
        &mut self,
        spec: &TargetSpec,
        protocol_version: Option<&str>,
    ) -> Result<Arc<Client>, ReplayError> {
        let client = Arc::new(match spec {
            TargetSpec::Url(url) => {
                check_loopback_url(url)?;
                crate::bench::connect_http(url, protocol_version)?
            }
            _ => {
                let (r, w) = self.start(spec, protocol_version)?;
                Client::over(r, w)
            }
        });
        self.session = Some(Arc::downgrade(&client));
        Ok(client)
    }

    /// Starts the embedded `mcptape serve --stdio` child (`program args…`, see
    /// [`crate::bench_run::EmbeddedServer`]) with its stats coming back over a pipe: the write end is
    /// inherited by the child as file descriptor N and named by [`STATS_FD_FLAG`]` N` appended to
    /// `args`; the read end is drained in a task from the start (so a server writing more than
    /// the pipe's buffer never blocks on exit), up to [`MAX_SERVE_STATS_BYTES`]. Read the stats
    /// with [`take_serve_stats`](Self::take_serve_stats) once the target has ended.
    ///
    /// A pipe rather than a file: nothing is left behind on any exit path (a failed handshake,
    /// a signal, a crash of bench), nothing in the temporary directory can be raced or
    /// pre-created, and the end of the stats is the server's exit (EOF), not a guess.
    ///
    /// # Errors
    /// [`ReplayErrorKind::Io`] when the pipe cannot be made inheritable; as
    /// [`start`](Self::start) otherwise.
    pub fn connect_embedded(
        &mut self,
        program: PathBuf,
        mut args: Vec<OsString>,
    ) -> Result<Arc<Client>, ReplayError> {
        use std::os::fd::{AsRawFd, OwnedFd};
        let (reader, writer) = std::io::pipe()?;
        let writer = OwnedFd::from(writer);
        // std opens pipes close-on-exec: the write end is made inheritable, the read end not.
        nix::fcntl::fcntl(
            &writer,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )
        .map_err(std::io::Error::from)?;
        let n = writer.as_raw_fd();
        // 0..=2 become the child's stdio: no stats then (only when mcptape itself was started
        // with a standard stream closed).
        if n > 2 {
            args.extend([STATS_FD_FLAG.into(), n.to_string().into()]);
        }
        let client = self.connect(&TargetSpec::Program { program, args }, None);
        // The parent's copy is closed at once: the pipe ends (EOF) when the server exits.
        drop(writer);
        let client = client?;
        if n > 2 {
            let mut rx = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
            self.stats = Some(tokio::spawn(async move {
                let mut buf = Vec::new();
                let _ = (&mut rx)
                    .take(MAX_SERVE_STATS_BYTES + 1)
                    .read_to_end(&mut buf)
                    .await;
                buf
            }));
        }
        Ok(client)
    }

    /// The embedded server's stats ([`connect_embedded`](Self::connect_embedded)), once
    /// [`end`](Self::end) has ended it: the pipe read to its end, waiting at most
    /// [`EXIT_STATUS_WAIT`] for that end. `None` for another target, a server killed before
    /// writing them, or bytes that are not a [`ServeSummary`] (or more than
    /// [`MAX_SERVE_STATS_BYTES`]).
    pub async fn take_serve_stats(&mut self) -> Option<ServeSummary> {
        let task = self.stats.take()?;
        let abort = task.abort_handle();
        let bytes = match tokio::time::timeout(EXIT_STATUS_WAIT, task).await {
            Ok(Ok(b)) => b,
            _ => {
                abort.abort();
                return None;
            }
        };
        if bytes.len() as u64 > MAX_SERVE_STATS_BYTES {
            return None;
        }
        serde_json::from_slice(&bytes).ok()
    }

    /// Starts a stdio `spec` and returns the two ends a client talks over. A stdio child
    /// leads its own process group (so [`end`](Self::end) reaches a server a shell or launcher
    /// such as `npx` or `uv run` forked); its stderr is drained in a task that keeps the last
    /// [`STDERR_TAIL_BYTES`]. `protocol_version` is not used on stdio.
    ///
    /// # Errors
    /// [`ReplayErrorKind::TargetStart`] when the program cannot be spawned;
    /// [`ReplayErrorKind::TargetPipes`] when the child has no stdin/stdout pipe;
    /// [`ReplayErrorKind::Http`] for a [`TargetSpec::Url`] (no byte stream: use
    /// [`connect`](Self::connect)).
    pub fn start(
        &mut self,
        spec: &TargetSpec,
        protocol_version: Option<&str>,
    ) -> Result<(TargetReader, TargetWriter), ReplayError> {
        let _ = protocol_version; // stdio: nothing to send it in
        let spawned = match spec {
            TargetSpec::Url(url) => {
                return Err(ReplayError::new(ReplayErrorKind::Http(format!(
                    "{url} is a Streamable HTTP endpoint with no byte stream \
                     (Target::connect opens its session)"
                ))));
            }
            TargetSpec::Shell(cmd) => spawn_stdio_group("sh", ["-c", cmd.as_str()]),
            TargetSpec::Program { program, args } => spawn_stdio_group(program, args),
        };
        let ch = self
            .child
            .insert(spawned.map_err(|e| ReplayError::new(ReplayErrorKind::TargetStart(e)))?);
        let (Some(stdin), Some(stdout)) = (ch.stdin.take(), ch.stdout.take()) else {
            return Err(ReplayError::new(ReplayErrorKind::TargetPipes));
        };
        if let Some(err) = ch.stderr.take() {
            keep_stderr_tail(err, self.stderr_tail.clone());
        }
        Ok((Box::new(stdout), Box::new(stdin)))
    }

    /// Why the target went away, for an error message: `; target exited with exit status: 127
    /// (stderr: …)` for a child; for a URL `; HTTP: …`, the session's
    /// [`transport_error`](Client::transport_error) (`HTTP: HTTP exchange 0: request failed:
    /// client error (Connect): tcp connect error: Connection refused (os error 111)`); or
    /// empty when unknown. Waits up to [`EXIT_STATUS_WAIT`] for a child's exit status.
    pub async fn gone_reason(&mut self) -> String {
        let mut out = String::new();
        if let Some(e) = self
            .session
            .as_ref()
            .and_then(Weak::upgrade)
            .and_then(|c| c.transport_error())
        {
            out.push_str(&format!("; {e}"));
        }
        if let Some(ch) = self.child.as_mut()
            && let Ok(Ok(status)) = tokio::time::timeout(EXIT_STATUS_WAIT, ch.child.wait()).await
        {
            out.push_str(&format!("; target exited with {status}"));
            // Give the stderr drain a moment to read the last bytes.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let tail = self
                .stderr_tail
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let tail = String::from_utf8_lossy(&tail);
            let tail = tail.trim();
            if !tail.is_empty() {
                out.push_str(&format!(" (stderr: {tail})"));
            }
        }
        out
    }

    /// Ends a stdio child, if one is left: closes its stdin, waits
    /// [`mcptape_transport::child::STDIN_CLOSE_GRACE`] (2 s), sends SIGTERM to its process group,
    /// waits [`mcptape_transport::child::SIGTERM_GRACE`] (2 s), then SIGKILL to the group (MCP
    /// 2025-11-25 / 2026-07-28, Lifecycle › Shutdown › stdio). When the leader has already
    /// exited, the rest of the group gets SIGKILL at once. Idempotent.
    pub async fn end(&mut self) {
        let Some(mut ch) = self.child.take() else {
            return;
        };
        let _ = ch.shutdown().await;
        // The leader is reaped now; a server it forked that outlived it (or ignored SIGTERM)
        // may still be in the group.
        let _ = ch.kill_group();
    }
}

/// Drains `err` (so the child never blocks on a full pipe), keeping its last
/// [`STDERR_TAIL_BYTES`] in `tail`.
pub fn keep_stderr_tail(mut err: tokio::process::ChildStderr, tail: StderrTail) {
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
            t.extend_from_slice(&buf[..n]);
            let extra = t.len().saturating_sub(STDERR_TAIL_BYTES);
            t.drain(..extra);
        }
    });
}

/// A signal that stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal {
    /// `SIGINT`, `SIGTERM` or `SIGHUP`.
    pub name: &'static str,
    /// The conventional exit status, 128 + the signal number (130, 143, 129).
    pub exit_code: u8,
}

/// Resolves when the process receives SIGINT, SIGTERM or SIGHUP. A stdio target leads its own
/// process group, so it does not get the terminal's Ctrl-C itself and must be ended by the
/// caller ([`Target::end`]). Pends forever if no handler can be installed.
pub async fn interrupted() -> Signal {
    use tokio::signal::unix::{SignalKind, signal};
    async fn one(kind: SignalKind) {
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    }
    let (name, exit_code) = tokio::select! {
        () = one(SignalKind::interrupt()) => ("SIGINT", 130),
        () = one(SignalKind::terminate()) => ("SIGTERM", 143),
        () = one(SignalKind::hangup()) => ("SIGHUP", 129),
    };
    Signal { name, exit_code }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_loopback_url_accepts_loopback_hosts_only() {
        for ok in [
            "http://127.0.0.1:3001/mcp",
            "http://127.255.255.254/mcp",
            "http://localhost:8931/mcp",
            "http://LocalHost/mcp",
            "http://[::1]:3001/mcp",
        ] {
            assert!(check_loopback_url(ok).is_ok(), "{ok}");
        }
        for (bad, host) in [
            ("http://192.168.1.1/mcp", "192.168.1.1"),
            ("http://192.0.2.1:80/mcp", "192.0.2.1"),
            ("http://128.0.0.1/mcp", "128.0.0.1"),
            ("http://0.0.0.0:3001/mcp", "0.0.0.0"),
            ("http://[::2]/mcp", "::2"),
            ("http://[::ffff:192.0.2.1]/mcp", "::ffff:192.0.2.1"),
            ("http://localhost.example.com/mcp", "localhost.example.com"),
            ("http://127.0.0.1.nip.io/mcp", "127.0.0.1.nip.io"),
            ("http://example.com/mcp", "example.com"),
        ] {
            let e = check_loopback_url(bad).unwrap_err();
            match e.kind() {
                ReplayErrorKind::NotLoopback { url, host: h } => {
                    assert_eq!((url.as_str(), h.as_str()), (bad, host));
                }
                k => panic!("{bad}: {k:?}"),
            }
            assert!(e.to_string().contains("is not loopback"), "{e}");
        }
        for broken in ["/mcp", "http://", "not a url"] {
            assert!(
                matches!(
                    check_loopback_url(broken).unwrap_err().kind(),
                    ReplayErrorKind::Http(_)
                ),
                "{broken}"
            );
        }
    }

    #[tokio::test]
    async fn connect_refuses_a_non_loopback_url_before_connecting() {
        let mut t = Target::new();
        let e = t
            .connect(&TargetSpec::Url("http://192.0.2.1/mcp".into()), None)
            .unwrap_err();
        assert!(
            matches!(e.kind(), ReplayErrorKind::NotLoopback { .. }),
            "{e}"
        );
        assert!(t.session.is_none());
    }

    #[tokio::test]
    async fn stderr_tail_and_exit_status_explain_a_target_that_exited() {
        let mut t = Target::new();
        let (_r, _w) = t
            .start(&TargetSpec::Shell("echo broken >&2; exit 7".into()), None)
            .unwrap();
        let why = t.gone_reason().await;
        assert!(why.contains("target exited with exit status: 7"), "{why}");
        assert!(why.contains("(stderr: broken)"), "{why}");
        t.end().await;
        t.end().await; // idempotent
    }

    #[tokio::test]
    async fn a_program_that_cannot_be_spawned_is_target_start() {
        let mut t = Target::new();
        let e = t
            .start(
                &TargetSpec::Program {
                    program: "/nonexistent/mcptape-no-such-program".into(),
                    args: vec![],
                },
                None,
            )
            .err()
            .unwrap();
        assert!(matches!(e.kind, ReplayErrorKind::TargetStart(_)), "{e}");
    }

    /// The stats of a server's `summary()`, written by the child to the inherited descriptor
    /// `--stats-fd N` names, come back whole; a child that writes none gives `None`, and no
    /// file is made.
    #[tokio::test]
    async fn connect_embedded_takes_the_stats_back_over_the_pipe() {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tiny-two-reads.jsonl"
        ))
        .unwrap();
        let t = mcptape_transcript::reader::read(&bytes).unwrap();
        let server = crate::serve::Server::new(
            crate::tape::Tape::from_transcript(&t).unwrap(),
            crate::latency::LatencyModel::parse("fixed:3ms").unwrap(),
            crate::latency::FaultSpec::default(),
            1,
            &[],
        )
        .unwrap();
        let json = serde_json::to_string(&server.summary()).unwrap();
        assert!(!json.contains('\''), "{json}");
        serde_json::from_str::<ServeSummary>(&json).expect("the summary reads back");
        // `sh -c SCRIPT --stats-fd N`: $0 is the flag, $1 the descriptor (opened as /dev/fd/N,
        // as `serve --stats-fd` does: dash's `>&N` takes one digit only).
        let script =
            format!("test \"$0\" = {STATS_FD_FLAG} && printf '%s' '{json}' >\"/dev/fd/$1\"");
        let mut t = Target::new();
        let _client = t
            .connect_embedded("/bin/sh".into(), vec!["-c".into(), script.into()])
            .unwrap();
        t.end().await;
        let stats = t.take_serve_stats().await.expect("stats over the pipe");
        assert_eq!(serde_json::to_string(&stats).unwrap(), json);
        assert_eq!(stats.model, "fixed:3ms");
        assert!(t.take_serve_stats().await.is_none(), "taken once");

        let mut t = Target::new();
        let _client = t
            .connect_embedded("/bin/sh".into(), vec!["-c".into(), "exit 0".into()])
            .unwrap();
        t.end().await;
        assert!(t.take_serve_stats().await.is_none());
    }

    #[tokio::test]
    async fn stderr_tail_keeps_the_last_bytes_only() {
        let mut t = Target::new();
        let (_r, _w) = t
            .start(
                &TargetSpec::Shell(format!(
                    "head -c {} /dev/zero | tr '\\0' a >&2; printf END >&2",
                    STDERR_TAIL_BYTES * 3
                )),
                None,
            )
            .unwrap();
        let why = t.gone_reason().await;
        let tail = t.stderr_tail.lock().unwrap().clone();
        assert_eq!(tail.len(), STDERR_TAIL_BYTES, "{why}");
        assert!(tail.ends_with(b"aEND"));
        t.end().await;
    }
}
