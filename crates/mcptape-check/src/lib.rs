//! Conformance rules over MCP transcripts (`mcptape check`).
//!
//! Input: transcripts in the mcptape JSON Lines format (`mcptape-transcript`).
//! Output: [`Finding`]s naming the file, record number, line, JSON-RPC id and
//! RFC 6901 JSON pointer of the offending member, rendered as text, JSON,
//! JUnit XML ([`output`]) or SARIF 2.1.0 ([`sarif`]); a [`baseline`] of
//! expected findings makes only new ones fail. Every rule has a stable id, a severity, a
//! one-line summary, a source (spec revision + section, SEP or seed) and a
//! long explanation ([`rules::RULES`]).
//!
//! The protocol revision (2025-06-18, 2025-11-25, 2026-07-28) decides the
//! revision-dependent rules (`resultType`, cache hints, not-found code); with
//! [`SpecChoice::Auto`] it is read from the handshake ([`revision`]).
//!
//! IO: only [`check_paths`] touches the filesystem (reading files; it never
//! writes). [`check_bytes`] is a pure function of the bytes.
//!
//! ```
//! use mcptape_check::{check_bytes, Options};
//! let t = concat!(
//!     r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}"#, "\n",
//!     r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}}"#, "\n",
//!     r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}}"#, "\n",
//!     // The stdio recorder's last record (without it: warning recording-no-exit).
//!     r#"{"tUs":3,"kind":"exit","code":0}"#, "\n",
//! );
//! let report = check_bytes("t.jsonl", t.as_bytes(), &Options::default());
//! assert_eq!(report.findings.len(), 1);
//! assert_eq!(report.findings[0].rule, "read-empty-contents");
//! assert_eq!(report.findings[0].line, 3);
//! assert_eq!(report.findings[0].pointer, "/result/contents");
//! ```

pub mod baseline;
mod engine;
#[doc(hidden)]
pub mod fuzzing;
mod input;
pub mod inspect;
mod notfound;
pub mod output;
pub mod report;
pub mod revision;
pub mod rules;
pub mod sarif;
mod wireview;

use std::path::{Path, PathBuf};

pub use baseline::{Baseline, BaselineError, BaselineErrorKind, BaselineOutcome};
pub use engine::findings::{SPILL_CHUNK_FINDINGS, Sorted as SortedFindings};
pub use engine::{
    CACHEABLE_METHODS, DEFAULT_BLOB_THRESHOLD_BYTES, MAX_ANSWERED_KEYS_KEPT,
    MAX_SPLIT_MESSAGE_LINES, META_PROTOCOL_VERSION, Options, check_bytes,
};
pub use output::Format;
pub use report::{FileReport, Finding, Report, Summary};
pub use revision::{Revision, RevisionSource, SpecChoice};
pub use rules::{RULES, Rule, Severity, rule};

/// File extension of transcripts found under a directory (`*.jsonl`).
pub const TRANSCRIPT_EXTENSION: &str = "jsonl";

/// Deepest directory nesting [`collect_transcripts`] descends (64 levels);
/// deeper directories are an error ([`CheckErrorKind::TooDeep`]), which also
/// stops symlink loops.
pub const MAX_DIR_DEPTH: usize = 64;

/// Why `mcptape check` could not run (as opposed to a finding).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {kind}")]
pub struct CheckError {
    /// The path involved.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: CheckErrorKind,
}

/// The kind of a [`CheckError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckErrorKind {
    /// Reading a file or listing a directory failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A directory named on the command line holds no `*.jsonl` file.
    #[error("no *.jsonl transcript under this directory")]
    NoTranscripts,
    /// `--allow` named a rule id that does not exist.
    #[error("unknown rule id (see `mcptape explain --list`)")]
    UnknownRule,
    /// Directories nest deeper than [`MAX_DIR_DEPTH`].
    #[error("directories nest deeper than {MAX_DIR_DEPTH} levels")]
    TooDeep,
    /// A path named on the command line (or a transcript at read time) is
    /// neither a regular file nor a directory: a FIFO, socket or device,
    /// which could block the read forever. The message says how to read a
    /// pipe instead: as `-`, on standard input (`check - < <(cmd)`).
    #[error("not a regular file (FIFO, socket or device); read a pipe as `-` on standard input")]
    NotRegularFile,
}

