//! One module per subcommand: each has an `Args` (clap derive) and a `run`.

pub mod baseline;
pub mod bench;
pub mod check;
pub mod crawl;
pub mod explain;
pub mod inspect;
pub mod k6;
pub mod merge;
pub mod progress;
pub mod record;
pub mod serve;
pub mod uri;
pub mod verify;

/// `--format` of the commands that print a report (`inspect`, `crawl`, `verify`; `check` has
/// its own, with junit and sarif besides): one spelling for "print it as JSON" across the
/// commands, `--json` being a hidden alias of `--format json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReportFormat {
    /// Text for people (`text` is accepted too).
    #[default]
    #[value(alias = "text")]
    Human,
    /// The JSON report (camelCase).
    Json,
}

/// `--format` and its hidden alias `--json` of `inspect`, `crawl` and `verify`, one struct
/// flattened into each command's `Args` (`#[command(flatten)]`).
#[derive(Debug, clap::Args)]
pub struct FormatArgs {
    /// Report format: `human` (default) or `json` (camelCase). The one format flag of every
    /// command (`check --format` adds junit and sarif).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "human")]
    pub format: ReportFormat,
    /// Same as `--format json` (the former spelling, kept as a hidden alias).
    #[arg(long, hide = true)]
    pub json: bool,
}

impl FormatArgs {
    /// Whether the report is printed as JSON (`--format json` or `--json`).
    pub fn json(&self) -> bool {
        self.json || self.format == ReportFormat::Json
    }
}

/// `--target-cmd` and `--target-url` of `bench` and `verify`: the live server the recorded
/// client is played against, flattened into both commands' `Args` (`verify` requires one).
#[derive(Debug, clap::Args)]
pub struct TargetArgs {
    /// A live stdio server command (run with `sh -c`).
    #[arg(long, value_name = "CMD", conflicts_with = "target_url")]
    pub target_cmd: Option<String>,
    /// A live Streamable HTTP endpoint on loopback (host 127.0.0.0/8, ::1 or localhost; any
    /// other host is refused before connecting), e.g. http://127.0.0.1:3001/mcp.
    #[arg(long, value_name = "URL")]
    pub target_url: Option<String>,
}

impl TargetArgs {
    /// Whether a live target is named (`bench` without one plays its embedded server).
    pub fn is_live(&self) -> bool {
        self.target_cmd.is_some() || self.target_url.is_some()
    }

    /// Refuses a `--target-url` whose host is not loopback
    /// ([`mcptape_replay::target::check_loopback_url`]), before anything starts.
    ///
    /// Errors: `--target-url: …` naming the host.
    pub fn check_loopback(&self) -> anyhow::Result<()> {
        use anyhow::Context as _;
        match &self.target_url {
            Some(url) => {
                Ok(mcptape_replay::target::check_loopback_url(url).context("--target-url")?)
            }
            None => Ok(()),
        }
    }
}

/// `--listen`/`--metrics ADDR`: an IP address and port (`127.0.0.1:8931`, `[::1]:8931`). A host
/// name is not looked up; `localhost:PORT` is refused saying to write `127.0.0.1:PORT` (the
/// listeners are loopback-only, checked after parsing).
///
/// Errors: the address is not `IP:PORT`.
pub(crate) fn socket_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    s.parse().map_err(|e| match s.rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => {
            format!("{e}: a host name is not looked up; write 127.0.0.1:{port} (or [::1]:{port})")
        }
        _ => format!("{e}: expected IP:PORT, e.g. 127.0.0.1:8931"),
    })
}

/// The IO shell's tokio runtime, shared by `record`, `crawl`, `serve`, `bench` and `verify`:
/// multi-threaded with 2 workers (the machines mcptape is measured on have 2 cores), all
/// drivers (IO, time) enabled.
///
/// Errors: the OS refused the runtime's threads or its IO driver.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context as _;
    // Every command that runs one holds sockets or child pipes: one descriptor each, and a
    // soft limit of 1,024 is soon reached by `serve --listen` or `record --listen` clients.
    let _ = mcptape_transport::listen::raise_open_files_limit();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the tokio runtime")
}

