//! The findings of one transcript as they are found, held in bounded memory:
//! at most [`SPILL_CHUNK_FINDINGS`] in memory, the rest written to an
//! anonymous temporary file in sorted runs and merged back in report order
//! ([`Findings::into_sorted`]). Report order is `(record, line)`, ties in the
//! order the findings were found (a sequence number each: a finding completed
//! later, like `http-protocol-version-mismatch`, keeps the number of the
//! moment it was found).

use std::io::{Read, Seek, SeekFrom, Write};

use crate::report::Finding;
use crate::rules::Severity;

/// Findings held in memory before a sorted run of them is written to the
/// temporary file: 16,384 (a few MB; a transcript with fewer findings never
/// touches the disk).
pub const SPILL_CHUNK_FINDINGS: usize = 16_384;

/// Read buffer of one run while merging (16 KiB).
const RUN_READ_BYTES: usize = 16 << 10;

/// Write buffer of a run being spilled (64 KiB).
const RUN_WRITE_BYTES: usize = 64 << 10;

/// A finding and its sequence number.
type Numbered = (u64, Finding);

fn key(n: &Numbered) -> (usize, usize, u64) {
    (n.1.record, n.1.line, n.0)
}

/// The findings of one transcript, in memory and spilled.
#[derive(Default)]
pub(crate) struct Findings {
    mem: Vec<Numbered>,
    next_seq: u64,
    spill: Option<Spill>,
    /// The first error writing a run (findings then stay in memory).
    error: Option<std::io::Error>,
}

/// The temporary file and where each sorted run lies in it.
struct Spill {
    file: std::fs::File,
    /// (byte offset, byte length) of each run, in order.
    runs: Vec<(u64, u64)>,
    end: u64,
}

impl Findings {
    /// Takes the next sequence number (for a finding pushed later with
    /// [`Self::push_at`]).
    pub(crate) fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Adds a finding found now.
    pub(crate) fn push(&mut self, f: Finding) {
        let seq = self.reserve();
        self.push_at(seq, f);
    }

    /// Adds a finding found earlier, at sequence number `seq`. A failure to
    /// write a run is kept for [`Self::take_error`].
    pub(crate) fn push_at(&mut self, seq: u64, f: Finding) {
        self.mem.push((seq, f));
        if self.mem.len() >= SPILL_CHUNK_FINDINGS
            && self.error.is_none()
            && let Err(e) = self.write_run()
        {
            self.error = Some(e);
        }
    }

    /// The error of writing a run, if one failed.
    pub(crate) fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    fn write_run(&mut self) -> std::io::Result<()> {
        self.mem.sort_unstable_by_key(key);
        let spill = match &mut self.spill {
            Some(s) => s,
            None => self.spill.insert(Spill {
                file: tempfile::tempfile()?,
                runs: Vec::new(),
                end: 0,
            }),
        };
        spill.file.seek(SeekFrom::Start(spill.end))?;
        // Encoded through a small buffer, not into one run-sized `Vec`
        // (megabytes grown by doubling, faulted in afresh for every run).
        let mut w = std::io::BufWriter::with_capacity(RUN_WRITE_BYTES, &spill.file);
        let mut one = Vec::new();
        let mut len = 0u64;
        for n in &self.mem {
            one.clear();
            encode(n, &mut one);
            w.write_all(&one)?;
            len += one.len() as u64;
        }
        w.flush()?;
        drop(w);
        self.mem.clear();
        spill.runs.push((spill.end, len));
        spill.end += len;
        Ok(())
    }

    /// Every finding in report order; `file` is the name each carries.
    pub(crate) fn into_sorted(mut self, file: &str) -> Sorted {
        self.mem.sort_unstable_by_key(key);
        let mut heads = Vec::new();
        let mut runs = Vec::new();
        if let Some(spill) = self.spill.take() {
            let file = std::sync::Arc::new(spill.file);
            for (offset, len) in spill.runs {
                runs.push(Run {
                    file: file.clone(),
                    next: offset,
                    end: offset + len,
                    buf: Vec::new(),
                    pos: 0,
                });
                heads.push(None);
            }
        }
        let mut sorted = Sorted {
            file: file.to_owned(),
            mem: self.mem.into_iter().peekable(),
            runs,
            heads,
            failed: false,
        };
        for i in 0..sorted.runs.len() {
            sorted.heads[i] = sorted.runs[i].next_finding(&sorted.file).transpose();
        }
        sorted
    }
}

/// The findings of one transcript in report order: the in-memory ones and the spilled runs
/// merged by `(record, line, sequence)`.
pub struct Sorted {
    file: String,
    mem: std::iter::Peekable<std::vec::IntoIter<Numbered>>,
    runs: Vec<Run>,
    /// The next finding of each run (`None`: the run is done).
    heads: Vec<Option<std::io::Result<Numbered>>>,
    failed: bool,
}

impl Iterator for Sorted {
    type Item = std::io::Result<Finding>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        // The smallest head; a run that failed to read ends the merge.
        let mut best: Option<(usize, (usize, usize, u64))> = None;
        for (i, h) in self.heads.iter().enumerate() {
            match h {
                Some(Ok(n)) => {
                    let k = key(n);
                    if best.is_none_or(|(_, b)| k < b) {
                        best = Some((i, k));
                    }
                }
                Some(Err(_)) => {
                    self.failed = true;
                    let Some(Err(e)) = self.heads[i].take() else {
                        return None;
                    };
                    return Some(Err(e));
                }
                None => {}
            }
        }
        let mem_key = self.mem.peek().map(key);
        match (best, mem_key) {
            (Some((i, k)), m) if m.is_none_or(|m| k < m) => {
                let head = self.runs[i].next_finding(&self.file).transpose();
                let Some(Ok((_, f))) = std::mem::replace(&mut self.heads[i], head) else {
                    return None;
                };
                Some(Ok(f))
            }
            (_, Some(_)) => self.mem.next().map(|(_, f)| Ok(f)),
            (_, None) => None,
        }
    }
}

