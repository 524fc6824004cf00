//! `mcptape serve TRANSCRIPT [--stdio | --listen 127.0.0.1:PORT] [--latency MODEL] [--fault SPEC]
//! [--seed N] [--root URI] [--unrecorded answer|error] [--allow-origin ORIGIN] [--metrics ADDR]`: play the
//! recorded server of a transcript for a real client.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcptape_replay::latency::{FaultSpec, LatencyModel, MAX_DELAY_US};
use mcptape_replay::serve::{Server, StreamEnd, Unrecorded, serve_stdio};

/// `--unrecorded`: what to do with a request the recording has no answer for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UnrecordedArg {
    /// Answer the housekeeping the recorded capabilities imply, as the spec defines it.
    Answer,
    /// Strict: -32601 for any unrecorded method (ping still answered), "not recorded" reads.
    Error,
}
use mcptape_replay::error::ReplayErrorKind;
use mcptape_replay::tape::{Tape, TapeBytes};

/// Arguments of `mcptape serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript(s) to serve (JSON Lines, as written by `mcptape record`/`crawl`); several, or a
    /// directory (its `*.jsonl`, by name), are answered from the union of their exchanges (e.g. the
    /// probe and the session a TypeScript SDK v2 client records as two transcripts).
    #[arg(required = true, num_args = 1..)]
    pub transcript: Vec<PathBuf>,
    /// Serve newline-delimited JSON-RPC on stdin/stdout (MCP stdio transport; the default).
    #[arg(long, conflicts_with = "listen")]
    pub stdio: bool,
    /// Serve Streamable HTTP on this loopback address (e.g. 127.0.0.1:8931), path `/mcp`.
    #[arg(long, value_name = "ADDR", value_parser = super::socket_addr)]
    pub listen: Option<SocketAddr>,
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    /// Root every resources/read uri must resolve inside (repeatable). Default: per
    /// scheme://authority, the common directory of the recorded read uris.
    #[arg(long, value_name = "URI")]
    pub root: Vec<String>,
    /// Write the session's counters and delay quantiles (model, scheduled, achieved, lateness =
    /// achieved - scheduled with its precision flag, engine time, capacity; over stdio the
    /// replies of 1 MiB or more spliced from the mapped transcript, those written instead
    /// because splice(2) was refused, and a refused stdout pipe resize) as JSON to FILE on
    /// exit, a stop by SIGINT (exit 130) or SIGTERM (exit 0 over HTTP, 143 over stdio) included
    /// (checked writable before serving).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// As --stats, to the inherited file descriptor N (a pipe; opened as /dev/fd/N before
    /// serving): how `bench` takes its embedded server's stats back, with no file left behind.
    #[arg(
        long = "stats-fd",
        value_name = "N",
        conflicts_with = "stats",
        hide = true
    )]
    pub stats_fd: Option<u32>,
    /// Requests the recording has no answer for. `answer` (default): ping and logging/setLevel
    /// -> {}, notifications accepted, a list never recorded -> an empty page when its capability is
    /// advertised, a read of an unrecorded uri -> "Resource not found" with data.uri (-32602, or
    /// -32002 for a 2025 recording without a recorded not-found), and the other era's handshake
    /// (initialize on a 2026-07-28 recording, server/discover on a 2025 one) built from the recorded
    /// one; each counted per method in --stats ("synthesized", "adapted"). `error`: -32601 for any
    /// unrecorded method but ping, -32602 "no recorded response" for reads.
    #[arg(long, value_enum, value_name = "POLICY", default_value = "answer")]
    pub unrecorded: UnrecordedArg,
    /// With --listen, also accept requests with this Origin (repeatable, e.g.
    /// `https://inspector.example`). Loopback origins (http(s)://127.0.0.1, localhost, `[::1]`, any
    /// port) and no Origin are always accepted; any other Origin, or a Host that is not the bound
    /// address, gets 403 (DNS rebinding guard).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    pub allow_origin: Vec<String>,
    /// Expose live metrics for Prometheus at http://ADDR/metrics (loopback only, e.g.
    /// 127.0.0.1:9464; OpenMetrics text): requests by method and outcome, served delay and
    /// lateness histograms (seconds), synthesized answers, sessions, requests in flight.
    /// Works with --stdio and --listen.
    #[arg(long, value_name = "ADDR", value_parser = super::socket_addr)]
    pub metrics: Option<SocketAddr>,
}

