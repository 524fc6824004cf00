//! `mcptape check PATH... [--spec REV|auto] [--format human|json|junit|sarif] [--allow RULE]... [--output FILE]
//! [--baseline FILE] [--write-baseline FILE] [--max-per-rule N]`: run the conformance rules of `mcptape-check` over transcripts.
//!
//! Exit status: 0 when no unallowed error-severity finding fired, 1 when one
//! did (with `--baseline`: a finding the baseline does not expect), 2 when the check could not run
//! (unreadable path, unknown rule id, bad baseline file).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mcptape_check::baseline::{self, Baseline};
use mcptape_check::sarif::{self, SarifOptions};
use mcptape_check::{Format, Options, Revision, SpecChoice, output};

/// `--spec` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Spec {
    /// Detect from the handshake (initialize result, request `_meta`, header).
    Auto,
    /// MCP 2025-06-18.
    #[value(name = "2025-06-18")]
    V2025_06_18,
    /// MCP 2025-11-25.
    #[value(name = "2025-11-25")]
    V2025_11_25,
    /// MCP 2026-07-28.
    #[value(name = "2026-07-28")]
    V2026_07_28,
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// One line per finding, for people (`text` is accepted too).
    #[value(alias = "text")]
    Human,
    /// The JSON report.
    Json,
    /// JUnit XML (one test case per transcript and rule).
    Junit,
    /// SARIF 2.1.0 (GitHub code scanning: one rule per check rule, results with path, line, JSON Pointer).
    Sarif,
}

/// Arguments of `mcptape check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript files, or directories searched recursively for `*.jsonl`; `-` reads a
    /// transcript from standard input, as a stream (named `-` in the report).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Protocol revision the revision-dependent rules use.
    #[arg(long, value_enum, default_value = "auto")]
    pub spec: Spec,
    /// Report format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: FormatArg,
    /// A rule whose findings are reported but do not fail the check: one rule per flag
    /// (`--allow A --allow B`); what follows it is a path again.
    #[arg(long = "allow", value_name = "RULE", num_args = 1, action = clap::ArgAction::Append)]
    pub allow: Vec<String>,
    /// Write the report to FILE (parent directories are created) instead of stdout;
    /// a one-line summary still goes to stderr.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Blobs larger than this many decoded bytes fire `blob-over-size-threshold`.
    #[arg(long, value_name = "BYTES", default_value_t = mcptape_check::DEFAULT_BLOB_THRESHOLD_BYTES)]
    pub blob_threshold: u64,
    /// A baseline of expected findings (JSON, see `--write-baseline`): only findings it does not
    /// hold fail; expected ones that no longer occur are reported as fixed (on stderr).
    /// Paths in it are relative to the baseline file's directory (an older format-1 file: to
    /// the working directory), so it matches from any directory and any spelling of PATH.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Human format: print at most N findings of one rule per transcript, then one line
    /// counting the rest (`N more warning[RULE] finding(s) not shown`); the summary line and
    /// the exit status count every finding. 0 (the default): every finding. The json, junit
    /// and sarif formats always hold every finding.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_per_rule: usize,
    /// Write the current failing findings to FILE as a baseline (rule, transcript path relative
    /// to FILE's directory, JSON Pointer, count; sorted) and exit 0.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
}

