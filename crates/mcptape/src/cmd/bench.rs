//! `mcptape bench TRANSCRIPT [--target embedded | --target-cmd 'CMD' | --target-url URL]
//! [--latency MODEL] [--parallel N] [--deadline 800ms] [--timeout 5s] [--reads N] [--turns N]
//! [--concurrency C | --rate R/s] [--seed N] [--slo SPEC] [--out DIR] [--methods M,...] [--mix MIX]
//! [--allow-tool NAME]`: play the recorded client against a target and report the latency of its
//! single requests (by method, tool, prompt, URI) and of parallel-read turns (HdrHistogram, µs) with the
//! F(t)^N prediction beside the measured turn percentiles. `--slo` gates the exit code
//! (rules in [`mcptape_report::slo`]).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mcptape_replay::bench::{self, BenchSettings};
use mcptape_replay::bench_out::write_bench_out;
use mcptape_replay::bench_run::{
    self, BenchOutcome, BenchRun, BenchTarget, EmbeddedServer, Observer, Verdict,
};
use mcptape_replay::config::check_out_dir;
use mcptape_replay::latency::LatencyModel;
use mcptape_replay::target;
use mcptape_report::render::BENCH_OUT_FILES;
use mcptape_report::slo;

use mcptape_replay::tape::Tape;

/// The built-in target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// `mcptape serve` on the same transcript, started as a child over stdio.
    Embedded,
}

/// `--parallel`, `--deadline` and `--timeout` of `bench` and `export k6`: the parallel-read
/// turn and the time a read is given, flattened into both commands' `Args`.
#[derive(Debug, clap::Args)]
pub struct TurnArgs {
    /// Reads issued at once per turn (in `export k6`, one http.batch): 1..=1024
    /// (MAX_PARALLEL); more is refused.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub parallel: u32,
    /// Turn deadline (> 0, at most 60s): a read of the turn still unanswered then is cut
    /// (`bench` sends it notifications/cancelled; in `export k6` its request times out).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "800ms",
        allow_hyphen_values = true
    )]
    pub deadline: String,
    /// Per-read timeout (> 0, at most 60s): an unanswered single read is abandoned then. It
    /// also bounds each handshake request (initialize / server/discover).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5s",
        allow_hyphen_values = true
    )]
    pub timeout: String,
}

/// Arguments of `mcptape bench`. The embedded server's `--latency` defaults to a lognormal
/// model; `--seed` also seeds the regression gate's bootstrap.
#[derive(Debug, clap::Args)]
#[command(mut_arg("latency", |a| a
    .default_value("lognormal:p50=12ms,p99=40ms")
    .help("Latency model of the embedded server (as `mcptape serve --latency`): recorded, \
           fixed:12ms, lognormal:p50=12ms,p99=40ms, scale:2.0, empirical:FILE.hlog")))]
