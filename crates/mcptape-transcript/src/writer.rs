//! Writing transcripts: [`TranscriptWriter`] writes the header line, then one
//! record per line, and flushes after every record so a crash loses at most
//! the record being written.

use std::io::{self, IoSlice, Write};

use crate::model::{Direction, Header, Record};
use crate::ondisk;

/// Writes a transcript (JSON Lines, see the crate docs) to any [`Write`].
///
/// Sans-IO: the caller owns the sink (a file, a `Vec<u8>`, a pipe) and the clock
/// (record times are given in [`Record::t_us`]).
#[derive(Debug)]
pub struct TranscriptWriter<W: Write> {
    w: W,
    records: u64,
    bytes: u64,
}

impl<W: Write> TranscriptWriter<W> {
    /// Writes `header` as the first line and flushes.
    ///
    /// # Errors
    /// Any [`io::Error`] from the sink.
    pub fn new(mut w: W, header: &Header) -> io::Result<Self> {
        let mut line = serde_json::to_vec(header).map_err(io::Error::other)?;
        line.push(b'\n');
        w.write_all(&line)?;
        w.flush()?;
        Ok(Self {
            w,
            records: 0,
            bytes: line.len() as u64,
        })
    }

    /// Writes one record as one line (`{"tUs":…,"kind":…}` + `\n`) in a single
    /// `write_all`, then flushes.
    ///
    /// # Errors
    /// Any [`io::Error`] from the sink. A [`crate::Event::Message`] whose JSON
    /// contains a line break (pretty-printed HTTP body) is written as the
    /// escaped string field `msgText` so the record stays on one line.
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        let line = ondisk::record_line(record);
        self.w.write_all(&line)?;
        self.w.flush()?;
        self.records += 1;
        self.bytes += line.len() as u64;
        Ok(())
    }

    /// Writes one [`crate::Event::Message`] record (no HTTP details) straight from the
    /// message's exact text, without parsing or copying it: the line
    /// `{"tUs":T,"kind":"message","dir":"c2s","msg":` + `json` + `}` + `\n`
    /// goes to the sink in **one** vectored write (`writev(2)` on a file;
    /// retried only if the sink takes part of it), then the sink is flushed.
    /// The bytes written are exactly those [`TranscriptWriter::write`] writes
    /// for the same record, which reads back equal.
    ///
    /// `json` must be exactly one JSON value (RFC 8259, so UTF-8) with nothing around it,
    /// already checked by the caller (e.g. a stdio
    /// `mcptape_transport::stdio::Frame::Message`, which the line framer
    /// validated); it is not re-parsed here (that is the point: a 16 MiB line
    /// costs one copy into the page cache). A `json` holding a line break
    /// (`\r` or `\n` between tokens) is written as `msgText`, as
    /// [`TranscriptWriter::write`] does; only that rare case is parsed.
    ///
    /// # Errors
    /// Any [`io::Error`] from the sink ([`io::ErrorKind::WriteZero`] if it
    /// accepts no byte); [`io::ErrorKind::InvalidData`] if `json` holds a line
    /// break and is not exactly one JSON value (nothing is written then).
    pub fn write_raw_message(&mut self, t_us: u64, dir: Direction, json: &[u8]) -> io::Result<()> {
        if memchr::memchr2(b'\n', b'\r', json).is_some() {
            let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
            let text = std::str::from_utf8(json).map_err(|e| invalid(e.to_string()))?;
            let record = Record::message(t_us, dir, text).map_err(|e| invalid(e.to_string()))?;
            return self.write(&record);
        }
        self.write_raw_message_without_line_break(t_us, dir, json)
    }

    /// [`TranscriptWriter::write_raw_message`] for a `json` the caller already
    /// knows holds no `\r` and no `\n` (e.g. the stdio recorder, whose one
    /// scan of the line saw none): the same bytes, without the `memchr2` pass
    /// over `json` that looks for them.
    ///
    /// `json` must be exactly one JSON value (RFC 8259) with no `\r` or `\n`
    /// byte; it is not checked (a line break would cut the record in two).
    ///
    /// # Errors
    /// Any [`io::Error`] from the sink ([`io::ErrorKind::WriteZero`] if it
    /// accepts no byte).
    pub fn write_raw_message_without_line_break(
        &mut self,
        t_us: u64,
        dir: Direction,
        json: &[u8],
    ) -> io::Result<()> {
        let dir = match dir {
            Direction::C2s => "c2s",
            Direction::S2c => "s2c",
        };
        let prefix = format!("{{\"tUs\":{t_us},\"kind\":\"message\",\"dir\":\"{dir}\",\"msg\":");
        let mut slices = [
            IoSlice::new(prefix.as_bytes()),
            IoSlice::new(json),
            IoSlice::new(b"}\n"),
        ];
        let total = prefix.len() + json.len() + 2;
        write_all_vectored(&mut self.w, &mut slices)?;
        self.w.flush()?;
        self.records += 1;
        self.bytes += total as u64;
        Ok(())
    }

    /// Number of records written so far (the header not counted).
    pub fn records_written(&self) -> u64 {
        self.records
    }

    /// Number of bytes written so far, header included.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// A reference to the sink.
    pub fn get_ref(&self) -> &W {
        &self.w
    }

    /// Returns the sink (everything written is already flushed).
    pub fn into_inner(self) -> W {
        self.w
    }
}

/// `write_all` over several slices: one `write_vectored` call when the sink
/// takes everything (a regular file does), more only for the rest.
fn write_all_vectored(w: &mut impl Write, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !slices.is_empty() {
        match w.write_vectored(slices) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the transcript sink accepted no byte",
                ));
            }
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ServerSpec, Transport};

    fn header() -> Header {
        Header::new(
            Transport::Stdio,
            ServerSpec::default(),
            "2026-01-01T00:00:00.000Z",
        )
    }

    /// A `Write` that takes at most 7 bytes per call (vectored or not).
    struct Trickle(Vec<u8>);
    impl Write for Trickle {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            let n = b.len().min(7);
            self.0.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The raw fast path writes the very bytes of the typed path, also to a
    /// sink that takes a few bytes per call, and for a message with a `\r`
    /// between tokens (written as `msgText`).
    #[test]
    fn raw_message_line_equals_typed_record_line() {
        let cases = [
            (
                Direction::C2s,
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
            (Direction::S2c, r#""caf\u00e9 ü""#),
            (Direction::S2c, "{\"a\":\r1}"),
        ];
        for (dir, json) in cases {
            let mut typed = TranscriptWriter::new(Vec::new(), &header()).unwrap();
            typed
                .write(&Record::message(42, dir, json).unwrap())
                .unwrap();
            let mut raw = TranscriptWriter::new(Trickle(Vec::new()), &header()).unwrap();
            raw.write_raw_message(42, dir, json.as_bytes()).unwrap();
            assert_eq!(raw.bytes_written(), typed.bytes_written());
            assert_eq!(raw.records_written(), 1);
            assert_eq!(
                String::from_utf8(raw.into_inner().0).unwrap(),
                String::from_utf8(typed.into_inner()).unwrap(),
                "{json:?}"
            );
        }
    }

    /// A line break in text that is not one JSON value cannot be written as
    /// `msgText` and is refused, not written.
    #[test]
    fn raw_message_with_line_break_and_invalid_json_is_invalid_data() {
        let mut w = TranscriptWriter::new(Vec::new(), &header()).unwrap();
        let before = w.bytes_written();
        let err = w
            .write_raw_message(1, Direction::C2s, b"{\"a\":\r")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(w.bytes_written(), before);
        assert_eq!(w.records_written(), 0);
    }
}
