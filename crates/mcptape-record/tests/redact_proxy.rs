//! The HTTP recording proxy redacts deny-by-default (issue 15, "No secret
//! kept"): credential-like request and response headers, the session id (as a
//! pseudonym), and `--redact-json` pointers in bodies, while forwarding every
//! byte unchanged.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcptape_record::TranscriptSink;
use mcptape_record::http::{HttpProxy, Upstream};
use mcptape_transcript::redact::{RedactRules, Redactor};
use mcptape_transcript::{Direction, Event, ServerSpec, Transport};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const SESSION: &str = "9c004f8f-87f5-4973-a34e-23ec3c10e446";

/// Reads one HTTP/1.1 message (head and Content-Length body).
async fn read_message(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            let mut body = buf[end + 4..].to_vec();
            while body.len() < len {
                let n = s.read(&mut chunk).await.unwrap();
                assert!(n > 0, "peer closed mid-body");
                body.extend_from_slice(&chunk[..n]);
            }
            return (head, body);
        }
        let n = s.read(&mut chunk).await.unwrap();
        assert!(n > 0, "peer closed mid-head");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// An upstream that answers every POST with 200, `headers` (each ending in CRLF) and the JSON
/// body `reply`; sends each request body it received on `seen`.
async fn upstream(
    headers: String,
    reply: &'static [u8],
    seen: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            let (seen, headers) = (seen.clone(), headers.clone());
            tokio::spawn(async move {
                let (_, body) = read_message(&mut s).await;
                let _ = seen.send(body);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    reply.len()
                );
                s.write_all(head.as_bytes()).await.unwrap();
                s.write_all(reply).await.unwrap();
                s.shutdown().await.ok();
            });
        }
    });
    addr
}

/// The message records of `t`: direction, message text, HTTP metadata.
fn messages(
    t: &mcptape_transcript::Transcript,
) -> Vec<(Direction, &str, mcptape_transcript::HttpMeta)> {
    t.records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Message { dir, msg, http, .. } => Some((*dir, msg.get(), http.clone().unwrap())),
            _ => None,
        })
        .collect()
}

async fn post(addr: SocketAddr, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).await.unwrap();
    resp
}

/// A recording proxy (`record --listen`) in front of the upstream at `up`, writing an HTTP
/// transcript redacted by its redactor into a temporary directory, until [`Recording::finish`].
struct Recording {
    /// Where the proxy listens.
    addr: SocketAddr,
    sink: Arc<TranscriptSink>,
    path: std::path::PathBuf,
    stop: tokio::sync::oneshot::Sender<()>,
    run: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl Recording {
    async fn start(up: SocketAddr, redactor: Redactor) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let sink = Arc::new(
            TranscriptSink::create_redacted(
                &path,
                Transport::Http,
                ServerSpec {
                    command: None,
                    url: Some(format!("http://{up}/mcp")),
                },
                redactor.summary(),
            )
            .unwrap(),
        );
        let proxy = HttpProxy::bind(
            "127.0.0.1:0".parse().unwrap(),
            Upstream::parse(&format!("http://{up}/mcp")).unwrap(),
            sink.clone(),
            redactor,
        )
        .await
        .unwrap();
        let addr = proxy.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let run = tokio::spawn(async move {
            proxy
                .run(async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            addr,
            sink,
            path,
            stop,
            run,
            _dir: dir,
        }
    }

    /// Stops the proxy, finishes the transcript and gives its text.
    async fn finish(self) -> String {
        let _ = self.stop.send(());
        self.run.await.unwrap();
        self.sink.finish().unwrap();
        std::fs::read_to_string(&self.path).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_auth_and_upstream_token_headers_and_json_pointers_are_redacted() {
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    // A result carrying a secret, an `Mcp-Session-Id` and an `X-Upstream-Token`.
    let up = upstream(
        format!("Mcp-Session-Id: {SESSION}\r\nX-Upstream-Token: up-s3cret\r\n"),
        br#"{"jsonrpc":"2.0","id":1,"result":{"apiKey":"resp-s3cret","ok":true}}"#,
        tx,
    )
    .await;
    let redactor = Redactor::with_rules(&RedactRules {
        redact_headers: vec!["X-Tenant".into()],
        keep_headers: vec![],
        json_pointers: vec!["/params/arguments/password".into(), "/result/apiKey".into()],
    })
    .unwrap();
    let rec = Recording::start(up, redactor).await;
    let addr = rec.addr;

    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"user":"u","password":"hunter2"}}}"#;
    let resp = post(
        addr,
        &format!("Mcp-Auth: mcp-auth-s3cret\r\nX-Upstream-Token: tok-s3cret\r\nX-Tenant: acme-corp\r\nMcp-Session-Id: {SESSION}\r\n"),
        body,
    )
    .await;
    let resp = String::from_utf8_lossy(&resp).into_owned();
    // Forwarded unchanged both ways.
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(5), seen.recv())
            .await
            .unwrap()
            .unwrap(),
        body.to_vec()
    );
    assert!(resp.contains("resp-s3cret"), "{resp}");
    assert!(
        resp.to_ascii_lowercase()
            .contains(&format!("mcp-session-id: {SESSION}")),
        "{resp}"
    );

    let text = rec.finish().await;
    for secret in [
        "mcp-auth-s3cret",
        "tok-s3cret",
        "up-s3cret",
        "acme-corp",
        "hunter2",
        "resp-s3cret",
        SESSION,
    ] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let t = mcptape_transcript::read(text.as_bytes()).unwrap();
    let red = t.header.redaction.as_ref().unwrap();
    assert!(red.enabled);
    assert_eq!(red.redact_headers, vec!["x-tenant".to_owned()]);
    assert_eq!(
        red.json_pointers,
        vec![
            "/params/arguments/password".to_owned(),
            "/result/apiKey".to_owned()
        ]
    );
    let msgs = messages(&t);
    assert_eq!(msgs.len(), 2, "{text}");
    let (dir, msg, http) = &msgs[0];
    assert_eq!(*dir, Direction::C2s);
    assert_eq!(
        *msg,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"user":"u","password":"[redacted:1]"}}}"#
    );
    assert_eq!(
        http.redacted_pointers,
        vec!["/params/arguments/password".to_owned()]
    );
    let h = |name: &str| {
        http.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(h("mcp-auth"), Some("[redacted]"));
    assert_eq!(h("x-upstream-token"), Some("[redacted]"));
    assert_eq!(h("x-tenant"), Some("[redacted]"));
    assert_eq!(h("mcp-session-id"), Some("[redacted:1]"));
    assert_eq!(h("content-type"), Some("application/json"));
    let (dir, msg, http) = &msgs[1];
    assert_eq!(*dir, Direction::S2c);
    assert_eq!(
        *msg,
        r#"{"jsonrpc":"2.0","id":1,"result":{"apiKey":"[redacted:2]","ok":true}}"#
    );
    assert_eq!(http.redacted_pointers, vec!["/result/apiKey".to_owned()]);
    // The same session id in the response gets the same pseudonym.
    let sid = http
        .headers
        .iter()
        .find(|(n, _)| n == "mcp-session-id")
        .map(|(_, v)| v.as_str());
    assert_eq!(sid, Some("[redacted:1]"));
}

