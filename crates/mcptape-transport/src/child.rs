//! Spawning a stdio MCP server and ending it gracefully.
//!
//! The MCP stdio transport (2025-11-25 and 2026-07-28, Basic › Lifecycle ›
//! Shutdown › stdio) ends a session by closing the server's stdin, waiting for
//! it to exit, then sending SIGTERM, then SIGKILL. [`StdioChild::shutdown`]
//! does exactly that with [`STDIN_CLOSE_GRACE`] and [`SIGTERM_GRACE`].

use std::ffi::OsStr;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// How long to wait for the server to exit after its stdin is closed: 2 s.
pub const STDIN_CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How long to wait after SIGTERM before SIGKILL: 2 s.
pub const SIGTERM_GRACE: Duration = Duration::from_secs(2);

/// A spawned server with piped stdin, stdout and stderr. Take the pipes
/// (`stdin.take()`…) to drive it; the process is killed if this is dropped.
#[derive(Debug)]
pub struct StdioChild {
    /// The process.
    pub child: Child,
    /// Its stdin (closing it — dropping it — asks a stdio server to exit).
    pub stdin: Option<ChildStdin>,
    /// Its stdout (the server's messages).
    pub stdout: Option<ChildStdout>,
    /// Its stderr (logs).
    pub stderr: Option<ChildStderr>,
    /// Its process id.
    pub pid: u32,
    /// Whether it leads its own process group ([`spawn_stdio_group`]); signals
    /// then go to the whole group.
    pub own_group: bool,
}

/// How [`StdioChild::shutdown`] ended the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndedBy {
    /// It had already exited, or exited within the grace after stdin closed.
    Exit,
    /// It exited after SIGTERM.
    Sigterm,
    /// It was killed with SIGKILL.
    Sigkill,
}

/// The result of [`StdioChild::shutdown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    /// The exit status.
    pub status: ExitStatus,
    /// Which step ended it.
    pub ended_by: EndedBy,
}

impl Ending {
    /// The exit code, if the process exited normally.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The signal number that killed the process, if any.
    pub fn signal(&self) -> Option<i32> {
        std::os::unix::process::ExitStatusExt::signal(&self.status)
    }
}

/// Spawns `program args…` with stdin, stdout and stderr piped, killed on drop.
///
/// # Errors
/// The [`io::Error`] of the spawn (program not found, not executable…).
pub fn spawn_stdio<I, S>(program: impl AsRef<OsStr>, args: I) -> io::Result<StdioChild>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(program);
    cmd.args(args);
    spawn_command(cmd)
}

/// Like [`spawn_stdio`], but the child leads a new process group and
/// [`StdioChild::shutdown`] signals the whole group, so a launcher that forks
/// the real server (`npx …`, `uv run …`, `sh -c …`) does not leave it running.
/// The group no longer receives the terminal's Ctrl-C: the caller forwards signals.
///
/// # Errors
/// The [`io::Error`] of the spawn.
pub fn spawn_stdio_group<I, S>(program: impl AsRef<OsStr>, args: I) -> io::Result<StdioChild>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(program);
    cmd.args(args).process_group(0);
    let mut c = spawn_command(cmd)?;
    c.own_group = true;
    Ok(c)
}

/// Spawns a prepared [`Command`] (environment, working directory already set)
/// with stdin, stdout and stderr piped, killed on drop. (If the command was
/// given `process_group(0)`, set [`StdioChild::own_group`] so signals reach
/// the whole group.)
///
/// # Errors
/// The [`io::Error`] of the spawn.
pub fn spawn_command(mut cmd: Command) -> io::Result<StdioChild> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("spawned child has no pid"))?;
    Ok(StdioChild {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        pid,
        own_group: false,
    })
}

impl StdioChild {
    /// Ends the process with the default graces ([`STDIN_CLOSE_GRACE`],
    /// [`SIGTERM_GRACE`]).
    ///
    /// # Errors
    /// An [`io::Error`] from waiting or signalling.
    pub async fn shutdown(&mut self) -> io::Result<Ending> {
        self.shutdown_with(STDIN_CLOSE_GRACE, SIGTERM_GRACE).await
    }

