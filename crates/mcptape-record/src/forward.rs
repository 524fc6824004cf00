//! How one proxied direction of the stdio recorder moves its bytes
//! ([`crate::stdio`]: record before forward).
//!
//! Two ways, one contract: [`Ends::read_some`] puts the next bytes in
//! mcptape's line buffer (to scan and record them), [`Ends::forward`] then
//! hands those same bytes to the peer.
//!
//! * [`Ends::Copy`], any streams: a `read(2)` into the buffer (the bytes are
//!   taken from `from`), a `write(2)` out of it.
//! * [`Ends::Pipes`], Linux, when both ends are pipes (what a host and a
//!   stdio server give mcptape): `tee(2)` duplicates the pipe's pages into a
//!   private pipe without consuming them, a `read(2)` of that pipe fills the
//!   buffer (the one copy mcptape needs: the scan and the record read the
//!   bytes), and `splice(2)` then moves the pages themselves from `from` to
//!   `to`: no copy out of mcptape, no page allocated and freed per write.
//!   The bytes reach `to` only in [`Ends::forward`], after the caller has
//!   recorded every line they complete, so record-before-forward holds as on
//!   the copy path, and a SIGKILL between the two leaves them unforwarded in
//!   `from`. The peek and the move are the same bytes as long as nothing but
//!   mcptape reads `from`. Only bulk moves take this way: after a read shorter
//!   than [`pipes::SPLICE_FROM_BYTES`] the next one is a plain `read(2)` and
//!   `write(2)` (two system calls for a small message, not three).

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Source of a copied direction (the client's stdin, the server's stdout or stderr).
pub(crate) type Source = Box<dyn AsyncRead + Send + Unpin>;
/// Destination of a copied direction.
pub(crate) type Sink = Box<dyn AsyncWrite + Send + Unpin>;

/// The two ends of one proxied direction: where bytes come `from`, where
/// they go `to`.
pub(crate) enum Ends {
    /// Any streams: read into the line buffer, written out of it.
    Copy {
        /// Source.
        from: Source,
        /// Destination.
        to: Sink,
    },
    /// Two pipes: peeked with `tee(2)`, forwarded with `splice(2)`.
    #[cfg(target_os = "linux")]
    Pipes(pipes::Pipes),
}

impl Ends {
    /// A direction from the read end `from` to the write end `to` of two pipes:
    /// [`Ends::Pipes`] on Linux, [`Ends::Copy`] through tokio's pipe types
    /// elsewhere. Errors: `InvalidInput` when either is not a pipe, or the
    /// error of making the private pipe (`pipe2(2)`: `EMFILE`, `ENFILE`).
    pub(crate) fn between_pipes(
        from: std::os::fd::OwnedFd,
        to: std::os::fd::OwnedFd,
    ) -> io::Result<Ends> {
        #[cfg(target_os = "linux")]
        {
            pipes::Pipes::new(from, to).map(Ends::Pipes)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Ok(Ends::Copy {
                from: Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(from)?),
                to: Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(to)?),
            })
        }
    }

    /// Reads the next bytes (up to `buf.len()`) into `buf`; `Ok(0)` at end of
    /// stream, `Interrupted` retried. Cancel-safe (nothing is read when the
    /// future is dropped before it resolves). Until [`Ends::stop_forwarding`],
    /// the bytes read are due to the peer by [`Ends::forward`] before the next
    /// read; after it, they are consumed here.
    pub(crate) async fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Ends::Copy { from, .. } => loop {
                match from.read(buf).await {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => return r,
                }
            },
            #[cfg(target_os = "linux")]
            Ends::Pipes(p) => p.read_some(buf).await,
        }
    }

    /// Forwards the bytes of the last [`Ends::read_some`] (`bytes`, as they
    /// lie in the line buffer) to the peer, and flushes. Errors: the peer's
    /// write errors (`BrokenPipe` when it went away). Dropped midway, what was
    /// not forwarded yet stays due (the caller stops at that point).
    pub(crate) async fn forward(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Ends::Copy { to, .. } => {
                to.write_all(bytes).await?;
                to.flush().await
            }
            #[cfg(target_os = "linux")]
            Ends::Pipes(p) => {
                debug_assert_eq!(bytes.len(), p.due, "forward what was read");
                p.forward(bytes).await
            }
        }
    }

    /// After a failed [`Ends::forward`]: nothing more goes to the peer; the
    /// bytes still due are dropped and later reads consume what they read.
    pub(crate) fn stop_forwarding(&mut self) {
        #[cfg(target_os = "linux")]
        if let Ends::Pipes(p) = self {
            p.forwarding = false;
        }
    }

    /// Ends the forwarding: shuts `to` down (a pipe: closes it), so the peer
    /// sees end of stream.
    pub(crate) async fn shutdown(&mut self) {
        match self {
            Ends::Copy { to, .. } => {
                let _ = to.shutdown().await;
            }
            #[cfg(target_os = "linux")]
            Ends::Pipes(p) => p.to = None,
        }
    }
}

