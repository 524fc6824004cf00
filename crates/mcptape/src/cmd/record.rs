//! `mcptape record`: record a real MCP session.
//!
//! * stdio: `mcptape record -o FILE [--no-redact] -- CMD ARGS...` — a host
//!   launches this in place of the server; bytes pass through unchanged.
//! * HTTP: `mcptape record -o FILE --listen 127.0.0.1:PORT --upstream URL` —
//!   a Streamable HTTP reverse proxy; point the client at `http://LISTEN/<path>`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcptape_record::TranscriptSink;
use mcptape_record::stdio::{StdioOptions, run_stdio_proxy};
use mcptape_transcript::{ServerSpec, Transport};

/// Arguments of `mcptape record`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript file to write (JSON Lines; truncated if it exists).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Keep credentials (Authorization, Cookie, token query parameters) in the transcript.
    #[arg(long)]
    pub no_redact: bool,
    /// Listen address of the HTTP reverse proxy: loopback only (127.0.0.1 or ::1, e.g. 127.0.0.1:8931).
    #[arg(
        long,
        value_name = "ADDR",
        requires = "upstream",
        conflicts_with = "command"
    )]
    pub listen: Option<std::net::SocketAddr>,
    /// Upstream Streamable HTTP server URL (e.g. http://127.0.0.1:3001/mcp).
    #[arg(long, value_name = "URL", requires = "listen")]
    pub upstream: Option<String>,
    /// Time the server gets to exit after the client closed stdin, in ms (then SIGTERM).
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub grace_ms: u64,
    /// Time between SIGTERM and SIGKILL, in ms.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub term_grace_ms: u64,
    /// Stop the HTTP proxy after this many seconds (default: run until SIGINT/SIGTERM).
    #[arg(long, value_name = "SECS")]
    pub duration_secs: Option<u64>,
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
        "give a server command after `--`, or --listen and --upstream"
    );
    let sink = Arc::new(TranscriptSink::create(
        &args.output,
        Transport::Stdio,
        ServerSpec {
            command: Some(args.command.clone()),
            url: None,
        },
    )?);
    let opts = StdioOptions {
        command: args.command.clone(),
        grace: Duration::from_millis(args.grace_ms),
        term_grace: Duration::from_millis(args.term_grace_ms),
    };
    let exit = run_stdio_proxy(opts, sink.clone()).await?;
    sink.finish()?;
    Ok(ExitCode::from(exit.proxy_exit_code()))
}

async fn run_http(
    args: &Args,
    listen: std::net::SocketAddr,
    upstream: String,
) -> anyhow::Result<ExitCode> {
    use mcptape_record::http::{HttpProxy, Upstream};
    use mcptape_transcript::Redactor;
    let redactor = if args.no_redact {
        Redactor::disabled()
    } else {
        Redactor::new()
    };
    // Checked before the transcript file is created: a rejected run leaves no file.
    mcptape_record::http::check_loopback(listen)?;
    let up = Upstream::parse(&upstream)?;
    let sink = Arc::new(TranscriptSink::create(
        &args.output,
        Transport::Http,
        ServerSpec {
            command: None,
            url: Some(redactor.url(&upstream).into_owned()),
        },
    )?);
    let proxy = HttpProxy::bind(listen, up, sink.clone(), redactor).await?;
    let addr = proxy.local_addr()?;
    // Tests and scripts read this line to learn the port when --listen used port 0.
    eprintln!("mcptape: recording http://{addr} -> {upstream}");
    let duration = args.duration_secs.map(Duration::from_secs);
    let shutdown = async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).ok();
        let term = async move {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        let timer = async move {
            match duration {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term => {}
            _ = timer => {}
        }
    };
    let exchanges = proxy.run(shutdown).await?;
    let records = sink.finish()?;
    eprintln!(
        "mcptape: {exchanges} HTTP exchanges, {records} records -> {}",
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
