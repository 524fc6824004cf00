//! `mcptape merge A.hlog B.hlog… --out DIR`: the interval logs of several bench runs (or
//! machines) into one report ([`mcptape_report::merge`]; the files read and written by
//! [`mcptape_replay::merge`]): flags in, the table out.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_replay::merge::{merge_files, write_merge_out};
use mcptape_report::merge::MERGE_OUT_FILES;

/// Arguments of `mcptape merge`.
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Counters and settings: `bench` writes them into each latency.hlog as one header \
comment line `#[mcptape: {JSON}]` (other HdrHistogram readers skip it); a log without it is refused \
(its counters are unknown); each input's counters are checked against its own \
histograms (a cut or edited log is an error). A different --timeout, turn deadline (the censoring \
bounds), reads per turn or histogram range/precision is an error, and so is the same file twice \
or an --out DIR that would write over an input; a different latency model, load, transcript or \
target, a partial run, a missing tag and the same run twice (same StartTime and header) are \
warnings. Every merged count is the sum of the inputs' counts."
)]
pub struct Args {
    /// HdrHistogram interval logs (`latency.hlog` of `mcptape bench --out DIR`), at most 1000
    /// (`mcptape_report::merge::MAX_INPUTS`).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Directory for the merged report.json and latency.hlog (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs `mcptape merge`: merges, writes `DIR/report.json` and `DIR/latency.hlog`, prints the
/// table (a closed stdout, `| head`, ends the printing quietly: exit 0). Errors: an input that
/// is not a regular file (`LOG: not a regular file (FIFO, socket or device)`, refused unread), the merge's
/// (the input and line named), writing `DIR` (over an input: refused), or writing stdout.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    for log in &a.logs {
        // A directory is a bench --out DIR given whole: say which file to give.
        anyhow::ensure!(
            !log.is_dir(),
            "{}: is a directory; give the interval log in it ({})",
            log.display(),
            log.join(MERGE_OUT_FILES[1]).display()
        );
    }
    for file in MERGE_OUT_FILES {
        // A FIFO there would block the write until a reader came (issue 28); an output over
        // an input is the merge's own error (write_merge_out).
        super::refuse_overwrite::<std::path::Path>("--out", &a.out.join(file), [])?;
    }
    let merged = merge_files(&a.logs)?;
    write_merge_out(&a.out, &merged).with_context(|| format!("writing {}", a.out.display()))?;
    // Each warning (a faulted, partial or cut input, settings that differ…) on stderr too: a
    // CI log shows it even when stdout goes to a file.
    for w in &merged.report.warnings {
        eprintln!("mcptape merge: warning: {w}");
    }
    // A closed stdout (`| head -1`) ends the printing quietly: the files are written.
    super::print_stdout(&format!(
        "{}\nwrote {}/{}, {}\n",
        merged.report.table(),
        a.out.display(),
        MERGE_OUT_FILES[0],
        MERGE_OUT_FILES[1]
    ))?;
    Ok(ExitCode::SUCCESS)
}