/// The transcripts found by [`collect`], and the `*.jsonl` entries met while walking a directory
/// that were skipped because they are not regular files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// Regular files to check, sorted and deduplicated.
    pub files: Vec<PathBuf>,
    /// `*.jsonl` entries found under a directory that are not regular files (after following
    /// symlinks): a FIFO, a socket or a device, which could block a read forever. Sorted.
    pub skipped: Vec<PathBuf>,
    /// Entries met while walking a directory that are symlink loops: a directory symlink that
    /// leads back to a directory being walked (`sub/up -> ..`), or a symlink the OS cannot
    /// resolve because of a loop (`ELOOP`). Skipped, not fatal. Sorted.
    pub loops: Vec<PathBuf>,
}

/// Expands `paths`: a file is taken as is (whatever its name), a directory
/// is searched recursively for `*.jsonl` files, `-` is standard input ([`is_stdin`],
/// taken as is and read by [`check_read_streamed`]). The result is sorted and
/// deduplicated. Symlinks are followed. Only regular files are taken: a
/// `*.jsonl` FIFO, socket or device found under a directory is skipped (see
/// [`collect`] to learn which); one named directly is an error.
///
/// # Errors
/// [`CheckErrorKind::Io`] when a path cannot be read,
/// [`CheckErrorKind::NotRegularFile`] for a path named in `paths` that is
/// neither a directory nor a regular file,
/// [`CheckErrorKind::NoTranscripts`] for a directory without transcripts,
/// [`CheckErrorKind::TooDeep`] past [`MAX_DIR_DEPTH`].
pub fn collect_transcripts(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CheckError> {
    collect(paths).map(|c| c.files)
}

/// [`collect_transcripts`], also returning the skipped non-regular `*.jsonl`
/// entries ([`Collected::skipped`]). A directory whose only `*.jsonl` entries
/// are skipped has no transcripts ([`CheckErrorKind::NoTranscripts`]).
///
/// # Errors
/// As [`collect_transcripts`].
pub fn collect(paths: &[PathBuf]) -> Result<Collected, CheckError> {
    let mut out = Collected::default();
    for p in paths {
        if is_stdin(p) {
            // Read when its turn comes ([`check_read_streamed`]), never stat'ed.
            out.files.push(p.clone());
            continue;
        }
        let meta = std::fs::metadata(p).map_err(|e| CheckError {
            path: p.clone(),
            kind: e.into(),
        })?;
        if meta.is_dir() {
            let before = out.files.len();
            let root = std::fs::canonicalize(p).map_err(|e| CheckError {
                path: p.clone(),
                kind: e.into(),
            })?;
            walk(p, 0, &mut out, &mut vec![root])?;
            if out.files.len() == before {
                return Err(CheckError {
                    path: p.clone(),
                    kind: CheckErrorKind::NoTranscripts,
                });
            }
        } else if meta.is_file() {
            out.files.push(p.clone());
        } else {
            return Err(CheckError {
                path: p.clone(),
                kind: CheckErrorKind::NotRegularFile,
            });
        }
    }
    out.files.sort();
    out.files.dedup();
    out.skipped.sort();
    out.skipped.dedup();
    out.loops.sort();
    out.loops.dedup();
    Ok(out)
}

/// True for the path `-`: standard input, as `mcptape check -` and `mcptape inspect -` read it
/// ([`check_read_streamed`]). A file named `-` is `./-`.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// `ELOOP`: too many levels of symbolic links (Linux 40; macOS and the BSDs 62).
#[cfg(target_os = "linux")]
const ELOOP: i32 = 40;
#[cfg(not(target_os = "linux"))]
const ELOOP: i32 = 62;

/// `ancestors`: canonical paths of the directories being walked (root first), so a directory
/// symlink back into one of them is a loop ([`Collected::loops`]).
fn walk(
    dir: &Path,
    depth: usize,
    out: &mut Collected,
    ancestors: &mut Vec<PathBuf>,
) -> Result<(), CheckError> {
    if depth > MAX_DIR_DEPTH {
        return Err(CheckError {
            path: dir.to_owned(),
            kind: CheckErrorKind::TooDeep,
        });
    }
    let io = |e: std::io::Error| CheckError {
        path: dir.to_owned(),
        kind: e.into(),
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for p in entries {
        // `metadata` follows symlinks (as before), so a symlink to a FIFO is a FIFO here.
        let meta = match std::fs::metadata(&p) {
            Ok(m) => m,
            Err(e) if e.raw_os_error() == Some(ELOOP) => {
                out.loops.push(p);
                continue;
            }
            Err(e) => {
                return Err(CheckError {
                    path: p.clone(),
                    kind: e.into(),
                });
            }
        };
        let is_transcript = p.extension().is_some_and(|e| e == TRANSCRIPT_EXTENSION);
        if meta.is_dir() {
            let canonical = std::fs::canonicalize(&p).map_err(|e| CheckError {
                path: p.clone(),
                kind: e.into(),
            })?;
            if ancestors.contains(&canonical) {
                out.loops.push(p);
                continue;
            }
            ancestors.push(canonical);
            let walked = walk(&p, depth + 1, out, ancestors);
            ancestors.pop();
            walked?;
        } else if is_transcript {
            if meta.is_file() {
                out.files.push(p);
            } else {
                out.skipped.push(p);
            }
        }
    }
    Ok(())
}

/// Transcripts at least this big (64 MiB) are memory-mapped by [`check_paths`]
/// (and [`read_file_bytes`]) instead of read (`check_paths` then releases the
/// pages behind the line it checks): the page cache is mapped as is, where a read would first
/// have the kernel zero as many fresh pages and then copy into them (on the
/// 160 MB directory read that is most of the time; benches/README.md). Smaller
/// files are read into a buffer sized from their metadata.
pub const MMAP_MIN_BYTES: u64 = 64 << 20;

/// A transcript's bytes: read into memory, or mapped ([`MMAP_MIN_BYTES`]).
enum FileBytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

/// The bytes of a regular file as `check` reads them: mapped when at least
/// [`MMAP_MIN_BYTES`], else read into a buffer sized from its metadata (for
/// `mcptape inspect`, which reads files the same way).
///
/// # Errors
/// [`CheckErrorKind::NotRegularFile`] for a FIFO, socket or device (never
/// blocks on one); [`CheckErrorKind::Io`] when the file cannot be opened or read.
pub fn read_file_bytes(path: &Path) -> Result<impl std::ops::Deref<Target = [u8]>, CheckError> {
    read_regular(path)
}

/// [`mcptape_transcript::file::open_regular`] with its errors as [`CheckError`]s: a FIFO,
/// socket, device or directory is [`CheckErrorKind::NotRegularFile`].
fn open_regular(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), CheckError> {
    use mcptape_transcript::file::FileErrorKind;
    mcptape_transcript::file::open_regular(path).map_err(|e| CheckError {
        path: path.to_owned(),
        kind: match e.into_kind() {
            FileErrorKind::Io(io) => CheckErrorKind::Io(io),
            _ => CheckErrorKind::NotRegularFile,
        },
    })
}

/// Reads a transcript, refusing anything but a regular file. The open goes through the one
/// file-opening policy ([`mcptape_transcript::file::open_regular`]: `O_NONBLOCK` on Unix, then
/// `fstat`), so a FIFO swapped in after [`collect`] is rejected instead of blocking the open
/// forever.
fn read_regular(path: &Path) -> Result<FileBytes, CheckError> {
    use std::io::Read;
    let err = |kind: CheckErrorKind| CheckError {
        path: path.to_owned(),
        kind,
    };
    let (mut file, meta) = open_regular(path)?;
    if meta.len() >= MMAP_MIN_BYTES {
        // SAFETY: the map is read-only and private, and lives only while this
        // one file is checked. memmap2's caveat holds: were another process to
        // truncate the file during the check, reading the lost pages would
        // fault (SIGBUS: the `mcptape` binary exits 2 with a message, test
        // `mapped_transcript_truncated_while_checked_exits_2_with_a_message`);
        // `check` reads finished recordings, which nothing rewrites in place
        // (the recorder appends, then closes).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) };
        if let Ok(map) = map {
            return Ok(FileBytes::Mapped(map));
        }
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(|e| err(e.into()))?;
    Ok(FileBytes::Read(bytes))
}

/// Read buffer of [`check_paths`] (256 KiB): a transcript is checked as a
/// stream, one line at a time, never held whole.
pub const CHECK_READ_BUFFER_BYTES: usize = 256 << 10;

/// Checks one regular file as a stream ([`check_bytes`]'s rules and report):
/// opened once through the shared non-blocking opener, read from the start
/// once more for a first pass when one is needed (`--spec auto` up to the
/// handshake that settles the revision; an HTTP transcript's event streams).
fn check_file(path: &Path, opts: &Options) -> Result<StreamedReport, CheckError> {
    let name = path.display().to_string();
    if is_stdin(path) {
        return check_read_streamed(path, &mut std::io::stdin().lock(), opts);
    }
    with_lines(path, &mut |open| {
        engine::check_stream(&name, open, opts).map(StreamedReport::new)
    })
}

/// An opener of a file's lines, from the start ([`with_lines`]).
type OpenLines<'m> = dyn FnMut() -> std::io::Result<Box<dyn engine::LineSource + 'm>> + 'm;

/// The lines of the regular file at `path` for a streamed reader (`check`,
/// `inspect`): `run` gets an opener that gives them from the start (called
/// once per pass). Opened once through the shared non-blocking opener; files
/// of [`MMAP_MIN_BYTES`] or more are mapped and the pages behind the line
/// being read released, smaller ones read through a
/// [`CHECK_READ_BUFFER_BYTES`] buffer.
///
/// # Errors
/// [`CheckErrorKind::NotRegularFile`], [`CheckErrorKind::Io`] (opening, and
/// `run`'s own I/O errors).
fn with_lines<T>(
    path: &Path,
    run: &mut dyn for<'m> FnMut(&mut OpenLines<'m>) -> std::io::Result<T>,
) -> Result<T, CheckError> {
    with_lines_mapped_from(path, MMAP_MIN_BYTES, run)
}

/// [`with_lines`], mapping files of `map_min` bytes or more (tests map
/// small files).
fn with_lines_mapped_from<T>(
    path: &Path,
    map_min: u64,
    run: &mut dyn for<'m> FnMut(&mut OpenLines<'m>) -> std::io::Result<T>,
) -> Result<T, CheckError> {
    use std::io::{Seek, SeekFrom};
    let err = |kind: CheckErrorKind| CheckError {
        path: path.to_owned(),
        kind,
    };
    let (file, meta) = open_regular(path)?;
    if meta.len() >= map_min
        && let Some(map) = map_for_streaming(&file)
    {
        // Pages behind the line being read are dropped from this process
        // as the reader moves on: memory follows the longest line, not the file.
        let release = |from: usize, upto: usize| {
            // The pages before `from` were dropped by the call before (down
            // to its page boundary, where this range starts).
            let from = from / PAGE_BYTES * PAGE_BYTES;
            let upto = upto / PAGE_BYTES * PAGE_BYTES;
            if upto <= from {
                return;
            }
            // SAFETY: `MADV_DONTNEED` on a read-only file mapping only drops
            // this process's page table entries for `from..upto`; a later
            // read of those bytes (the second pass) faults them in again
            // from the page cache with the same contents. No line borrowed
            // from the map lies before `upto` (it is at or before the current
            // line's first byte; the lines framed ahead by the pipeline's
            // first stage come after it).
            #[allow(unsafe_code)]
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, upto - from)
            };
        };
        let mut open = || -> std::io::Result<Box<dyn engine::LineSource + '_>> {
            Ok(Box::new(engine::SliceLines::mapped(&map, &release)))
        };
        return run(&mut open).map_err(|e| err(e.into()));
    }
    let mut open = || -> std::io::Result<Box<dyn engine::LineSource + '_>> {
        let mut f = file.try_clone()?;
        f.seek(SeekFrom::Start(0))?;
        Ok(Box::new(engine::BufLines::new(
            std::io::BufReader::with_capacity(CHECK_READ_BUFFER_BYTES, f),
        )))
    };
    run(&mut open).map_err(|e| err(e.into()))
}

