//! `mcptape record` redaction flags and the argv it stores (issue 15, "No
//! secret kept"): credential values and machine paths never reach the header.

mod record_support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use record_support::{Guard, peers, start_everything_http, terminate};

fn mcptape() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcptape"))
}

/// A new temp dir and the transcript path `t.jsonl` in it (not created).
fn temp_out() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    (dir, out)
}

/// `o`'s stderr contains `text`.
fn assert_stderr_has(o: &Output, text: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(text), "{err}");
}

/// `mcptape record -o OUT`, the caller adds the rest.
fn record_to(out: &Path) -> Command {
    let mut cmd = mcptape();
    cmd.args(["record", "-o"]).arg(out);
    cmd
}

/// `mcptape record -o OUT --listen 127.0.0.1:0 --upstream http://127.0.0.1:9/mcp EXTRA...`
/// (nothing listens on port 9) run to completion.
fn record_listen(out: &Path, extra: &[&str]) -> Output {
    record_to(out)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:9/mcp",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn stdio_record_header_has_no_argv_token_and_no_absolute_cwd_path() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let script = dir.path().join("srv.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let status = record_to(&out)
        .current_dir(dir.path())
        .arg("--")
        .arg("/bin/sh")
        .arg(&script)
        .args(["--token", "tok-abc123", "API_KEY=sk-live-9", "stdio"])
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let header = text.lines().next().unwrap();
    assert!(!header.contains("tok-abc123"), "{header}");
    assert!(!header.contains("sk-live-9"), "{header}");
    let dir_s = dir.path().canonicalize().unwrap();
    assert!(!header.contains(dir_s.to_str().unwrap()), "{header}");
    assert!(
        header.contains(
            r#""command":["/bin/sh","srv.sh","--token","[redacted]","API_KEY=[redacted]","stdio"]"#
        ),
        "{header}"
    );
    assert!(
        header.contains(r#""redaction":{"enabled":true,"argvValues":[3,4],"argvPaths":[1]}"#),
        "{header}"
    );
}

#[test]
fn bad_redact_json_pointer_is_refused_before_the_transcript_is_created() {
    let (_dir, out) = temp_out();
    let o = record_listen(&out, &["--redact-json", "params/password"]);
    assert!(!o.status.success());
    assert_stderr_has(&o, "a JSON Pointer starts with '/'");
    assert!(!out.exists());
}

#[test]
fn redact_header_needs_listen_and_conflicts_with_no_redact() {
    let (_dir, out) = temp_out();
    let o = record_to(&out)
        .args(["--redact-header", "X-Tenant", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "clap usage error");
    let o = record_listen(&out, &["--no-redact", "--keep-header", "x-a"]);
    assert_eq!(o.status.code(), Some(2), "clap usage error");
    assert!(!out.exists());
}

/// Sends one raw HTTP/1.1 request to the proxy on 127.0.0.1:`port` (`head`:
/// request line and headers other than Host/Content-Length/Connection) and
/// reads the whole answer.
fn send(port: u16, head: &str, body: &[u8]) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let req = format!(
        "{head}\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut resp = Vec::new();
    let _ = s.read_to_end(&mut resp);
}

/// `mcptape record -o OUT --listen 127.0.0.1:PORT --upstream UPSTREAM EXTRA...`
/// on a free port; each request of `requests` (`(head, body)`) sent through
/// it, then SIGTERM. Returns (transcript text, stderr).
fn record_requests(upstream: &str, extra: &[&str], requests: &[(&str, &[u8])]) -> (String, String) {
    let (_dir, out) = temp_out();
    let port = record_support::free_port();
    let child = record_to(&out)
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--upstream",
            upstream,
        ])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut g = Guard(child);
    record_support::wait_port(port, Duration::from_secs(30));
    for (head, body) in requests {
        send(port, head, body);
    }
    assert!(terminate(&mut g).success());
    let mut err = String::new();
    g.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (std::fs::read_to_string(&out).unwrap(), err)
}

/// The `http` records' `detail` texts and the header's `server.url`.
fn header_url_and_details(text: &str) -> (String, Vec<String>) {
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let header = lines.next().unwrap();
    let url = header["server"]["url"].as_str().unwrap().to_owned();
    let details = lines
        .filter_map(|v| v["detail"].as_str().map(str::to_owned))
        .collect();
    (url, details)
}