/// One sorted run in the temporary file, read through a small buffer.
struct Run {
    file: std::sync::Arc<std::fs::File>,
    next: u64,
    end: u64,
    buf: Vec<u8>,
    pos: usize,
}

impl Run {
    /// Ensures `n` unread bytes in the buffer (fewer only at the run's end).
    fn fill(&mut self, n: usize) -> std::io::Result<()> {
        if self.buf.len() - self.pos >= n {
            return Ok(());
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        let want = n.max(RUN_READ_BYTES) - self.buf.len();
        let take = want.min(usize::try_from(self.end - self.next).unwrap_or(usize::MAX));
        let start = self.buf.len();
        self.buf.resize(start + take, 0);
        let mut f: &std::fs::File = &self.file;
        f.seek(SeekFrom::Start(self.next))?;
        f.read_exact(&mut self.buf[start..])?;
        self.next += take as u64;
        Ok(())
    }

    fn take(&mut self, n: usize) -> std::io::Result<&[u8]> {
        self.fill(n)?;
        if self.buf.len() - self.pos < n {
            return Err(corrupt());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u64(&mut self) -> std::io::Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| corrupt())?))
    }

    fn text(&mut self) -> std::io::Result<String> {
        let n = usize::try_from(self.u64()?).map_err(|_| corrupt())?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| corrupt())
    }

    fn next_finding(&mut self, file: &str) -> std::io::Result<Option<Numbered>> {
        self.fill(1)?;
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let seq = self.u64()?;
        // The rule's name is looked up where it lies in the buffer (no
        // String per finding for a name that is one of the rules' own).
        let n = usize::try_from(self.u64()?).map_err(|_| corrupt())?;
        let name = std::str::from_utf8(self.take(n)?).map_err(|_| corrupt())?;
        let rule = crate::rules::rule(name).ok_or_else(corrupt)?.id;
        let flags = self.take(1)?[0];
        let record = usize::try_from(self.u64()?).map_err(|_| corrupt())?;
        let line = usize::try_from(self.u64()?).map_err(|_| corrupt())?;
        let request_id = if flags & 4 != 0 {
            Some(self.text()?)
        } else {
            None
        };
        let pointer = self.text()?;
        let message = self.text()?;
        Ok(Some((
            seq,
            Finding {
                rule,
                severity: if flags & 1 != 0 {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                allowed: flags & 2 != 0,
                file: file.to_owned(),
                record,
                line,
                request_id,
                pointer,
                message,
            },
        )))
    }
}

fn corrupt() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "the temporary file of spilled findings reads back damaged",
    )
}

fn put_text(s: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// One finding as bytes (all integers little-endian u64): sequence, rule id,
/// flags (1 error, 2 allowed, 4 has an id), record, line, [id], pointer,
/// message. The file name is the same for all and not written.
fn encode((seq, f): &Numbered, out: &mut Vec<u8>) {
    out.extend_from_slice(&seq.to_le_bytes());
    put_text(f.rule, out);
    let flags = u8::from(f.severity == Severity::Error)
        | (u8::from(f.allowed) << 1)
        | (u8::from(f.request_id.is_some()) << 2);
    out.push(flags);
    out.extend_from_slice(&(f.record as u64).to_le_bytes());
    out.extend_from_slice(&(f.line as u64).to_le_bytes());
    if let Some(id) = &f.request_id {
        put_text(id, out);
    }
    put_text(&f.pointer, out);
    put_text(&f.message, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(record: usize, line: usize, message: &str) -> Finding {
        Finding {
            rule: crate::rules::RULES[0].id,
            severity: crate::rules::RULES[0].severity,
            allowed: record.is_multiple_of(3),
            file: "t.jsonl".to_owned(),
            record,
            line,
            request_id: record.is_multiple_of(2).then(|| format!("{record}")),
            pointer: format!("/p/{line}"),
            message: message.to_owned(),
        }
    }

    /// Past the chunk, findings go through sorted runs on disk and come back
    /// in the order a stable sort by (record, line) of the pushes gives,
    /// a finding pushed late at a reserved number included.
    #[test]
    fn spilled_findings_come_back_in_report_order() {
        let n = 2 * SPILL_CHUNK_FINDINGS + 17;
        let mut pushed = Vec::new();
        let mut store = Findings::default();
        let late_seq = store.reserve();
        for i in 0..n {
            // Mostly in order, every 7th out of order, ties on (record, line).
            let record = if i % 7 == 0 { n - i } else { i / 2 };
            let f = finding(record, record + 1, &format!("m{i}"));
            pushed.push(f.clone());
            store.push(f);
        }
        let late = finding(5, 6, "late");
        store.push_at(late_seq, late.clone());
        pushed.insert(0, late);
        assert!(store.spill.is_some());
        let mut want = pushed;
        want.sort_by_key(|f| (f.record, f.line));
        let got: Vec<Finding> = store
            .into_sorted("t.jsonl")
            .collect::<std::io::Result<_>>()
            .unwrap();
        assert_eq!(got.len(), want.len());
        assert_eq!(got, want);
    }
}