/// `mcptape inspect FILE` of a regular file holding a transcript or plain JSON-RPC lines, written
/// to `out` once it is read ([`inspect::inspect`]'s report, the same bytes;
/// text, or pretty JSON when `json`): the file is read as a stream (mapped
/// or buffered as [`check_paths`] reads; once up to its first
/// `resources/read` request, then once whole), memory holds one line, the
/// open read requests (and at most [`inspect::MAX_ANSWERED_READS_KEPT`]
/// answered ones) and [`inspect::REPORT_SPILL_CHUNK_BYTES`] of report, never
/// the file or the report's items (they wait in an anonymous temporary
/// file until the counts that head the report are known; when it cannot be
/// created or written, the file is read once more and the items written
/// straight out, the same bytes). Returns the
/// report without its items (counts, source, header error). A file whose first line has no
/// `mcptapeTranscript` is plain JSON-RPC lines, streamed the same way
/// (`inspect::Source::Plain`); `Some` in every case (the `Option` is kept for callers
/// that inspect in memory what is not streamed).
///
/// # Errors
/// As [`check_paths`] for the file ([`CheckErrorKind::NotRegularFile`],
/// [`CheckErrorKind::Io`]), including the writer's errors.
pub fn inspect_file_streamed(
    path: &Path,
    lenient: bool,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<Option<inspect::InspectReport>, CheckError> {
    inspect_file_mapped_from(path, MMAP_MIN_BYTES, lenient, json, out)
}

/// [`inspect_file_streamed`], mapping files of `map_min` bytes or more
/// (tests map small files).
fn inspect_file_mapped_from(
    path: &Path,
    map_min: u64,
    lenient: bool,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<Option<inspect::InspectReport>, CheckError> {
    with_lines_mapped_from(path, map_min, &mut |open| {
        let mut first = open()?;
        let transcript = first.advance()?.is_some() && input::is_transcript(first.line());
        drop(first);
        let source = if transcript {
            inspect::Source::Transcript
        } else {
            inspect::Source::Plain
        };
        inspect::inspect_stream(source, open, lenient, json, out).map(Some)
    })
}

/// What [`inspect_read_streamed`] made of its input.
#[derive(Debug)]
pub enum ReadInspected {
    /// A transcript: its report was written to `out` as it was read
    /// (the report without its items, for the exit status).
    Streamed(inspect::InspectReport),
    /// The temporary file could not be made: nothing was written, and these are the input's
    /// bytes, whole, to inspect in memory ([`inspect::inspect`]). (A transcript and plain
    /// JSON-RPC lines are both streamed otherwise.)
    Bytes(Vec<u8>),
}

/// `mcptape inspect -`: [`inspect_file_streamed`] for an input that can be
/// read only once (standard input, a pipe). What is read is copied to an
/// anonymous temporary file until the pass that needs it again has begun:
/// the first line (to tell a transcript), then inspect's first pass (up to
/// the first `resources/read` request); the main pass reads that copy and
/// then the rest of the input, copying nothing more. Memory is the file
/// case's (one line, the open read requests, one chunk of report), the
/// input is never held whole. The report is the same bytes as
/// [`inspect_file_streamed`]'s of the same input. When the report's own
/// temporary file fails after the main pass, the input cannot be read a
/// third time: an error naming TMPDIR, before anything is written.
///
/// # Errors
/// [`CheckErrorKind::Io`] (with `name` as the path): reading `input`,
/// writing `out`, the report's temporary file as above.
pub fn inspect_read_streamed(
    name: &Path,
    input: &mut dyn std::io::Read,
    lenient: bool,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<ReadInspected, CheckError> {
    let err = |e: std::io::Error| CheckError {
        path: name.to_owned(),
        kind: e.into(),
    };
    let Ok(tee) = tempfile::tempfile() else {
        // No temporary file: the input is read whole, as before streaming.
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes).map_err(err)?;
        return Ok(ReadInspected::Bytes(bytes));
    };
    let replay = std::rc::Rc::new(std::cell::RefCell::new(Replay {
        input,
        tee,
        teed: 0,
        opens: 0,
        copy_opens: 2,
    }));
    let open = replay_open;
    let mut first = open(&replay).map_err(err)?;
    use engine::LineSource as _;
    let transcript = first.advance().map_err(err)?.is_some() && input::is_transcript(first.line());
    drop(first);
    let mut again = || open(&replay);
    // Plain JSON-RPC lines are streamed as well.
    let source = if transcript {
        inspect::Source::Transcript
    } else {
        inspect::Source::Plain
    };
    inspect::inspect_stream(source, &mut again, lenient, json, out)
        .map(ReadInspected::Streamed)
        .map_err(err)
}

/// `mcptape check -`: [`check_paths_streamed`]'s report of one transcript read once from `input`
/// (standard input, a pipe), named `name` in the report: the same findings, lines and counts
/// as of the same bytes in a file. The input is streamed, never held whole: what a second pass
/// reads again is copied to an anonymous temporary file, and only that: the first line (to learn
/// whether `check_stream` makes a first pass: `--spec auto`, or an HTTP transcript), then that
/// first pass; the main pass reads the copy, then the rest of the input, copying nothing. With
/// a fixed `--spec` on a stdio transcript nothing past the header is copied. When no temporary
/// file can be made the input is read whole into memory and checked there ([`check_bytes`]).
///
/// # Errors
/// [`CheckErrorKind::Io`] (with `name` as the path): reading `input`, the temporary file.
pub fn check_read_streamed(
    name: &Path,
    input: &mut dyn std::io::Read,
    opts: &Options,
) -> Result<StreamedReport, CheckError> {
    let err = |e: std::io::Error| CheckError {
        path: name.to_owned(),
        kind: e.into(),
    };
    let file = name.display().to_string();
    let Ok(tee) = tempfile::tempfile() else {
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes).map_err(err)?;
        return Ok(StreamedReport {
            head: check_bytes(&file, &bytes, opts),
            findings: engine::findings::Findings::default().into_sorted(&file),
        });
    };
    let replay = std::rc::Rc::new(std::cell::RefCell::new(Replay {
        input,
        tee,
        teed: 0,
        opens: 0,
        copy_opens: 1,
    }));
    // The peek (open 1, copied) tells whether `check_stream` reads the input twice.
    let two_passes = {
        use engine::LineSource as _;
        let mut first = replay_open(&replay).map_err(err)?;
        let header = match first.advance().map_err(err)? {
            Some(_) => mcptape_transcript::reader::parse_header_line(first.line()).ok(),
            None => None,
        };
        header.is_some_and(|h| engine::makes_first_pass(&h, opts))
    };
    if two_passes {
        replay.borrow_mut().copy_opens = 2;
    }
    let mut open = || replay_open(&replay);
    engine::check_stream(&file, &mut open, opts)
        .map(StreamedReport::new)
        .map_err(err)
}

/// A reader of the input from its start ([`ReplayReader`]), through
/// [`CHECK_READ_BUFFER_BYTES`] of buffer: the first two copy what they read
/// past the copy, the third copies nothing, a fourth is an error.
fn replay_open<'a>(
    replay: &std::rc::Rc<std::cell::RefCell<Replay<'a>>>,
) -> std::io::Result<engine::BufLines<ReplayReader<'a>>> {
    let copy = {
        let mut r = replay.borrow_mut();
        r.opens = r.opens.saturating_add(1);
        // The peek and a first pass are read again; the main pass (the
        // open after the copied ones) is the last that can be made.
        match r.opens {
            n if n <= r.copy_opens => true,
            n if n == r.copy_opens + 1 => false,
            _ => {
                return Err(std::io::Error::other("standard input cannot be read again"));
            }
        }
    };
    Ok(engine::BufLines::new(std::io::BufReader::with_capacity(
        CHECK_READ_BUFFER_BYTES,
        ReplayReader {
            replay: replay.clone(),
            pos: 0,
            copy,
        },
    )))
}

