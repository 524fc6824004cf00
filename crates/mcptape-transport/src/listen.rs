//! The server side of a loopback listener, shared by `serve --listen`, its `--metrics`
//! endpoint and `record --listen`: accepting that rides out a lack of file descriptors,
//! HTTP/1.1 connections that end when a client stalls, and the process's descriptor limit
//! raised to what it may use.
//!
//! Without these, about 1,000 idle TCP connections (the common soft limit of 1,024
//! descriptors) made `accept` fail with `EMFILE` and the server exit, dropping every client;
//! a connection that sent nothing, or half a request's headers, stayed open for good.
//!
//! ```no_run
//! # async fn run(listener: tokio::net::TcpListener) -> std::io::Result<()> {
//! use mcptape_transport::listen;
//! listen::raise_open_files_limit();
//! loop {
//!     let sock = listen::accept(&listener).await?;
//!     // serve `sock` with `listen::http1()`: its header read timeout closes a stalled client
//!     # drop(sock);
//! }
//! # }
//! ```

use std::io;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

/// How long [`accept`] waits before it accepts again after a failure that passes (no file
/// descriptor, no memory for the socket, a connection reset before it was accepted): 50 ms,
/// as hyper 0.14's and axum's servers pause (they wait 1 s) instead of ending.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How long a client has to send a request's complete headers, counted from the
/// connection's start (and, in the hyper version in use, from the end of the last exchange
/// on a keep-alive connection): 30 s, hyper 1's default once a timer is given. A client that
/// sends nothing or stalls mid-headers is disconnected, freeing its descriptor.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client has to send a request's whole body once its headers are in: 30 s. A
/// client that stops mid-body is answered 408 and disconnected (hyper 1 has no body timeout of
/// its own; the server reading the body applies this one).
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether a failed `accept` is one that passes: the process or the system is out of file
/// descriptors (`EMFILE`, `ENFILE`) or socket memory (`ENOBUFS`, `ENOMEM`), or the connection
/// went away before it was accepted (`ECONNABORTED`, `ECONNRESET`, `EPROTO`, `EPERM` from a
/// firewall, `EINTR`). Anything else (a closed or invalid listener) is the listener's end.
pub fn accept_error_passes(e: &io::Error) -> bool {
    use nix::errno::Errno;
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::OutOfMemory
    ) || e.raw_os_error().is_some_and(|n| {
        [
            Errno::EMFILE,
            Errno::ENFILE,
            Errno::ENOBUFS,
            Errno::ENOMEM,
            Errno::EPROTO,
            Errno::EPERM,
        ]
        .contains(&Errno::from_raw(n))
    })
}

/// The next connection of `listener`. A failure that passes ([`accept_error_passes`]) is
/// waited out: [`ACCEPT_BACKOFF`], then `accept` again, for as long as it lasts (the
/// connections already open go on meanwhile, and closing one frees a descriptor).
///
/// # Errors
/// Any other error of `accept` (the listener itself failed).
pub async fn accept(listener: &TcpListener) -> io::Result<TcpStream> {
    loop {
        match listener.accept().await {
            Ok((sock, _)) => return Ok(sock),
            Err(e) if accept_error_passes(&e) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            Err(e) => return Err(e),
        }
    }
}

/// An HTTP/1.1 server connection builder with a timer, so that [`HEADER_READ_TIMEOUT`] holds
/// (without a timer hyper 1 applies none).
pub fn http1() -> hyper::server::conn::http1::Builder {
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    b
}

/// Raises this process's soft limit of open files (`RLIMIT_NOFILE`) to its hard limit, as
/// servers do at start (the soft limit is often 1,024 while the hard one is far higher): each
/// client connection holds one descriptor. Returns `(soft before, soft now)`; `None` when the
/// limit cannot be read or set (then it stays as it was; [`accept`] still waits out running
/// out).
pub fn raise_open_files_limit() -> Option<(u64, u64)> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft >= hard {
        return Some((soft, soft));
    }
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).ok()?;
    Some((soft, hard))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_descriptors_passes_a_closed_listener_does_not() {
        for n in [nix::libc::EMFILE, nix::libc::ENFILE, nix::libc::ENOBUFS] {
            assert!(accept_error_passes(&io::Error::from_raw_os_error(n)), "{n}");
        }
        let aborted = io::Error::from(io::ErrorKind::ConnectionAborted);
        assert!(accept_error_passes(&aborted));
        for n in [nix::libc::EBADF, nix::libc::EINVAL, nix::libc::ENOTSOCK] {
            assert!(
                !accept_error_passes(&io::Error::from_raw_os_error(n)),
                "{n}"
            );
        }
    }
}
