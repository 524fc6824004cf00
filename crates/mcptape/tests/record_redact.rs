//! `mcptape record` redaction flags and the argv it stores (issue 15, "No
//! secret kept"): credential values and machine paths never reach the header.

use crate::record_support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use record_support::{Guard, everything_http, peers, terminate, words};

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

/// Runs the `record` command `cmd` (stdin closed) to a successful end; the transcript `out`
/// it wrote.
fn run_record(cmd: &mut Command, out: &Path) -> String {
    let status = cmd.stdin(Stdio::null()).status().unwrap();
    assert!(status.success());
    std::fs::read_to_string(out).unwrap()
}

/// `mcptape record -o OUT --listen 127.0.0.1:0 --upstream http://127.0.0.1:9/mcp EXTRA...`
/// (nothing listens on port 9) run to completion.
fn record_listen(out: &Path, extra: &[&str]) -> Output {
    record_to(out)
        .args(words(
            "--listen 127.0.0.1:0 --upstream http://127.0.0.1:9/mcp",
        ))
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
    let text = run_record(
        record_to(&out)
            .current_dir(dir.path())
            .arg("--")
            .arg("/bin/sh")
            .arg(&script)
            .args(["--token", "tok-abc123", "API_KEY=sk-live-9", "stdio"]),
        &out,
    );
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
    record_support::http_exchange(port, head, body);
}

/// `mcptape record -o OUT --listen 127.0.0.1:PORT --upstream UPSTREAM EXTRA...`
/// on a free port; each request of `requests` (`(head, body)`) sent through
/// it, then SIGTERM. Returns (transcript text, stderr).
fn record_requests(upstream: &str, extra: &[&str], requests: &[(&str, &[u8])]) -> (String, String) {
    let (_dir, out) = temp_out();
    let (mut g, port) = record_support::record_listen_with(&out, upstream, Stdio::piped(), |c| {
        c.args(extra);
    });
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
    let (_server, up_port) = everything_http();
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
        .args(words(
            "--listen 127.0.0.1:0 --upstream http://u:pa/ss@127.0.0.1:9/mcp --duration 300ms",
        ))
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
    let text = run_record(
        record_to(&out).args([
            "--",
            "/bin/sh",
            "-c",
            "exit 0; exec server --token SH1 --password=SH2",
        ]),
        &out,
    );
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
    let (_server, port) = everything_http();
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

// ---- Issue 26: no secret and no machine path in any record. ----

/// Every secret of the leak table, for the greps.
const ARGV_SECRETS: [&str; 6] = [
    "TOKSECRET1a",
    "TOKSECRET2b",
    "CONNSECRET3c",
    "PASSCODE4d",
    "982451",
    "OTPSECRET6f",
];
/// Secrets the leaky server finds in its environment and home config.
const ENV_SECRETS: [&str; 5] = [
    "GHTOKEN7g-x",
    "BEARERSECRET8h",
    "DBPASS9i-x",
    "CFGAPIKEY10j",
    "CFGDBPW11k",
];
/// Credential-named `tools/call` arguments.
const ARG_SECRETS: [&str; 3] = ["PWARG12l", "APIARG13m", "TOKARG14n"];

/// The machine directories of a recording: working directory, home, temp
/// directory (canonical and as given), each of which must not appear.
fn machine_dirs(cwd: &Path, home: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for p in [
        cwd.to_path_buf(),
        home.to_path_buf(),
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
    ] {
        v.push(p.to_str().unwrap().to_owned());
        if let Ok(c) = p.canonicalize() {
            v.push(c.to_str().unwrap().to_owned());
        }
    }
    v
}

/// Every line of the transcript `text` (header included) checked for each
/// needle: the offending lines, for the failure message.
fn lines_holding(text: &str, needles: &[String]) -> Vec<String> {
    let mut hits = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for n in needles {
            if line.contains(n.as_str()) {
                hits.push(format!("line {}: {n:?} in {line}", i + 1));
            }
        }
    }
    hits
}

/// A client line to the recorder's (or serve's) stdin.
fn send_line(stdin: &mut std::process::ChildStdin, v: serde_json::Value) {
    let mut line = serde_json::to_string(&v).unwrap();
    line.push('\n');
    stdin.write_all(line.as_bytes()).unwrap();
    stdin.flush().unwrap();
}

