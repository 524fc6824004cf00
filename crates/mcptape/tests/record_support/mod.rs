//! Shared helpers of the record/crawl integration tests: the real peers, the
//! built binary, bounded child processes, transcript reading.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use mcptape_transcript::{Direction, Event, Transcript};

/// The Python SDK client's arguments `scripts/record-corpus.sh` used to record
/// `corpus/transcripts/everything-stdio.jsonl` from server-everything (2 blob and
/// 2 text template reads on top of the listed resources): a replay driven with the
/// same arguments must see the same answers.
pub const EVERYTHING_CLIENT_ARGS: [&str; 12] = [
    "--mode",
    "legacy",
    "--reads",
    "100",
    "--template",
    "demo://resource/dynamic/blob/1",
    "--template",
    "demo://resource/dynamic/text/1",
    "--template",
    "demo://resource/dynamic/blob/2",
    "--template",
    "demo://resource/dynamic/text/2",
];

/// The first 8 of [`EVERYTHING_CLIENT_ARGS`] (one blob and one text template
/// read), as `corpus/transcripts/everything-http.jsonl` was recorded.
pub fn everything_two_template_args() -> [&'static str; 8] {
    EVERYTHING_CLIENT_ARGS[..8].try_into().unwrap()
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

/// The built `mcptape` binary.
pub fn mcptape() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcptape"))
}

/// `mcptape ARGS...` run to completion: (exit code, stdout, stderr), both as UTF-8.
pub fn mcptape_text(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(mcptape())
        .args(args)
        .output()
        .expect("run mcptape");
    let utf8 = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (
        out.status.code().expect("exit code"),
        utf8(out.stdout),
        utf8(out.stderr),
    )
}

/// Paths of the real peers installed by `scripts/install-peers.sh`.
#[derive(Debug, Clone)]
pub struct Peers {
    /// Node 22 binary.
    pub node: PathBuf,
    /// npm prefix holding server-everything, the Inspector and the conformance suite.
    pub npm: PathBuf,
    /// Python of the venv with the official `mcp` SDK.
    pub python: PathBuf,
}

impl Peers {
    /// server-everything's entry script.
    pub fn server_everything(&self) -> PathBuf {
        self.npm
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    }
    /// The Inspector launcher (its `--cli` mode is the Inspector CLI).
    pub fn inspector(&self) -> PathBuf {
        self.npm
            .join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
    }
    /// The conformance suite's entry script.
    pub fn conformance(&self) -> PathBuf {
        self.npm
            .join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
    }
    /// A script under corpus/servers/.
    pub fn script(&self, name: &str) -> PathBuf {
        repo_root().join("corpus/servers").join(name)
    }
}

/// The peers, from the environment (`MCPTAPE_NODE22`, `MCPTAPE_NPM_PREFIX`,
/// `MCPTAPE_PYTHON`) or `.tools/env.sh`. Panics — the test FAILS — when they
/// are missing, saying to run `scripts/install-peers.sh`.
pub fn peers() -> Peers {
    let env_file = std::fs::read_to_string(repo_root().join(".tools/env.sh")).unwrap_or_default();
    let get = |key: &str| -> PathBuf {
        if let Ok(v) = std::env::var(key) {
            return PathBuf::from(v);
        }
        let prefix = format!("export {key}=");
        let v = env_file
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|v| v.trim_matches('"').to_owned())
            .unwrap_or_else(|| {
                panic!(
                    "{key} is not set and .tools/env.sh is missing: run scripts/install-peers.sh"
                )
            });
        PathBuf::from(v)
    };
    let p = Peers {
        node: get("MCPTAPE_NODE22"),
        npm: get("MCPTAPE_NPM_PREFIX"),
        python: get("MCPTAPE_PYTHON"),
    };
    for (what, path) in [
        ("node 22", p.node.clone()),
        ("python venv", p.python.clone()),
        ("server-everything", p.server_everything()),
        ("MCP Inspector", p.inspector()),
        ("conformance suite", p.conformance()),
    ] {
        assert!(
            path.exists(),
            "{what} missing at {}: run scripts/install-peers.sh",
            path.display()
        );
    }
    p
}

/// A child process killed (by its own pid) and waited when dropped: a test that fails while
/// the child runs (a bounded wait that gives up, an assertion) leaves no process behind.
pub struct Guard(pub Child);