/// An input read once, and the copy of what was read of it so far
/// ([`inspect_read_streamed`]).
struct Replay<'a> {
    input: &'a mut dyn std::io::Read,
    /// Anonymous temporary file: the first `teed` bytes of the input.
    tee: std::fs::File,
    teed: u64,
    /// Readers made so far.
    opens: usize,
    /// How many readers copy what they read past the copy (the reads to be
    /// read again); the one after them is the last, copying nothing.
    copy_opens: usize,
}

/// The input from its start: the copy ([`Replay::tee`]), then the rest of
/// the input, copied on when `copy`. One reader at a time reads a
/// [`Replay`] (each is dropped before the next is made).
struct ReplayReader<'a> {
    replay: std::rc::Rc<std::cell::RefCell<Replay<'a>>>,
    /// Bytes of the input this reader has given.
    pos: u64,
    copy: bool,
}

impl std::io::Read for ReplayReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::{Seek, SeekFrom, Write};
        let mut r = self.replay.borrow_mut();
        let r = &mut *r;
        if self.pos < r.teed {
            let want = usize::try_from(r.teed - self.pos)
                .unwrap_or(usize::MAX)
                .min(buf.len());
            r.tee.seek(SeekFrom::Start(self.pos))?;
            let n = r.tee.read(&mut buf[..want])?;
            if n == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the copy of standard input ended early",
                ));
            }
            self.pos += n as u64;
            return Ok(n);
        }
        let n = r.input.read(buf)?;
        if self.copy && n > 0 {
            r.tee.seek(SeekFrom::Start(r.teed))?;
            r.tee.write_all(&buf[..n])?;
            r.teed += n as u64;
        }
        // Read past the copy without copying: the copy no longer holds the
        // input up to this reader, and no later reader may be made.
        if !self.copy && n > 0 {
            r.opens = usize::MAX - 1;
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// One transcript checked by [`check_paths_streamed`]: its report without
/// the findings, and the findings in report order, read back one at a time
/// (at most [`SPILL_CHUNK_FINDINGS`] of them were held in
/// memory; the rest waited, sorted, in an anonymous temporary file).
pub struct StreamedReport {
    /// The report; its `findings` are the first findings (only a file
    /// refused before its first record has any here), [`Self::findings`]
    /// the rest.
    pub head: FileReport,
    /// The other findings, in report order. An item is an error when the
    /// temporary file cannot be read back.
    pub findings: SortedFindings,
}

impl StreamedReport {
    fn new((head, rest): (FileReport, engine::findings::Findings)) -> StreamedReport {
        let findings = rest.into_sorted(&head.file);
        StreamedReport { head, findings }
    }

    /// The whole [`FileReport`] (every finding in memory).
    ///
    /// # Errors
    /// Reading the temporary file back.
    pub fn into_report(self) -> std::io::Result<FileReport> {
        let mut head = self.head;
        for f in self.findings {
            head.findings.push(f?);
        }
        Ok(head)
    }
}

/// Page size assumed for releasing mapped pages (4 KiB; a larger real page
/// only makes a release cover less).
const PAGE_BYTES: usize = 4096;

/// A read-only map of `file` for [`check_file`], read sequentially (no
/// `MAP_POPULATE`: pages come in as the check reaches them and are released
/// behind it). `None` when the map fails (the file is then read).
fn map_for_streaming(file: &std::fs::File) -> Option<memmap2::Mmap> {
    // SAFETY: as in `read_regular`: read-only, private to this check; a
    // truncation by another process while checking would fault (SIGBUS),
    // and `check` reads finished recordings.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::MmapOptions::new().map(file) }.ok()?;
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

/// Checks every transcript under `paths` (see [`collect_transcripts`]).
/// Each skipped non-regular `*.jsonl` entry ([`Collected::skipped`]) is
/// reported on stderr as `mcptape check: skipped PATH: not a regular file`
/// (a warning, not a finding: the report covers the files that were read).
///
/// # Errors
/// [`CheckErrorKind::UnknownRule`] when `opts.allow` names a rule that does
/// not exist; any error of [`collect_transcripts`]; [`CheckErrorKind::Io`]
/// when a file cannot be read. Problems *inside* a transcript are findings,
/// not errors.
pub fn check_paths(paths: &[PathBuf], opts: &Options) -> Result<Report, CheckError> {
    let mut reports = Vec::new();
    for r in check_paths_streamed(paths, opts)? {
        let r = r?;
        let path = PathBuf::from(&r.head.file);
        reports.push(r.into_report().map_err(|e| CheckError {
            path,
            kind: e.into(),
        })?);
    }
    Ok(Report::new(reports, opts.allow.iter().cloned().collect()))
}

/// [`check_paths`] one file at a time, for a report written as it is read
/// ([`output::write_streamed`]): memory holds one file's open requests, the
/// longest line and a bounded number of findings, never the findings of a
/// whole session. Files are checked when the iterator reaches them.
///
/// # Errors
/// As [`check_paths`]: before any file is read (an unknown rule, the
/// collection of paths), then per file from the iterator.
pub fn check_paths_streamed<'a>(
    paths: &[PathBuf],
    opts: &'a Options,
) -> Result<impl Iterator<Item = Result<StreamedReport, CheckError>> + 'a, CheckError> {
    if let Some(bad) = opts.allow.iter().find(|a| rule(a).is_none()) {
        return Err(CheckError {
            path: PathBuf::from(bad),
            kind: CheckErrorKind::UnknownRule,
        });
    }
    let Collected {
        files,
        skipped,
        loops,
    } = collect(paths)?;
    for s in &skipped {
        eprintln!(
            "mcptape check: skipped {}: not a regular file (FIFO, socket or device)",
            s.display()
        );
    }
    for l in &loops {
        eprintln!(
            "mcptape check: warning: skipped {}: symlink loop",
            l.display()
        );
    }
    Ok(files.into_iter().map(move |f| check_file(&f, opts)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transcript of `n` pings and their answers (each answer a finding,
    /// `result-missing-resultType`), and a notification every 100 lines.
    fn pings(n: usize) -> Vec<u8> {
        let mut t = br#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["srv"]},"startedAt":"2026-11-30T00:00:00Z"}"#.to_vec();
        t.push(b'\n');
        for i in 0..n {
            t.extend_from_slice(format!(
                "{{\"tUs\":{i},\"kind\":\"message\",\"dir\":\"c2s\",\"msg\":{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}}}\n\
                 {{\"tUs\":{i},\"kind\":\"message\",\"dir\":\"s2c\",\"msg\":{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}}}\n"
            ).as_bytes());
            if i % 50 == 0 {
                t.extend_from_slice(format!(
                    "{{\"tUs\":{i},\"kind\":\"message\",\"dir\":\"c2s\",\"msg\":{{\"jsonrpc\":\"2.0\",\"method\":\"x/{i}\"}}}}\n"
                ).as_bytes());
            }
        }
        t
    }

    /// A mapped file (the map's threshold lowered to 0) is checked through
    /// the pipeline with the map's release, and reported as the same bytes
    /// in memory are: a whole file, one cut in its last record, one with
    /// an unreadable line in its middle.
    #[test]
    fn mapped_check_equals_check_bytes() {
        let whole = pings(3000);
        let mid = whole.len() / 2;
        let mid = mid + memchr::memchr(b'\n', &whole[mid..]).unwrap() + 1;
        for (text, rule) in [
            (whole.clone(), None),
            (
                whole[..whole.len() - 30].to_vec(),
                Some(rules::TRANSCRIPT_TRUNCATED.id),
            ),
            (
                [&whole[..mid], b"{\"tUs\":1,\n", &whole[mid..]].concat(),
                Some(rules::TRANSCRIPT_UNREADABLE.id),
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.jsonl");
            std::fs::write(&path, &text).unwrap();
            let opts = Options::default();
            let mapped = with_lines_mapped_from(&path, 0, &mut |open| {
                engine::check_stream("t.jsonl", open, &opts)
                    .and_then(|(head, rest)| engine::whole_report(head, rest))
            })
            .unwrap();
            let bytes = check_bytes("t.jsonl", &text, &opts);
            assert_eq!(mapped, bytes);
            let cut = usize::from(rule == Some(rules::TRANSCRIPT_TRUNCATED.id));
            assert_eq!(mapped.messages, 6060 - cut);
            // Every answer (2026-07-28, the revision assumed) lacks its `resultType`.
            let untyped = mapped
                .findings
                .iter()
                .filter(|f| f.rule == "result-missing-resultType")
                .count();
            assert_eq!(untyped, 3000 - cut);
            assert_eq!(
                rule.is_some(),
                mapped.findings.iter().any(|f| Some(f.rule) == rule)
            );
        }
    }

    /// `inspect` of a mapped file (through the pipeline) writes what it
    /// writes for the same file read through a buffer, text and JSON: the
    /// corpus transcripts with reads, bad lines and a cut tail.
    #[test]
    fn mapped_inspect_equals_buffered() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
        for name in [
            "transcripts/everything-stdio.jsonl",
            "inspect/transcript-bad-record-and-cut-tail.jsonl",
        ] {
            let path = corpus.join(name);
            for json in [false, true] {
                let run = |map_min: u64| {
                    let mut out = Vec::new();
                    let r = inspect_file_mapped_from(&path, map_min, false, json, &mut out)
                        .unwrap()
                        .unwrap();
                    (out, r.summary)
                };
                let (mapped, buffered) = (run(0), run(u64::MAX));
                assert!(mapped.0 == buffered.0, "{name} json {json}");
                assert_eq!(mapped.1, buffered.1);
                assert!(mapped.0.len() > 500, "{name}: {} bytes", mapped.0.len());
            }
        }
    }
}