#[cfg(target_os = "linux")]
pub(crate) mod pipes {
    //! [`Pipes`]: `tee(2)` + `splice(2)` between two pipes (Linux 2.6.17+).

    use std::io;
    use std::os::fd::OwnedFd;

    use nix::fcntl::{OFlag, SpliceFFlags, splice, tee};
    use tokio::net::unix::pipe;

    /// Reads of at least this many bytes (64 KiB) switch the next read of
    /// [`Pipes`] to `tee(2)` + `splice(2)`; shorter ones to a plain
    /// `read(2)` + `write(2)`. A bulk transfer (a 16 MiB line comes in 1 MiB
    /// reads) is moved without a copy out of mcptape, a lone JSON-RPC message
    /// (~100 bytes) with two system calls instead of three.
    pub(crate) const SPLICE_FROM_BYTES: usize = 64 * 1024;

    /// Two pipes and the private pipe that peeks at the first one.
    pub(crate) struct Pipes {
        /// Read end of the source pipe (nonblocking).
        from: pipe::Receiver,
        /// Write end of the destination pipe (nonblocking); `None` once shut down.
        pub(super) to: Option<pipe::Sender>,
        /// The private pipe `tee(2)` copies page references into.
        peek_r: OwnedFd,
        peek_w: OwnedFd,
        /// Bytes read and not forwarded to `to` yet.
        pub(super) due: usize,
        /// Whether those bytes were taken from `from` by a plain read (then
        /// [`Pipes::forward`] writes them) or only peeked (then it splices them).
        copied: bool,
        /// Whether the next read peeks and splices (the last read was at least
        /// [`SPLICE_FROM_BYTES`]) or copies.
        pub(super) splice_next: bool,
        /// Whether bytes still go to `to` ([`super::Ends::stop_forwarding`]).
        pub(super) forwarding: bool,
    }

