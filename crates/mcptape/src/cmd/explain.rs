//! `mcptape explain RULE` / `mcptape explain --list`: the text of a
//! conformance rule of `mcptape-check` (id, severity, source, revisions,
//! explanation).

use std::process::ExitCode;

use mcptape_check::{RULES, Rule};

/// Arguments of `mcptape explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rule id (e.g. `contents-text-and-blob`); without it, every rule is listed.
    pub rule: Option<String>,
    /// List every rule: id, severity and one-line summary (what `explain` with no RULE does).
    #[arg(long, conflicts_with = "rule")]
    pub list: bool,
}

/// The full text `mcptape explain RULE` prints.
pub fn explain_text(r: &Rule) -> String {
    format!(
        "{id} ({sev})\n  {summary}\n\nsource:    {source}\nrevisions: {revs}\n\n{explain}\n",
        id = r.id,
        sev = r.severity,
        summary = r.summary,
        source = r.source,
        revs = r.revisions,
        explain = r.explain
    )
}

/// Runs `mcptape explain`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.list || args.rule.is_none() {
        let mut text = String::new();
        for r in RULES {
            text.push_str(&format!("{:<32} {:<7} {}\n", r.id, r.severity, r.summary));
        }
        super::print_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let id = args.rule.unwrap_or_default();
    match mcptape_check::rule(&id) {
        Some(r) => {
            super::print_stdout(&explain_text(r))?;
            Ok(ExitCode::SUCCESS)
        }
        None => anyhow::bail!("unknown rule {id:?}; `mcptape explain --list` lists them"),
    }
}
