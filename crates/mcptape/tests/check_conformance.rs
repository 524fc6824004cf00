//! On the same recorded sessions, `mcptape check` agrees with the MCP
//! conformance suite's SEP-2164 and caching checks, and is stricter where
//! corpus/README.md says so (a text+blob entry passes the suite).
//!
//! Each session: the deliberately faulty 2026-07-28 server
//! (corpus/violations/servers/faulty_http_server.py, one fault) behind
//! `mcptape record --listen` (the HTTP recording proxy), the suite
//! (`@modelcontextprotocol/conformance`, installed by scripts/install-peers.sh)
//! running one scenario through the proxy, then `mcptape check` on the
//! transcript. Needs the real peers: FAILS (does not skip) without them.
//! Loopback only; every process bounded in time.

use crate::record_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use record_support::{Guard, free_port, mcptape, peers, repo_root, run_bounded, wait_port};

struct Session {
    /// The suite's status per check id (worst over the scenario's results).
    suite: BTreeMap<String, String>,
    /// mcptape's findings: rule id → count.
    rules: BTreeMap<String, usize>,
}

fn session(fault: &str, scenario: &str) -> Session {
    let p = peers();
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = Guard(
        Command::new(&p.python)
            .arg(repo_root().join("corpus/violations/servers/faulty_http_server.py"))
            .args(["--port", &port.to_string(), "--fault", fault])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start faulty server"),
    );
    wait_port(port, Duration::from_secs(20));
    let proxy_port = free_port();
    let transcript = tmp.path().join("session.jsonl");
    let proxy = Guard(
        Command::new(mcptape())
            .args(["record", "-o"])
            .arg(&transcript)
            .args(["--listen", &format!("127.0.0.1:{proxy_port}")])
            .args(["--upstream", &format!("http://127.0.0.1:{port}/mcp")])
            .args(["--duration", "120s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mcptape record"),
    );
    wait_port(proxy_port, Duration::from_secs(20));
    let out = tmp.path().join("suite");
    let (o, _) = run_bounded(
        Command::new(&p.node)
            .arg(p.conformance())
            .args([
                "server",
                "--url",
                &format!("http://127.0.0.1:{proxy_port}/mcp"),
            ])
            .args(["--scenario", scenario, "--spec-version", "2026-07-28"])
            .args(["--timeout", "20000", "-o"])
            .arg(&out),
        Duration::from_secs(90),
    );
    drop(proxy);
    let mut suite = BTreeMap::new();
    let order = ["SUCCESS", "SKIPPED", "INFO", "WARNING", "FAILURE"];
    let rank = |s: &str| order.iter().position(|o| *o == s).unwrap_or(order.len());
    for f in walk(&out) {
        if f.file_name().is_some_and(|n| n == "checks.json") {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            for c in v.as_array().unwrap() {
                let id = c["id"].as_str().unwrap().to_owned();
                let st = c["status"].as_str().unwrap().to_owned();
                let keep = suite
                    .get(&id)
                    .is_none_or(|prev: &String| rank(&st) > rank(prev));
                if keep {
                    suite.insert(id, st);
                }
            }
        }
    }
    assert!(
        !suite.is_empty(),
        "the suite wrote no checks.json for {scenario}; stderr:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report = mcptape_check::check_paths(&[transcript], &mcptape_check::Options::default())
        .expect("check the recorded session");
    assert_eq!(report.files[0].revision.as_str(), "2026-07-28");
    let mut rules = BTreeMap::new();
    for f in &report.files[0].findings {
        *rules.entry(f.rule.to_owned()).or_insert(0) += 1;
    }
    Session { suite, rules }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn status<'a>(s: &'a Session, check: &str) -> &'a str {
    s.suite.get(check).map(String::as_str).unwrap_or("-")
}

fn fired(s: &Session) -> Vec<&str> {
    s.rules.keys().map(String::as_str).collect()
}

#[test]
fn not_found_checks_agree_with_sep_2164() {
    let scenario = "sep-2164-resource-not-found";
    // (fault, no-empty-contents, error-code, data-uri, mcptape rules)
    let table: &[(&str, &str, &str, &str, &[&str])] = &[
        ("none", "SUCCESS", "SUCCESS", "SUCCESS", &[]),
        (
            "empty-contents",
            "FAILURE",
            "WARNING",
            "FAILURE",
            &["read-empty-contents"],
        ),
        (
            "legacy-code",
            "SUCCESS",
            "WARNING",
            "SUCCESS",
            &["not-found-code"],
        ),
        // -32602 "Resource not found" without `data.uri`: the code alone does
        // not make it a not-found (crates/mcptape-check/src/notfound.rs), so
        // mcptape guesses from the message with a labelled warning, as the
        // suite's sep-2164-data-uri warns.
        (
            "no-data-uri",
            "SUCCESS",
            "SUCCESS",
            "WARNING",
            &["not-found-guessed-from-message"],
        ),
    ];
    for &(fault, empty, code, data_uri, rules) in table {
        let s = session(fault, scenario);
        assert_eq!(status(&s, "sep-2164-no-empty-contents"), empty, "{fault}");
        assert_eq!(status(&s, "sep-2164-error-code"), code, "{fault}");
        assert_eq!(status(&s, "sep-2164-data-uri"), data_uri, "{fault}");
        assert_eq!(status(&s, "wire-schema-valid"), "SUCCESS", "{fault}");
        assert_eq!(fired(&s), rules, "{fault}");
    }
    // The suite only warns on the missing data.uri; so does mcptape.
    let guessed = mcptape_check::rule("not-found-guessed-from-message").unwrap();
    assert_eq!(guessed.severity, mcptape_check::Severity::Warning);
}

#[test]
fn caching_checks_agree_with_sep_2549() {
    let s = session("none", "caching");
    assert_eq!(
        status(&s, "sep-2549-resources-read-caching-hints"),
        "SUCCESS"
    );
    assert!(s.rules.is_empty(), "{:?}", s.rules);

    let s = session("no-cache-hints", "caching");
    for check in [
        "sep-2549-tools-list-caching-hints",
        "sep-2549-prompts-list-caching-hints",
        "sep-2549-resources-list-caching-hints",
        "sep-2549-resources-templates-list-caching-hints",
        "sep-2549-resources-read-caching-hints",
    ] {
        assert_eq!(status(&s, check), "FAILURE", "{check}");
    }
    // One finding per result the suite read: the four list methods and resources/read.
    assert_eq!(fired(&s), vec!["result-missing-cache-hints"]);
    assert_eq!(s.rules["result-missing-cache-hints"], 5);
}

#[test]
fn text_and_blob_passes_the_suite_and_fails_mcptape() {
    let s = session("text-and-blob", "resources-read-text");
    assert_eq!(status(&s, "resources-read-text"), "SUCCESS");
    assert_eq!(status(&s, "wire-schema-valid"), "SUCCESS");
    assert_eq!(fired(&s), vec!["contents-text-and-blob"]);
}
