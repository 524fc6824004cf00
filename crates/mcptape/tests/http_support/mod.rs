//! A tiny real HTTP/1.1 server on 127.0.0.1 for the HTTP error-status cases:
//! it answers `initialize` as a 2025-11-25 server, accepts notifications (202),
//! and answers every other request `500 Internal Server Error` with a
//! `text/plain` body. One request per connection (`Connection: close`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The running server (its accept thread ends with the test process).
pub struct Http500 {
    port: u16,
    reads: Arc<AtomicU64>,
}

impl Http500 {
    /// Listens on a free loopback port; `body` is the text of every 500.
    pub fn start(body: &'static str) -> Http500 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let reads = Arc::new(AtomicU64::new(0));
        let r2 = reads.clone();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(conn) = conn else { continue };
                let reads = r2.clone();
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(10)));
                    let mut rd = BufReader::new(conn.try_clone().unwrap());
                    let mut len = 0usize;
                    loop {
                        let mut line = String::new();
                        if rd.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let l = line.trim_end();
                        if l.is_empty() {
                            break;
                        }
                        if let Some((n, v)) = l.split_once(':')
                            && n.eq_ignore_ascii_case("content-length")
                        {
                            len = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut b = vec![0; len];
                    if rd.read_exact(&mut b).is_err() {
                        return;
                    }
                    let msg: serde_json::Value =
                        serde_json::from_slice(&b).unwrap_or(serde_json::Value::Null);
                    let (status, ctype, out) = match (msg["method"].as_str(), msg.get("id")) {
                        (Some("initialize"), Some(id)) => (
                            "200 OK",
                            "application/json",
                            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                                "protocolVersion": "2025-11-25", "capabilities": {"resources": {}},
                                "serverInfo": {"name": "http500", "version": "1"}}})
                            .to_string(),
                        ),
                        (Some(_), None) => ("202 Accepted", "text/plain", String::new()),
                        (m, _) => {
                            if m == Some("resources/read") {
                                reads.fetch_add(1, Ordering::Relaxed);
                            }
                            ("500 Internal Server Error", "text/plain", body.to_owned())
                        }
                    };
                    let mut w = conn;
                    let _ = write!(
                        w,
                        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
                        out.len()
                    );
                    let _ = w.flush();
                });
            }
        });
        Http500 { port, reads }
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// `resources/read` requests answered 500 so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}
