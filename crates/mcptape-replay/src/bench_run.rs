//! The lifecycle of one `mcptape bench` run, as a library call ([`run`]): start or reach the
//! target (the embedded `mcptape serve` child, a live stdio command, or a Streamable HTTP
//! endpoint), open the session and do the handshake, measure ([`crate::bench::run_until`]),
//! close the session and end the target on every exit path, take the embedded server's stats
//! back over a pipe ([`Target::connect_embedded`]), build the report, evaluate the SLOs and the
//! regression gate, and give the [`Verdict`] the caller maps to an exit status.
//!
//! SIGINT, SIGTERM and SIGHUP are listened for during the whole run: before or after the
//! measurement a signal ends the run at once ([`BenchOutcome::Stopped`]: no report, exit status
//! 128 + the signal's number); during it the measurement stops and the partial report is
//! returned ([`Finished::interrupted`], [`Verdict::Interrupted`]).
//!
//! The caller parses and checks its settings, prints, and writes the files; see
//! `crates/mcptape/src/cmd/bench.rs` for the one caller.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mcptape_report::regression::{self, Dist, GateVerdict, Pair, Regression, Settings};
use mcptape_report::render::hlog::{self, HlogMeta, HlogRead};
use mcptape_report::run::BenchResult;
use mcptape_report::slo::{self, SloItem};
use mcptape_report::stats::BenchReport;
use tokio::time::Duration;

use crate::bench::{self, BenchConfig};
use crate::error::{ReplayError, ReplayErrorKind};
use crate::schedule::TimerPriority;
use crate::tape::Tape;
use crate::target::{self, Signal, Target, TargetSpec};

/// The embedded server: `program serve TRANSCRIPT… --stdio --latency L --seed N --timer-priority
/// P [--fault F]… --stats-fd N`, `program` being the mcptape executable (the caller finds it).
#[derive(Debug, Clone)]
pub struct EmbeddedServer {
    /// The mcptape executable.
    pub program: PathBuf,
    /// The transcripts it serves (the ones played).
    pub transcripts: Vec<PathBuf>,
    /// Its latency model, as `--latency` spells it (checked by the caller).
    pub latency: String,
    /// Its `--fault` specs (checked by the caller).
    pub faults: Vec<String>,
    /// Seed of its schedule.
    pub seed: u64,
    /// Scheduling of its timer thread.
    pub timer_priority: TimerPriority,
}

impl EmbeddedServer {
    /// The arguments of the `serve` child, [`target::STATS_FD_FLAG`] not yet added.
    fn args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["serve".into()];
        a.extend(self.transcripts.iter().map(|p| p.clone().into_os_string()));
        let priority = match self.timer_priority {
            TimerPriority::Realtime => "realtime",
            TimerPriority::Normal => "normal",
            _ => "auto",
        };
        a.extend([
            "--stdio".into(),
            "--latency".into(),
            self.latency.clone().into(),
            "--seed".into(),
            self.seed.to_string().into(),
            "--timer-priority".into(),
            priority.into(),
        ]);
        for f in &self.faults {
            a.extend(["--fault".into(), f.into()]);
        }
        a
    }
}

/// What `bench` plays against.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum BenchTarget {
    /// The embedded `mcptape serve` child over stdio.
    Embedded(EmbeddedServer),
    /// A live stdio server command line, run with `sh -c` (`--target-cmd`).
    Cmd(String),
    /// A live Streamable HTTP endpoint on loopback (`--target-url`).
    Url(String),
}

/// A previous run for the regression gate (`--baseline`): its `latency.hlog` read.
#[derive(Debug)]
pub struct Baseline {
    /// `--baseline` as given (named in the gate's report).
    pub given: String,
    /// The `.hlog` read.
    pub log: HlogRead,
}

/// One run to make.
#[derive(Debug)]
pub struct BenchRun {
    /// The recorded client played (union of the transcripts).
    pub tape: Tape,
    /// The checked settings.
    pub cfg: BenchConfig,
    /// The target.
    pub target: BenchTarget,
    /// The transcripts' names, comma-separated, for the report.
    pub transcript: String,
    /// The seed (the embedded server's schedule, the gate's bootstrap).
    pub seed: u64,
    /// SLO items (`--slo`), checked evaluable.
    pub slo: Vec<SloItem>,
    /// The regression gate: the baseline (checked against this run by the caller) and its
    /// settings.
    pub gate: Option<(Baseline, Settings)>,
}

/// Told of the measurement as it goes (a progress bar, status lines). Every method has an
/// empty default.
pub trait Observer: Sync {
    /// The measurement starts (the handshake is done).
    fn measuring(&self) {}
    /// `n` reads or turns finished.
    fn progress(&self, n: u64) {
        let _ = n;
    }
    /// The measurement ended, by a signal when `interrupted` is set (the target is ended
    /// next, then the report is built).
    fn measured(&self, interrupted: Option<Signal>) {
        let _ = interrupted;
    }
}

