//! `mcptape record`: record a real MCP session.
//!
//! * stdio: `mcptape record -o FILE [--no-redact] -- CMD ARGS...` — a host
//!   launches this in place of the server; bytes pass through unchanged.
//! * HTTP: `mcptape record -o FILE --listen 127.0.0.1:PORT --target-url URL` (`--upstream`) —
//!   a Streamable HTTP reverse proxy; point the client at `http://LISTEN/<path>`.
//!
//! Redaction (see `mcptape_transcript::redact`): credential-like header values
//! (deny-by-default by name, or by a registered auth scheme in the value), token
//! query parameters and webhook URLs, `--redact-json` pointers and
//! credential-named tool arguments in stdio and HTTP messages, credential values
//! in the server argv, and in stderr lines credential patterns and every value
//! redacted elsewhere; the home, working and temporary directories are folded
//! (`~`, `.`, `$TMPDIR`) in argv and stderr. The header's `redaction` member says
//! what was redacted, never a value.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use mcptape_record::OnExisting;
use mcptape_record::TranscriptSink;
use mcptape_record::stdio::{StdioOptions, run_stdio_proxy};
use mcptape_transcript::redact::{MachineDirs, RedactRules, Redactor};
use mcptape_transcript::{Redaction, ServerSpec, Transport};

/// Cap of `--grace` and `--term-grace`: 60 s, µs.
pub const MAX_GRACE_US: u64 = 60_000_000;
/// Cap of `--duration` (HTTP proxy): one day, µs.
pub const MAX_RECORD_DURATION_US: u64 = 86_400_000_000;

/// `-o FILE` and `--overwrite` of `record` and `crawl`: where the transcript goes.
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    /// Transcript file to write (JSON Lines). An existing recording is kept: the records then go to
    /// the first free numbered sibling (FILE.1.jsonl, …), said on stderr; so does a FILE another
    /// recorder is writing (a client that starts the server command twice).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Replace an existing transcript at -o (never one another recorder is writing).
    #[arg(long)]
    pub overwrite: bool,
}

impl OutputArgs {
    /// The transcript sink at `-o` (an existing file kept or replaced as `--overwrite` says),
    /// redacting its records with `redactor`; a FILE another recorder holds is said on stderr
    /// under `command`'s name.
    pub(crate) fn sink(
        &self,
        command: &str,
        transport: Transport,
        server: ServerSpec,
        redaction: Redaction,
        redactor: Redactor,
    ) -> anyhow::Result<Arc<TranscriptSink>> {
        let on_existing = if self.overwrite {
            OnExisting::Overwrite
        } else {
            OnExisting::Keep
        };
        let sink = TranscriptSink::create_redacted_with(
            &self.output,
            transport,
            server,
            redaction,
            on_existing,
        )?
        .redacting(redactor);
        super::note_held_output(command, &self.output, sink.path());
        Ok(Arc::new(sink))
    }
}

