//! `mcptape merge A.hlog B.hlog… --out DIR`: the interval logs of several bench runs (or
//! machines) into one report ([`mcptape_replay::merge`]): flags in, the table out.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_replay::merge::{MERGE_OUT_FILES, merge_files, write_merge_out};

/// Arguments of `mcptape merge`.
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Counters and settings: `bench` writes them into each latency.hlog as one header \
comment line `#[mcptape: {JSON}]` (other HdrHistogram readers skip it); a log without it is read \
with the report.json in its directory; each input's counters are checked against its own \
histograms (a cut or edited log is an error). A different --timeout, turn deadline (the censoring \
bounds), reads per turn or histogram range/precision is an error, and so is the same file twice \
or an --out DIR that would write over an input; a different latency model, load, transcript or \
target, a partial run, a missing tag and the same run twice (same StartTime and header) are \
warnings. Every merged count is the sum of the inputs' counts."
)]
pub struct Args {
    /// HdrHistogram interval logs (`latency.hlog` of `mcptape bench --out DIR`), at most 1000
    /// (`mcptape_replay::merge::MAX_INPUTS`).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Directory for the merged report.json and latency.hlog (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs `mcptape merge`: merges, writes `DIR/report.json` and `DIR/latency.hlog`, prints the
/// table (a closed stdout, `| head`, ends the printing quietly: exit 0). Errors: an input that
/// is not a regular file (`reading LOG: not a regular file (FIFO, socket or device)`), the merge's
/// (the input and line named), writing `DIR` (over an input: refused), or writing stdout.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    // A FIFO, socket or device input fails at once (the shared non-blocking opener, as
    // `inspect`, `serve` and `bench` read), instead of blocking the library's open forever.
    for log in &a.logs {
        super::inspect::open_regular_file(log)?;
    }
    let merged = merge_files(&a.logs)?;
    // The shared check (same device and inode: a hard link to an input too), in merge's words;
    // `write_merge_out` checks the canonical paths again.
    for file in MERGE_OUT_FILES {
        let out = a.out.join(file);
        if let Some(input) =
            super::overwritten_input(&out, merged.read_files.iter().map(|(p, _)| p))
        {
            let name = merged
                .read_files
                .iter()
                .find(|(p, _)| p.as_path() == input)
                .map_or_else(|| input.display().to_string(), |(_, n)| n.clone());
            anyhow::bail!(
                "--out {}: {file} is the input {name}: refusing to write over it",
                a.out.display()
            );
        }
    }
    write_merge_out(&a.out, &merged).with_context(|| format!("writing {}", a.out.display()))?;
    let mut out = std::io::stdout().lock();
    let printed = write!(out, "{}", merged.report.table())
        .and_then(|()| {
            writeln!(
                out,
                "\nwrote {}/{}, {}",
                a.out.display(),
                MERGE_OUT_FILES[0],
                MERGE_OUT_FILES[1]
            )
        })
        .and_then(|()| out.flush());
    match printed {
        // The reader went away (`| head -1`): the files are written, nothing is lost.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        r => {
            r.context("writing the table to stdout")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