pub struct Args {
    /// Transcript whose recorded client is played (its recorded requests, cycled); several,
    /// or a directory (its `*.jsonl`), are played and served as the union of their exchanges.
    #[arg(required = true, num_args = 1..)]
    pub transcript: Vec<PathBuf>,
    /// Built-in target (default): `mcptape serve` on the same transcript as a stdio child.
    #[arg(long, value_enum, default_value = "embedded", conflicts_with_all = ["target_cmd", "target_url"])]
    pub target: Target,
    #[command(flatten)]
    pub live: super::TargetArgs,
    #[command(flatten)]
    pub schedule: crate::cmd::serve::ScheduleArgs,
    #[command(flatten)]
    pub turn: TurnArgs,
    /// Single requests to send (the recorded ones of --methods, cycled in the --mix): at most
    /// 10000000 (MAX_COUNT); more is refused.
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub reads: u64,
    /// Parallel-read turns to run: at most 10000000 (MAX_COUNT); more is refused.
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub turns: u64,
    /// Closed loop: single reads in flight at once: 1..=1024 (MAX_PARALLEL); more is refused.
    #[arg(long, value_name = "C", default_value_t = 1, conflicts_with = "rate")]
    pub concurrency: u32,
    /// Open loop: single reads per second (e.g. 200/s), latency from the intended send time.
    #[arg(long, value_name = "R/s")]
    pub rate: Option<String>,
    /// Wall-clock bound (> 0, at most 3600s) of each phase (single reads, turns); a phase
    /// cut by it says so.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "25s",
        allow_hyphen_values = true
    )]
    pub max_phase: String,
    /// Requests of a phase in flight at most (1..=65536); an open-loop send finding it full
    /// waits for a slot and leaves late (reported as such).
    #[arg(long, value_name = "N", default_value_t = mcptape_report::run::DEFAULT_MAX_IN_FLIGHT)]
    pub max_in_flight: u32,
    /// Check each result's contents with the fused strict decoder (strict JSON, entry rules,
    /// base64 validated in place) after its latency is taken; the check's own time is
    /// reported apart (contents validation row; validation in report.json), and rejected
    /// contents count as their own error class.
    #[arg(long)]
    pub validate: bool,
    /// SLO gates, e.g. 'read.p99<50ms,turn.p99<800ms,errors<1%' (read|turn.p50|p90|p99|p99.9|
    /// max|mean < or <= a duration; errors < a percentage of the reads sent not answered with a
    /// result, less the error answers with the recorded code; at most 32 items). A failed item
    /// exits 1; the pass/fail table is printed after the report and, with --out, written as
    /// JUnit XML slo.xml. A censored quantile (timeouts) fails.
    #[arg(long, value_name = "SPEC")]
    pub slo: Option<String>,
    /// Directory to write report.json, latency.hlog (HdrHistogram interval log) and
    /// latency.svg to (created if missing; checked writable before the run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Methods the single phase replays, comma-separated (e.g. resources/read,tools/call;
    /// `reads` = resources/read only). Default: every recorded request but the handshake, each
    /// with its recorded params. The parallel-read turns replay resources/read only.
    #[arg(long, value_name = "METHOD,...")]
    pub methods: Option<String>,
    /// Proportion of each method in the single phase: `recorded` (the recorded order,
    /// cycled), `uniform` (each method equally often) or weights `METHOD=W,...`
    /// (e.g. tools/call=3,resources/read=1; an unnamed method is not sent).
    #[arg(long, value_name = "MIX", default_value = "recorded")]
    pub mix: String,
    /// Live target (--target-cmd, --target-url): also call this recorded tool although the
    /// recorded tools/list does not mark it readOnlyHint: true (repeatable; '*': every tool).
    /// Without it such tools are not called and are listed in the report.
    #[arg(long, value_name = "NAME")]
    pub allow_tool: Vec<String>,
    /// Regression gate: compare with a previous run (its --out directory, report.json or
    /// latency.hlog): single reads, turns and each method, per quantile (p50, p90, p99) with a
    /// seeded bootstrap interval of the change, plus a rank test. A regression beyond --noise
    /// exits 1 and is written to report.json, slo.xml and report.html. A baseline of another
    /// transcript, latency model, load or timeout is refused (exit 2).
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<PathBuf>,
    /// Compare with --baseline even when its transcript, model, load or timeout differ.
    #[arg(long, requires = "baseline")]
    pub baseline_any: bool,
    /// Regression gate: a change whose interval reaches into ±this is no change (0%..=100%).
    #[arg(long, value_name = "PCT", default_value = "5%", requires = "baseline")]
    pub noise: String,
    /// Regression gate: confidence of the two-sided bootstrap interval (0.5..=0.999).
    #[arg(long, value_name = "C", default_value = "0.95", requires = "baseline")]
    pub confidence: String,
}

/// Runs `mcptape bench`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::warn_if_debug_build("bench");
    super::block_on(run_async(args))
}