    /// Closes stdin (if still held), waits `stdin_grace`, sends SIGTERM, waits
    /// `term_grace`, sends SIGKILL and waits.
    ///
    /// # Errors
    /// An [`io::Error`] from waiting or signalling.
    pub async fn shutdown_with(
        &mut self,
        stdin_grace: Duration,
        term_grace: Duration,
    ) -> io::Result<Ending> {
        drop(self.stdin.take());
        if let Ok(status) = tokio::time::timeout(stdin_grace, self.child.wait()).await {
            return Ok(Ending {
                status: status?,
                ended_by: EndedBy::Exit,
            });
        }
        self.signal(nix::sys::signal::Signal::SIGTERM)?;
        if let Ok(status) = tokio::time::timeout(term_grace, self.child.wait()).await {
            return Ok(Ending {
                status: status?,
                ended_by: EndedBy::Sigterm,
            });
        }
        if self.own_group {
            self.signal(nix::sys::signal::Signal::SIGKILL)?;
        } else {
            self.child.start_kill()?;
        }
        Ok(Ending {
            status: self.child.wait().await?,
            ended_by: EndedBy::Sigkill,
        })
    }

    /// Sends `signal` to the process, or to its whole group when
    /// [`StdioChild::own_group`] (skipped once the leader has been reaped).
    ///
    /// # Errors
    /// The OS error of `kill(2)` other than "no such process".
    pub fn signal(&mut self, signal: nix::sys::signal::Signal) -> io::Result<()> {
        if self.child.try_wait()?.is_some() {
            return Ok(());
        }
        let pid = i32::try_from(self.pid).map_err(io::Error::other)?;
        let pid = if self.own_group { -pid } else { pid };
        match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(e) => Err(io::Error::from(e)),
        }
    }

    /// Sends SIGKILL to whatever is left in the child's own process group
    /// ([`StdioChild::own_group`]) even after the leader was reaped: a server
    /// that a launcher (`sh -c 'srv &'`, `npx`) forked and that outlived it,
    /// or ignored SIGTERM. Does nothing without an own group. Linux does not
    /// hand out a pid that is still some group's id, so while a member lives
    /// the signal reaches only this group.
    ///
    /// # Errors
    /// The OS error of `killpg(2)` other than "no such process".
    pub fn kill_group(&self) -> io::Result<()> {
        if !self.own_group {
            return Ok(());
        }
        let pid = i32::try_from(self.pid).map_err(io::Error::other)?;
        match nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        ) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(e) => Err(io::Error::from(e)),
        }
    }
}

/// Capacity mcptape asks the kernel for on the pipes it reads and writes (its own stdin and
/// stdout when they are pipes, a child server's stdin and stdout), in bytes: 1 MiB, the default
/// `/proc/sys/fs/pipe-max-size` an unprivileged process may set (`fcntl(F_SETPIPE_SZ)`, Linux
/// `pipe(7)` and `fcntl(2)`). The default 64 KiB pipe makes 16× more reads, writes and wake-ups
/// on a big message, and a writer of replies blocks as soon as a slow reader lets five 12 KB
/// replies pile up. A refusal (not a pipe, the user's pipe quota reached, not Linux) is not an
/// error: that pipe keeps its size.
pub const PIPE_BYTES: usize = 1024 * 1024;

/// Asks the kernel to grow the pipe `fd` to [`PIPE_BYTES`] (`fcntl(F_SETPIPE_SZ)`); `true` when
/// it did, `false` when it refused (see [`PIPE_BYTES`]) and the pipe is as it was.
pub fn grow_pipe(fd: &impl std::os::fd::AsFd) -> bool {
    try_grow_pipe(fd).is_ok()
}

/// [`grow_pipe`], saying why the kernel refused: the `fcntl(2)` error (`EPERM`: the user's
/// pipe quota `/proc/sys/fs/pipe-user-pages-soft` is reached, or the size is past
/// `/proc/sys/fs/pipe-max-size`; `EBUSY`: the pipe holds more than the new size; `EBADF`:
/// `fd` is not a pipe), or [`std::io::ErrorKind::Unsupported`] off Linux.
///
/// # Errors
/// As above; the pipe is then as it was.
pub fn try_grow_pipe(fd: &impl std::os::fd::AsFd) -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use nix::fcntl::{FcntlArg, fcntl};
        let size = i32::try_from(PIPE_BYTES).map_err(std::io::Error::other)?;
        fcntl(fd.as_fd(), FcntlArg::F_SETPIPE_SZ(size))
            .map(drop)
            .map_err(std::io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}
