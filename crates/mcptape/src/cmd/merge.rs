//! `mcptape merge A.hlog B.hlog… --out DIR`: the interval logs of several bench runs (or
//! machines) into one report ([`mcptape_replay::merge`]): flags in, the table out.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_replay::merge::{MERGE_OUT_FILES, merge_files, write_merge_out};

/// Arguments of `mcptape merge`.
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Counters and settings: `bench` writes them into each latency.hlog as one header \
comment line `#[mcptape: {JSON}]` (other HdrHistogram readers skip it); a log without it is read \
with the report.json in its directory. A different --timeout or turn deadline (the censoring \
bounds) or histogram range/precision is an error; a different latency model, load, reads per \
turn, transcript or target, a partial run and a missing tag are warnings. Every merged count is \
the sum of the inputs' counts."
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
/// table. Errors: the merge's (the input and line named), or writing `DIR`.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let merged = merge_files(&a.logs)?;
    write_merge_out(&a.out, &merged).with_context(|| format!("writing {}", a.out.display()))?;
    print!("{}", merged.report.table());
    println!(
        "\nwrote {}/{}, {}",
        a.out.display(),
        MERGE_OUT_FILES[0],
        MERGE_OUT_FILES[1]
    );
    Ok(ExitCode::SUCCESS)
}
