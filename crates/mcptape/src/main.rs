//! `mcptape` — record, replay, check and benchmark MCP `resources/read`
//! transcripts. Fuzzing is not a subcommand: it runs through `cargo fuzz`
//! (`bash fuzz/run.sh [SECONDS] [TARGET...]`).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// Record real MCP transcripts, replay them at controlled latency, check them
/// against the spec, and benchmark the `resources/read` hot paths.
#[derive(Debug, Parser)]
#[command(
    name = "mcptape",
    version,
    about = "Record, replay, check and benchmark MCP resources/read transcripts \
             (fuzzing is not a subcommand: run `bash fuzz/run.sh`, which drives `cargo fuzz`).",
    long_about = "Record real MCP transcripts (record, crawl), replay them at controlled latency \
                  (serve, bench, verify), check them against the spec (check, explain, inspect), \
                  sanitize resource URIs (uri) and benchmark the codec paths (bench-codec).\n\n\
                  Fuzzing is not a subcommand: the fuzz targets live in fuzz/ and run with \
                  `cargo +nightly fuzz run <target>`, or all of them in turn with \
                  `bash fuzz/run.sh [SECONDS] [TARGET...]`.",
    after_long_help = "Conventions of every command:\n\
  Durations: a number and a unit, 5s, 800ms, 250us (only 0 needs none), read by one parser.\n\
  Timeouts: each request waits at most the command's --timeout: bench 5s (each read and the \
handshake; --deadline 800ms bounds a turn), verify 10s, crawl 30s (it reads whole resources). \
record proxies and has none: --grace 2s and --term-grace 2s bound the server's exit.\n\
  Caps (--parallel, --concurrency, --reads, --turns, durations) are stated in each --help and \
refused past them, never clamped.\n\
  Figures from a debug build are ~100x slow: bench, bench-codec and serve warn; use --release."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print every resources/read result entry of an mcptape transcript or of a file of
    /// newline-delimited JSON-RPC messages.
    Inspect(cmd::inspect::Args),
    /// Record a session: stdio proxy (`-- CMD ARGS...`) or Streamable HTTP reverse proxy (`--listen`).
    Record(cmd::record::Args),
    /// Act as a client: handshake, list and read every resource, write a transcript.
    Crawl(cmd::crawl::Args),
    /// Play the recorded server of a transcript for a real client.
    Serve(cmd::serve::Args),
    /// Play the recorded client of a transcript against a target and report p50/p99.
    Bench(cmd::bench::Args),
    /// Merge the latency.hlog logs of several bench runs or machines into one report.
    Merge(cmd::merge::Args),
    /// Replay recorded requests against a live server and diff the responses.
    Verify(cmd::verify::Args),
    /// Run the conformance rules over transcripts.
    Check(cmd::check::Args),
    /// Explain a conformance rule.
    Explain(cmd::explain::Args),
    /// URI template expansion and root sanitizing, for reviewers.
    #[command(subcommand)]
    Uri(cmd::uri::UriCommand),
    /// Export a recording for a load tool (k6) or as a HAR 1.2 log.
    #[command(subcommand)]
    Export(cmd::k6::ExportCommand),
    /// Import a load tool's results (k6 JSON outputs) into the bench report, or a HAR as a transcript.
    #[command(subcommand)]
    Import(cmd::k6::ImportCommand),
}

/// Exit code 2 with a message, not a silent death by SIGBUS, when a file
/// mapped into memory (`check`, `inspect` and `serve` map a transcript of
/// 64 MiB or more) is truncated or replaced by another process while it is
/// read: the kernel signals SIGBUS on the next read of a page past the new
/// end. Nothing of that file is reported (its bytes are gone).
#[cfg(unix)]
#[allow(unsafe_code)]
fn exit_with_a_message_on_sigbus() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    extern "C" fn bus(_: nix::libc::c_int) {
        const MSG: &[u8] = b"mcptape: error: an input file mapped into memory (a transcript of 64 MiB or more) \
was truncated or replaced by another process while it was read (SIGBUS): stopped, nothing reported of it\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe; MSG is static.
        unsafe {
            nix::libc::write(2, MSG.as_ptr().cast(), MSG.len());
            nix::libc::_exit(2);
        }
    }
    let act = SigAction::new(SigHandler::Handler(bus), SaFlags::empty(), SigSet::empty());
    // SAFETY: the handler calls async-signal-safe functions only. Failing to
    // install it leaves the default action (the process dies by the signal).
    let _ = unsafe { sigaction(Signal::SIGBUS, &act) };
}

fn main() -> ExitCode {
    #[cfg(unix)]
    exit_with_a_message_on_sigbus();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::CommandFactory as _;
            // The subcommand named on the command line, if it is one (for the error's hint).
            let first = std::env::args().nth(1);
            let sub = first
                .as_deref()
                .filter(|a| Cli::command().get_subcommands().any(|c| c.get_name() == *a));
            return cmd::clap_exit(&e, sub);
        }
    };
    let result = match cli.command {
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Record(a) => cmd::record::run(a),
        Command::Crawl(a) => cmd::crawl::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Explain(a) => cmd::explain::run(a),
        Command::Uri(a) => cmd::uri::run(a),
        Command::Export(a) => cmd::k6::run_export(a),
        Command::Import(a) => cmd::k6::run_import(a),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mcptape: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