impl Guard {
    /// Kills the child (SIGKILL) and waits for it; a child that already ended is only reaped.
    pub fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Waits up to `limit` for the child to end, reading its piped stdout and stderr (if
    /// piped) meanwhile; its output. Past `limit` the child is killed and waited, then the
    /// test fails naming `what` and showing the child's stderr.
    pub fn output_within(mut self, what: &str, limit: Duration) -> Output {
        let o = drain(self.0.stdout.take());
        let e = drain(self.0.stderr.take());
        match wait_bounded(&mut self.0, limit) {
            Some(status) => Output {
                status,
                stdout: o.join().unwrap(),
                stderr: e.join().unwrap(),
            },
            None => {
                self.stop();
                let stderr = String::from_utf8_lossy(&e.join().unwrap()).into_owned();
                panic!("{what} did not finish within {limit:?}; stderr:\n{stderr}");
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads `pipe` (when there is one) to its end on a thread; the bytes read.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut v);
        }
        v
    })
}

/// Makes a FIFO (named pipe) at `path` with mkfifo(1); panics when that fails.
pub fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success(), "mkfifo {}", path.display());
}

/// Runs `cmd` to completion with stdin closed, killing it after `limit`.
/// Returns its output and how long it took.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let output = Guard(child).output_within(&format!("{cmd:?}"), limit);
    (output, start.elapsed())
}

/// Sends `sig` (`-INT`, `-TERM`, …) to `g`'s process with `kill(1)` and waits for it to
/// end (a process still running 20 s later fails the test); its exit status.
pub fn kill_and_wait(g: &mut Guard, sig: &str) -> ExitStatus {
    let ok = Command::new("kill")
        .args([sig, &g.0.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success(), "kill {sig}");
    wait_bounded(&mut g.0, Duration::from_secs(20))
        .unwrap_or_else(|| panic!("still running 20 s after kill {sig}"))
}

/// One raw HTTP/1.1 request to 127.0.0.1:`port` (`head`: the request line and the headers
/// other than Host, Content-Length and Connection: close, which it adds) with `body`; the
/// whole answer as text (a read stalled 20 s ends it).
pub fn http_exchange(port: u16, head: &str, body: &[u8]) -> String {
    use std::io::Write as _;
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let req = format!(
        "{head}\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut resp = Vec::new();
    let _ = s.read_to_end(&mut resp);
    String::from_utf8_lossy(&resp).into_owned()
}

/// `mcptape ARGS` run in `dir` as [`run_bounded`] runs it (a hang past 2 min fails the test).
pub fn mcptape_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(mcptape());
    cmd.args(args).current_dir(dir);
    run_bounded(&mut cmd, Duration::from_secs(120)).0
}

/// `o`'s stderr as text (invalid UTF-8 replaced).
pub fn stderr_text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `o`'s stderr as text, after asserting that the process exited with `code` (the message
/// gives the status and the stderr).
pub fn stderr_of_exit(o: &Output, code: i32) -> String {
    let stderr = stderr_text(o);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{:?}; stderr:\n{stderr}",
        o.status
    );
    stderr
}

/// `o`'s stdout as text (invalid UTF-8 replaced).
pub fn stdout_text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Waits for `child` up to `limit`; `None` if it is still running.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            return Some(s);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `done` every 20 ms until it holds; past `limit` the test fails naming `what`.
#[track_caller]
pub fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what} (waited {limit:?})");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A free loopback port (bound then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts on 127.0.0.1:`port`.
pub fn wait_port(port: u16, limit: Duration) {
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + limit;
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nothing listens on {addr} after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts server-everything's Streamable HTTP mode on a free 127.0.0.1 port (loopback
/// preload); the guard and the port.
pub fn start_everything_http(p: &Peers) -> (Guard, u16) {
    let port = free_port();
    let mut cmd = Command::new(&p.node);
    cmd.arg("--require")
        .arg(p.script("loopback-preload.cjs"))
        .arg(p.server_everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    (spawn_listening(&mut cmd, port), port)
}

/// [`start_everything_http`] with the [`peers`] of this machine.
pub fn everything_http() -> (Guard, u16) {
    start_everything_http(&peers())
}

/// Starts the Python SDK server's Streamable HTTP mode on a free 127.0.0.1 port; the
/// guard and the port.
pub fn start_py_http(p: &Peers) -> (Guard, u16) {
    let port = free_port();
    let mut cmd = Command::new(&p.python);
    cmd.arg(p.script("py_server.py"))
        .args(["http", "--port", &port.to_string()]);
    (spawn_listening(&mut cmd, port), port)
}

/// Reads a transcript strictly (every line must be a record; a cut tail is reported).
pub fn read_transcript(path: &Path) -> Transcript {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    mcptape_transcript::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The server's stderr lines recorded in `t` (its `stderr` records), in order.
pub fn stderr_lines(t: &Transcript) -> Vec<&str> {
    t.records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Stderr { line } => Some(line.as_str()),
            _ => None,
        })
        .collect()
}

/// The byte stream a side saw in direction `dir`: each message (or noise line) + `\n`.
pub fn stream_of(t: &Transcript, dir: Direction) -> Vec<u8> {
    let mut out = Vec::new();
    for r in &t.records {
        match &r.event {
            Event::Message { dir: d, msg, .. } if *d == dir => {
                out.extend_from_slice(msg.get().as_bytes());
                out.push(b'\n');
            }
            Event::Noise { dir: d, line } if *d == dir => {
                out.extend_from_slice(line.as_bytes());
                out.push(b'\n');
            }
            _ => {}
        }
    }
    out
}

/// Parsed JSON of every message record in direction `dir`.
pub fn messages(t: &Transcript, dir: Direction) -> Vec<serde_json::Value> {
    t.records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Message { dir: d, msg, .. } if *d == dir => {
                Some(serde_json::from_str(msg.get()).expect("message JSON"))
            }
            _ => None,
        })
        .collect()
}

