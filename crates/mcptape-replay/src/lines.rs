//! Newline-delimited JSON-RPC over a byte stream (MCP stdio transport,
//! 2025-11-25 "Transports" §stdio), with a bounded line buffer.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::error::{ReplayError, ReplayErrorKind};

/// Largest incoming line accepted, bytes (256 MiB: a 1,834,208-byte blob is
/// 2,445,612 base64 chars, so this leaves room for ~100 such entries).
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// Reads one line (without `\n` and one trailing `\r`) into `buf`.
/// Returns `Ok(false)` at end of stream with nothing buffered.
///
/// # Errors
/// [`ReplayErrorKind::LineTooLong`] past `max` bytes (the rest of the stream
/// is then not trustworthy), [`ReplayErrorKind::Io`] from the reader.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> Result<bool, ReplayError> {
    buf.clear();
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(!buf.is_empty());
        }
        let (done, used) = match memchr_nl(avail) {
            Some(i) => {
                buf.extend_from_slice(&avail[..i]);
                (true, i + 1)
            }
            None => {
                buf.extend_from_slice(avail);
                (false, avail.len())
            }
        };
        r.consume(used);
        if buf.len() > max {
            return Err(ReplayError::new(ReplayErrorKind::LineTooLong(max)));
        }
        if done {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(true);
        }
    }
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn line_limit_at_and_past() {
        let data = b"abcd\nabcde\n".to_vec();
        let mut r = tokio::io::BufReader::new(&data[..]);
        let mut buf = Vec::new();
        assert!(read_line(&mut r, &mut buf, 4).await.unwrap());
        assert_eq!(buf, b"abcd");
        let e = read_line(&mut r, &mut buf, 4).await.unwrap_err();
        assert!(matches!(e.kind, ReplayErrorKind::LineTooLong(4)));
    }

    #[tokio::test]
    async fn crlf_and_unterminated_last_line() {
        let data = b"a\r\nb".to_vec();
        let mut r = tokio::io::BufReader::new(&data[..]);
        let mut buf = Vec::new();
        assert!(read_line(&mut r, &mut buf, 10).await.unwrap());
        assert_eq!(buf, b"a");
        assert!(read_line(&mut r, &mut buf, 10).await.unwrap());
        assert_eq!(buf, b"b");
        assert!(!read_line(&mut r, &mut buf, 10).await.unwrap());
    }
}
