//! Shared helpers of the record/crawl integration tests: the real peers, the
//! built binary, bounded child processes, transcript reading.
#![allow(dead_code)]

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

/// A child process killed (by its own pid) when dropped.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to completion with stdin closed, killing it after `limit`.
/// Returns its output and how long it took.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let status = wait_bounded(&mut child, limit);
    let status = match status {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&e.join().unwrap()).into_owned();
            panic!("{cmd:?} did not finish within {limit:?}; stderr:\n{stderr}");
        }
    };
    let output = Output {
        status,
        stdout: o.join().unwrap(),
        stderr: e.join().unwrap(),
    };
    (output, start.elapsed())
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

/// Starts server-everything's Streamable HTTP mode on 127.0.0.1:`port` (loopback preload).
pub fn start_everything_http(p: &Peers, port: u16) -> Guard {
    let child = Command::new(&p.node)
        .arg("--require")
        .arg(p.script("loopback-preload.cjs"))
        .arg(p.server_everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start server-everything");
    let g = Guard(child);
    wait_port(port, Duration::from_secs(30));
    g
}

/// Starts the Python SDK server's Streamable HTTP mode on 127.0.0.1:`port`.
pub fn start_py_http(p: &Peers, port: u16) -> Guard {
    let child = Command::new(&p.python)
        .arg(p.script("py_server.py"))
        .args(["http", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start py_server");
    let g = Guard(child);
    wait_port(port, Duration::from_secs(30));
    g
}

/// Reads a transcript strictly (every line must be a record; a cut tail is reported).
pub fn read_transcript(path: &Path) -> Transcript {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    mcptape_transcript::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
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