    impl Pipes {
        /// The pipe ends `from` (read end) and `to` (write end), both set
        /// nonblocking, with a private pipe grown like them to
        /// [`crate::stdio::PIPE_BYTES`]. Errors: `InvalidInput` when either is
        /// not a pipe, or the `pipe2(2)` error.
        pub(crate) fn new(from: OwnedFd, to: OwnedFd) -> io::Result<Pipes> {
            let from = pipe::Receiver::from_owned_fd(from)?;
            let to = pipe::Sender::from_owned_fd(to)?;
            let (peek_r, peek_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
            let _ = mcptape_transport::child::grow_pipe(&peek_w);
            Ok(Pipes {
                from,
                to: Some(to),
                peek_r,
                peek_w,
                due: 0,
                copied: false,
                splice_next: false,
                forwarding: true,
            })
        }

        /// See [`super::Ends::read_some`].
        pub(super) async fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if !self.forwarding {
                // Drop what was recorded but never forwarded, then plain reads.
                if self.copied {
                    self.due = 0;
                }
                while self.due > 0 {
                    let take = self.due.min(buf.len());
                    match self.consume(&mut buf[..take]).await? {
                        0 => self.due = 0,
                        n => self.due -= n,
                    }
                }
                return self.consume(buf).await;
            }
            debug_assert_eq!(self.due, 0, "forward() after every read_some()");
            if !self.splice_next {
                let n = self.consume(buf).await?;
                self.due = n;
                self.copied = true;
                self.splice_next = n >= SPLICE_FROM_BYTES;
                return Ok(n);
            }
            let n = loop {
                self.from.readable().await?;
                let teed = self.from.try_io(|| {
                    retry_eintr(|| {
                        tee(
                            &self.from,
                            &self.peek_w,
                            buf.len(),
                            SpliceFFlags::SPLICE_F_NONBLOCK,
                        )
                    })
                });
                match teed {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    r => break r?,
                }
            };
            // The private pipe holds exactly these n bytes: read them all.
            let mut got = 0;
            while got < n {
                match retry_eintr(|| nix::unistd::read(&self.peek_r, &mut buf[got..n]))? {
                    0 => return Err(io::Error::other("tee(2): the private pipe ended early")),
                    k => got += k,
                }
            }
            self.due = n;
            self.copied = false;
            self.splice_next = n >= SPLICE_FROM_BYTES;
            Ok(n)
        }

        /// See [`super::Ends::forward`].
        pub(super) async fn forward(&mut self, bytes: &[u8]) -> io::Result<()> {
            if self.copied {
                while self.due > 0 {
                    let Some(to) = &self.to else {
                        return Err(io::ErrorKind::BrokenPipe.into());
                    };
                    to.writable().await?;
                    match to.try_write(&bytes[bytes.len() - self.due..]) {
                        Ok(k) => self.due -= k,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                return Ok(());
            }
            let flags = SpliceFFlags::SPLICE_F_NONBLOCK | SpliceFFlags::SPLICE_F_MOVE;
            while self.due > 0 {
                let Some(to) = &self.to else {
                    return Err(io::ErrorKind::BrokenPipe.into());
                };
                to.writable().await?;
                let moved = to
                    .try_io(|| retry_eintr(|| splice(&self.from, None, to, None, self.due, flags)));
                match moved {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "splice(2): the source pipe was emptied by another reader",
                        ));
                    }
                    Ok(k) => self.due -= k,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }

        /// A plain read of `from` (bytes consumed, not forwarded).
        async fn consume(&self, buf: &mut [u8]) -> io::Result<usize> {
            loop {
                self.from.readable().await?;
                match self.from.try_read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => return r,
                }
            }
        }
    }