async fn run_async(args: Args) -> anyhow::Result<ExitCode> {
    use mcptape_report::run::MAX_COUNT;
    super::flag_capped("--reads", args.reads, 0, MAX_COUNT)?;
    super::flag_capped("--turns", args.turns, 0, MAX_COUNT)?;
    // Load and injected faults go to this machine only: refused before anything starts.
    args.live.check_loopback()?;
    let paths = super::serve::transcript_files(&args.transcript)?;
    let mut tapes = Vec::with_capacity(paths.len());
    // Warnings about the inputs (a cut transcript, a forced baseline comparison): printed
    // now and kept in report.json's `warnings` (and report.html) with the run's own.
    let mut input_warnings: Vec<String> = Vec::new();
    for path in &paths {
        let (tape, notes) = super::serve::load_client_tape(path)?;
        for n in notes {
            eprintln!("mcptape bench: warning: {n}");
            input_warnings.push(n);
        }
        tapes.push(tape);
    }
    let tape = Tape::union(tapes).context("no transcript to bench")?;
    let names = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let mut cfg = BenchSettings {
        reads: args.reads,
        turns: args.turns,
        parallel: args.turn.parallel,
        concurrency: args.concurrency,
        rate: args.rate.as_deref(),
        deadline: &args.turn.deadline,
        timeout: &args.turn.timeout,
        max_phase: &args.max_phase,
        max_in_flight: args.max_in_flight,
        validate: args.validate,
    }
    .validate()?;
    cfg.mix = bench::Mix::parse(&args.mix)?;
    if let Some(m) = &args.methods {
        cfg.methods = Some(bench::parse_methods(m)?);
    }
    if args.live.is_live() {
        cfg.tools = bench::ToolPolicy::ReadOnlyAnd(args.allow_tool.clone());
    } else if !args.allow_tool.is_empty() {
        anyhow::bail!(
            "--allow-tool is for a live target (--target-cmd, --target-url): the embedded server only replays answers"
        );
    }
    // Refused before a target starts: nothing to send.
    bench::plan(&tape, cfg.methods.as_deref(), &cfg.mix, &cfg.tools)
        .map_err(|e| anyhow::anyhow!("{names}: {e}"))?;
    let slo_items = match &args.slo {
        Some(spec) => {
            let items = slo::parse(spec)?;
            slo::check_evaluable(&items)?;
            items
        }
        None => Vec::new(),
    };
    // The gate's baseline: read and checked against this run's settings before a target starts.
    let gate = match &args.baseline {
        Some(path) => {
            let settings = mcptape_report::regression::Settings {
                noise: mcptape_report::regression::parse_noise(&args.noise)?,
                confidence: mcptape_report::regression::parse_confidence(&args.confidence)?,
                seed: args.schedule.seed,
                ..Default::default()
            };
            let b = super::baseline::load(path, args.baseline_any)?;
            let current = mcptape_report::regression::RunIdentity {
                transcript: names.clone(),
                latency: (!args.live.is_live()).then(|| args.schedule.latency.clone()),
                load: cfg.load.text(),
                timeout_us: cfg.timeout_us,
            };
            if let Some(w) = super::baseline::check(&b, &current, args.baseline_any)? {
                eprintln!("mcptape bench: warning: {w}");
                input_warnings.push(w);
            }
            Some((b, settings))
        }
        None => None,
    };
    if let Some(dir) = &args.out {
        check_out_dir(dir)?;
        // slo.xml too when --slo or --baseline writes it: a FIFO there blocked the end of the
        // run in open(2), deaf to SIGINT and SIGTERM (issue 28).
        let slo_file = (!slo_items.is_empty() || gate.is_some()).then_some(slo::JUNIT_FILE);
        for file in BENCH_OUT_FILES.into_iter().chain(slo_file) {
            super::refuse_overwrite("--out", &dir.join(file), &paths)?;
        }
    }
    // Refused here, before a target starts (the child would refuse them later).
    let target = if let Some(url) = &args.live.target_url {
        BenchTarget::Url(url.clone())
    } else if let Some(c) = &args.live.target_cmd {
        BenchTarget::Cmd(c.clone())
    } else {
        LatencyModel::parse(&args.schedule.latency)?;
        crate::cmd::serve::parse_faults(&args.schedule.fault)?;
        BenchTarget::Embedded(EmbeddedServer {
            program: std::env::current_exe().context("locating the mcptape binary")?,
            transcripts: paths.clone(),
            latency: args.schedule.latency.clone(),
            faults: args.schedule.fault.clone(),
            seed: args.schedule.seed,
            timer_priority: args.schedule.timer_priority.into(),
        })
    };
    // The status interval's variable, refused before a target starts.
    super::progress::status_every()?;
    let live = Arc::new(bench::LiveCounts::default());
    cfg.live = Some(live.clone());
    let observer = Progress {
        total: cfg.reads + cfg.turns,
        live,
        shown: Mutex::new(None),
    };
    let run = BenchRun {
        tape,
        cfg,
        target,
        transcript: names,
        seed: args.schedule.seed,
        slo: slo_items,
        gate,
    };
    let mut finished = match bench_run::run(run, &observer).await? {
        BenchOutcome::Stopped(sig) => return Ok(stopped("bench", sig)),
        BenchOutcome::Finished(f) => f,
        _ => unreachable!("mcptape_replay::bench_run::run ends Stopped or Finished"),
    };
    finished.report.run = Some(super::run_info(
        finished.started,
        finished.result.single_elapsed_s + finished.result.turn_elapsed_s,
    ));
    finished.report.warnings.splice(0..0, input_warnings);
    super::print_stdout(&finished.text())?;
    if let Some(dir) = &args.out {
        write_bench_out(dir, &finished.report, &finished.result)
            .with_context(|| format!("writing {}", dir.display()))?;
        let mut files = BENCH_OUT_FILES.to_vec();
        let p = dir.join(slo::JUNIT_FILE);
        if let Some(xml) = finished.slo_junit() {
            std::fs::write(&p, xml).with_context(|| format!("writing {}", p.display()))?;
            files.push(slo::JUNIT_FILE);
        } else if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            // An earlier run's verdict must not sit beside this run's report (a CI job would
            // publish it): this run has no --slo and no --baseline.
            std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
            eprintln!(
                "mcptape bench: removed {} of an earlier run (this run has no --slo or --baseline)",
                p.display()
            );
        }
        super::print_stdout(&format!("\nwrote {}/{}\n", dir.display(), files.join(", ")))?;
    }
    let (slo_failed, slo_items, regressed, failures) = match finished.verdict() {
        Verdict::Pass => return Ok(ExitCode::SUCCESS),
        Verdict::Interrupted(sig) => return Ok(ExitCode::from(sig.exit_code)),
        Verdict::Gate {
            slo_failed,
            slo_items,
            regressed,
        } => (slo_failed, slo_items, regressed, Vec::new()),
        Verdict::NoMeasurement {
            slo_failed,
            slo_items,
            regressed,
            failures,
        } => (slo_failed, slo_items, regressed, failures),
        _ => (0, 0, false, Vec::new()),
    };
    if slo_failed > 0 {
        eprintln!("mcptape bench: SLO failed: {slo_failed} of {slo_items} items");
    }
    if regressed {
        eprintln!("mcptape bench: regression against the baseline");
    }
    for f in &failures {
        eprintln!("mcptape bench: no measurement: {f}");
    }
    if !failures.is_empty() && !finished.gone.is_empty() {
        eprintln!(
            "mcptape bench: {}",
            finished.gone.trim_start_matches([';', ' '])
        );
    }
    Ok(ExitCode::from(1))
}

