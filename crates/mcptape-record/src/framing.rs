//! Minimal newline framing for the recording side of the stdio proxy.
//!
//! The proxy forwards raw chunks unchanged and only *observes* them through
//! this framer to cut records, so framing can never alter the bytes a peer
//! sees. Lines are cut at `\n`; one trailing `\r` is stripped (MCP stdio
//! transport, spec 2025-11-25 "Transports" §stdio: messages are delimited by
//! newlines).

/// Largest line the recorder keeps as one record, in bytes (64 MiB). A longer
/// line still passes through the proxy unchanged; the transcript gets a
/// [`Framed::Oversize`] marker instead of its bytes.
pub const MAX_RECORDED_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One item cut from the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Framed<'a> {
    /// A complete line, terminator (and one `\r`) removed.
    Line(&'a [u8]),
    /// A line longer than the limit ended; it was this many bytes (terminator excluded).
    Oversize(usize),
}

/// Incremental line framer with a bounded buffer (at most `limit` bytes held).
#[derive(Debug)]
pub struct LineFramer {
    buf: Vec<u8>,
    limit: usize,
    /// Length of the current over-long line, once it passed the limit.
    overflow: Option<usize>,
}

impl LineFramer {
    /// A framer keeping lines up to `limit` bytes.
    pub fn new(limit: usize) -> Self {
        LineFramer {
            buf: Vec::new(),
            limit,
            overflow: None,
        }
    }

    /// Feeds `chunk`, calling `emit` for every line completed by it.
    pub fn push(&mut self, mut chunk: &[u8], mut emit: impl FnMut(Framed<'_>)) {
        while let Some(i) = memchr::memchr(b'\n', chunk) {
            let (head, tail) = (&chunk[..i], &chunk[i + 1..]);
            if let Some(n) = self.overflow.take() {
                emit(Framed::Oversize(n + head.len()));
                self.buf.clear();
            } else if self.buf.is_empty() {
                if head.len() > self.limit + 1 {
                    emit(Framed::Oversize(head.len()));
                } else {
                    let line = strip_cr(head);
                    if line.len() > self.limit {
                        emit(Framed::Oversize(line.len()));
                    } else {
                        emit(Framed::Line(line));
                    }
                }
            } else {
                self.buf.extend_from_slice(head);
                let n = strip_cr(&self.buf).len();
                if n > self.limit {
                    emit(Framed::Oversize(n));
                } else {
                    emit(Framed::Line(&self.buf[..n]));
                }
                self.buf.clear();
            }
            chunk = tail;
        }
        self.hold(chunk);
    }

    fn hold(&mut self, rest: &[u8]) {
        if rest.is_empty() {
            return;
        }
        if let Some(n) = self.overflow.as_mut() {
            *n += rest.len();
        } else if self.buf.len() + rest.len() > self.limit + 1 {
            // +1: a `\r` may still be stripped.
            self.overflow = Some(self.buf.len() + rest.len());
            self.buf = Vec::new();
        } else {
            self.buf.extend_from_slice(rest);
        }
    }

    /// Ends the stream: returns the unterminated tail, if any.
    pub fn finish(&mut self, emit: impl FnOnce(Framed<'_>)) {
        if let Some(n) = self.overflow.take() {
            emit(Framed::Oversize(n));
        } else if !self.buf.is_empty() {
            let n = strip_cr(&self.buf).len();
            emit(Framed::Line(&self.buf[..n]));
        }
        self.buf.clear();
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_all(limit: usize, chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, usize>> {
        let mut f = LineFramer::new(limit);
        let mut out = Vec::new();
        let mut take = |x: Framed<'_>| match x {
            Framed::Line(l) => out.push(Ok(l.to_vec())),
            Framed::Oversize(n) => out.push(Err(n)),
        };
        for c in chunks {
            f.push(c, &mut take);
        }
        f.finish(&mut take);
        out
    }

    #[test]
    fn every_split_point_gives_same_lines() {
        let input: &[u8] = b"{\"a\":1}\r\n{\"b\":\"\xc3\xa9\"}\nbanner\n\ntail";
        let want = frame_all(1024, &[input]);
        assert_eq!(
            want,
            vec![
                Ok(b"{\"a\":1}".to_vec()),
                Ok(b"{\"b\":\"\xc3\xa9\"}".to_vec()),
                Ok(b"banner".to_vec()),
                Ok(vec![]),
                Ok(b"tail".to_vec())
            ]
        );
        for i in 0..=input.len() {
            for j in i..=input.len() {
                assert_eq!(
                    frame_all(1024, &[&input[..i], &input[i..j], &input[j..]]),
                    want,
                    "split {i},{j}"
                );
            }
        }
    }

    #[test]
    fn line_at_limit_is_kept_one_past_is_oversize() {
        let at = vec![b'x'; 16];
        let mut s = at.clone();
        s.extend_from_slice(b"\r\n");
        assert_eq!(frame_all(16, &[&s]), vec![Ok(at.clone())]);
        let mut past = vec![b'x'; 17];
        past.push(b'\n');
        past.extend_from_slice(b"ok\n");
        for i in 0..past.len() {
            assert_eq!(
                frame_all(16, &[&past[..i], &past[i..]]),
                vec![Err(17), Ok(b"ok".to_vec())],
                "split {i}"
            );
        }
    }
}