/// Lines of a child's stdout, read on a thread.
fn line_reader(out: std::process::ChildStdout) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The next message with `"id": id` from `rx` (others skipped), within 30 s.
fn response(rx: &std::sync::mpsc::Receiver<String>, id: i64) -> serde_json::Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("no response {id}: {e}"));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == id && v.get("method").is_none() {
            return v;
        }
    }
}

fn initialize(id: i64) -> serde_json::Value {
    serde_json::json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":"leak-table","version":"1"}}})
}

fn echo_call(id: i64, secrets: [&str; 3]) -> serde_json::Value {
    serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"echo","arguments":{"message":format!("hello leak table {}", secrets[0]),
        "password":secrets[0],"apiKey":secrets[1],"token":secrets[2]}}})
}

/// Starts `cmd` with its stdin and stdout piped (stderr dropped): the stdin, the stdout's
/// lines ([`line_reader`]) and the guard that kills it.
fn spawn_lines(
    cmd: &mut Command,
) -> (
    std::process::ChildStdin,
    std::sync::mpsc::Receiver<String>,
    Guard,
) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let rx = line_reader(child.stdout.take().unwrap());
    (stdin, rx, Guard(child))
}

/// Asserts the recorded echo call's `arguments` hold every leak-table secret redacted
/// (pseudonyms for the credential-named ones) and `pointers` name exactly those four.
fn assert_echo_call_redacted(arguments: &serde_json::Value, mut pointers: Vec<String>) {
    assert_eq!(
        *arguments,
        serde_json::json!({"message":"hello leak table [redacted]","password":"[redacted:1]",
            "apiKey":"[redacted:2]","token":"[redacted:3]"})
    );
    pointers.sort();
    assert_eq!(
        pointers,
        [
            "/params/arguments/apiKey",
            "/params/arguments/message",
            "/params/arguments/password",
            "/params/arguments/token"
        ]
    );
}

/// `initialize` as request `id`, `notifications/initialized`, then the echo call with
/// [`ARG_SECRETS`] as request `id + 1`; its reply.
fn handshake_then_echo(
    stdin: &mut std::process::ChildStdin,
    rx: &std::sync::mpsc::Receiver<String>,
    id: i64,
) -> serde_json::Value {
    send_line(stdin, initialize(id));
    response(rx, id);
    send_line(
        stdin,
        serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    send_line(stdin, echo_call(id + 1, ARG_SECRETS));
    response(rx, id + 1)
}

/// Records the stdio leak table: the leaky server (its argv in every form,
/// printing argv, cwd, home, temp dir, home config and credential env vars
/// to stderr) in front of the real server-everything, a `tools/call` with
/// credential-named arguments. Returns (transcript path, its dir guard,
/// recorder cwd, home, the echo reply's result).
fn record_stdio_leak_table() -> (
    PathBuf,
    tempfile::TempDir,
    PathBuf,
    PathBuf,
    serde_json::Value,
) {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("work");
    let home = dir.path().join("home-alice");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".leaky.json"),
        r#"{"apiKey": "CFGAPIKEY10j", "dbUrl": "postgres://u:CFGDBPW11k@db/x"}"#,
    )
    .unwrap();
    let script = cwd.join("leaky_server.py");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/leaky_server.py"),
        &script,
    )
    .unwrap();
    let out = dir.path().join("stdio.jsonl");
    let mut cmd = record_to(&out);
    cmd.args(["--grace", "300ms", "--term-grace", "300ms", "--"])
        .arg(&p.python)
        .arg(&script)
        .args([
            "--tok",
            "TOKSECRET1a",
            "--token TOKSECRET2b",
            "--conn",
            "Server=x;Password=CONNSECRET3c;User=a",
            "--passcode",
            "PASSCODE4d",
            "--pin",
            "982451",
            "--otp",
            "OTPSECRET6f",
            "--data",
        ])
        .arg(home.join("data"))
        .arg("--")
        .arg(&p.node)
        .arg(p.server_everything())
        .arg("stdio")
        .current_dir(&cwd)
        .env("HOME", &home)
        .env("GITHUB_TOKEN", "GHTOKEN7g-x")
        .env("LEAKY_BEARER", "BEARERSECRET8h")
        .env("LEAKY_DB_PASSWORD", "DBPASS9i-x");
    let (mut stdin, rx, mut g) = spawn_lines(&mut cmd);
    let reply = handshake_then_echo(&mut stdin, &rx, 1);
    assert_eq!(
        reply["result"]["content"][0]["text"], "Echo: hello leak table PWARG12l",
        "{reply}"
    );
    drop(stdin);
    record_support::wait_bounded(&mut g.0, Duration::from_secs(20)).expect("record ends");
    (out, dir, cwd, home, reply["result"].clone())
}

