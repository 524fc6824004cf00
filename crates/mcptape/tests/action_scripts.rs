//! The GitHub Action (action.yml + scripts/action/*.sh) run locally: the step
//! scripts with the environment action.yml gives them, against the built
//! binary, on this repository's corpus (verify against the live
//! server-everything from `.tools`); the SARIF file and the report directory
//! must appear with real content. And the structure of action.yml and of the
//! example workflow, parsed with PyYAML (`MCPTAPE_PYTHON`).

use std::path::Path;
use std::process::{Command, Output};

use crate::record_support as support;

use support::repo_root as repo;

/// `$KEY` from the environment, else its `export KEY=...` line in `.tools/env.sh`.
fn tool(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| {
        let env = std::fs::read_to_string(repo().join(".tools/env.sh")).unwrap_or_default();
        let prefix = format!("export {key}=");
        let Some(v) = env.lines().find_map(|l| l.strip_prefix(&prefix)) else {
            panic!("{key} not set and not in .tools/env.sh: run scripts/install-peers.sh")
        };
        v.trim_matches('"').to_owned()
    })
}

/// Runs `scripts/action/NAME.sh` from the repository root with `env`, the
/// built binary as MCPTAPE_BIN and runner files GITHUB_OUTPUT /
/// GITHUB_STEP_SUMMARY under `tmp`.
fn step(name: &str, tmp: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("bash");
    c.arg(repo().join(format!("scripts/action/{name}.sh")))
        .current_dir(repo())
        .env("MCPTAPE_BIN", env!("CARGO_BIN_EXE_mcptape"))
        .env("REPORT_DIR", tmp.join("report"))
        .env("GITHUB_OUTPUT", tmp.join("github_output"))
        .env("GITHUB_STEP_SUMMARY", tmp.join("step_summary"))
        .env_remove("GITHUB_ACTIONS");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    eprintln!(
        "--- {name}.sh: {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The step NAME exited 0 and wrote status 0, else the failure shows `report/NAME.txt`.
fn assert_step_passed(o: &Output, t: &Path, name: &str) {
    assert!(o.status.success());
    let report = t.join(format!("report/{name}.txt"));
    assert_eq!(status(t, name), "0", "{}", read(&report));
}

fn status(tmp: &Path, step: &str) -> String {
    read(&tmp.join(format!("report/status/{step}")))
        .trim()
        .to_owned()
}

#[test]
fn action_steps_on_the_corpus_write_sarif_and_the_report_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let sarif = t.join("out/mcptape.sarif");
    let sarif_s = sarif.to_str().unwrap();
    let o = step(
        "check",
        t,
        &[
            ("CHECK_PATHS", "corpus/transcripts"),
            ("CHECK_ARGS", "--baseline corpus/check-baseline.json"),
            ("SARIF_FILE", sarif_s),
        ],
    );
    assert!(o.status.success());
    assert_eq!(status(t, "check"), "0");

    let log = json(&sarif);
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(
        run["tool"]["driver"]["rules"].as_array().unwrap().len(),
        mcptape_check::RULES.len()
    );
    let results = run["results"].as_array().unwrap();
    let baselined = results
        .iter()
        .find(|r| r["ruleId"] == "error-id-null")
        .expect("the corpus's expected error-id-null finding");
    assert_eq!(baselined["baselineState"], "unchanged");
    assert_eq!(baselined["level"], "note");
    assert_eq!(
        baselined["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "corpus/transcripts/crawl-everything-http-2026-07-28-fallback.jsonl"
    );
    assert!(results.iter().any(|r| r["level"] == "warning"));
    assert_eq!(run["invocations"][0]["exitCode"], 0);
    assert_eq!(read(&t.join("report/check.sarif")), read(&sarif));
    let xml = read(&t.join("report/check.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "testsuites");
    assert!(
        read(&t.join("report/check.txt"))
            .lines()
            .any(|l| l.starts_with("PASS: 12 file(s)"))
    );
    assert!(read(&t.join("github_output")).contains(&format!("sarif-file={sarif_s}\n")));

    let server = format!(
        "{} {}/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio",
        tool("MCPTAPE_NODE22"),
        tool("MCPTAPE_NPM_PREFIX")
    );
    let o = step(
        "verify",
        t,
        &[
            (
                "VERIFY_TRANSCRIPT",
                "corpus/transcripts/everything-stdio.jsonl",
            ),
            ("VERIFY_TARGET_CMD", &server),
            (
                "VERIFY_ARGS",
                "--ignore /result/contents/*/text --ignore /result/contents/*/blob",
            ),
        ],
    );
    assert_step_passed(&o, t, "verify");
    let v = json(&t.join("report/verify.json"));
    assert!(v.is_object(), "{v}");
    assert!(read(&t.join("report/verify.txt")).contains("0 difference(s)"));

    let o = step(
        "bench",
        t,
        &[
            (
                "BENCH_TRANSCRIPT",
                "corpus/transcripts/everything-stdio.jsonl",
            ),
            ("BENCH_ARGS", "--reads 40 --turns 10 --latency fixed:1ms"),
        ],
    );
    assert_step_passed(&o, t, "bench");
    let b = json(&t.join("report/bench/report.json"));
    assert!(b.is_object());
    assert!(read(&t.join("report/bench/latency.svg")).contains("<svg"));
    assert!(
        t.join("report/bench/latency.hlog")
            .metadata()
            .unwrap()
            .len()
            > 0
    );

    let o = step("verdict", t, &[]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("3 step(s), 0 failed"), "{out}");
    let summary = read(&t.join("step_summary"));
    for s in ["| check | pass |", "| verify | pass |", "| bench | pass |"] {
        assert!(summary.contains(s), "{summary}");
    }
}

#[test]
fn action_verdict_fails_when_check_finds_unexpected_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let sarif = t.join("v.sarif");
    let o = step(
        "check",
        t,
        &[
            ("CHECK_PATHS", "corpus/violations"),
            ("SARIF_FILE", sarif.to_str().unwrap()),
        ],
    );
    // The step itself succeeds (so the report is uploaded); the verdict fails.
    assert!(o.status.success());
    assert_eq!(status(t, "check"), "1");
    let log = json(&sarif);
    let errors = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] == "error")
        .count();
    assert!(errors >= 1);
    assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], 1);
    let o = step("verdict", t, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(read(&t.join("step_summary")).contains("| check | FAIL (exit 1) |"));
}