/// Runs `mcptape check`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let spec = match args.spec {
        Spec::Auto => SpecChoice::Auto,
        Spec::V2025_06_18 => SpecChoice::Fixed(Revision::v2025_06_18()),
        Spec::V2025_11_25 => SpecChoice::Fixed(Revision::v2025_11_25()),
        Spec::V2026_07_28 => SpecChoice::Fixed(Revision::v2026_07_28()),
    };
    let opts = Options {
        spec,
        allow: args.allow.iter().cloned().collect::<BTreeSet<_>>(),
        blob_threshold_bytes: args.blob_threshold,
    };
    // Nothing written may replace a file read: a transcript (a directory's too), the baseline.
    let inputs = mcptape_check::collect_transcripts(&args.paths)?;
    if let Some(out) = &args.output {
        super::refuse_overwrite("-o", out, inputs.iter().chain(&args.baseline))?;
    }
    if let Some(out) = &args.write_baseline {
        super::refuse_overwrite("--write-baseline", out, &inputs)?;
    }
    if let Some(b) = &args.baseline {
        super::refuse_special_input("--baseline", b)?;
    }
    if args.baseline.is_none() && args.write_baseline.is_none() {
        return run_streamed(&args, &opts);
    }
    let mut report = mcptape_check::check_paths(&args.paths, &opts)?;
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let written = match &args.write_baseline {
        Some(path) => {
            let dir = Baseline::dir_of(path, &cwd);
            // Created first, so the paths are resolved against the directory itself.
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let b = Baseline::from_report(&report, Some(&dir));
            b.write(path)?;
            eprintln!(
                "mcptape check: wrote baseline {} ({} finding(s) under {} key(s))",
                path.display(),
                b.total(),
                b.findings.len()
            );
            true
        }
        None => false,
    };
    let outcome = match &args.baseline {
        Some(path) => {
            let b = Baseline::read(path)?;
            let outcome = baseline::apply(&mut report, &b, Some(&Baseline::dir_of(path, &cwd)));
            print_baseline(
                path,
                &b,
                &outcome,
                &report,
                human_options(&args).max_per_rule,
            );
            Some(outcome)
        }
        None => None,
    };
    // Every format is written as rendered, one finding at a time, never held whole.
    let write = |out: &mut dyn std::io::Write| -> std::io::Result<()> {
        match format_of(args.format) {
            Some(f) => output::write_report_with(&report, f, human_options(&args), out)?,
            None => sarif::write(
                &report,
                &SarifOptions {
                    base_dir: Some(&cwd),
                    baseline: outcome.as_ref(),
                },
                out,
            )?,
        }
        out.flush()
    };
    match &args.output {
        Some(path) => {
            let file = create_output(path)?;
            write(&mut std::io::BufWriter::with_capacity(1 << 16, file))
                .with_context(|| format!("writing {}", path.display()))?;
            eprint_summary(&report.summary, path);
        }
        // A reader that went away (`| head -1`) ends the printing quietly, in every format.
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match write(&mut out) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.map_err(|e| anyhow::anyhow!("writing to stdout: {e}"))?,
            }
        }
    }
    Ok(if written || report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--max-per-rule` (0: every finding).
fn human_options(args: &Args) -> output::HumanOptions {
    output::HumanOptions {
        max_per_rule: std::num::NonZeroUsize::new(args.max_per_rule),
    }
}

/// The [`Format`] of `--format`; `None` for SARIF, written with the working
/// directory as its base ([`sarif::write`], [`sarif::write_streamed`]).
fn format_of(f: FormatArg) -> Option<Format> {
    match f {
        FormatArg::Human => Some(Format::Human),
        FormatArg::Json => Some(Format::Json),
        FormatArg::Junit => Some(Format::Junit),
        FormatArg::Sarif => None,
    }
}

/// `check` without a baseline: each file's findings are written as they are
/// read back ([`output::write_streamed`], [`sarif::write_streamed`]), so
/// memory holds a bounded number of them, not the whole report.
fn run_streamed(args: &Args, opts: &Options) -> anyhow::Result<ExitCode> {
    let allowed: Vec<String> = opts.allow.iter().cloned().collect();
    let cwd = match args.format {
        FormatArg::Sarif => Some(std::env::current_dir().context("reading the working directory")?),
        _ => None,
    };
    let format = format_of(args.format);
    let write = |reports: &mut dyn Iterator<
        Item = Result<mcptape_check::StreamedReport, mcptape_check::CheckError>,
    >,
                 out: &mut dyn std::io::Write|
     -> Result<mcptape_check::Summary, output::WriteError> {
        match format {
            Some(f) => output::write_streamed_with(reports, &allowed, f, human_options(args), out),
            None => {
                let opts = SarifOptions {
                    base_dir: cwd.as_deref(),
                    baseline: None,
                };
                sarif::write_streamed(reports, &allowed, &opts, out)
            }
        }
    };
    let reports = mcptape_check::check_paths_streamed(&args.paths, opts)?;
    // Off a terminal: a status line every 10 s on a long check (files checked so far).
    let checked = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c = checked.clone();
    let status = super::progress::StatusLines::start("check", move || {
        format!(
            "files checked {}",
            c.load(std::sync::atomic::Ordering::Relaxed)
        )
    })?;
    let mut reports = reports.inspect(move |_| {
        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let summary = match &args.output {
        Some(path) => {
            let file = create_output(path)?;
            // Only a regular file is removed on failure: `-o /dev/full` (as root) unlinked the
            // device node, and the next writer of /dev/full made a regular file there.
            let regular = file.metadata().is_ok_and(|m| m.is_file());
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            let s = match write(&mut reports, &mut out) {
                Ok(s) => s,
                Err(e) => {
                    // No half report is left behind, but only a regular file is removed:
                    // `-o /dev/full` (a device, written as root) must stay a device.
                    drop(out);
                    if regular {
                        let _ = std::fs::remove_file(path);
                    }
                    return Err(match e {
                        output::WriteError::Check(c) => c.into(),
                        e => anyhow::anyhow!("writing {}: {e}", path.display()),
                    });
                }
            };
            eprint_summary(&s, path);
            s
        }
        None => {
            // A reader that went away (`| head -1`) ends the printing quietly;
            // the check goes on for its exit status.
            let mut out = std::io::BufWriter::with_capacity(
                1 << 16,
                super::QuietPipe {
                    out: std::io::stdout().lock(),
                    gone: false,
                },
            );
            match write(&mut reports, &mut out) {
                Ok(s) => s,
                Err(output::WriteError::Check(c)) => return Err(c.into()),
                Err(e) => return Err(anyhow::anyhow!("writing to stdout: {e}")),
            }
        }
    };
    drop(status);
    Ok(if summary.errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The report file `path` (`-o`), created with its missing parent directories.
fn create_output(path: &std::path::Path) -> anyhow::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))
}

/// The summary line on stderr when the report went to the file `path` (`-o`): PASS when no
/// unallowed error was found.
fn eprint_summary(s: &mcptape_check::Summary, path: &std::path::Path) {
    eprintln!(
        "mcptape check: {}: {} file(s), {} error(s), {} warning(s), {} allowed; report in {}",
        if s.errors == 0 { "PASS" } else { "FAIL" },
        s.files,
        s.errors,
        s.warnings,
        s.allowed,
        path.display()
    );
}

/// The baseline verdict on stderr: counts, every new finding, every fixed entry.
fn print_baseline(
    path: &std::path::Path,
    b: &Baseline,
    outcome: &baseline::BaselineOutcome,
    report: &mcptape_check::Report,
    max_per_rule: Option<std::num::NonZeroUsize>,
) {
    let fixed: usize = outcome.fixed.iter().map(|e| e.count).sum();
    eprintln!(
        "mcptape check: baseline {}: {} of {} expected finding(s) still occur, {} new, {} fixed",
        path.display(),
        outcome.baselined.len(),
        b.total(),
        outcome.new.len(),
        fixed
    );
    // `--max-per-rule`: at most that many new findings of a rule per transcript, then a line
    // counting the rest (in order of first new finding).
    let mut left: Vec<(&str, &str, usize, u64)> = Vec::new();
    for f in outcome.new_findings(report) {
        if let Some(max) = max_per_rule {
            let i = match left.iter().position(|l| l.0 == f.file && l.1 == f.rule) {
                Some(i) => i,
                None => {
                    left.push((&f.file, f.rule, 0, 0));
                    left.len() - 1
                }
            };
            if left[i].2 == max.get() {
                left[i].3 += 1;
                continue;
            }
            left[i].2 += 1;
        }
        let at = at_pointer(&f.pointer);
        eprintln!(
            "  new: {}:{}: {}{}: {}",
            f.file, f.line, f.rule, at, f.message
        );
    }
    for (file, rule, _, n) in left.into_iter().filter(|l| l.3 > 0) {
        eprintln!(
            "  new: {file}: {n} more {rule} finding(s) not shown (--max-per-rule {})",
            max_per_rule.map_or(0, std::num::NonZeroUsize::get)
        );
    }
    for e in &outcome.fixed {
        let at = at_pointer(&e.pointer);
        eprintln!(
            "  fixed (no longer occurs, remove from the baseline): {}: {}{} x{}",
            e.file, e.rule, at, e.count
        );
    }

    /// ` at POINTER` for a finding's JSON pointer, or nothing for the empty one.
    fn at_pointer(pointer: &str) -> String {
        if pointer.is_empty() {
            String::new()
        } else {
            format!(" at {pointer}")
        }
    }
}