/// An [`Observer`] that watches nothing.
impl Observer for () {}

/// How a run ended.
#[derive(Debug)]
#[non_exhaustive]
pub enum BenchOutcome {
    /// A signal came before or after the measurement: the target was ended, no report.
    Stopped(Signal),
    /// The measurement ran (to its end, or cut by a signal): its report.
    Finished(Box<Finished>),
}

/// A run with a report.
#[derive(Debug)]
pub struct Finished {
    /// The report, SLO checks and gate included.
    pub report: BenchReport,
    /// The measured histograms.
    pub result: BenchResult,
    /// The signal that cut the measurement, if one did (the report is partial).
    pub interrupted: Option<Signal>,
    /// Why the target went away, when it closed the session (`; target exited with …`, or
    /// empty).
    pub gone: String,
    /// When the measurement started (wall clock), for the caller's `report.run`
    /// ([`mcptape_report::stats::RunInfo`]: the binary fills in its host and build).
    pub started: std::time::SystemTime,
}

/// What a finished run says, for the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Measured; every SLO item passed; no regression.
    Pass,
    /// Cut by a signal (exit status 128 + its number): the partial report stands.
    Interrupted(Signal),
    /// Measured, but an SLO item failed or the gate found a regression (exit status 1).
    Gate {
        /// SLO items failed.
        slo_failed: usize,
        /// SLO items in all.
        slo_items: usize,
        /// The gate found a regression.
        regressed: bool,
    },
    /// A phase has no measurement ([`BenchReport::failures`]; exit status 1).
    NoMeasurement {
        /// SLO items failed.
        slo_failed: usize,
        /// SLO items in all.
        slo_items: usize,
        /// The gate found a regression.
        regressed: bool,
        /// Each failure, one line each.
        failures: Vec<String>,
    },
}

impl Finished {
    /// The report as printed: the table, then the SLO table and the gate's text when there
    /// are any.
    pub fn text(&self) -> String {
        let mut text = self.report.table();
        if !self.report.slo.is_empty() {
            text.push_str(&slo::table(&self.report.slo));
        }
        if let Some(r) = &self.report.regression {
            text.push_str(&regression::text(r));
        }
        text
    }

    /// The JUnit XML of `--out`'s [`slo::JUNIT_FILE`]: the SLO checks and the gate, when there
    /// are any.
    pub fn slo_junit(&self) -> Option<String> {
        let r = &self.report;
        if r.slo.is_empty() && r.regression.is_none() {
            return None;
        }
        Some(match &r.regression {
            Some(g) => regression::junit_xml(&r.slo, g),
            None => slo::junit_xml(&r.slo),
        })
    }

    /// The verdict: interrupted first, then a phase with no measurement, then the gates.
    pub fn verdict(&self) -> Verdict {
        if let Some(sig) = self.interrupted {
            return Verdict::Interrupted(sig);
        }
        let slo_items = self.report.slo.len();
        let slo_failed = self.report.slo.iter().filter(|c| !c.pass).count();
        let regressed = self
            .report
            .regression
            .as_ref()
            .is_some_and(|r| r.verdict == GateVerdict::Regressed);
        let failures = self.report.failures();
        if !failures.is_empty() {
            return Verdict::NoMeasurement {
                slo_failed,
                slo_items,
                regressed,
                failures,
            };
        }
        if slo_failed > 0 || regressed {
            Verdict::Gate {
                slo_failed,
                slo_items,
                regressed,
            }
        } else {
            Verdict::Pass
        }
    }
}