/// Runs `fut` on a [`runtime`] of its own and gives the tasks still running when it ends (a
/// target's readers and reaper) 1 s to end: `bench` and `verify`.
///
/// Errors: the runtime's ([`runtime`]), then `fut`'s.
pub(crate) fn block_on<T>(
    fut: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let rt = runtime()?;
    let r = rt.block_on(fut);
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    r
}

/// Parses the duration flag `flag` (`--timeout`, value `5s`, `800ms`, `250us`, or `0`) into a
/// [`std::time::Duration`], at most `max_us` µs: the one duration parser of every command
/// ([`mcptape_replay::config::duration_us`]).
///
/// Errors: bad syntax or above the limit; the message names the flag, the value as typed and
/// the limit in the unit typed (`--timeout 61s: 61s is above the limit: at most 60s`).
pub(crate) fn flag_duration(
    flag: &'static str,
    s: &str,
    max_us: u64,
) -> anyhow::Result<std::time::Duration> {
    Ok(std::time::Duration::from_micros(
        mcptape_replay::config::duration_us(flag, s, max_us)?,
    ))
}

/// [`flag_duration`] of a flag that must be above 0 (`crawl --timeout`, `verify --max-time`).
///
/// Errors: [`flag_duration`]'s, and `0` (any unit): `--max-time 0ms: must be above 0`.
pub(crate) fn flag_duration_above_0(
    flag: &'static str,
    s: &str,
    max_us: u64,
) -> anyhow::Result<std::time::Duration> {
    let d = flag_duration(flag, s, max_us)?;
    anyhow::ensure!(!d.is_zero(), "{flag} {s}: must be above 0");
    Ok(d)
}

/// Refuses a count flag past its cap, naming the flag and the cap (`--reads 10000001: at most
/// 10000000`): caps are refused, never clamped.
pub(crate) fn flag_capped(flag: &'static str, v: u64, lo: u64, hi: u64) -> anyhow::Result<u64> {
    anyhow::ensure!(
        (lo..=hi).contains(&v),
        "{flag} {v}: must be {lo}..={hi} (at most {hi})"
    );
    Ok(v)
}

/// The line `bench` and `serve` print on stderr when this binary was built
/// without optimizations (`cfg!(debug_assertions)`): a debug build measures ~100× slower.
pub(crate) const DEBUG_BUILD_WARNING: &str = "warning: this mcptape is a debug build (no optimizations): latency and throughput figures are ~100x slower than a release build; build with `cargo build --release` (or `cargo run --release -- …`)";

/// Prints [`DEBUG_BUILD_WARNING`] on stderr, prefixed by the command name, in a debug build.
pub(crate) fn warn_if_debug_build(command: &str) {
    if cfg!(debug_assertions) {
        eprintln!("mcptape {command}: {DEBUG_BUILD_WARNING}");
    }
}

/// The build profile of this binary, as report.json's `run.buildProfile` says it: `debug`
/// without optimizations (`cfg!(debug_assertions)`), else `release`.
pub(crate) fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// This machine's host name (gethostname(2)); `None` when it cannot be read or is not UTF-8.
pub(crate) fn host_name() -> Option<String> {
    #[cfg(unix)]
    {
        nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
    }
    #[cfg(not(unix))]
    {
        std::env::var("COMPUTERNAME").ok()
    }
}

/// `at` as RFC 3339 in UTC to the second (`2026-12-03T09:12:45Z`), through the workspace's one
/// date formatter ([`mcptape_transcript::time`]); `None` before 1970 or past the year 9999.
pub(crate) fn rfc3339_utc(at: std::time::SystemTime) -> Option<String> {
    let us = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_micros();
    mcptape_transcript::time::format_rfc3339_us(i64::try_from(us).ok()?, 0).ok()
}

/// report.json's `run` of a run started at `started` (wall clock) that took `duration_s`
/// seconds: its date, the host, this binary's version and build profile.
pub(crate) fn run_info(
    started: std::time::SystemTime,
    duration_s: f64,
) -> mcptape_report::stats::RunInfo {
    mcptape_report::stats::RunInfo {
        started_at: rfc3339_utc(started),
        duration_s,
        host: host_name(),
        mcptape_version: env!("CARGO_PKG_VERSION").to_owned(),
        build_profile: build_profile().to_owned(),
    }
}