/// The recorded value of request header `name` (lowercase) on every record that has it.
fn recorded_header(text: &str, name: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["http"]["headers"].as_array()?.iter().find_map(|h| {
                (h[0].as_str() == Some(name)).then(|| h[1].as_str().unwrap().to_owned())
            })
        })
        .collect()
}

/// Secrets that must appear nowhere in `text`.
fn assert_no_secret(text: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!text.contains(s), "{s} kept in: {text}");
    }
}

#[test]
fn query_param_api_token_is_redacted_in_header_url_and_detail() {
    let p = peers();
    let (_server, up_port) = start_everything_http(&p);
    let upstream = format!("http://127.0.0.1:{up_port}/mcp?api_token=UPA1&access_token=UPB2");
    let (text, err) = record_requests(
        &upstream,
        &[],
        &[
            ("GET /mcp?api_token=QQ1&auth_token=QQ2 HTTP/1.1", b""),
            (
                "GET /mcp?access-token=QQ3&x-api-key=QQ4&apiKey=QQ5&page=2 HTTP/1.1",
                b"",
            ),
        ],
    );
    let secrets = [
        "UPA1", "UPB2", "QQ1", "QQ2", "QQ3", "QQ4", "QQ5", "QQ6", "QQ7",
    ];
    assert_no_secret(&text, &secrets);
    assert_no_secret(&err, &secrets);
    let (url, details) = header_url_and_details(&text);
    assert_eq!(
        url,
        format!("http://127.0.0.1:{up_port}/mcp?api_token=[redacted]&access_token=[redacted]")
    );
    assert_eq!(
        details,
        [
            "/mcp?api_token=[redacted]&auth_token=[redacted]",
            "/mcp?access-token=[redacted]&x-api-key=[redacted]&apiKey=[redacted]&page=2",
        ]
    );
    assert!(
        err.contains(&format!(
            "-> http://127.0.0.1:{up_port}/mcp?api_token=[redacted]&access_token=[redacted]"
        )),
        "{err}"
    );
}

#[test]
fn upstream_userinfo_with_slash_in_password_is_redacted_in_header_and_stderr() {
    let (_dir, out) = temp_out();
    let o = record_to(&out)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://u:pa/ss@127.0.0.1:9/mcp",
            "--duration",
            "300ms",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_no_secret(&err, &["pa/ss"]);
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_no_secret(&text, &["pa/ss"]);
    assert_eq!(
        header_url_and_details(&text).0,
        "http://[redacted]@127.0.0.1:9/mcp"
    );
}

#[test]
fn path_param_jsessionid_is_redacted_in_detail() {
    let (text, _) = record_requests(
        "http://127.0.0.1:9/mcp",
        &[],
        &[("DELETE /mcp;jsessionid=PJ1?sig=PJ2 HTTP/1.1", b"")],
    );
    assert_no_secret(&text, &["PJ1", "PJ2"]);
    assert_eq!(
        header_url_and_details(&text).1[0],
        "/mcp;jsessionid=[redacted]?sig=[redacted]"
    );
}

#[test]
fn referer_url_token_is_redacted() {
    let (text, _) = record_requests(
        "http://127.0.0.1:9/mcp",
        &[],
        &[(
            "GET /mcp HTTP/1.1\r\nReferer: http://x/?token=HREF1&q=1\r\nLocation: /cb#access_token=HREF2",
            b"",
        )],
    );
    assert_no_secret(&text, &["HREF1", "HREF2"]);
    assert_eq!(
        recorded_header(&text, "referer"),
        ["http://x/?token=[redacted]&q=1"]
    );
    assert_eq!(
        recorded_header(&text, "location"),
        ["/cb#access_token=[redacted]"]
    );
}

#[test]
fn authorization_with_unregistered_scheme_is_redacted_whole() {
    let (text, _) = record_requests(
        "http://127.0.0.1:9/mcp",
        &[],
        &[
            ("GET /mcp HTTP/1.1\r\nAuthorization: H13 H13b", b""),
            ("GET /mcp HTTP/1.1\r\nAuthorization: DPoP DP14", b""),
        ],
    );
    assert_no_secret(&text, &["H13", "DP14"]);
    assert_eq!(
        recorded_header(&text, "authorization"),
        ["[redacted]", "DPoP [redacted]"]
    );
}