/// `--latency`, `--fault`, `--seed` and `--timer-priority`: how the recorded server's replies
/// are scheduled, in `serve` and in `bench`'s embedded server (which is `mcptape serve`;
/// `bench` sets its own `--latency` default), flattened into both commands' `Args`.
#[derive(Debug, clap::Args)]
pub struct ScheduleArgs {
    /// Server-side latency model: recorded, fixed:12ms, lognormal:p50=12ms,p99=40ms,
    /// scale:2.0, empirical:FILE.hlog.
    #[arg(long, value_name = "MODEL", default_value = "recorded")]
    pub latency: String,
    /// Fault injection, repeatable or comma-separated: stall=0.5%, error=-32603@1%,
    /// drop-connection@0.1%.
    #[arg(long, value_name = "SPEC")]
    pub fault: Vec<String>,
    /// Seed of the latency/fault schedule (same seed, same schedule).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Scheduling of the timer thread that writes delayed replies. `auto` (default): ask for
    /// SCHED_FIFO priority 1 and keep the normal policy when the OS refuses (no CAP_SYS_NICE);
    /// `realtime`: SCHED_FIFO or refuse to start; `normal`: never ask. The policy got is in
    /// --stats (timerPolicy) and the bench report.
    #[arg(
        long = "timer-priority",
        value_enum,
        value_name = "P",
        default_value = "auto"
    )]
    pub timer_priority: TimerPriorityArg,
}

/// `--timer-priority`: see [`mcptape_replay::schedule::TimerPriority`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TimerPriorityArg {
    /// SCHED_FIFO priority 1 when the OS allows it, else the normal policy.
    Auto,
    /// SCHED_FIFO priority 1, or refuse to start.
    Realtime,
    /// The normal policy (SCHED_OTHER).
    Normal,
}

impl From<TimerPriorityArg> for mcptape_replay::schedule::TimerPriority {
    fn from(a: TimerPriorityArg) -> Self {
        match a {
            TimerPriorityArg::Auto => Self::Auto,
            TimerPriorityArg::Realtime => Self::Realtime,
            TimerPriorityArg::Normal => Self::Normal,
        }
    }
}

/// The warning for a transcript whose last line was cut: `T.jsonl: line 17 (2000 bytes from
/// byte 1834) is cut and was dropped: …` (`serve`, `bench` and `verify`).
pub fn cut_note(path: &Path, d: &mcptape_transcript::reader::Dropped) -> String {
    format!(
        "{}: line {} ({} bytes from byte {}) is cut and was dropped: {}",
        path.display(),
        d.line,
        d.bytes,
        d.offset,
        d.reason
    )
}

/// Reads a transcript file into a replay tape, with a note when the file was cut
/// mid-line (the reader dropped its unterminated last line): `line 17 (2000 bytes
/// from byte 1834) is cut: …`. `serve`, `bench` and `verify` print the note as a warning
/// (and the tape's recorded batches, not replayed: [`batch_notes`]).
pub fn load_tape_noting_cut(path: &Path) -> anyhow::Result<(Tape, Option<String>)> {
    let bytes = mcptape_transcript::file::read_regular(path)?;
    let t = mcptape_transcript::reader::read(&bytes)
        .with_context(|| format!("parsing {}", path.display()))?;
    let cut = t.dropped.as_ref().map(|d| cut_note(path, d));
    let tape =
        Tape::from_transcript(&t).with_context(|| format!("replaying {}", path.display()))?;
    Ok((tape, cut))
}