/// Regression (fresh-user trial, 2026-12-05): `record --listen` redacted the
/// `Cookie` and `Set-Cookie` headers but kept their cookie values where they
/// reappeared in a message body. Each cookie value is redacted there too;
/// `theme=dark` (shorter than `MIN_ECHO_SECRET_BYTES`) and the attributes
/// are kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookie_values_are_redacted_in_recorded_bodies() {
    // A `Set-Cookie` and a result echoing the request's cookie value and its own.
    let (tx, _seen) = tokio::sync::mpsc::unbounded_channel();
    let up = upstream(
        "Set-Cookie: sid=S3tC00kieV4lue; Path=/; HttpOnly\r\n".to_owned(),
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi S3cr3tV4lue0123, next time S3tC00kieV4lue; theme dark"}]}}"#,
        tx,
    )
    .await;
    let rec = Recording::start(up, Redactor::new()).await;
    let addr = rec.addr;

    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"q":"S3cr3tV4lue0123","style":"dark"}}}"#;
    let resp = post(
        addr,
        "Cookie: session=S3cr3tV4lue0123; theme=dark\r\n",
        body,
    )
    .await;
    let resp = String::from_utf8_lossy(&resp).into_owned();
    assert!(resp.contains("S3tC00kieV4lue; theme dark"), "{resp}");

    let text = rec.finish().await;
    for secret in ["S3cr3tV4lue0123", "S3tC00kieV4lue"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let t = mcptape_transcript::read(text.as_bytes()).unwrap();
    let msgs = messages(&t);
    assert_eq!(msgs.len(), 2, "{text}");
    let cookie = |http: &mcptape_transcript::HttpMeta, name: &str| {
        http.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let (dir, msg, http) = &msgs[0];
    assert_eq!(*dir, Direction::C2s);
    assert_eq!(
        *msg,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"q":"[redacted]","style":"dark"}}}"#
    );
    assert_eq!(cookie(http, "cookie").as_deref(), Some("[redacted]"));
    let (dir, msg, http) = &msgs[1];
    assert_eq!(*dir, Direction::S2c);
    assert_eq!(
        *msg,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi [redacted], next time [redacted]; theme dark"}]}}"#
    );
    assert_eq!(cookie(http, "set-cookie").as_deref(), Some("[redacted]"));
}