/// Summary of the `resources/read` exchanges of a transcript: for each read
/// request (by id), the URI, and the reply's text/blob entry counts or error code.
#[derive(Debug, Default)]
pub struct Reads {
    /// (uri, texts, blobs, error code)
    pub reads: Vec<(String, usize, usize, Option<i64>)>,
}

impl Reads {
    /// Pairs `resources/read` requests with their replies by id.
    pub fn of(t: &Transcript) -> Reads {
        let c2s = messages(t, Direction::C2s);
        let s2c = messages(t, Direction::S2c);
        let mut reads = Vec::new();
        for req in c2s.iter().filter(|m| m["method"] == "resources/read") {
            let id = &req["id"];
            let uri = req["params"]["uri"].as_str().unwrap().to_owned();
            let reply = s2c
                .iter()
                .find(|m| &m["id"] == id && m.get("method").is_none())
                .unwrap_or_else(|| panic!("no reply to read {uri}"));
            if let Some(code) = reply["error"]["code"].as_i64() {
                reads.push((uri, 0, 0, Some(code)));
            } else {
                let contents = reply["result"]["contents"].as_array().expect("contents");
                let blobs = contents.iter().filter(|c| c.get("blob").is_some()).count();
                let texts = contents.iter().filter(|c| c.get("text").is_some()).count();
                reads.push((uri, texts, blobs, None));
            }
        }
        Reads { reads }
    }
    /// Reads that returned at least one blob entry.
    pub fn blob_reads(&self) -> usize {
        self.reads.iter().filter(|r| r.2 > 0).count()
    }
    /// Reads that returned an error, with the code.
    pub fn errors(&self) -> Vec<(String, i64)> {
        self.reads
            .iter()
            .filter_map(|r| r.3.map(|c| (r.0.clone(), c)))
            .collect()
    }
    /// URIs read successfully.
    pub fn ok_uris(&self) -> Vec<String> {
        self.reads
            .iter()
            .filter(|r| r.3.is_none())
            .map(|r| r.0.clone())
            .collect()
    }
}