    /// Runs `op` again while it fails with `EINTR`; other errors as `io::Error`.
    fn retry_eintr<T>(mut op: impl FnMut() -> nix::Result<T>) -> io::Result<T> {
        loop {
            match op() {
                Err(nix::errno::Errno::EINTR) => {}
                r => return r.map_err(io::Error::from),
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A pipe as (read end, write end) std files, blocking.
    fn pipe() -> (std::fs::File, std::fs::File) {
        let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        (r.into(), w.into())
    }

    /// What the read end `r` holds now, without waiting (it is made nonblocking).
    fn available(r: &std::fs::File) -> Vec<u8> {
        use nix::fcntl::{FcntlArg, OFlag, fcntl};
        fcntl(r, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).unwrap();
        let mut out = vec![0; 1 << 20];
        match nix::unistd::read(r, &mut out) {
            Ok(n) => out[..n].to_vec(),
            Err(nix::errno::Errno::EAGAIN) => Vec::new(),
            Err(e) => panic!("{e}"),
        }
    }

    /// Whether the next read of `ends` peeks and splices.
    fn splices_next(ends: &Ends) -> bool {
        matches!(ends, Ends::Pipes(p) if p.splice_next)
    }

    #[tokio::test]
    async fn bytes_reach_the_peer_only_when_forwarded_copied_or_spliced() {
        let (a_r, mut a_w) = pipe();
        let (b_r, b_w) = pipe();
        let mut ends = Ends::between_pipes(a_r.into(), b_w.into()).unwrap();
        let mut buf = vec![0; 1 << 20];
        // A small read (copied), a bulk one (copied; the next one is spliced), ...
        let big = vec![b'x'; pipes::SPLICE_FROM_BYTES];
        let small = b"{\"jsonrpc\":\"2.0\"}\n{\"par".to_vec();
        for (chunk, spliced) in [
            (&small, false),
            (&big, false),
            (&small, true),
            (&small, false),
        ] {
            assert_eq!(splices_next(&ends), spliced);
            a_w.write_all(chunk).unwrap();
            let n = ends.read_some(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], &chunk[..]);
            // Read (and recorded by the caller), not forwarded yet: the peer has nothing.
            assert_eq!(available(&b_r), b"");
            ends.forward(&buf[..n]).await.unwrap();
            assert_eq!(available(&b_r), &chunk[..]);
        }
        drop(a_w);
        assert_eq!(ends.read_some(&mut buf).await.unwrap(), 0, "end of stream");
    }

    #[tokio::test]
    async fn after_a_failed_forward_the_due_bytes_are_dropped_and_reads_consume() {
        for bulk_first in [false, true] {
            let (a_r, mut a_w) = pipe();
            let (b_r, b_w) = pipe();
            let mut ends = Ends::between_pipes(a_r.into(), b_w.into()).unwrap();
            let mut buf = vec![0; 1 << 20];
            // After a bulk read the failing forward is a splice, else a write.
            let first = if bulk_first {
                pipes::SPLICE_FROM_BYTES
            } else {
                1
            };
            a_w.write_all(&vec![b'x'; first]).unwrap();
            let n = ends.read_some(&mut buf).await.unwrap();
            ends.forward(&buf[..n]).await.unwrap();
            assert_eq!(splices_next(&ends), bulk_first);
            drop(b_r);
            a_w.write_all(b"first\n").unwrap();
            let n = ends.read_some(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"first\n");
            let e = ends.forward(&buf[..n]).await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
            ends.stop_forwarding();
            a_w.write_all(b"second\n").unwrap();
            let n = ends.read_some(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"second\n", "first line dropped, not read again");
        }
    }

    #[tokio::test]
    async fn spliced_stream_larger_than_the_pipes_arrives_whole_and_in_order() {
        let (a_r, mut a_w) = pipe();
        let (mut b_r, b_w) = pipe();
        let mut ends = Ends::between_pipes(a_r.into(), b_w.into()).unwrap();
        // 5 MiB + 3 bytes of a pattern that shows a reordering or a repeat.
        let data: Vec<u8> = (0..5 * 1024 * 1024 + 3)
            .map(|i: u32| (i % 251) as u8)
            .collect();
        let sent = data.clone();
        let writer = std::thread::spawn(move || a_w.write_all(&sent).unwrap());
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            b_r.read_to_end(&mut got).unwrap();
            got
        });
        let mut seen = Vec::new();
        let mut buf = vec![0; crate::stdio::CHUNK_BYTES];
        loop {
            let n = ends.read_some(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            ends.forward(&buf[..n]).await.unwrap();
        }
        ends.shutdown().await;
        drop(ends);
        writer.join().unwrap();
        assert_eq!(seen, data, "what mcptape read (and would record)");
        assert_eq!(reader.join().unwrap(), data, "what the peer received");
    }

    #[test]
    fn a_file_is_not_a_pipe() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _g = rt.enter();
        let file = tempfile::tempfile().unwrap();
        let (_r, w) = pipe();
        let e = Ends::between_pipes(file.into(), w.into()).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