/// Arguments of `mcptape record`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub out: OutputArgs,
    /// Keep credentials in the transcript. Without it (the default) the recorder redacts,
    /// by ONE list of credential words: auth, authorization, authenticate, authentication,
    /// oauth, token, key, apikey, accesskey, privatekey, secret, cookie, session, password,
    /// passwd, passphrase, pass, pwd, credential, signature, sig, jwt, bearer, pat, code,
    /// passcode, pin, otp, tok, license, cert, pw, sid. A name is credential-like when a part
    /// of it (split at - _ . and camelCase) is one of these words (words of 4 letters or
    /// fewer only as a whole part: X-Sig, GH_PAT; not monkey, ping). It applies to HTTP
    /// header names, URL query/fragment/path parameters, argv flags (`--tok S`,
    /// `"--token S"` as one argument), `KEY=value` and connection strings
    /// (`Server=x;Password=S`), JSON keys in argv, tool arguments
    /// (`/params/arguments/<credential word>` in every message, stdio and HTTP, becoming a
    /// pseudonym `[redacted:N]`), and `NAME=VALUE` / `NAME: VALUE` in stderr lines. Also
    /// redacted: any header value starting with a registered auth scheme (`Bearer S`), URL
    /// userinfo, webhook URLs (hooks.slack.com/services/…, discord.com/api/webhooks/…,
    /// …), and every value redacted anywhere wherever else it appears in the transcript
    /// (stderr included), as well as the values of credential-named environment variables
    /// given to the recorder: values of 6 bytes or more (MIN_ECHO_SECRET_BYTES), at most
    /// 4096 of them (MAX_ECHO_SECRETS; past it a warning says how many were not looked for);
    /// of a redacted cookie string (`Cookie: a=S; b=T`, `--cookie`, `MY_COOKIE`) each value
    /// shaped like a credential (8 bytes or more with a letter and a digit, or 16 with both
    /// cases) on its own too, not `theme=dark`. The home, working and temporary directories are folded to
    /// `~`, `.` and `$TMPDIR` in argv and stderr, also with --no-redact.
    #[arg(long, conflicts_with_all = ["redact_header", "keep_header", "redact_json"])]
    pub no_redact: bool,
    /// Also redact the value of this HTTP header (repeatable; any case). Headers with a
    /// credential-like name (see --no-redact for the one word list; it is also in the
    /// header's `redaction.headerWords`) are redacted without it. Mcp-Session-Id becomes a
    /// per-transcript pseudonym `[redacted:N]`.
    #[arg(long = "redact-header", value_name = "NAME", requires = "listen", action = clap::ArgAction::Append)]
    pub redact_header: Vec<String>,
    /// Keep this credential-like HTTP header in the clear (repeatable; any case).
    #[arg(long = "keep-header", value_name = "NAME", requires = "listen", action = clap::ArgAction::Append)]
    pub keep_header: Vec<String>,
    /// Replace the value at this RFC 6901 JSON Pointer in every message, stdio or HTTP
    /// (each member of a batch), with a pseudonym `[redacted:N]` (N numbers the distinct
    /// values, so two secrets stay apart; replay matches it to any value) (repeatable; e.g.
    /// /params/arguments/otp). A message where a pointer matched is re-serialized and its
    /// record lists the pointers: `redactedPointers` (stdio) or `http.redactedPointers`.
    /// Tool arguments with credential-like names are redacted without it. An HTTP body that
    /// is not JSON (a UTF-8 BOM, UTF-16) is not stored: a `noise` record starting
    /// `[redacted] <mcptape: exchange N: …>` replaces it.
    #[arg(long = "redact-json", value_name = "POINTER", action = clap::ArgAction::Append)]
    pub redact_json: Vec<String>,
    /// Listen address of the HTTP reverse proxy: loopback only (127.0.0.1 or ::1, e.g. 127.0.0.1:8931).
    #[arg(
        long,
        value_name = "ADDR",
        requires = "upstream",
        conflicts_with = "command",
        value_parser = super::socket_addr
    )]
    pub listen: Option<std::net::SocketAddr>,
    /// The upstream Streamable HTTP server the proxy records (e.g. http://127.0.0.1:3001/mcp):
    /// the target, named as in bench and verify (`--upstream` is a hidden alias).
    #[arg(
        long = "target-url",
        alias = "upstream",
        value_name = "URL",
        requires = "listen"
    )]
    pub upstream: Option<String>,
    /// Also accept requests with this Origin (repeatable, e.g. `https://inspector.example`).
    /// Without it only loopback origins (http(s)://127.0.0.1, localhost, `[::1]`, any port) or
    /// no Origin are accepted, and Host must be the bound loopback address: anything else
    /// gets 403 (DNS rebinding guard).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen", action = clap::ArgAction::Append)]
    pub allow_origin: Vec<String>,
    /// Time the server gets to exit after the client closed stdin (then SIGTERM); a duration
    /// (`2s`, `500ms`, `250us`), at most 60s.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "2s",
        allow_hyphen_values = true
    )]
    pub grace: String,
    /// Time between SIGTERM and SIGKILL; a duration, at most 60s.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "2s",
        allow_hyphen_values = true
    )]
    pub term_grace: String,
    /// Stop the HTTP proxy after this long (> 0, e.g. `600s`; at most 86400s); default: run
    /// until SIGTERM (a graceful stop: exit status 0, as the end of --duration) or SIGINT
    /// (an interruption: 130, as bench and verify).
    #[arg(
        long,
        value_name = "DURATION",
        requires = "listen",
        allow_hyphen_values = true
    )]
    pub duration: Option<String>,
    /// The stdio server command and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Runs `mcptape record`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let rt = super::runtime()?;
    let result = if let (Some(listen), Some(upstream)) = (args.listen, args.upstream.clone()) {
        rt.block_on(run_http(&args, listen, upstream))
    } else {
        rt.block_on(run_stdio(&args))
    };
    // Reads of our own stdin may still sit in a blocking thread: do not wait for them.
    rt.shutdown_background();
    result
}