/// One warning per recorded JSON-RPC batch of `tape` (not served:
/// [`mcptape_replay::tape::SkippedBatch`]), the first
/// [`mcptape_replay::tape::MAX_BATCHES_NOTED`], then `and N more batches`.
pub fn batch_notes<'a>(path: &'a Path, tape: &'a Tape) -> impl Iterator<Item = String> + 'a {
    let more = (tape.batches_more > 0).then(|| {
        format!(
            "{}: and {} more batches, not served",
            path.display(),
            tape.batches_more
        )
    });
    tape.batches
        .iter()
        .map(move |b| format!("{}: {b}", path.display()))
        .chain(more)
}

/// The tape `serve` plays
/// ([`ReplyBodies::Served`](mcptape_replay::tape::ReplyBodies::Served): every reply
/// byte-exact, as values only the handshake and `tools/list` replies, an error's code beside its
/// bytes), and the notes about what is wrong in the recording, each its own warning (`serve` and
/// `bench` print them): a cut last line ([`cut_note`]), then one per recorded read result with a
/// contents entry that has both text and blob, or neither (`T.jsonl: line 3: the recorded reply
/// to resources/read id 7 has …: replayed as recorded (…)`), replayed as recorded, then one per
/// recorded JSON-RPC batch, not served ([`batch_notes`]). The file is
/// opened through the one file-opening policy and read once, or mapped when it is big
/// ([`TapeBytes::of_file`]); the tape is built in one streamed pass over its lines
/// ([`Tape::served`]) and every recorded reply is a range of the file's bytes, so a 160 MB reply
/// costs the server the file's bytes once, and a transcript of millions of messages its index.
pub fn load_served_tape(path: &Path) -> anyhow::Result<(Tape, Vec<String>)> {
    load_tape(path, false)
}

/// The tape `bench`'s recorded client sends from: [`load_served_tape`]'s, with the pages of a
/// mapped transcript released once it is built ([`TapeBytes::release`]). The client reads of a
/// recorded reply only its length and error code, never its bytes; its pages left resident by
/// the pass would double the client's memory for a big reply (a 160 MB reply: 316 MB peak).
pub fn load_client_tape(path: &Path) -> anyhow::Result<(Tape, Vec<String>)> {
    load_tape(path, true)
}

/// [`load_served_tape`], releasing a mapped file's pages after the pass when `release`.
fn load_tape(path: &Path, release: bool) -> anyhow::Result<(Tape, Vec<String>)> {
    let (file, meta) = mcptape_transcript::file::open_regular(path)?;
    let bytes = TapeBytes::of_file(file, meta.len())
        .with_context(|| format!("reading {}", path.display()))?;
    let bytes = Arc::new(bytes);
    let served = Tape::served(&bytes).map_err(|e| {
        let what = match e.kind() {
            ReplayErrorKind::Transcript(_) => "parsing",
            _ => "replaying",
        };
        anyhow::Error::new(e).context(format!("{what} {}", path.display()))
    })?;
    if release {
        bytes.release();
    }
    let notes = served.dropped.iter().map(|d| cut_note(path, d));
    // Replayed as recorded, said once per exchange.
    let bad = served
        .bad_contents
        .iter()
        .map(|b| format!("{}: {b}", path.display()));
    // Capped (`MAX_BAD_CONTENTS_NOTED`): the rest in one line.
    let more = (served.bad_contents_more > 0).then(|| {
        format!(
            "{}: and {} more replies with such entries",
            path.display(),
            served.bad_contents_more
        )
    });
    let batches: Vec<String> = batch_notes(path, &served.tape).collect();
    Ok((
        served.tape,
        notes.chain(bad).chain(more).chain(batches).collect(),
    ))
}

