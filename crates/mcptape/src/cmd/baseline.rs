//! `mcptape bench --baseline PATH`: reading a previous run's `latency.hlog` (the run's
//! histograms and, in its `#[mcptape: …]` header, its settings), refusing a baseline of another
//! transcript, latency model, load or timeout. The gate itself is
//! [`mcptape_replay::bench_run::compare`].

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mcptape_replay::bench_run::Baseline;
use mcptape_report::regression::{self, RunIdentity};
use mcptape_report::render::hlog::{self, HlogMeta};

/// The `.hlog` a `--baseline` names: a directory's `latency.hlog`, the `latency.hlog` beside a
/// `report.json` (the report has the quantiles; the log has the distributions), or the log.
fn hlog_path(p: &Path) -> PathBuf {
    if p.is_dir() {
        p.join("latency.hlog")
    } else if p.extension().is_some_and(|e| e == "json") {
        p.parent()
            .unwrap_or_else(|| Path::new("."))
            .join("latency.hlog")
    } else {
        p.to_owned()
    }
}

/// Reads the baseline at `path` (a `bench --out` directory, its `report.json` or its
/// `latency.hlog`).
///
/// Errors (each one line, `--baseline PATH: …`): no log there, a log `read_hlog` refuses (with
/// its line), a log without the `#[mcptape: …]` header of a bench run (a merged or foreign log:
/// its settings cannot be checked) unless `any`.
pub fn load(path: &Path, any: bool) -> anyhow::Result<Baseline> {
    let given = path.display().to_string();
    let file = hlog_path(path);
    let bytes = mcptape_transcript::file::read_regular(&file)
        .with_context(|| format!("--baseline {given}: the baseline's latency.hlog"))?;
    let log = hlog::read_hlog(&bytes)
        .map_err(|e| anyhow::anyhow!("--baseline {given}: {}: {e}", file.display()))?;
    if log.meta.is_none() && !any {
        anyhow::bail!(
            "--baseline {given}: {} has no #[mcptape: …] header (not a bench run's log), so its transcript, model, load and timeout cannot be checked; pass --baseline-any to compare anyway",
            file.display()
        );
    }
    Ok(Baseline { given, log })
}

/// What a baseline's meta says of its run.
fn identity_of(m: &HlogMeta) -> RunIdentity {
    RunIdentity {
        transcript: m.transcript.clone(),
        latency: m.latency.clone(),
        load: m.load.clone(),
        timeout_us: m.timeout_us,
    }
}

/// Refuses (one line) a baseline whose transcript (by file name), latency model, load or timeout
/// differs from `current`'s, unless `any`; with `any`, the difference comes back as a warning
/// for the run's report (`None` when there is none), so a forced comparison leaves a trace.
pub fn check(b: &Baseline, current: &RunIdentity, any: bool) -> anyhow::Result<Option<String>> {
    let why = match &b.log.meta {
        Some((m, _)) => regression::identity_mismatch(&identity_of(m), current),
        None => Some(
            "no #[mcptape: …] header (its transcript, model, load and timeout are unknown)".into(),
        ),
    };
    match why {
        None => Ok(None),
        Some(why) if any => Ok(Some(format!(
            "--baseline {}: compared with --baseline-any although it was recorded with {why}",
            b.given
        ))),
        Some(why) => anyhow::bail!(
            "--baseline {}: recorded with {why}; pass --baseline-any to compare anyway",
            b.given
        ),
    }
}
