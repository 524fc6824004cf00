//! The Streamable HTTP client against real servers on 127.0.0.1:
//! server-everything (TypeScript SDK, 2025-11-25 era, sessions, SSE replies) and
//! the Python SDK server `corpus/servers/py_server.py` (2025-11-25 and 2026-07-28).
//! These tests need the peers installed by `scripts/install-peers.sh` and FAIL
//! when they are missing.

use crate::common;

use mcptape_transport::child::EndedBy;
use mcptape_transport::http::{BodyKind, HttpClient, HttpErrorKind, ReplyItem};
use serde_json::Value;

const INIT_2025: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcptape-test","version":"0.1.0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

fn sent<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_http_session_era_initialize_list_read() {
    let (mut server, port) = common::start_everything_http().await;
    // The preload keeps server-everything on loopback only.
    let addrs = common::listening_addresses(port);
    assert!(!addrs.is_empty(), "ss shows nothing on port {port}");
    assert!(
        addrs.iter().all(|a| a == &format!("127.0.0.1:{port}")),
        "server-everything listens beyond loopback: {addrs:?}"
    );

    let mut c = HttpClient::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let init = c.post(INIT_2025).await.unwrap();
    assert_eq!(init.head.status, 200);
    let sid = c
        .session_id()
        .expect("server-everything assigns Mcp-Session-Id")
        .to_owned();
    assert_eq!(init.head.header("mcp-session-id"), Some(sid.as_str()));
    let msgs = init.messages();
    assert_eq!(msgs.len(), 1, "{init:?}");
    let v = json(msgs[0]);
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(c.protocol_version(), Some("2025-11-25"));
    // the initialize request carries no session id and no protocol header yet
    assert_eq!(sent(&init.head.request_headers, "mcp-session-id"), None);
    assert_eq!(
        sent(&init.head.request_headers, "mcp-protocol-version"),
        None
    );

    let note = c.post(INITIALIZED).await.unwrap();
    assert_eq!(note.head.status, 202);
    assert_eq!(note.head.kind, BodyKind::Empty);
    assert!(note.items.is_empty());
    assert_eq!(
        sent(&note.head.request_headers, "mcp-session-id"),
        Some(sid.as_str())
    );
    assert_eq!(
        sent(&note.head.request_headers, "mcp-protocol-version"),
        Some("2025-11-25")
    );
    // the 2026 headers are not sent in the session era
    assert_eq!(sent(&note.head.request_headers, "mcp-method"), None);

    let list = c
        .post(r#"{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(list.head.status, 200);
    let v = json(list.messages()[0]);
    let resources = v["result"]["resources"].as_array().unwrap();
    assert!(!resources.is_empty());
    let uri = resources[0]["uri"].as_str().unwrap().to_owned();

    // stream the read item by item
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
    );
    let mut resp = c.send(&read).await.unwrap();
    assert_eq!(resp.head.status, 200);
    let mut got = Vec::new();
    while let Some(item) = resp.next_item().await {
        got.push(item.unwrap());
    }
    assert!(!resp.discarded_partial_event());
    let body = got
        .iter()
        .find_map(|i| match i {
            ReplyItem::Json(s) => Some(s.clone()),
            ReplyItem::Event(e) if e.data.contains("\"contents\"") => Some(e.data.clone()),
            _ => None,
        })
        .expect("a reply to resources/read");
    let v = json(&body);
    assert_eq!(v["id"], 3);
    assert_eq!(v["result"]["contents"][0]["uri"], uri.as_str());

    // a 2025-era server refuses a request without the session
    let mut fresh = HttpClient::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let refused = fresh
        .post(r#"{"jsonrpc":"2.0","id":9,"method":"resources/list","params":{}}"#)
        .await
        .unwrap();
    assert!((400..500).contains(&refused.head.status), "{refused:?}");

    // the session-era GET stream for server-initiated messages
    let get = c.get_stream().await.unwrap();
    assert_eq!(get.head.status, 200, "{get:?}");
    assert_eq!(get.head.kind, BodyKind::Sse);
    assert_eq!(
        sent(&get.head.request_headers, "mcp-session-id"),
        Some(sid.as_str())
    );
    drop(get);

    let del = c.delete_session().await.unwrap();
    assert!(matches!(del, Some(200 | 204 | 405)), "{del:?}");
    assert_eq!(c.session_id(), None);
    assert_eq!(c.exchanges(), 6);

    let end = server.shutdown().await.unwrap();
    assert_ne!(end.ended_by, EndedBy::Sigkill, "{end:?}");
}

/// The `Mcp-Method` and `Mcp-Name` headers the client sent with `r`'s request.
fn method_and_name(r: &mcptape_transport::http::HttpReply) -> (Option<&str>, Option<&str>) {
    (
        sent(&r.head.request_headers, "mcp-method"),
        sent(&r.head.request_headers, "mcp-name"),
    )
}

fn meta() -> &'static str {
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcptape-test","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}}"#
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn py_sdk_stateless_era_discover_and_read_with_metadata_headers() {
    let (mut server, port) = common::start_py_http(false).await;
    let mut c = HttpClient::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    c.set_protocol_version("2026-07-28");

    let discover = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{}}}}}"#,
        meta()
    );
    let r = c.post(&discover).await.unwrap();
    assert_eq!(
        sent(&r.head.request_headers, "mcp-protocol-version"),
        Some("2026-07-28")
    );
    assert_eq!(method_and_name(&r), (Some("server/discover"), None));
    assert_eq!(r.head.status, 200, "{r:?}");
    let v = json(r.messages()[0]);
    let versions = v["result"]["supportedVersions"]
        .as_array()
        .expect("supportedVersions");
    assert!(versions.iter().any(|x| x == "2026-07-28"), "{v}");
    // no session in this era
    assert_eq!(r.head.header("mcp-session-id"), None);
    assert_eq!(c.session_id(), None);

    let read = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{{"uri":"mcptape://docs/notes.txt",{}}}}}"#,
        meta()
    );
    let r = c.post(&read).await.unwrap();
    assert_eq!(
        method_and_name(&r),
        (Some("resources/read"), Some("mcptape://docs/notes.txt"))
    );
    assert_eq!(r.head.status, 200, "{r:?}");
    let v = json(r.messages()[0]);
    assert_eq!(
        v["result"]["contents"][0]["text"],
        "line one\nline two\n\ttabbed line three\n"
    );

    let end = server.shutdown().await.unwrap();
    assert_ne!(end.ended_by, EndedBy::Sigkill, "{end:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn py_sdk_session_era_json_responses() {
    let (mut server, port) = common::start_py_http(true).await;
    let mut c = HttpClient::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let init = c.post(INIT_2025).await.unwrap();
    assert_eq!(init.head.status, 200, "{init:?}");
    assert_eq!(init.head.kind, BodyKind::Json);
    assert!(matches!(&init.items[..], [ReplyItem::Json(_)]));
    assert_eq!(c.protocol_version(), Some("2025-11-25"));
    assert_eq!(c.post(INITIALIZED).await.unwrap().head.status, 202);
    let r = c
        .post(r#"{"jsonrpc":"2.0","id":2,"method":"resources/templates/list","params":{}}"#)
        .await
        .unwrap();
    let v = json(r.messages()[0]);
    let templates: Vec<&str> = v["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert!(templates.contains(&"mcptape://items/{id}"), "{templates:?}");

    // The body limit, at and one past: the >= 2 MB PNG blob as one JSON body.
    let read = r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"mcptape://blobs/large.png"}}"#;
    let r = c.post(read).await.unwrap();
    let body_len = match &r.items[..] {
        [ReplyItem::Json(s)] => s.len(),
        other => panic!("{other:?}"),
    };
    assert!(body_len > 2 * 1024 * 1024 * 4 / 3, "{body_len}");
    c.set_max_body_bytes(body_len);
    assert!(c.post(read).await.is_ok());
    c.set_max_body_bytes(body_len - 1);
    let e = c.post(read).await.unwrap_err();
    assert!(
        matches!(e.kind, HttpErrorKind::BodyTooLarge { limit } if limit == body_len - 1),
        "{e}"
    );
    assert_eq!(e.exchange, 5);
    server.shutdown().await.unwrap();
}