/// Says, once per transcript, that latency `recorded` (or `scale:F`) replays some of
/// `tape`'s recorded server delays capped at [`MAX_DELAY_US`] (60 s: every model's cap,
/// [`LatencyModel::sample_us_for`]): how many, and the longest (its request's record,
/// method and delay in µs as recorded). `None` when none is capped or the model does not
/// replay the recorded delays.
fn capped_delays_note(path: &Path, tape: &Tape, model: &LatencyModel) -> Option<String> {
    let factor = match model {
        LatencyModel::Recorded => 1.0,
        LatencyModel::Scale { factor } => *factor,
        _ => return None,
    };
    let capped =
        |e: &&mcptape_replay::tape::Exchange| e.delay_us as f64 * factor > MAX_DELAY_US as f64;
    let n = tape.exchanges.iter().filter(capped).count();
    let longest = tape
        .exchanges
        .iter()
        .filter(capped)
        .max_by_key(|e| e.delay_us)?;
    let req = tape.request(longest);
    Some(format!(
        "{}: {n} recorded server delay{} above MAX_DELAY_US ({MAX_DELAY_US} µs) under latency \
         {model}: replayed capped at it; the longest, {} µs, answers {} at {}",
        path.display(),
        if n == 1 { "" } else { "s" },
        longest.delay_us,
        req.method,
        mcptape_replay::error::record_label(req.record),
    ))
}

/// Parses repeated `--fault` flags into one spec.
pub fn parse_faults(flags: &[String]) -> anyhow::Result<FaultSpec> {
    let mut faults = FaultSpec::default();
    for f in flags {
        faults.merge(FaultSpec::parse(f)?)?;
    }
    Ok(faults)
}

/// Most transcripts one `serve` answers from (given, or found in the directories given).
pub const MAX_TRANSCRIPTS: usize = 1000;

