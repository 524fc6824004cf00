//! Real peers for the live tests: paths from `.tools/env.sh` (written by
//! `scripts/install-peers.sh`), overridable by the same environment variables.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use mcptape_transport::child::{StdioChild, spawn_command};

pub fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .canonicalize()
        .unwrap()
}

/// `KEY` from the environment, else from `.tools/env.sh`.
pub fn tool(key: &str) -> PathBuf {
    if let Ok(v) = std::env::var(key) {
        return PathBuf::from(v);
    }
    let env = repo().join(".tools/env.sh");
    let text = std::fs::read_to_string(&env).unwrap_or_else(|_| {
        panic!(
            "{} is missing: run `bash scripts/install-peers.sh` first",
            env.display()
        )
    });
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("export {key}=")))
        .unwrap_or_else(|| {
            panic!(
                "{key} not in {}: run `bash scripts/install-peers.sh`",
                env.display()
            )
        });
    PathBuf::from(line.trim_matches('"'))
}

pub fn must_exist(p: PathBuf) -> PathBuf {
    assert!(
        p.exists(),
        "{} is missing: run `bash scripts/install-peers.sh`",
        p.display()
    );
    p
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts TCP connections on 127.0.0.1:`port` (≤ 30 s);
/// on timeout the child is killed and reaped before the panic.
pub async fn wait_listening(port: u16, child: &mut StdioChild) {
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        if let Some(st) = child.child.try_wait().unwrap() {
            panic!("server exited before listening on {port}: {st}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Killed and waited before failing: the test must not leave a server
    // running (kill-on-drop alone does not reap it).
    let _ = child.child.kill().await;
    panic!("nothing listens on 127.0.0.1:{port} after 30 s");
}

/// Local addresses listening on `port` according to `ss -ltnH`.
pub fn listening_addresses(port: u16) -> Vec<String> {
    let out = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .expect("ss (iproute2) must be installed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3).map(str::to_owned))
        .collect()
}

/// server-everything in Streamable HTTP mode, forced onto 127.0.0.1 by
/// `corpus/servers/loopback-preload.cjs`.
pub async fn start_everything_http() -> (StdioChild, u16) {
    let node = must_exist(tool("MCPTAPE_NODE22"));
    let index = must_exist(
        tool("MCPTAPE_NPM_PREFIX")
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    );
    let preload = must_exist(repo().join("corpus/servers/loopback-preload.cjs"));
    let port = free_port();
    let mut cmd = tokio::process::Command::new(node);
    cmd.arg("--require")
        .arg(preload)
        .arg(index)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let mut child = spawn_command(cmd).unwrap();
    wait_listening(port, &mut child).await;
    (child, port)
}

/// The Python SDK server (`corpus/servers/py_server.py http`), both eras.
pub async fn start_py_http(json: bool) -> (StdioChild, u16) {
    let py = must_exist(tool("MCPTAPE_PYTHON"));
    let script = must_exist(repo().join("corpus/servers/py_server.py"));
    let port = free_port();
    let mut cmd = tokio::process::Command::new(py);
    cmd.arg(script).args(["http", "--port", &port.to_string()]);
    if json {
        cmd.arg("--json");
    }
    let mut child = spawn_command(cmd).unwrap();
    wait_listening(port, &mut child).await;
    (child, port)
}