/// The `method` of every client message of the transcript (requests and
/// notifications), in order.
pub fn client_methods(t: &Transcript) -> Vec<String> {
    messages(t, Direction::C2s)
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

/// URIs of every `resources/list` result in the transcript, in order.
pub fn listed_uris(t: &Transcript) -> Vec<String> {
    let c2s = messages(t, Direction::C2s);
    let s2c = messages(t, Direction::S2c);
    let mut out = Vec::new();
    for req in c2s.iter().filter(|m| m["method"] == "resources/list") {
        let reply = s2c
            .iter()
            .find(|m| m["id"] == req["id"] && m.get("method").is_none())
            .expect("list reply");
        for r in reply["result"]["resources"].as_array().expect("resources") {
            out.push(r["uri"].as_str().unwrap().to_owned());
        }
    }
    out
}

/// The exit record of a transcript.
pub fn exit_of(t: &Transcript) -> (Option<i32>, Option<i32>) {
    t.records
        .iter()
        .find_map(|r| match &r.event {
            Event::Exit { code, signal } => Some((*code, *signal)),
            _ => None,
        })
        .expect("an exit record")
}

/// The Python SDK client's arguments against the Python SDK server
/// (`corpus/servers/py_server.py`) in `mode` (`legacy` or `auto`), as
/// `scripts/record-corpus.sh` recorded `py-*.jsonl`: 2 template reads.
pub fn py_server_client_args(mode: &str) -> [&str; 8] {
    [
        "--mode",
        mode,
        "--reads",
        "100",
        "--template",
        "mcptape://items/42",
        "--template",
        "mcptape://bytes/300",
    ]
}

/// A shipped recording under `corpus/transcripts/`.
pub fn corpus_transcript(name: &str) -> PathBuf {
    repo_root().join("corpus/transcripts").join(name)
}

/// Every shipped recording (`corpus/transcripts/*.jsonl`), sorted; fails the test when there
/// are fewer than 9.
pub fn corpus_transcripts() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo_root().join("corpus/transcripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    v.sort();
    assert!(v.len() >= 9, "{v:?}");
    v
}

/// Bound of a [`run_bench`] (a short bench run, its embedded server started and stopped).
pub const BENCH_LIMIT: Duration = Duration::from_secs(120);

/// `mcptape bench TRANSCRIPT ARGS...` (then `--out OUT` when given) run to completion within
/// [`BENCH_LIMIT`], stdin closed: its output and how long it took.
pub fn run_bench(transcript: &Path, args: &[&str], out: Option<&Path>) -> (Output, Duration) {
    run_bench_within(transcript, args, out, BENCH_LIMIT)
}

/// [`run_bench`] within `limit`.
pub fn run_bench_within(
    transcript: &Path,
    args: &[&str],
    out: Option<&Path>,
    limit: Duration,
) -> (Output, Duration) {
    let mut cmd = Command::new(mcptape());
    cmd.arg("bench").arg(transcript).args(args);
    if let Some(out) = out {
        cmd.arg("--out").arg(out);
    }
    run_bounded(&mut cmd, limit)
}

/// `s` split at white space: a command line's arguments, none with a space.
pub fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// `o`'s stderr as text, after asserting that `o` exited with status 2 (refused: bad flags or
/// input; the failure shows the stderr).
#[track_caller]
pub fn refusal(o: &Output) -> String {
    let err = stderr_text(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    err
}

/// Asserts that `text` contains `needle`; the failure message shows `text`.
#[track_caller]
pub fn assert_has(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} not in:\n{text}");
}

/// Asserts that `text` contains each of `needles`; the failure names the first missing one and
/// shows `text`.
#[track_caller]
pub fn assert_has_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert_has(text, needle);
    }
}

