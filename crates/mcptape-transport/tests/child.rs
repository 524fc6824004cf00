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
/// by SIGTERM) and returns the pid.
async fn sigterm_launcher(mut c: mcptape_transport::child::StdioChild) -> u32 {
    let server = grandchild_pid(&mut c).await;
    let end = c.shutdown_with(SHORT, SHORT).await.unwrap();
    assert_eq!(end.ended_by, EndedBy::Sigterm);
    server
}

#[tokio::test]
async fn group_shutdown_ends_a_forked_server_too() {
    // a launcher (sh) that forks the "server" (sleep) and waits, like npx
    let c = spawn_stdio_group("sh", ["-c", FORKING_LAUNCHER]).unwrap();
    let server = sigterm_launcher(c).await;
    for _ in 0..50 {
        if gone(server) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("forked server {server} survived the group SIGTERM");
}

#[tokio::test]
async fn without_group_a_forked_server_survives_sigterm_of_the_launcher() {
    // the contrast case that motivates spawn_stdio_group
    let c = spawn_stdio("sh", ["-c", FORKING_LAUNCHER]).unwrap();
    let server = sigterm_launcher(c).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!gone(server));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}