async fn run_stdio(args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !args.command.is_empty(),
        "give a server command after `--`, or --listen and --target-url"
    );
    let grace = super::flag_duration("--grace", &args.grace, MAX_GRACE_US)?;
    let term_grace = super::flag_duration("--term-grace", &args.term_grace, MAX_GRACE_US)?;
    // The transcript is created (truncated) before the server starts: it must not be
    // mcptape's own stdin (`record -o t -- cat < t` would read back what it writes, without
    // end), the server's program (`record -o ./srv.sh -- ./srv.sh`) nor a file the server is
    // given (`record -o t -- mcptape serve t`, `record -o s.sh -- bash s.sh`).
    let stdin = std::path::PathBuf::from("/dev/stdin");
    let server = super::server_files(&args.command);
    super::refuse_overwrite(
        "-o",
        &args.out.output,
        std::iter::once(&stdin).chain(&server),
    )?;
    let redactor = redactor(args)?;
    let (server, redaction) = stdio_server(&redactor, &args.command);
    let sink = args.out.sink(
        "record",
        Transport::Stdio,
        server,
        redaction,
        redactor.clone(),
    )?;
    let opts = StdioOptions {
        command: args.command.clone(),
        grace,
        term_grace,
    };
    // The proxy forwards SIGINT/SIGTERM/SIGHUP to the server and ends the session (the client
    // side stops, the server's stdin is closed, grace, SIGTERM, SIGKILL for a server the signal
    // did not end), with the server's status (a transparent proxy: a host's SIGTERM ending a
    // server that exits 0 gets 0). An interruption (SIGINT, Ctrl-C) exits 130, as bench and
    // verify do, even when the server handled it and exited 0; the exit record has the
    // server's code and the signal (`{"code":0,"signal":2}`).
    let got = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let flag = got.clone();
    let mut signals = super::Signals::install();
    let listener = tokio::spawn(async move {
        let (_, code) = signals.recv().await;
        flag.store(code, std::sync::atomic::Ordering::SeqCst);
    });
    let exit = run_stdio_proxy(opts, sink.clone()).await;
    // The server's exit follows the forwarded signal; let the listener record it first.
    tokio::task::yield_now().await;
    listener.abort();
    // A transcript that failed says so first (it ended the session); then the proxy's error.
    sink.finish()?;
    warn_secrets_dropped("record", &redactor);
    let exit = exit?;
    // The proxy says which signal it forwarded (2: SIGINT; its exit record names it too); the
    // listener covers one that came before the proxy listened.
    let interrupted =
        got.load(std::sync::atomic::Ordering::SeqCst) == 130 || exit.forwarded == Some(2);
    Ok(ExitCode::from(if interrupted {
        130
    } else {
        exit.proxy_exit_code()
    }))
}