/// Asserts that `o` exited 0; the failure message is "`what` failed:" with its stdout and
/// stderr.
pub fn assert_success(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The JSON file at `path` (a `report.json`, a `--stats` file); panics when it is missing or
/// not JSON.
pub fn read_json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The sum of a report.json phase's `errorAnswers` (error answers by class); panics when it
/// is not an object of counts.
pub fn error_answers(phase: &serde_json::Value) -> u64 {
    let classes = phase["errorAnswers"]
        .as_object()
        .unwrap_or_else(|| panic!("errorAnswers: {phase:#}"));
    classes
        .values()
        .map(|v| {
            v.as_u64()
                .unwrap_or_else(|| panic!("errorAnswers: {phase:#}"))
        })
        .sum()
}

/// The JSON file at `path`, or `Null` when it is missing or not JSON (a run that failed
/// before writing it).
pub fn json_or_null(path: &Path) -> serde_json::Value {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// `mcptape record -o T -- SERVER...` spawned with stdin and stdout piped (the test plays
/// the client) and stderr to `stderr`; killed when the guard drops.
pub fn spawn_record(t_path: &Path, server: &[&OsStr], stderr: Stdio) -> Guard {
    let child = Command::new(mcptape())
        .args(["record", "-o"])
        .arg(t_path)
        .arg("--")
        .args(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn mcptape record -- {server:?}: {e}"));
    Guard(child)
}

/// `mcptape record -o T ARGS` spawned by `sh` under a file size limit of `blocks` `ulimit -f`
/// blocks (512 or 1024 bytes) with SIGXFSZ ignored (a disposition `exec` keeps): the transcript
/// write past the limit fails with `EFBIG`, as a full disk fails with `ENOSPC`. `args` is shell
/// text; stderr is piped.
pub fn spawn_record_under_file_limit(
    t: &Path,
    blocks: u32,
    args: &str,
    stdin: Stdio,
    stdout: Stdio,
) -> Child {
    let script = format!("trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" record -o \"$1\" {args}");
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(mcptape())
        .arg(t)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sh")
}

/// `mcptape SUBCOMMAND -o OUT ARGS...` run to completion within `limit`.
pub fn run_mcptape_out(sub: &str, out: &Path, args: &[&str], limit: Duration) -> Output {
    let mut cmd = Command::new(mcptape());
    cmd.arg(sub).arg("-o").arg(out).args(args);
    run_bounded(&mut cmd, limit).0
}

/// Runs `cmd` within `limit`, asserts it succeeded and returns its stdout as JSON.
pub fn run_json(cmd: &mut Command, limit: Duration) -> serde_json::Value {
    let (o, _) = run_bounded(cmd, limit);
    assert!(
        o.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{cmd:?}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

/// `corpus/servers/py_client.py ARGS...`: the caller adds the target (`--url U` or `-- CMD...`).
pub fn py_client_cmd(p: &Peers, args: &[&str]) -> Command {
    let mut cmd = Command::new(&p.python);
    cmd.arg(p.script("py_client.py")).args(args);
    cmd
}

/// Runs py_client.py once with `--batch`: each of `sessions` (its arguments, as
/// [`py_client_cmd`] takes them, then its target) is its own client session, in turn, in one
/// Python process (one start and SDK import for all); returns their summaries in order.
pub fn py_client_batch(p: &Peers, sessions: &[Vec<String>]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let batch = dir.path().join("batch.json");
    std::fs::write(&batch, serde_json::to_vec(sessions).unwrap()).unwrap();
    let mut cmd = py_client_cmd(p, &["--batch", batch.to_str().unwrap()]);
    let limit = Duration::from_secs(120 * sessions.len() as u64);
    let summaries = run_json(&mut cmd, limit);
    let summaries = summaries
        .as_array()
        .unwrap_or_else(|| panic!("{summaries}"));
    assert_eq!(summaries.len(), sessions.len());
    summaries.clone()
}

/// Runs the Python SDK client (`py_server_client_args(mode)`) against the live Python SDK
/// server over stdio through `mcptape record -o OUT`, as `scripts/record-corpus.sh` does;
/// returns the client's summary. OUT then matches the server as it is now.
pub fn record_py_server(p: &Peers, mode: &str, out: &Path) -> serde_json::Value {
    let mut cmd = py_client_cmd(p, &py_server_client_args(mode));
    cmd.arg("--")
        .arg(mcptape())
        .args(["record", "-o"])
        .arg(out)
        .arg("--")
        .arg(&p.python)
        .arg(p.script("py_server.py"))
        .arg("stdio");
    run_json(&mut cmd, Duration::from_secs(120))
}

/// Spawns `cmd` with stdin/stdout/stderr on /dev/null and waits until 127.0.0.1:`port` accepts.
pub fn spawn_listening(cmd: &mut Command, port: u16) -> Guard {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let g = Guard(child);
    wait_port(port, Duration::from_secs(30));
    g
}

/// The element of the JSON array `list` whose member `key` is `name` (panics, showing `list`,
/// when there is none or `list` is no array).
pub fn element<'a>(list: &'a serde_json::Value, key: &str, name: &str) -> &'a serde_json::Value {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .find(|v| v[key] == name)
        .unwrap_or_else(|| panic!("no {key} {name:?} in {list}"))
}

/// `mcptape serve TRANSCRIPT --listen 127.0.0.1:PORT --latency LATENCY` on a free port.
pub fn serve_listen(transcript: &Path, latency: &str) -> (Guard, u16) {
    let port = free_port();
    let mut cmd = serve_listen_cmd(transcript, port, latency);
    (spawn_listening(&mut cmd, port), port)
}

/// The command `mcptape serve TRANSCRIPT --listen 127.0.0.1:PORT --latency LATENCY`, for
/// more arguments before [`spawn_listening`].
pub fn serve_listen_cmd(transcript: &Path, port: u16, latency: &str) -> Command {
    let mut cmd = Command::new(mcptape());
    cmd.arg("serve").arg(transcript).args([
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--latency",
        latency,
    ]);
    cmd
}

/// `mcptape record -o T --listen 127.0.0.1:PORT --upstream UPSTREAM` on a free port,
/// its stderr to `stderr`.
pub fn record_listen(t_path: &Path, upstream: &str, stderr: Stdio) -> (Guard, u16) {
    record_listen_with(t_path, upstream, stderr, |_| {})
}

/// [`record_listen`] with `configure` given the command before it starts (more arguments, a
/// working directory, environment variables).
pub fn record_listen_with(
    t_path: &Path,
    upstream: &str,
    stderr: Stdio,
    configure: impl FnOnce(&mut Command),
) -> (Guard, u16) {
    let port = free_port();
    let mut cmd = Command::new(mcptape());
    cmd.arg("record").arg("-o").arg(t_path).args([
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--upstream",
        upstream,
    ]);
    configure(&mut cmd);
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("spawn mcptape record --listen");
    let g = Guard(child);
    wait_port(port, Duration::from_secs(30));
    (g, port)
}

/// Sends SIGTERM to the guarded child (by its pid) and waits up to 20 s for it to end.
pub fn terminate(g: &mut Guard) -> ExitStatus {
    let ok = Command::new("kill")
        .args(["-TERM", &g.0.id().to_string()])
        .status()
        .expect("kill");
    assert!(ok.success(), "kill -TERM {}", g.0.id());
    wait_bounded(&mut g.0, Duration::from_secs(20)).expect("the child stops on SIGTERM")
}

/// The responses (s2c messages with an id and no method), byte-exact, in order.
pub fn responses(t: &Transcript) -> Vec<String> {
    t.records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Message {
                dir: Direction::S2c,
                msg,
                ..
            } => {
                let v: serde_json::Value = serde_json::from_str(msg.get()).unwrap();
                (v.get("id").is_some() && v.get("method").is_none()).then(|| msg.get().to_owned())
            }
            _ => None,
        })
        .collect()
}

/// Every response of `replayed` is byte-identical to the shipped recording `transcript`'s,
/// and there are as many (at least 10).
pub fn assert_same_responses(transcript: &str, replayed: &Transcript) {
    let want = responses(&read_transcript(&corpus_transcript(transcript)));
    let got = responses(replayed);
    assert!(
        want.len() >= 10,
        "{transcript}: only {} recorded responses",
        want.len()
    );
    assert_eq!(got.len(), want.len(), "{transcript}: response count");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g == w,
            "{transcript}: response {i} differs:\n got  {g:.300}\n want {w:.300}"
        );
    }
}

