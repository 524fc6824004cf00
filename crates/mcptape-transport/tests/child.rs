//! Ending a stdio child: stdin close, then SIGTERM, then SIGKILL.

use std::time::Duration;

use mcptape_transport::child::{EndedBy, spawn_stdio, spawn_stdio_group};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SHORT: Duration = Duration::from_millis(300);

/// Everything `pipe` yields until EOF, as UTF-8.
async fn read_all(mut pipe: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut s = String::new();
    pipe.read_to_string(&mut s).await.unwrap();
    s
}

#[tokio::test]
async fn server_that_exits_on_stdin_close_ends_by_exit() {
    let mut c = spawn_stdio("sh", ["-c", "cat; exit 3"]).unwrap();
    let mut stdin = c.stdin.take().unwrap();
    stdin.write_all(b"{\"jsonrpc\":\"2.0\"}\n").await.unwrap();
    drop(stdin);
    let out = read_all(c.stdout.take().unwrap()).await;
    assert_eq!(out, "{\"jsonrpc\":\"2.0\"}\n");
    let end = c.shutdown_with(SHORT, SHORT).await.unwrap();
    assert_eq!(end.ended_by, EndedBy::Exit);
    assert_eq!(end.code(), Some(3));
}

/// Shutting `c` down (300 ms graces) ends it `by` signal number `signal`.
async fn assert_killed(mut c: mcptape_transport::child::StdioChild, by: EndedBy, signal: i32) {
    let end = c.shutdown_with(SHORT, SHORT).await.unwrap();
    assert_eq!(end.ended_by, by);
    assert_eq!(end.signal(), Some(signal));
}

#[tokio::test]
async fn server_ignoring_stdin_close_gets_sigterm() {
    // like a server stuck waiting for a roots/list reply that never comes
    let c = spawn_stdio("sleep", ["30"]).unwrap();
    assert_killed(c, EndedBy::Sigterm, 15).await;
}

#[tokio::test]
async fn server_ignoring_sigterm_gets_sigkill() {
    let mut c = spawn_stdio(
        "sh",
        [
            "-c",
            "trap '' TERM; echo trapped; while :; do sleep 0.05; done",
        ],
    )
    .unwrap();
    // The shell says when its trap is installed (waiting for the state, not a fixed sleep).
    let mut stdout = c.stdout.take().unwrap();
    let mut line = [0u8; 8];
    stdout.read_exact(&mut line).await.unwrap();
    assert_eq!(&line, b"trapped\n");
    assert_killed(c, EndedBy::Sigkill, 9).await;
}

#[tokio::test]
async fn stderr_is_piped() {
    let mut c = spawn_stdio("sh", ["-c", "echo banner >&2"]).unwrap();
    let err = read_all(c.stderr.take().unwrap()).await;
    assert_eq!(err, "banner\n");
    assert_eq!(c.shutdown().await.unwrap().code(), Some(0));
}

#[test]
fn spawning_a_missing_program_is_an_error() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let e = rt.block_on(async { spawn_stdio("/nonexistent/mcptape-server", ["x"]).map(|_| ()) });
    assert_eq!(e.unwrap_err().kind(), std::io::ErrorKind::NotFound);
}

/// `true` once `pid` is gone or a zombie (the container's init may not reap).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The `/proc/PID/status` field `key` (`PPid`, `SigPnd`, …) of `pid`, its value trimmed;
/// `None` once `pid` is gone.
fn status_field(pid: u32, key: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        l.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(|v| v.trim().to_owned())
    })
}

/// `true` when SIGTERM is pending for `pid`, to the thread (`SigPnd`) or to the whole
/// process (`ShdPnd`): sent but not yet acted on. The masks are hexadecimal, bit `n - 1`
/// for signal `n` (proc(5)).
fn sigterm_pending(pid: u32) -> bool {
    ["SigPnd", "ShdPnd"].iter().any(|key| {
        status_field(pid, key)
            .map(|mask| u64::from_str_radix(&mask, 16).unwrap())
            .is_some_and(|mask| mask & (1 << (15 - 1)) != 0)
    })
}

/// A process this test did not spawn itself (a launcher's child), sent SIGKILL when the
/// guard drops, so that a failing assertion leaves no `sleep 30` behind.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0 as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

async fn grandchild_pid(c: &mut mcptape_transport::child::StdioChild) -> u32 {
    use tokio::io::AsyncBufReadExt;
    let mut line = String::new();
    tokio::io::BufReader::new(c.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .await
        .unwrap();
    line.trim().parse().unwrap()
}

/// A launcher script that forks the "server" (`sleep 30`), prints its pid and waits.
const FORKING_LAUNCHER: &str = "sleep 30 & echo $!; wait";

/// Reads the forked server's pid from the launcher `c`, shuts `c` down (it ends
/// by SIGTERM) and returns the launcher's pid and a guard of the server's.
async fn sigterm_launcher(mut c: mcptape_transport::child::StdioChild) -> (u32, KillOnDrop) {
    let launcher = c.child.id().unwrap();
    let server = KillOnDrop(grandchild_pid(&mut c).await);
    let end = c.shutdown_with(SHORT, SHORT).await.unwrap();
    assert_eq!(end.ended_by, EndedBy::Sigterm);
    (launcher, server)
}

#[tokio::test]
async fn group_shutdown_ends_a_forked_server_too() {
    // a launcher (sh) that forks the "server" (sleep) and waits, like npx
    let c = spawn_stdio_group("sh", ["-c", FORKING_LAUNCHER]).unwrap();
    let (_, server) = sigterm_launcher(c).await;
    // Bounded poll: the signal is sent; the server ends when it is next scheduled.
    for _ in 0..500 {
        if gone(server.0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("forked server {} survived the group SIGTERM", server.0);
}

#[tokio::test]
async fn without_group_a_forked_server_survives_sigterm_of_the_launcher() {
    // the contrast case that motivates spawn_stdio_group
    let c = spawn_stdio("sh", ["-c", FORKING_LAUNCHER]).unwrap();
    let (launcher, server) = sigterm_launcher(c).await;
    // No waiting: the launcher is reaped, so the server was reparented at its exit; a
    // SIGTERM sent with the launcher's would still be pending or would have ended it.
    let ppid: u32 = status_field(server.0, "PPid")
        .expect("the forked server is still running")
        .parse()
        .unwrap();
    assert_ne!(ppid, launcher, "reparented when the launcher exited");
    assert!(!sigterm_pending(server.0), "no SIGTERM reached the server");
    assert!(!gone(server.0));
}