/// Writes `text` to stdout: the one way every subcommand prints (`print!`/`println!` are
/// banned in this crate by `crates/mcptape/clippy.toml`, since they panic on a write error).
/// A reader that went away (`mcptape explain --list | head -1`, a `BrokenPipe`) is a normal
/// end, not an error (Rust ignores SIGPIPE, so `print!` would panic).
///
/// # Errors
/// Any other write error of stdout (`writing to stdout: No space left on device (os error
/// 28)` for `> /dev/full`): the binary prints that one line and exits 2.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r.map_err(|e| anyhow::anyhow!("writing to stdout: {e}"))?),
    }
}

/// A writer whose reader may go away: past a broken pipe it writes nothing
/// and reports success.
pub(crate) struct QuietPipe<W> {
    pub(crate) out: W,
    pub(crate) gone: bool,
}

impl<W: std::io::Write> std::io::Write for QuietPipe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.gone {
            return Ok(buf.len());
        }
        match self.out.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(buf.len())
            }
            r => r,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.gone {
            return Ok(());
        }
        match self.out.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(())
            }
            r => r,
        }
    }
}

/// Ends a command line clap could not parse, or `--help`/`--version`: help and version print
/// clap's text as is (help on stdout, exit 0); a usage error prints ONE line on stderr, like
/// every other error ([`clap_error_line`]), and exits 2. A help that cannot be written
/// (`--help > /dev/full`) exits 2 with `mcptape: error: writing to stdout: …` instead of 0 in
/// silence.
pub fn clap_exit(e: &clap::Error, subcommand: Option<&str>) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    use std::io::Write as _;
    if !matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        eprintln!("{}", clap_error_line(&e.render().to_string(), subcommand));
        return std::process::ExitCode::from(2);
    }
    let printed = e.print().and_then(|()| std::io::stdout().flush());
    match printed {
        Err(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("mcptape: error: writing to stdout: {io}");
            std::process::ExitCode::from(2)
        }
        _ => std::process::ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
    }
}

/// clap's rendered usage error (`error: MESSAGE`, indented detail lines, `  tip: …`,
/// `Usage: mcptape SUB …`, `For more information, try '--help'.`) as one line: `mcptape:
/// error: MESSAGE DETAIL (tip: …); see `mcptape SUB --help``. `subcommand`: the subcommand
/// of the command line, when it names one (clap's text has no usage line for a missing
/// value).
pub fn clap_error_line(rendered: &str, subcommand: Option<&str>) -> String {
    let mut message: Vec<&str> = Vec::new();
    let mut tips: Vec<&str> = Vec::new();
    let mut command = match subcommand {
        Some(s) => format!("mcptape {s}"),
        None => "mcptape".to_owned(),
    };
    let mut in_message = true;
    for line in rendered.lines() {
        let t = line.trim();
        if t.is_empty() {
            in_message = false;
        } else if let Some(tip) = t.strip_prefix("tip: ") {
            tips.push(tip);
        } else if let Some(usage) = t.strip_prefix("Usage: ") {
            let words: Vec<&str> = usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['<', '[', '-']))
                .collect();
            if !words.is_empty() {
                command = words.join(" ");
            }
        } else if in_message {
            message.push(t.strip_prefix("error: ").unwrap_or(t));
        }
    }
    let mut out = format!("mcptape: error: {}", message.join(" "));
    for tip in tips {
        out.push_str(&format!(" (tip: {tip})"));
    }
    out.push_str(&format!("; see `{command} --help`"));
    out
}

/// The first of `inputs` that writing `output` would write over
/// ([`mcptape_transcript::file::same_file`]).
pub(crate) fn overwritten_input<'i, P: AsRef<std::path::Path> + ?Sized + 'i>(
    output: &std::path::Path,
    inputs: impl IntoIterator<Item = &'i P>,
) -> Option<&'i std::path::Path> {
    inputs
        .into_iter()
        .map(AsRef::as_ref)
        .find(|i| mcptape_transcript::file::same_file(output, i))
}