/// The transcript files of `serve TRANSCRIPT...`: each path as given, a
/// directory replaced by its `*.jsonl` files sorted by name.
///
/// Errors: a directory that cannot be listed or holds no `*.jsonl`; more
/// than [`MAX_TRANSCRIPTS`] files.
pub fn transcript_files(given: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in given {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(p)
            .with_context(|| format!("listing {}", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        anyhow::ensure!(
            !found.is_empty(),
            "{}: a directory with no *.jsonl transcript",
            p.display()
        );
        found.sort();
        out.extend(found);
    }
    anyhow::ensure!(
        out.len() <= MAX_TRANSCRIPTS,
        "{} transcripts: serve answers from at most {MAX_TRANSCRIPTS} (MAX_TRANSCRIPTS)",
        out.len()
    );
    Ok(out)
}

/// Runs `mcptape serve`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::warn_if_debug_build("serve");
    if let Some(addr) = args.metrics {
        // Refused before anything is loaded: the metrics say what this machine serves.
        anyhow::ensure!(
            addr.ip().is_loopback(),
            "--metrics must be a loopback address (127.0.0.1, [::1]), got {addr}"
        );
    }
    // Refused before anything is loaded: with no standard output a stdio session could
    // answer nothing (it was served, every reply into /dev/null, and exited 0).
    #[cfg(unix)]
    anyhow::ensure!(
        args.listen.is_some() || !stdout_was_closed(),
        "standard output (fd 1) is closed: stdio serve has nowhere to write its replies \
         (give the client a pipe, or serve over HTTP with --listen)"
    );
    let paths = transcript_files(&args.transcript)?;
    let mut tapes = Vec::with_capacity(paths.len());
    for path in &paths {
        let (tape, notes) = load_served_tape(path)?;
        for n in notes {
            eprintln!("mcptape serve: warning: {n}");
        }
        if tape.exchanges.is_empty() {
            // Said at start, not served silently: every request will get the
            // unrecorded policy's answer.
            eprintln!(
                "mcptape serve: warning: {} holds no recorded exchange (a header and no request \
                 answered){}",
                path.display(),
                if paths.len() == 1 {
                    ": every request gets the --unrecorded answer"
                } else {
                    ""
                }
            );
        }
        tapes.push(tape);
    }
    let model = LatencyModel::parse(&args.schedule.latency)?;
    for (path, tape) in paths.iter().zip(&tapes) {
        if let Some(n) = capped_delays_note(path, tape, &model) {
            eprintln!("mcptape serve: warning: {n}");
        }
    }
    let tape = Tape::union(tapes).context("no transcript to serve")?;
    let faults = parse_faults(&args.schedule.fault)?;
    if let Some(path) = &args.stats {
        // Fail before the session, not after it: the stats would be lost. Never over the
        // transcript, never a FIFO (the open would block until a reader comes).
        super::refuse_overwrite("--stats", path, &paths)?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("--stats {}: cannot write this file", path.display()))?;
    }
    // `--stats-fd N`: opened now (a descriptor that is not open fails before serving), written
    // on exit as --stats is.
    let mut stats_fd = match args.stats_fd {
        Some(n) => Some(
            std::fs::OpenOptions::new()
                .write(true)
                .open(format!("/dev/fd/{n}"))
                .with_context(|| format!("--stats-fd {n}: not an open file descriptor"))?,
        ),
        None => None,
    };
    let policy = match args.unrecorded {
        UnrecordedArg::Answer => Unrecorded::Answer,
        UnrecordedArg::Error => Unrecorded::Error,
    };
    let mut server =
        Server::new(tape, model, faults, args.schedule.seed, &args.root)?.with_unrecorded(policy);
    let metrics = args.metrics.map(|_| {
        Arc::new(mcptape_replay::metrics::ServeMetrics::new(
            server.recorded_methods(),
        ))
    });
    if let Some(m) = &metrics {
        server = server.with_metrics(m.clone());
    }
    let server = Arc::new(server);
    let (_, timer) =
        mcptape_replay::schedule::TimerThread::start(args.schedule.timer_priority.into());
    anyhow::ensure!(
        timer.realtime || args.schedule.timer_priority != TimerPriorityArg::Realtime,
        "--timer-priority realtime: {}",
        timer.description
    );
    let rt = super::runtime()?;
    let result = rt.block_on(async {
        if let (Some(addr), Some(m)) = (args.metrics, &metrics) {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("--metrics {addr}: binding"))?;
            eprintln!(
                "mcptape serve: metrics on http://{}{}",
                listener.local_addr()?,
                mcptape_replay::metrics::METRICS_PATH
            );
            // Ends with the runtime (`shutdown_background` below).
            let m = m.clone();
            tokio::spawn(async move {
                if let Err(e) =
                    mcptape_replay::metrics::serve_metrics(m, listener, std::future::pending())
                        .await
                {
                    eprintln!("mcptape serve: warning: --metrics stopped: {e}");
                }
            });
        }
        match args.listen {
            Some(addr) => {
                anyhow::ensure!(
                    addr.ip().is_loopback(),
                    "--listen must be a loopback address, got {addr}"
                );
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("binding {addr}"))?;
                eprintln!(
                    "mcptape serve: listening on http://{}/mcp",
                    listener.local_addr()?
                );
                // Ctrl-C (SIGINT) exits 130, as `record --listen` does and as stdio `serve`;
                // SIGTERM 0 (it exited 0 on both).
                let by = Arc::new(std::sync::atomic::AtomicU8::new(0));
                let seen = by.clone();
                let shutdown = async move {
                    let (_, number) = stop_signal().await;
                    seen.store(number, std::sync::atomic::Ordering::Relaxed);
                };
                mcptape_replay::http::serve_http_allowing(
                    server.clone(),
                    listener,
                    &args.allow_origin,
                    shutdown,
                )
                .await?;
                Ok(match by.load(std::sync::atomic::Ordering::Relaxed) {
                    2 => ExitCode::from(130),
                    _ => ExitCode::SUCCESS,
                })
            }
            None => {
                // Replies go out from the timer thread, one write(2) per line. A host may end
                // a stdio server with SIGTERM (or the user with Ctrl-C): the session stops and
                // `--stats` is still written (it was left empty: the signal killed the
                // process); the status stays the shell's for that signal (143, 130).
                let end = tokio::select! {
                    end = serve_stdio(server.clone()) => end?,
                    (name, number) = stop_signal() => {
                        eprintln!("mcptape serve: {name}: stopping");
                        return Ok(ExitCode::from(128 + number));
                    }
                };
                Ok(match end {
                    // The client closed its end of our stdout: the session is over, as a
                    // closed pipe ends `record` or a printing command (quietly, 0).
                    StreamEnd::ClientGone => ExitCode::SUCCESS,
                    StreamEnd::Dropped => ExitCode::from(3),
                    StreamEnd::Crashed { code, signal } => {
                        // The recorded server died here: so does the replay,
                        // with its status (a signal as the shell shows it, 128+N).
                        let status = code.or(signal.map(|s| 128 + s)).unwrap_or(1);
                        let on = server
                            .tape()
                            .crash
                            .as_ref()
                            .and_then(|c| server.tape().client.get(c.request))
                            .map(|r| {
                                let uri = r.params.get("uri").and_then(|u| u.as_str());
                                match uri {
                                    Some(u) => format!("{} {u}", r.method),
                                    None => r.method.to_string(),
                                }
                            })
                            .unwrap_or_default();
                        eprintln!(
                            "mcptape serve: the recorded server died on {on} ({}): \
                             replaying its crash, exit status {status}",
                            match (code, signal) {
                                (Some(c), Some(s)) => format!("exit code {c} after signal {s}"),
                                (None, Some(s)) => format!("killed by signal {s}"),
                                (Some(c), None) => format!("exit code {c}"),
                                (None, None) => "no status recorded".to_owned(),
                            }
                        );
                        ExitCode::from((status & 0xff) as u8)
                    }
                    _ => ExitCode::SUCCESS,
                })
            }
        }
    });
    let summary = server.summary();
    for note in summary
        .synthesized_note()
        .into_iter()
        .chain(summary.io_note())
    {
        eprintln!("mcptape serve: {note}");
    }
    if let Some(path) = &args.stats {
        let summary = server.summary();
        std::fs::write(path, serde_json::to_vec_pretty(&summary)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let (Some(n), Some(f)) = (args.stats_fd, stats_fd.as_mut()) {
        use std::io::Write as _;
        let summary = server.summary();
        f.write_all(&serde_json::to_vec_pretty(&summary)?)
            .with_context(|| format!("writing --stats-fd {n}"))?;
    }
    drop(stats_fd);
    // Reads of our own stdin may still sit in a blocking thread: do not wait for them.
    rt.shutdown_background();
    result
}

/// `true` when standard output was closed when mcptape started. The Rust runtime then opens
/// `/dev/null` read-write on fd 1 (std's start-up on Unix fills each of fds 0-2 it finds
/// closed), where a shell's `>/dev/null` and a parent's `Stdio::null()` open it write-only:
/// fd 1 on `/dev/null` opened read-write is that placeholder. Also `true` when fd 1 cannot be
/// asked at all (`EBADF`).
#[cfg(unix)]
fn stdout_was_closed() -> bool {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    let stdout = std::io::stdout();
    let fd = stdout.as_fd();
    let Ok(flags) = fcntl(fd, FcntlArg::F_GETFL) else {
        return true;
    };
    if OFlag::from_bits_truncate(flags) & OFlag::O_ACCMODE != OFlag::O_RDWR {
        return false;
    }
    let on_null = fd
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata());
    match (on_null, std::fs::metadata("/dev/null")) {
        (Ok(out), Ok(null)) => out.file_type().is_char_device() && out.rdev() == null.rdev(),
        _ => false,
    }
}

/// SIGINT or SIGTERM, whichever comes first: its name and number. Never ends when the
/// handlers cannot be installed (the signal then ends the process, as before).
async fn stop_signal() -> (&'static str, u8) {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut int), Ok(mut term)) => tokio::select! {
            _ = int.recv() => ("SIGINT", 2),
            _ = term.recv() => ("SIGTERM", 15),
        },
        _ => std::future::pending().await,
    }
}
