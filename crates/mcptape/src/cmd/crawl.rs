//! `mcptape crawl`: act as the client of a real MCP server and record the session.
//!
//! `mcptape crawl -o FILE (-- CMD ARGS... | --target-url URL) [--protocol VERSION] [--expand 'TEMPLATE' var=v1,v2]`

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use anyhow::Context;
use mcptape_record::crawl::{CrawlOptions, CrawlProgress, CrawlTarget, Expansion, crawl};
use mcptape_transcript::Transport;
use mcptape_transcript::redact::RedactRules;

/// Arguments of `mcptape crawl`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub out: super::record::OutputArgs,
    /// The server to crawl at this Streamable HTTP endpoint (http:// only), instead of a stdio
    /// command: the target, named as in bench and verify (`--url` is a hidden alias).
    #[arg(
        long = "target-url",
        alias = "url",
        value_name = "URL",
        conflicts_with = "command"
    )]
    pub url: Option<String>,
    /// Protocol revision: 2025-06-18 or 2025-11-25 (initialize), or 2026-07-28 (server/discover, falling back to initialize).
    #[arg(long, value_name = "VERSION", default_value = mcptape_record::crawl::DEFAULT_PROTOCOL)]
    pub protocol: String,
    /// Read expansions of a URI template: `--expand 'demo://r/{id}' id=1,2,3` (repeatable;
    /// several var=... give the product).
    #[arg(long, value_name = "TEMPLATE VAR=V1,V2", num_args = 2.., action = clap::ArgAction::Append)]
    pub expand: Vec<String>,
    /// URI to read that should not exist (default: a sibling of the first listed URI).
    #[arg(long, value_name = "URI")]
    pub missing: Option<String>,
    /// Per-request time limit (handshake, each list page, each read); a duration (`30s`,
    /// `800ms`, `250us`), > 0, at most 60s.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "30s",
        allow_hyphen_values = true
    )]
    pub timeout: String,
    /// Keep credentials in recorded HTTP headers and the server argv.
    #[arg(long, conflicts_with_all = ["redact_header", "keep_header"])]
    pub no_redact: bool,
    /// Also redact the value of this HTTP header (repeatable; any case). Credential-like
    /// names (a part, split at - _ . and camelCase, is auth, token, key, secret, cookie,
    /// session, password, passwd, pass, credential, signature, sig, jwt, bearer, pat, code, …)
    /// are redacted without it; the same words redact the --target-url's query parameters.
    #[arg(long = "redact-header", value_name = "NAME", requires = "url", action = clap::ArgAction::Append)]
    pub redact_header: Vec<String>,
    /// Keep this credential-like HTTP header in the clear (repeatable; any case).
    #[arg(long = "keep-header", value_name = "NAME", requires = "url", action = clap::ArgAction::Append)]
    pub keep_header: Vec<String>,
    #[command(flatten)]
    pub report: super::FormatArgs,
    /// The stdio server command and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Splits the flat `--expand` values into (template, assignments) groups: a
/// value without `=` (or containing `{`) starts a new template.
fn expansions(flat: &[String]) -> anyhow::Result<Vec<Expansion>> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for v in flat {
        if v.contains('{') || !v.contains('=') {
            out.push((v.clone(), Vec::new()));
        } else {
            let last = out
                .last_mut()
                .context("--expand: give the template first")?;
            last.1.push(v.clone());
        }
    }
    Ok(out
        .iter()
        .map(|(t, a)| Expansion::parse(t, a))
        .collect::<Result<_, _>>()?)
}

/// What a running crawl has done, for its status line ([`super::progress::StatusLines`]).
#[derive(Debug, Default)]
struct CrawlLive {
    /// 0 handshake, 1 listing, 2 reads.
    phase: AtomicU64,
    planned: AtomicU64,
    ok: AtomicU64,
    errors: AtomicU64,
}

impl CrawlLive {
    fn note(&self, p: &CrawlProgress) {
        match p {
            CrawlProgress::Handshake { .. } => self.phase.store(1, Relaxed),
            CrawlProgress::Planned { reads } => {
                self.planned.store(*reads, Relaxed);
                self.phase.store(2, Relaxed);
            }
            CrawlProgress::Read { error: true, .. } => {
                self.errors.fetch_add(1, Relaxed);
            }
            CrawlProgress::Read { .. } => {
                self.ok.fetch_add(1, Relaxed);
            }
            _ => {}
        }
    }

    /// `reads: 12 of 40 done, ok 11, errors 1` (or the phase before the reads).
    fn status(&self) -> String {
        match self.phase.load(Relaxed) {
            0 => "handshake".to_owned(),
            1 => "listing".to_owned(),
            _ => {
                let (ok, errors) = (self.ok.load(Relaxed), self.errors.load(Relaxed));
                format!(
                    "reads: {} of {} done, ok {ok}, errors {errors}",
                    ok + errors,
                    self.planned.load(Relaxed)
                )
            }
        }
    }
}