/// `name` without its `-YYYY-MM-DDT...` suffix.
pub fn strip_timestamp(name: &str) -> &str {
    let b = name.as_bytes();
    for i in 0..b.len() {
        let t = &b[i..];
        let is_ts = t.len() >= 12
            && t[0] == b'-'
            && t[1..5].iter().all(u8::is_ascii_digit)
            && t[5] == b'-'
            && t[6..8].iter().all(u8::is_ascii_digit)
            && t[8] == b'-'
            && t[9..11].iter().all(u8::is_ascii_digit)
            && t[11] == b'T';
        if is_ts {
            return &name[..i];
        }
    }
    name
}

/// Per scenario of a conformance suite `-o DIR` (directory name without its
/// timestamp): the (check id, status) list of its `checks.json`.
pub fn conformance_verdicts(dir: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        // server-<scenario>-2026-11-30T01-04-43-368Z
        let scenario = strip_timestamp(&name).to_owned();
        let checks: serde_json::Value =
            serde_json::from_slice(&std::fs::read(entry.path().join("checks.json")).unwrap())
                .unwrap();
        let list = checks
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_owned(),
                    c["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        out.insert(scenario, list);
    }
    out
}

/// Base64 length of the largest first-entry blob among the s2c messages.
pub fn largest_blob_chars(t: &Transcript) -> Option<usize> {
    messages(t, Direction::S2c)
        .iter()
        .filter_map(|m| m["result"]["contents"][0]["blob"].as_str())
        .map(str::len)
        .max()
}

/// The entry for `uri` in a JSON report's `reads` array.
pub fn report_read<'a>(report: &'a serde_json::Value, uri: &str) -> &'a serde_json::Value {
    report["reads"]
        .as_array()
        .expect("reads")
        .iter()
        .find(|r| r["uri"] == uri)
        .unwrap_or_else(|| panic!("no read of {uri} in {report}"))
}

/// Record timestamps (`tUs`) of transcript `what` never go backwards.
pub fn assert_monotonic(t: &Transcript, what: &str) {
    let mut last = 0;
    for (i, r) in t.records.iter().enumerate() {
        assert!(
            r.t_us >= last,
            "{what}: record {i}: tUs {} < {last}",
            r.t_us
        );
        last = r.t_us;
    }
}

/// A shell word for `p` (single-quoted).
pub fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}