/// Runs `bench` against `run.target`: see the module docs. `observer` is told when the
/// measurement starts, of each finished read or turn, and when it ends.
///
/// # Errors
/// As [`Target::connect`] and [`Target::connect_embedded`] (the target cannot be started or
/// reached); [`ReplayErrorKind::TargetHandshake`] when the handshake fails (with why the target
/// went away); as [`bench::run_until`].
pub async fn run(run: BenchRun, observer: &dyn Observer) -> Result<BenchOutcome, ReplayError> {
    let mut target = Target::new();
    // The session future borrows `target`; it is dropped when the select ends, so the
    // target's process group is ended on every exit path: success, an error, a timeout, or
    // SIGINT/SIGTERM/SIGHUP to mcptape.
    // One signal listener. Before and after the measurement a signal ends the session at
    // once; during it, `bench::run_until` stops and the partial report is returned.
    let (sig_tx, sig_rx) = tokio::sync::watch::channel(None::<Signal>);
    let listener = tokio::spawn(async move {
        let s = target::interrupted().await;
        let _ = sig_tx.send(Some(s));
    });
    let measuring = AtomicBool::new(false);
    let outside = async {
        let mut rx = sig_rx.clone();
        loop {
            if let Some(sig) = *rx.borrow_and_update()
                && !measuring.load(Ordering::SeqCst)
            {
                return sig;
            }
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
            if measuring.load(Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
        }
    };
    let r = tokio::select! {
        r = session(run, &mut target, sig_rx.clone(), &measuring, observer) => r,
        sig = outside => Ok(BenchOutcome::Stopped(sig)),
    };
    listener.abort();
    target.end().await;
    r
}

/// The part of [`run`] that runs with a target; `target` is started here and ended by the
/// caller.
async fn session(
    run: BenchRun,
    target: &mut Target,
    mut signal: tokio::sync::watch::Receiver<Option<Signal>>,
    measuring: &AtomicBool,
    observer: &dyn Observer,
) -> Result<BenchOutcome, ReplayError> {
    let BenchRun {
        tape,
        cfg,
        target: spec,
        transcript,
        seed,
        slo: slo_items,
        gate,
    } = run;
    // The client's own timer thread paces open-loop sends; it stays at the normal policy so
    // its final spin never takes a core from the server under test (which asks for SCHED_FIFO
    // itself, --timer-priority).
    let _ = crate::schedule::TimerThread::start(TimerPriority::Normal);
    let version = tape.protocol_version.as_deref();
    let (client, target_name, latency) = match &spec {
        BenchTarget::Url(url) => (
            target.connect(&TargetSpec::Url(url.clone()), version)?,
            format!("{url} (Streamable HTTP)"),
            None,
        ),
        BenchTarget::Cmd(c) => (
            target.connect(&TargetSpec::Shell(c.clone()), version)?,
            format!("`{c}` (stdio)"),
            None,
        ),
        BenchTarget::Embedded(e) => (
            target.connect_embedded(e.program.clone(), e.args())?,
            "embedded `mcptape serve` child (stdio)".to_owned(),
            Some(e.latency.clone()),
        ),
    };
    let stdio = !matches!(spec, BenchTarget::Url(_));
    if let Err(e) = bench::handshake(&client, &tape, Duration::from_micros(cfg.timeout_us)).await {
        let gone = target.gone_reason().await;
        return Err(ReplayError::new(ReplayErrorKind::TargetHandshake {
            error: Box::new(e),
            gone,
        }));
    }
    // A line stream's receive buffer, sized from the recorded reads and faulted in before the
    // timed phases (the first 160 MB reply would otherwise fault in fresh pages).
    if stdio {
        bench::warm_receive_buffer(&client, &tape);
    }
    measuring.store(true, Ordering::SeqCst);
    let started = std::time::SystemTime::now();
    observer.measuring();
    let stop = async {
        while signal.borrow_and_update().is_none() {
            if signal.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    };
    let progress = |n| observer.progress(n);
    let res = bench::run_until(client.clone(), &tape, &cfg, &progress, stop).await?;
    let interrupted = if res.partial { *signal.borrow() } else { None };
    observer.measured(interrupted);
    let gone = if res.target_closed {
        target.gone_reason().await
    } else {
        String::new()
    };

    // Close the session: the embedded server writes its stats on exit (interrupted: no
    // waiting for it).
    if let Ok(c) = Arc::try_unwrap(client) {
        let wait = if interrupted.is_some() { 200 } else { 2_000 };
        c.close(Duration::from_millis(wait)).await;
    }
    target.end().await;
    let server = target.take_serve_stats().await;

    let mut report = res.report(&cfg, &transcript, &target_name, latency, seed, server);
    if let BenchTarget::Embedded(e) = &spec {
        report.faults = e.faults.clone();
    }
    report.slo = slo::evaluate(&slo_items, &report);
    if let Some((b, settings)) = &gate {
        report.regression = Some(compare(b, &report, &res, *settings));
    }
    Ok(BenchOutcome::Finished(Box::new(Finished {
        report,
        result: res,
        interrupted,
        gone,
        started,
    })))
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
    let other_turns =
        meta.filter(|m| m.parallel != report.parallel || m.deadline_us != report.deadline_us);
    if let Some(m) = other_turns {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_server_args_name_every_setting_of_the_serve_child() {
        let e = EmbeddedServer {
            program: "mcptape".into(),
            transcripts: vec!["a.jsonl".into(), "b.jsonl".into()],
            latency: "fixed:1ms".into(),
            faults: vec!["stall=1%".into()],
            seed: 7,
            timer_priority: TimerPriority::Normal,
        };
        let args: Vec<String> = e
            .args()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            args.join(" "),
            "serve a.jsonl b.jsonl --stdio --latency fixed:1ms --seed 7 --timer-priority normal --fault stall=1%"
        );
    }
}