/// Runs `mcptape crawl`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let request_timeout = super::flag_duration_above_0(
        "--timeout",
        &args.timeout,
        mcptape_replay::latency::MAX_DELAY_US,
    )?;
    let target = match (&args.url, args.command.is_empty()) {
        (Some(u), _) => CrawlTarget::Url(u.clone()),
        (None, false) => CrawlTarget::Command(args.command.clone()),
        (None, true) => anyhow::bail!("give a server command after `--`, or --target-url"),
    };
    let redactor = super::record::flag_redactor(
        args.no_redact,
        &RedactRules {
            redact_headers: args.redact_header.clone(),
            keep_headers: args.keep_header.clone(),
            json_pointers: Vec::new(),
        },
    )?;
    let (transport, (server, redaction)) = match &target {
        CrawlTarget::Command(c) => (Transport::Stdio, super::record::stdio_server(&redactor, c)),
        CrawlTarget::Url(u) => (Transport::Http, super::record::http_server(&redactor, u)),
    };
    let opts = CrawlOptions {
        target,
        protocol: args.protocol.clone(),
        expand: expansions(&args.expand)?,
        missing_uri: args.missing.clone(),
        request_timeout,
        redactor,
    };
    // Every argument is checked before the transcript file is created: a
    // rejected run leaves no file behind. The transcript must not replace the server's
    // program or a file it is given (`crawl -o s.sh -- bash s.sh`).
    mcptape_record::crawl::check_options(&opts)?;
    super::refuse_overwrite("-o", &args.out.output, &super::server_files(&args.command))?;
    // stderr, noise and details redacted as `record` does (the server's stderr may print
    // its arguments, environment or home directory).
    let sink = args
        .out
        .sink("crawl", transport, server, redaction, opts.redactor.clone())?;
    // The redactor's clones share what it remembered: asked after the crawl.
    let redactor_handle = opts.redactor.clone();
    let rt = super::runtime()?;
    let bar = super::progress::bar(0, "{spinner} {msg} [{bar:30}] {pos}/{len} reads");
    bar.set_message("handshake");
    let b = bar.clone();
    // Off a terminal: a status line every 10 s (phase, reads sent of planned, ok, errors).
    let live = Arc::new(CrawlLive::default());
    let l = live.clone();
    let status = super::progress::StatusLines::start("crawl", move || l.status())?;
    // SIGINT/SIGTERM/SIGHUP end the crawl: its future is dropped, which kills the server's
    // process group (no server left running), and the records so far are kept.
    let result = rt.block_on(async {
        tokio::select! {
            r = crawl(opts, sink.clone(), move |p| {
                live.note(&p);
                match p {
                    CrawlProgress::Handshake { version } => b.set_message(format!("protocol {version}")),
                    CrawlProgress::Planned { reads } => b.set_length(reads),
                    CrawlProgress::Read { .. } => b.inc(1),
                    _ => {}
                }
            }) => Ok(r),
            sig = mcptape_replay::target::interrupted() => Err(sig),
        }
    });
    bar.finish_and_clear();
    drop(status);
    let records = sink.finish()?;
    super::record::warn_secrets_dropped("crawl", &redactor_handle);
    let report = match result {
        Ok(r) => r?,
        Err(sig) => {
            eprintln!(
                "mcptape crawl: {}: stopped the server; {records} records -> {}",
                sig.name,
                args.out.output.display()
            );
            return Ok(ExitCode::from(sig.exit_code));
        }
    };
    let errors = report
        .reads
        .iter()
        .filter(|r| r.error_code.is_some())
        .count();
    let blobs: usize = report.reads.iter().map(|r| r.blob).sum();
    if report.no_resources {
        let lists: Vec<String> = report
            .other_lists
            .iter()
            .map(|(m, n)| format!("{m}: {n} listed"))
            .collect();
        eprintln!(
            "mcptape crawl: note: the server advertises no `resources` capability: nothing to \
             list or read; recorded {} instead",
            if lists.is_empty() {
                "the handshake only".to_owned()
            } else {
                lists.join(", ")
            }
        );
    }
    eprintln!(
        "mcptape crawl: protocol {}{}, {} listed ({} pages), {} templates, {} reads ({} blob entries, {} errors), {} server requests answered, {} records -> {}",
        report.protocol_version,
        if report.fell_back {
            " (server/discover failed, fell back to initialize)"
        } else {
            ""
        },
        report.listed.len(),
        report.pages,
        report.templates.len(),
        report.reads.len(),
        blobs,
        errors,
        report.answered_server_requests.len(),
        records,
        args.out.output.display()
    );
    if args.report.json() {
        let reads: Vec<_> = report
            .reads
            .iter()
            .map(|r| {
                serde_json::json!({"uri": r.uri, "text": r.text, "blob": r.blob, "blobBase64Chars": r.blob_base64_chars, "errorCode": r.error_code})
            })
            .collect();
        let v = serde_json::json!({
            "protocolVersion": report.protocol_version,
            "fellBack": report.fell_back,
            "listed": report.listed,
            "pages": report.pages,
            "templates": report.templates,
            "reads": reads,
            "answeredServerRequests": report.answered_server_requests,
            "noResources": report.no_resources,
            "otherLists": report.other_lists.iter().map(|(m, n)| serde_json::json!({"method": m, "listed": n})).collect::<Vec<_>>(),
        });
        super::print_stdout(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    }
    Ok(ExitCode::SUCCESS)
}