#[test]
fn x_credential_passwd_jwt_pass_bearer_sig_headers_are_redacted() {
    let (text, _) = record_requests(
        "http://127.0.0.1:9/mcp",
        &[],
        &[(
            "GET /mcp HTTP/1.1\r\nX-Credential: HC1\r\nX-Passwd: HC2\r\nX-Jwt: HC3\r\nX-Pass: HC4\r\n\
             X-Bearer: HC5\r\nX-Sig: HC6\r\nX-Monkey: banana\r\nX-Keyboard: qwerty",
            b"",
        )],
    );
    assert_no_secret(&text, &["HC1", "HC2", "HC3", "HC4", "HC5", "HC6"]);
    assert_eq!(recorded_header(&text, "x-monkey"), ["banana"]);
    assert_eq!(recorded_header(&text, "x-keyboard"), ["qwerty"]);
}

#[test]
fn redact_json_body_with_utf8_bom_is_withheld_not_stored_verbatim() {
    let body = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"password\":\"BOM1\"}}";
    let utf16: Vec<u8> =
        r#"{"params":{"password":"U16P"}}"#.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let (text, _) = record_requests(
        "http://127.0.0.1:9/mcp",
        &["--redact-json", "/params/password"],
        &[
            (
                "POST /mcp HTTP/1.1\r\nContent-Type: application/json",
                body.as_bytes(),
            ),
            (
                "POST /mcp HTTP/1.1\r\nContent-Type: application/json",
                &utf16,
            ),
        ],
    );
    assert_no_secret(&text, &["BOM1", "U16P", "U\\u0000"]);
    let noise: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["kind"] == "noise").then(|| v["line"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(noise.len(), 2, "{text}");
    assert!(
        noise[0].starts_with("[redacted] <mcptape: exchange 0: "),
        "{}",
        noise[0]
    );
    assert!(
        noise[0].contains(&format!("{}-byte body is not JSON", body.len())),
        "{}",
        noise[0]
    );
    assert!(
        noise[1].starts_with("[redacted] <mcptape: exchange 1: "),
        "{}",
        noise[1]
    );
}

/// The stored header `command` of `mcptape record -- /bin/sh SCRIPT ARGS...`
/// (the script exits at once).
fn stored_argv(args: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let status = record_to(&out)
        .arg("--")
        .args(["/bin/sh", "-c", "exit 0", "sh"])
        .args(args)
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    header["server"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .skip(4)
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn argv_attached_short_flag_pass_and_flag_equals_values_are_redacted() {
    assert_eq!(
        stored_argv(&[
            "-pTOK1",
            "--pass",
            "TOK2",
            "--url=https://u:TOK3@h/",
            "--header=Authorization: Bearer TOK4",
            "--env=SECRET=TOK5",
            "-HAuthorization:TOK6",
            "keep-me",
            "GH_PAT=TOK7",
            "--config",
            r#"{"apiKey":"TOK8","name":"n"}"#,
            "-path",
        ]),
        [
            "-p[redacted]",
            "--pass",
            "[redacted]",
            "--url=https://[redacted]@h/",
            "--header=Authorization: Bearer [redacted]",
            "--env=SECRET=[redacted]",
            "-HAuthorization:[redacted]",
            "keep-me",
            "GH_PAT=[redacted]",
            "--config",
            r#"{"apiKey":"[redacted]","name":"n"}"#,
            "-path",
        ]
    );
}

#[test]
fn sh_c_script_words_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let status = record_to(&out)
        .args([
            "--",
            "/bin/sh",
            "-c",
            "exit 0; exec server --token SH1 --password=SH2",
        ])
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let header = text.lines().next().unwrap();
    assert_no_secret(header, &["SH1", "SH2"]);
    assert!(
        header.contains(
            r#""command":["/bin/sh","-c","exit 0; exec server --token [redacted] --password=[redacted]"]"#
        ),
        "{header}"
    );
}

#[test]
fn crawl_url_query_token_is_redacted_in_header() {
    let p = peers();
    let (_server, port) = start_everything_http(&p);
    let (_dir, out) = temp_out();
    let o = mcptape()
        .args(["crawl", "-o"])
        .arg(&out)
        .args([
            "--url",
            &format!("http://127.0.0.1:{port}/mcp?api_token=CRA1&x-api-key=CRA2"),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_no_secret(&text, &["CRA1", "CRA2"]);
    assert_no_secret(&err, &["CRA1", "CRA2"]);
    let (url, _) = header_url_and_details(&text);
    assert_eq!(
        url,
        format!("http://127.0.0.1:{port}/mcp?api_token=[redacted]&x-api-key=[redacted]")
    );
}