/// Refuses an output flag (`flag`: `-o`, `--output`, `--write-baseline`, `--stats`) whose file
/// is one of `inputs` ([`mcptape_transcript::file::same_file`]), or is a FIFO or a socket (opening one
/// for writing blocks until a reader comes), before anything is written: the one check of
/// every writer (`check -o`, `export k6|har -o`, `import har -o`, `merge --out`, `bench --out`,
/// `record -o`, `crawl -o`, `serve --stats`).
///
/// # Errors
/// `-o OUT: refusing to write over the input IN (-o is that file)`, naming both paths as
/// given (the binary exits 2, the input untouched); `-o OUT: not a regular file (FIFO, socket
/// or device): refusing to write to it`.
pub(crate) fn refuse_overwrite<'i, P: AsRef<std::path::Path> + ?Sized + 'i>(
    flag: &str,
    output: &std::path::Path,
    inputs: impl IntoIterator<Item = &'i P>,
) -> anyhow::Result<()> {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(output) {
        use std::os::unix::fs::FileTypeExt as _;
        let t = meta.file_type();
        if t.is_fifo() || t.is_socket() {
            anyhow::bail!(
                "{flag} {}: not a regular file (FIFO, socket or device): refusing to write to it",
                output.display()
            );
        }
    }
    match overwritten_input(output, inputs) {
        Some(input) => anyhow::bail!(
            "{flag} {}: refusing to write over the input {} ({flag} is that file)",
            output.display(),
            input.display()
        ),
        None => Ok(()),
    }
}

/// Says on stderr that the transcript went to `written` because another
/// recorder holds `asked` (`mcptape_record::sink::MAX_OUTPUT_SUFFIX`): the
/// records of both recorders are kept.
pub fn note_held_output(cmd: &str, asked: &std::path::Path, written: &std::path::Path) {
    if asked != written {
        eprintln!(
            "mcptape {cmd}: {} already holds a recording (or another recorder is writing it): \
             it is kept, writing {} instead (--overwrite replaces it)",
            asked.display(),
            written.display()
        );
    }
}

/// The files a server command `argv` reads or runs: its program as given and, for a bare
/// name (`srv.sh`, `bash`), where `$PATH` finds it; then every argument (a script given to
/// an interpreter: `bash s.sh`). `record -o` and `crawl -o` refuse to write over any of them
/// ([`refuse_overwrite`]): the transcript would replace the server's executable or script.
pub(crate) fn server_files(argv: &[String]) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = argv.iter().map(std::path::PathBuf::from).collect();
    if let Some(program) = argv.first().filter(|p| !p.contains('/'))
        && let Some(path) = std::env::var_os("PATH")
    {
        out.extend(
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .filter(|p| p.is_file()),
        );
    }
    out
}

/// Refuses an input flag's file (`--baseline FILE`) that is a FIFO, socket or device, at once,
/// with the one file-opening policy ([`mcptape_transcript::file::open_regular`], as positional
/// inputs are read): reading a FIFO blocks until a writer comes. Other open errors (a missing
/// file) are left to the reader, which names them.
///
/// # Errors
/// `--baseline PATH: not a regular file (FIFO, socket or device)`.
pub(crate) fn refuse_special_input(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    match mcptape_transcript::file::open_regular(path) {
        Err(e) if e.kind() == &mcptape_transcript::file::FileErrorKind::NotRegularFile => {
            anyhow::bail!(
                "{flag} {}: not a regular file (FIFO, socket or device)",
                path.display()
            )
        }
        _ => Ok(()),
    }
}

/// SIGINT, SIGTERM and SIGHUP handlers installed at once (not on first poll, as
/// [`mcptape_replay::target::interrupted`] does), so a signal that comes before the first
/// `await` is not taken by the default disposition (which ends mcptape on the spot). Must be
/// created inside the tokio runtime; a handler the OS refuses is never received.
pub(crate) struct Signals {
    int: Option<tokio::signal::unix::Signal>,
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Installs the three handlers.
    pub(crate) fn install() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals {
            int: signal(SignalKind::interrupt()).ok(),
            term: signal(SignalKind::terminate()).ok(),
            hup: signal(SignalKind::hangup()).ok(),
        }
    }

    /// The next of the three signals: its name and the exit status 128 + its number (130,
    /// 143, 129).
    pub(crate) async fn recv(&mut self) -> (&'static str, u8) {
        async fn one(s: Option<&mut tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = one(self.int.as_mut()) => ("SIGINT", 130),
            () = one(self.term.as_mut()) => ("SIGTERM", 143),
            () = one(self.hup.as_mut()) => ("SIGHUP", 129),
        }
    }
}