/// The status line of a running bench ([`super::progress::StatusLines`]): `single requests:
/// sent 1234, ok 1200, errors 34`.
fn bench_status(live: &bench::LiveCounts) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let phase = match live.phase.load(Relaxed) {
        bench::LiveCounts::SINGLE => "single requests",
        bench::LiveCounts::TURNS => "parallel-read turns",
        _ => "starting",
    };
    format!(
        "{phase}: sent {}, ok {}, errors {}",
        live.sent.load(Relaxed),
        live.ok.load(Relaxed),
        live.errors.load(Relaxed)
    )
}

/// Prints `mcptape CMD: SIGNAL: stopping the target` and gives the exit status 128 + signal.
pub(crate) fn stopped(cmd: &str, sig: target::Signal) -> ExitCode {
    eprintln!("mcptape {cmd}: {}: stopping the target", sig.name);
    ExitCode::from(sig.exit_code)
}

/// What `bench` shows while it measures: a bar on a terminal; off a terminal, a status line
/// every 10 s (the bar's counts, and sent/ok/errors). Started when the measurement starts.
struct Progress {
    /// Reads and turns asked.
    total: u64,
    /// The run's counts.
    live: Arc<bench::LiveCounts>,
    /// The bar and the status lines, while the measurement runs.
    shown: Mutex<Option<(ProgressBar, Option<super::progress::StatusLines>)>>,
}

impl Observer for Progress {
    fn measuring(&self) {
        let pb = if std::io::stderr().is_terminal() {
            let pb = ProgressBar::new(self.total);
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} {bar:40} {pos}/{len} reads+turns {elapsed}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            pb
        } else {
            ProgressBar::hidden()
        };
        let live = self.live.clone();
        let status = super::progress::StatusLines::start("bench", move || bench_status(&live)).ok();
        *self.shown.lock().unwrap_or_else(|p| p.into_inner()) = Some((pb, status));
    }

    fn progress(&self, n: u64) {
        if let Some((pb, _)) = &*self.shown.lock().unwrap_or_else(|p| p.into_inner()) {
            pb.inc(n);
        }
    }

    fn measured(&self, interrupted: Option<target::Signal>) {
        if let Some((pb, status)) = self.shown.lock().unwrap_or_else(|p| p.into_inner()).take() {
            pb.finish_and_clear();
            drop(status);
        }
        if let Some(sig) = interrupted {
            eprintln!(
                "mcptape bench: {}: stopping; printing and writing the partial report",
                sig.name
            );
        }
    }
}
