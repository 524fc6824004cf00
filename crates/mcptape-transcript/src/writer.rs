//! Writing transcripts: [`TranscriptWriter`] writes the header line, then one
//! record per line, and flushes after every record so a crash loses at most
//! the record being written.

use std::io::{self, Write};

use crate::model::{Header, Record};
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