async fn run_http(
    args: &Args,
    listen: std::net::SocketAddr,
    upstream: String,
) -> anyhow::Result<ExitCode> {
    use mcptape_record::http::{HttpProxy, Upstream};
    let duration = args
        .duration
        .as_deref()
        .map(|d| super::flag_duration("--duration", d, MAX_RECORD_DURATION_US))
        .transpose()?;
    if let Some(d) = &args.duration {
        // As `bench --max-phase 0`: a recording that stops before it starts is refused.
        anyhow::ensure!(
            duration.is_some_and(|t| !t.is_zero()),
            "--duration {d} must be longer than 0 (without --duration the proxy runs until SIGINT/SIGTERM)"
        );
    }
    let redactor = redactor(args)?;
    // Checked before the transcript file is created: a rejected run leaves no file.
    mcptape_record::http::check_loopback(listen)?;
    super::refuse_overwrite::<std::path::Path>("-o", &args.out.output, [])?;
    let up = Upstream::parse(&upstream)?;
    let (server, redaction) = http_server(&redactor, &upstream);
    let sink = args.out.sink(
        "record",
        Transport::Http,
        server,
        redaction,
        redactor.clone(),
    )?;
    let mut proxy = HttpProxy::bind(listen, up, sink.clone(), redactor.clone()).await?;
    proxy.allow_origins(&args.allow_origin);
    let addr = proxy.local_addr()?;
    // The signal that stopped the proxy, if one did. SIGINT (Ctrl-C) and SIGHUP interrupt the
    // recording: mcptape exits 128 + the number (130, 129), as bench and verify do. SIGTERM is
    // the proxy's documented graceful stop (scripts `kill -TERM` it when their client is
    // done) and exits 0, as the end of --duration does.
    // The handlers are installed before the line below is printed: a script that signals as
    // soon as it reads it must not kill mcptape with the default disposition.
    let stopped_by = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let stopped = stopped_by.clone();
    let mut signals = super::Signals::install();
    // Tests and scripts read this line to learn the port when --listen used port 0.
    // The upstream's credentials are redacted here even with --no-redact: stderr
    // ends up in CI logs.
    eprintln!(
        "mcptape: recording http://{addr} -> {}",
        Redactor::new().url(&upstream)
    );
    let shutdown = async move {
        let timer = async move {
            match duration {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        let code = tokio::select! {
            (_, code) = signals.recv() => code,
            () = timer => 0,
        };
        let code = if code == 143 { 0 } else { code };
        stopped.store(code, std::sync::atomic::Ordering::SeqCst);
    };
    let exchanges = proxy.run(shutdown).await?;
    let records = sink.finish()?;
    warn_secrets_dropped("record", &redactor);
    let code = stopped_by.load(std::sync::atomic::Ordering::SeqCst);
    let by = match code {
        130 => " (interrupted by SIGINT)",
        129 => " (interrupted by SIGHUP)",
        _ => "",
    };
    eprintln!(
        "mcptape: {exchanges} HTTP exchanges, {records} records -> {}{by}",
        args.out.output.display()
    );
    Ok(ExitCode::from(code))
}

/// The transcript header's `server` and `redaction` of a stdio server run as `command`
/// (`record -- CMD`, `crawl -- CMD`): the argv as `redactor` stores it (credential values
/// redacted, this machine's directories folded, [`machine_dirs`]), and what was redacted
/// (enabled, the `--redact-json` pointers, the argv positions; no header rules, stdio has no
/// headers).
pub(crate) fn stdio_server(redactor: &Redactor, command: &[String]) -> (ServerSpec, Redaction) {
    let (cwd, home) = machine_dirs();
    let argv = redactor.argv(command, cwd.as_deref(), home.as_deref());
    let redaction = Redaction {
        enabled: redactor.enabled,
        json_pointers: redactor.summary().json_pointers,
        ..Redaction::default()
    }
    .with_argv(&argv);
    let server = ServerSpec {
        command: Some(argv.argv),
        url: None,
    };
    (server, redaction)
}

/// The transcript header's `server` and `redaction` of a Streamable HTTP server at `url`
/// (`record --target-url`, `crawl --target-url`): the URL with its credentials redacted, and
/// the redactor's whole summary.
pub(crate) fn http_server(redactor: &Redactor, url: &str) -> (ServerSpec, Redaction) {
    let server = ServerSpec {
        command: None,
        url: Some(redactor.url(url).into_owned()),
    };
    (server, redactor.summary())
}

/// Environment variables whose names hold a credential word but whose values are no
/// secret (`PWD` is the working directory, folded to `.` instead). Values that are
/// absolute paths (`SSL_CERT_FILE=/etc/ssl/cert.pem`) are not taken either: the file
/// may hold a secret, its path does not, and directories are folded.
const NOT_SECRET_ENV: &[&str] = &["PWD", "OLDPWD"];

/// The redactor of `record`'s `--no-redact`, `--redact-header`, `--keep-header`,
/// `--redact-json` ([`flag_redactor`]).
fn redactor(args: &Args) -> anyhow::Result<Redactor> {
    flag_redactor(
        args.no_redact,
        &RedactRules {
            redact_headers: args.redact_header.clone(),
            keep_headers: args.keep_header.clone(),
            json_pointers: args.redact_json.clone(),
        },
    )
}

/// The redactor of a recording command's flags (`record`, `crawl`): disabled by
/// `--no-redact`, else redacting by `rules`; either way folding this machine's directories
/// ([`machine_dir_spellings`]) and knowing the values of the credential-named environment
/// variables the server inherits (servers print their config).
///
/// Errors: a rule `Redactor::with_rules` refuses ([`mcptape_transcript::redact::RedactRuleError`]:
/// a header name that is no RFC 9110 field name or is both redacted and kept, a bad
/// `--redact-json` pointer, more than `MAX_REDACT_RULES` rules).
pub(crate) fn flag_redactor(no_redact: bool, rules: &RedactRules) -> anyhow::Result<Redactor> {
    let r = if no_redact {
        Redactor::disabled()
    } else {
        Redactor::with_rules(rules)?
    };
    for (k, v) in std::env::vars_os() {
        if let (Some(k), Some(v)) = (k.to_str(), v.to_str())
            && mcptape_transcript::redact::is_credential_name(k)
            && !NOT_SECRET_ENV.contains(&k)
            && !v.starts_with('/')
        {
            r.note(v);
        }
    }
    Ok(r.with_dirs(machine_dir_spellings()))
}

/// Says on stderr, as `mcptape CMD: warning: …`, how many redacted values came past
/// `MAX_ECHO_SECRETS` (redacted where a rule found them, but not looked for elsewhere in the
/// transcript: an echo of one may be in the clear); nothing when none did.
pub(crate) fn warn_secrets_dropped(cmd: &str, redactor: &Redactor) {
    let n = redactor.secrets_dropped();
    if n > 0 {
        eprintln!(
            "mcptape {cmd}: warning: {n} redacted value(s) came past the {} remembered (MAX_ECHO_SECRETS): each was redacted where a rule found it but not looked for elsewhere in the transcript; read it before sharing it",
            mcptape_transcript::redact::MAX_ECHO_SECRETS
        );
    }
}

/// The working, temporary and home directories of this machine, each as given and
/// canonical (a symlinked `$HOME` or `/tmp` folds under either spelling); the temporary
/// ones are `$TMPDIR` (or `/tmp`), `/tmp`, `/var/tmp` and `/dev/shm`.
pub(crate) fn machine_dir_spellings() -> MachineDirs {
    let spellings = |dirs: Vec<std::path::PathBuf>| -> Vec<String> {
        let mut out = Vec::new();
        for d in dirs {
            for p in [Some(d.clone()), std::fs::canonicalize(&d).ok()]
                .into_iter()
                .flatten()
            {
                if let Some(s) = p.to_str()
                    && !out.iter().any(|o: &String| o == s)
                {
                    out.push(s.to_owned());
                }
            }
        }
        out
    };
    let (cwd, home) = machine_dirs();
    MachineDirs {
        cwd: spellings(cwd.into_iter().map(Into::into).collect()),
        tmp: spellings(vec![
            std::env::temp_dir(),
            "/tmp".into(),
            "/var/tmp".into(),
            "/dev/shm".into(),
        ]),
        home: spellings(home.into_iter().map(Into::into).collect()),
    }
}

/// The working directory and `$HOME` of this machine, for folding the
/// absolute paths of a server argv out of the transcript header.
pub(crate) fn machine_dirs() -> (Option<String>, Option<String>) {
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|d| d.to_str().map(str::to_owned));
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    (cwd, home)
}