#[test]
fn stdio_leak_table_leaves_no_secret_and_no_machine_path_in_any_record() {
    let (out, _dir, cwd, home, _) = record_stdio_leak_table();
    let text = std::fs::read_to_string(&out).unwrap();
    let mut needles: Vec<String> = ARGV_SECRETS
        .iter()
        .chain(&ENV_SECRETS)
        .chain(&ARG_SECRETS)
        .map(|s| (*s).to_owned())
        .collect();
    needles.extend(machine_dirs(&cwd, &home));
    let hits = lines_holding(&text, &needles);
    assert!(hits.is_empty(), "{}", hits.join("\n"));

    // What the records say instead.
    let t = mcptape_transcript::read(text.as_bytes()).unwrap();
    let stderr = record_support::stderr_lines(&t);
    let has = |prefix: &str, want: &str| {
        let line = stderr
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no stderr line {prefix:?}: {stderr:#?}"));
        assert_eq!(*line, want);
    };
    has(
        "starting with argv:",
        "starting with argv: --tok [redacted] --token [redacted] --conn Server=x;Password=[redacted];User=a \
         --passcode [redacted] --pin [redacted] --otp [redacted] --data ~/data",
    );
    has("cwd:", "cwd: .");
    has("home:", "home: ~");
    has("tmp:", "tmp: $TMPDIR/leaky.sock");
    has(
        "config:",
        r#"config: {"apiKey": "[redacted]", "dbUrl": "postgres://[redacted]@db/x"}"#,
    );
    has("config apiKey:", "config apiKey: [redacted]");
    has("env GITHUB_TOKEN", "env GITHUB_TOKEN is [redacted]");
    has(
        "upstream header",
        "upstream header Authorization: Bearer [redacted]",
    );
    has(
        "connecting",
        "connecting Server=db;Password=[redacted];User=a",
    );
    let command = t.header.server.command.clone().unwrap();
    assert_eq!(
        command[1..14],
        [
            "leaky_server.py",
            "--tok",
            "[redacted]",
            "--token [redacted]",
            "--conn",
            "Server=x;Password=[redacted];User=a",
            "--passcode",
            "[redacted]",
            "--pin",
            "[redacted]",
            "--otp",
            "[redacted]",
            "--data",
        ],
        "{command:?}"
    );
    assert_eq!(command[14], "~/data");
    // The tools/call record is altered and says where.
    let call = t
        .records
        .iter()
        .find_map(|r| match &r.event {
            mcptape_transcript::Event::Message {
                msg,
                redacted_pointers,
                ..
            } if msg.get().contains("tools/call") => Some((msg.get(), redacted_pointers)),
            _ => None,
        })
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(call.0).unwrap();
    assert_echo_call_redacted(&v["params"]["arguments"], call.1.clone());
    // The server's echo of the secret is redacted in its reply too.
    assert!(
        text.contains(r#""text":"Echo: hello leak table [redacted]""#),
        "{text}"
    );
}

#[test]
fn stdio_recording_with_redacted_tool_call_replays_to_a_client_sending_the_secret() {
    let (out, _dir, _cwd, _home, recorded) = record_stdio_leak_table();
    let mut cmd = mcptape();
    cmd.arg("serve").arg(&out).args(["--latency", "fixed:0ms"]);
    let (mut stdin, rx, _g) = spawn_lines(&mut cmd);
    let reply = handshake_then_echo(&mut stdin, &rx, 10);
    // The recorded answer (its echo of the secret redacted), matched though
    // every redacted argument differs from what was recorded.
    assert_eq!(
        reply["result"]["content"][0]["text"], "Echo: hello leak table [redacted]",
        "{reply}"
    );
    assert_eq!(
        recorded["content"][0]["text"], "Echo: hello leak table PWARG12l",
        "the live server saw the secret"
    );
    drop(stdin);
}

/// One raw HTTP/1.1 request to 127.0.0.1:`port`; the whole answer as text.
fn exchange(port: u16, head: &str, body: &str) -> String {
    record_support::http_exchange(port, head, body.as_bytes())
}

/// The request headers of the leak table (each with its own secret).
const LEAK_HEADERS: &str = "X-Passcode: HPASSCODE1\r\nX-Pin: HPIN2222\r\nX-Otp: HOTP3333\r\n\
    X-License: HLICENSE4\r\nX-Client-Cert: HCLIENTCERT5\r\nX-Pw: HPW66666\r\nX-Sid: HSID7777\r\n\
    X-Custom: Bearer HBEARER8\r\nX-Webhook: https://hooks.slack.com/services/T0/B0/HSLACK9";
const HEADER_SECRETS: [&str; 9] = [
    "HPASSCODE1",
    "HPIN2222",
    "HOTP3333",
    "HLICENSE4",
    "HCLIENTCERT5",
    "HPW66666",
    "HSID7777",
    "HBEARER8",
    "HSLACK9",
];

#[test]
fn http_leak_table_through_record_listen_leaves_no_secret_in_any_record() {
    let (_server, up_port) = everything_http();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home-bob");
    std::fs::create_dir_all(&home).unwrap();
    let out = dir.path().join("http.jsonl");
    let upstream = format!("http://127.0.0.1:{up_port}/mcp");
    let (mut g, port) = record_support::record_listen_with(&out, &upstream, Stdio::null(), |c| {
        c.current_dir(dir.path()).env("HOME", &home);
    });
    let post = |session: Option<&str>| {
        let mut h = format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{LEAK_HEADERS}"
        );
        if let Some(s) = session {
            h.push_str(&format!("\r\nMcp-Session-Id: {s}"));
        }
        h
    };
    let init = exchange(port, &post(None), &initialize(1).to_string());
    let session = init
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {init}"));
    exchange(
        port,
        &post(Some(&session)),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let call = exchange(
        port,
        &post(Some(&session)),
        &echo_call(2, ["HPWARG10", "HAPIARG11", "HTOKARG12"]).to_string(),
    );
    assert!(call.contains("Echo: hello leak table HPWARG10"), "{call}");
    assert!(terminate(&mut g).success());
    let text = std::fs::read_to_string(&out).unwrap();
    let mut needles: Vec<String> = HEADER_SECRETS
        .iter()
        .chain(&["HPWARG10", "HAPIARG11", "HTOKARG12"])
        .map(|s| (*s).to_owned())
        .collect();
    needles.push(session.clone());
    needles.extend(machine_dirs(dir.path(), &home));
    let hits = lines_holding(&text, &needles);
    assert!(hits.is_empty(), "{}", hits.join("\n"));
    assert_eq!(recorded_header(&text, "x-custom")[0], "Bearer [redacted]");
    assert_eq!(
        recorded_header(&text, "x-webhook")[0],
        "https://hooks.slack.com/services/[redacted]"
    );
    for h in [
        "x-passcode",
        "x-pin",
        "x-otp",
        "x-license",
        "x-client-cert",
        "x-pw",
        "x-sid",
    ] {
        assert_eq!(recorded_header(&text, h)[0], "[redacted]", "{h}");
    }
    let call = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["msg"]["method"] == "tools/call")
        .unwrap();
    assert_echo_call_redacted(
        &call["msg"]["params"]["arguments"],
        serde_json::from_value(call["http"]["redactedPointers"].clone()).unwrap(),
    );
}

#[test]
fn record_help_lists_every_credential_word() {
    let o = mcptape().args(["record", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for w in mcptape_transcript::redact::CREDENTIAL_WORDS {
        assert!(
            help.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|x| x == *w),
            "{w} missing from record --help"
        );
    }
}

#[test]
fn redact_json_works_on_stdio_and_lists_the_pointers() {
    let (_dir, out) = temp_out();
    let mut child = record_to(&out)
        .args(["--redact-json", "/params/otp", "--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"otp\":\"OTPV1x\",\"n\":1}}\n\
              {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"params\":{\"otp\":\"OTPV2y\"}}\n\
              {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":{\"otp\":\"OTPV1x\"}}\n",
        )
        .unwrap();
    drop(stdin);
    let mut g = Guard(child);
    assert!(
        record_support::wait_bounded(&mut g.0, Duration::from_secs(20))
            .unwrap()
            .success()
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert_no_secret(&text, &["OTPV1x", "OTPV2y"]);
    let c2s: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(r#""dir":"c2s""#))
        .collect();
    assert_eq!(c2s.len(), 3, "{text}");
    // Two different secrets stay apart; the same one gets the same pseudonym.
    assert!(c2s[0].contains(r#""otp":"[redacted:1]""#), "{}", c2s[0]);
    assert!(c2s[1].contains(r#""otp":"[redacted:2]""#), "{}", c2s[1]);
    assert!(c2s[2].contains(r#""otp":"[redacted:1]""#), "{}", c2s[2]);
    for l in &c2s {
        assert!(l.contains(r#""redactedPointers":["/params/otp"]"#), "{l}");
    }
    let header = text.lines().next().unwrap();
    assert!(
        header.contains(r#""jsonPointers":["/params/otp"]"#),
        "{header}"
    );
}

/// Regression (fresh-user trial, 2026-12-05): a cookie string given as a flag value
/// (`--cookie 'a=S1; b=S2'`) or in a cookie-named variable was redacted whole in argv, but the
/// server printing one cookie's value on stderr left it in the clear; and a preference cookie
/// (`m=tools/call`) must not blank the protocol's words. Each credential-shaped pair value is
/// hunted on its own; the others are not.
#[test]
fn cookie_strings_in_argv_and_environment_have_their_credential_values_redacted_in_stderr() {
    let (_dir, out) = temp_out();
    // The server reads its cookie flag and variable and prints their values, one per word.
    let script = r#"e=${MY_COOKIE%%;*}; set -- $(printf '%s' "$2" | tr ';' '\n' | sed 's/.*=//'); echo "cookie $1 and $2 env ${e#s=} pref $3 $4" >&2"#;
    let text = run_record(
        record_to(&out)
            .env("MY_COOKIE", "s=EnvCkVal33; t=x")
            .arg("--")
            .args(["/bin/sh", "-c", script, "sh", "--cookie"])
            .arg("a=ArgvFlagCk1; b=ArgvFlagCk2; m=tools/call; v=2025-06-18"),
        &out,
    );
    assert_no_secret(&text, &["ArgvFlagCk1", "ArgvFlagCk2", "EnvCkVal33"]);
    let stderr = text
        .lines()
        .find(|l| l.contains(r#""kind":"stderr""#))
        .unwrap_or_else(|| panic!("no stderr record: {text}"));
    assert!(
        stderr
            .contains("cookie [redacted] and [redacted] env [redacted] pref tools/call 2025-06-18"),
        "{stderr}"
    );
}

/// Regression (fresh-user trial, 2026-12-05): values redacted past `MAX_ECHO_SECRETS` were
/// redacted where found but not looked for elsewhere, and nothing said so. `record` says how
/// many on stderr; at the limit it says nothing.
#[test]
fn secrets_past_max_echo_secrets_are_said_on_stderr() {
    let max = mcptape_transcript::redact::MAX_ECHO_SECRETS;
    for (n, said) in [(max, None), (max + 2, Some(2))] {
        let (_dir, out) = temp_out();
        let mut cmd = record_to(&out);
        // No credential-named variable of this environment among the values remembered.
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default());
        cmd.args(["--", "/bin/sh", "-c", "exit 0", "sh"]);
        for i in 0..n {
            cmd.args(["--token".to_owned(), format!("tok-{i:06}-secret")]);
        }
        let o = cmd.stdin(Stdio::null()).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let e = String::from_utf8_lossy(&o.stderr);
        match said {
            None => assert!(!e.contains("MAX_ECHO_SECRETS"), "{e}"),
            Some(k) => assert!(
                e.contains(&format!(
                    "mcptape record: warning: {k} redacted value(s) came past the {max} remembered (MAX_ECHO_SECRETS)"
                )),
                "{e}"
            ),
        }
    }
}
