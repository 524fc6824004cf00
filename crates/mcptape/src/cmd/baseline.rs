//! `mcptape bench --baseline PATH`: reading a previous run's `latency.hlog` (the run's
//! histograms and, in its `#[mcptape: …]` header, its settings), refusing a baseline of another
//! transcript, latency model, load or timeout, and pairing its histograms with this run's for
//! the gate's statistics ([`mcptape_report::regression`]).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mcptape_report::regression::{self, Dist, Pair, Regression, RunIdentity, Settings};
use mcptape_report::render::hlog::{self, HlogMeta, HlogRead};
use mcptape_report::run::BenchResult;
use mcptape_report::stats::BenchReport;

/// A baseline run read from disk.
pub struct Baseline {
    /// `--baseline` as given.
    pub given: String,
    /// The `.hlog` read.
    pub log: HlogRead,
}

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
    let bytes = super::inspect::read_regular_file(&file)
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

/// Refuses (one line) a baseline whose transcript, latency model, load or timeout differs from
/// `current`'s, unless `any`.
pub fn check(b: &Baseline, current: &RunIdentity, any: bool) -> anyhow::Result<()> {
    if any {
        return Ok(());
    }
    if let Some((m, _)) = &b.log.meta
        && let Some(why) = regression::identity_mismatch(&identity_of(m), current)
    {
        anyhow::bail!(
            "--baseline {}: recorded with {why}; pass --baseline-any to compare anyway",
            b.given
        );
    }
    Ok(())
}

/// The gate: this run's single reads, turns and (with more than one method) each method against
/// the baseline's tags `single`, `turn` and `method-…`, censored where each side's timeouts are.
pub fn compare(b: &Baseline, report: &BenchReport, res: &BenchResult, s: Settings) -> Regression {
    let meta = b.log.meta.as_ref().map(|(m, _)| m);
    let base_tag = |tag: &str| {
        let h = b.log.tags.iter().find(|t| t.tag == tag).map(|t| &t.hist);
        let from = meta
            .and_then(|m| m.censored.get(tag))
            .and_then(|c| c.from_us);
        h.map(|h| Dist::from_hist(h).censored_from(from))
            .unwrap_or_default()
    };
    let cur_meta = HlogMeta::of_report(report, res.single_censored_from_us);
    let cur = |h, tag: &str| {
        Dist::from_hist(h).censored_from(cur_meta.censored.get(tag).and_then(|c| c.from_us))
    };
    let mut not_compared = Vec::new();
    let mut names: Vec<String> = vec!["read".into()];
    let mut dists: Vec<(Dist, Dist)> = vec![(base_tag("single"), cur(&res.single, "single"))];
    let same_turns =
        meta.is_none_or(|m| m.parallel == report.parallel && m.deadline_us == report.deadline_us);
    if !same_turns {
        let m = meta.expect("checked");
        not_compared.push(format!(
            "turn: {} reads per turn and a {} ms deadline, baseline {} and {} ms",
            report.parallel,
            report.deadline_us / 1000,
            m.parallel,
            m.deadline_us / 1000
        ));
    } else if report.turns_asked > 0 {
        let deadline = |hit: u64, d: u64| (hit > 0).then_some(d);
        names.push("turn".into());
        dists.push((
            base_tag("turn")
                .censored_from(meta.and_then(|m| deadline(m.turns_hit_deadline, m.deadline_us))),
            Dist::from_hist(&res.turn)
                .censored_from(deadline(report.turns_hit_deadline, report.deadline_us)),
        ));
    }
    if res.by_method.len() > 1 {
        for (m, k) in &res.by_method {
            let tag = hlog::method_tag(m);
            names.push(m.clone());
            dists.push((base_tag(&tag), cur(&k.all, &tag)));
        }
    }
    let pairs: Vec<Pair<'_>> = names
        .iter()
        .zip(&dists)
        .map(|(name, (base, new))| Pair { name, base, new })
        .collect();
    let mut r = regression::compare(&b.given, &pairs, s);
    r.not_compared.extend(not_compared);
    r
}