#[test]
fn action_verdict_with_no_step_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let o = step("verdict", tmp.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn action_cache_key_names_os_ref_lock_and_source_hashes() {
    let tmp = tempfile::tempdir().unwrap();
    let o = step(
        "cache-key",
        tmp.path(),
        &[
            ("ACTION_REF", "v9.9.9"),
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "X64"),
        ],
    );
    assert!(o.status.success());
    let key = String::from_utf8(o.stdout).unwrap();
    let key = key.trim();
    assert!(key.starts_with("mcptape-Linux-X64-v9.9.9-"), "{key}");
    let lock = Command::new("sha256sum")
        .arg(repo().join("Cargo.lock"))
        .output()
        .unwrap();
    let lock = String::from_utf8(lock.stdout).unwrap()[..16].to_owned();
    let parts: Vec<&str> = key.rsplitn(3, '-').collect();
    assert_eq!(parts[1], lock, "{key}");
    assert_eq!(parts[0].len(), 16, "{key}");
    assert!(parts[0].bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
    assert_eq!(
        read(&tmp.path().join("github_output")),
        format!("key={key}\n")
    );
}

/// action.yml and the workflow, parsed by PyYAML and checked: composite run,
/// every run step has a shell and calls a script that exists, every input
/// referenced is declared, every variable a script requires (`${VAR:?`) is
/// set by the step that runs it, and the workflow's `uses: ./` step passes
/// only declared inputs.
#[test]
fn action_yml_and_workflow_structure() {
    let script = r#"
import json, re, sys, os, yaml
root = sys.argv[1]
a = yaml.safe_load(open(os.path.join(root, 'action.yml')))
errs = []
inputs = set(a['inputs'])
if a['runs']['using'] != 'composite': errs.append('runs.using')
text = open(os.path.join(root, 'action.yml')).read()
for ref in re.findall(r'inputs\.([A-Za-z0-9_-]+)', text):
    if ref not in inputs: errs.append('undeclared input ' + ref)
for s in a['runs']['steps']:
    if 'run' in s:
        if s.get('shell') != 'bash': errs.append('no shell: ' + s['name'])
        m = re.search(r'scripts/action/([a-z-]+\.sh)', s['run'])
        if not m: errs.append('no script: ' + s['name']); continue
        body = open(os.path.join(root, 'scripts/action', m.group(1))).read()
        for var in re.findall(r'\$\{([A-Z_]+):\?', body):
            if var not in (s.get('env') or {}): errs.append(m.group(1) + ' needs ' + var)
    elif 'uses' not in s: errs.append('neither run nor uses: ' + s['name'])
for name, o in a['outputs'].items():
    if 'value' not in o: errs.append('output without value ' + name)
w = yaml.safe_load(open(os.path.join(root, '.github/workflows/mcptape.yml')))
uses = [s for j in w['jobs'].values() for s in j['steps'] if s.get('uses') == './']
if len(uses) != 1: errs.append('workflow does not use ./ once')
for k in uses[0].get('with', {}):
    if k not in inputs: errs.append('workflow passes unknown input ' + k)
for p in uses[0]['with'].get('check-paths', '').split():
    if not os.path.exists(os.path.join(root, p)): errs.append('missing ' + p)
print(json.dumps({'errors': errs, 'inputs': sorted(inputs), 'steps': len(a['runs']['steps'])}))
"#;
    let o = Command::new(tool("MCPTAPE_PYTHON"))
        .args(["-c", script])
        .arg(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["errors"], serde_json::json!([]), "{v}");
    let inputs: Vec<&str> = v["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap())
        .collect();
    for i in [
        "check-paths",
        "check-args",
        "verify-transcript",
        "verify-target-cmd",
        "bench-transcript",
        "bench-args",
        "slo",
        "sarif-file",
        "report-dir",
    ] {
        assert!(inputs.contains(&i), "{i} missing from {inputs:?}");
    }
    let yml = read(&repo().join("action.yml"));
    assert!(
        read(&repo().join("scripts/action/install.sh")).contains("cargo install --locked --path")
    );
    assert!(
        yml.contains("uses: actions/cache@v4") && yml.contains("uses: actions/upload-artifact@v4")
    );
}
