//! `mcptape inspect FILE`: flags in, report out. The report logic (pairing,
//! per-entry sizes and media sniffing, line numbering) is
//! [`mcptape_check::inspect`]; this file reads the file and prints.
//!
//! Exit status: 0 when every line and result parsed; 1 when any did not, or
//! when the file holds no JSON-RPC message at all (an empty file, blank lines
//! only, a header-only transcript: `no messages` on stderr). A file with
//! messages but no `resources/read` result is not an error (exit 0), but it
//! says so on stdout and stderr (`no resources/read result`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `mcptape inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// File of newline-delimited JSON-RPC messages (one message or batch per
    /// line), or an mcptape transcript (detected by its header line: a JSON
    /// object with `mcptapeTranscript`; its message records are inspected,
    /// numbered by transcript line). `-` reads standard input. Only a regular
    /// file is read: a FIFO, socket or device fails at once.
    pub file: PathBuf,
    /// Accept lenient base64 in `blob` (whitespace, URL-safe alphabet, missing
    /// padding) and report what was accepted, instead of rejecting it.
    #[arg(long)]
    pub lenient: bool,
    #[command(flatten)]
    pub report: super::FormatArgs,
}

/// Runs `mcptape inspect`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let data: Box<dyn std::ops::Deref<Target = [u8]>> = if args.file.as_os_str() == "-" {
        // A transcript on standard input is read as a stream too (what a
        // second pass reads again is copied to a temporary file), the same
        // report as of the file.
        let mut out = report_out();
        let read = mcptape_check::inspect_read_streamed(
            &args.file,
            &mut std::io::stdin().lock(),
            args.lenient,
            args.report.json(),
            &mut out,
        )
        .map_err(|e| {
            streamed_error(e, out.get_ref().failed, |e| match e.kind {
                mcptape_check::CheckErrorKind::Io(io) => {
                    anyhow::Error::new(io).context("reading standard input")
                }
                other => anyhow::anyhow!("reading standard input: {other}"),
            })
        })?;
        drop(out);
        match read {
            mcptape_check::ReadInspected::Streamed(report) => {
                return Ok(exit_status(&args.file, &report));
            }
            mcptape_check::ReadInspected::Bytes(buf) => Box::new(buf),
        }
    } else {
        // As `mcptape check` reads: a big file is mapped, not copied.
        if args.file.is_dir() {
            anyhow::bail!(
                "reading {}: is a directory, not a transcript file",
                args.file.display()
            );
        }
        // A transcript is read as a stream and its report written as it
        // goes (memory: one line and the read requests, not the file).
        let mut out = report_out();
        let streamed = mcptape_check::inspect_file_streamed(
            &args.file,
            args.lenient,
            args.report.json(),
            &mut out,
        )
        .map_err(|e| streamed_error(e, out.get_ref().failed, |e| reading_error(&args.file, e)))?;
        drop(out);
        if let Some(report) = streamed {
            return Ok(exit_status(&args.file, &report));
        }
        Box::new(
            mcptape_check::read_file_bytes(&args.file).map_err(|e| reading_error(&args.file, e))?,
        )
    };
    let report = mcptape_check::inspect::inspect(&data, args.lenient);
    if args.report.json() {
        super::print_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        super::print_stdout(&report.text())?;
    }
    Ok(exit_status(&args.file, &report))
}

/// The error of a streamed report: when writing stdout `failed`, said as such (not as a read
/// of the input: `inspect T > /dev/full`); else what `reading` makes of it.
fn streamed_error(
    e: mcptape_check::CheckError,
    failed: bool,
    reading: impl FnOnce(mcptape_check::CheckError) -> anyhow::Error,
) -> anyhow::Error {
    match e.kind {
        mcptape_check::CheckErrorKind::Io(io) if failed => {
            anyhow::anyhow!("writing to stdout: {io}")
        }
        _ => reading(e),
    }
}

/// Stdout of a streamed report, buffered, noting whether a write failed.
fn report_out() -> std::io::BufWriter<NoteWriteError<super::QuietPipe<std::io::StdoutLock<'static>>>>
{
    std::io::BufWriter::with_capacity(
        1 << 16,
        NoteWriteError {
            out: super::QuietPipe {
                out: std::io::stdout().lock(),
                gone: false,
            },
            failed: false,
        },
    )
}

/// Stdout of the streamed report, noting whether a write failed: the library returns read and
/// write errors alike, and `inspect T > /dev/full` said `reading T: No space left on device`.
struct NoteWriteError<W> {
    out: W,
    failed: bool,
}

impl<W: std::io::Write> std::io::Write for NoteWriteError<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.out.write(buf);
        self.failed |= r.is_err();
        r
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.out.flush();
        self.failed |= r.is_err();
        r
    }
}

/// `reading FILE: …` for an error of opening or reading the file.
fn reading_error(file: &Path, e: mcptape_check::CheckError) -> anyhow::Error {
    match e.kind {
        mcptape_check::CheckErrorKind::NotRegularFile => anyhow::anyhow!(
            "reading {}: not a regular file (FIFO, socket or device); read a pipe as `-` on standard input",
            file.display()
        ),
        mcptape_check::CheckErrorKind::Io(io) => {
            anyhow::anyhow!("reading {}: {io}", file.display())
        }
        other => anyhow::anyhow!("reading {}: {other}", file.display()),
    }
}

/// The notes on stderr and the exit status of a report printed.
fn exit_status(file: &Path, report: &mcptape_check::inspect::InspectReport) -> ExitCode {
    if report.summary.messages == 0 {
        eprintln!(
            "mcptape inspect: no messages in {}: nothing to inspect",
            file.display()
        );
        return ExitCode::from(1);
    }
    if report.bad_transcript.is_none() && report.read_answers() == 0 {
        eprintln!(
            "mcptape inspect: no resources/read result in {} ({} messages)",
            file.display(),
            report.summary.messages
        );
    }
    if report.clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
