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
    // The corpus under a directory name with a space, as a one-argument-per-line value needs.
    let spaced_dir = t.join("the corpus");
    std::os::unix::fs::symlink(repo().join("corpus"), &spaced_dir).unwrap();
    let spaced = spaced_dir.join("check-baseline.json");
    let o = step(
        "check",
        t,
        &[
            ("CHECK_PATHS", "corpus/transcripts"),
            // One argument per line: a path with a space stays one argument.
            (
                "CHECK_ARGS",
                &format!("--baseline\n  {}  ", spaced.display()),
            ),
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
                "--ignore\n/result/contents/*/text\n--ignore\n/result/contents/*/blob\n",
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
            (
                "BENCH_ARGS",
                "--reads\n40\n--turns\n10\n--latency\nfixed:1ms\n",
            ),
        ],
    );
    assert_step_passed(&o, t, "bench");
    let outputs = read(&t.join("github_output"));
    assert!(outputs.contains("verdict=pass\n"), "{outputs}");
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
        "baseline",
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
    // The current majors (Node 24 runtimes; the v4 ones ran on Node 20, which GitHub removes).
    assert!(
        yml.contains("uses: actions/cache@v6") && yml.contains("uses: actions/upload-artifact@v7"),
        "{yml}"
    );
    assert!(!yml.contains("@v4"), "{yml}");
    let workflow = read(&repo().join(".github/workflows/mcptape.yml"));
    assert!(workflow.contains("uses: actions/checkout@v7"), "{workflow}");
    for old in [
        "actions/checkout@v4",
        "actions/setup-node@v4",
        "actions/cache@v4",
    ] {
        assert!(!workflow.contains(old), "{old}: {workflow}");
    }
    for out in ["verdict", "read-p50-ms", "read-p99-ms"] {
        assert!(
            yml.contains(&format!("  {out}:\n"))
                && yml.contains(&format!("steps.bench.outputs.{out} }}")),
            "output {out}: {yml}"
        );
    }
}

/// `key=value` of a runner's GITHUB_OUTPUT file (the last one written).
fn output_of(t: &Path, key: &str) -> String {
    read(&t.join("github_output"))
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in GITHUB_OUTPUT"))
        .to_owned()
}

/// Issue 25: bench-args one argument per line (a `--target-cmd` whose command has spaces and
/// an environment assignment passes whole), and the `baseline` input's gate: the real Python
/// SDK server benched plain, then with a 20 ms read delay against the plain run, gives the
/// outputs verdict=regressed and the read p50/p99 in ms; the plain server against the slow run
/// passes. A baseline path that does not exist is skipped, not failed.
#[test]
fn action_bench_args_by_line_and_the_baseline_gate_on_the_python_server() {
    let python = tool("MCPTAPE_PYTHON");
    let server = repo().join("corpus/servers/py_server.py");
    let args = |env: &str| {
        format!(
            "--reads\n30\n--turns\n0\n--methods\nreads\n--timeout\n30s\n--target-cmd\n  {env}{python} {} stdio  \n",
            server.display()
        )
    };
    let bench = |t: &Path, args: &str, baseline: &str| {
        step(
            "bench",
            t,
            &[
                (
                    "BENCH_TRANSCRIPT",
                    "corpus/transcripts/py-stdio-2026-07-28.jsonl",
                ),
                ("BENCH_ARGS", args),
                ("BASELINE", baseline),
            ],
        )
    };
    let plain = tempfile::tempdir().unwrap();
    let missing = plain.path().join("no-baseline-yet");
    let o = bench(plain.path(), &args(""), missing.to_str().unwrap());
    assert_step_passed(&o, plain.path(), "bench");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the regression gate is skipped"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(output_of(plain.path(), "verdict"), "pass");
    let p50: f64 = output_of(plain.path(), "read-p50-ms").parse().unwrap();
    let p99: f64 = output_of(plain.path(), "read-p99-ms").parse().unwrap();
    assert!(0.0 < p50 && p50 <= p99, "{p50} {p99}");
    let base = plain.path().join("report/bench");

    let slow = tempfile::tempdir().unwrap();
    let o = bench(
        slow.path(),
        &args("PY_SERVER_READ_DELAY_MS=20 "),
        base.to_str().unwrap(),
    );
    assert!(o.status.success());
    assert_eq!(status(slow.path(), "bench"), "1");
    assert_eq!(output_of(slow.path(), "verdict"), "regressed");
    let slow_p50: f64 = output_of(slow.path(), "read-p50-ms").parse().unwrap();
    assert!(slow_p50 >= 20.0, "{slow_p50}");
    let cmd = read(&slow.path().join("report/status/bench.cmd"));
    assert!(cmd.contains("--baseline"), "{cmd}");
    let o = step("verdict", slow.path(), &[]);
    assert_eq!(o.status.code(), Some(1));

    let fast = tempfile::tempdir().unwrap();
    let slow_report = slow.path().join("report/bench/report.json");
    let o = bench(fast.path(), &args(""), slow_report.to_str().unwrap());
    assert_step_passed(&o, fast.path(), "bench");
    assert_eq!(output_of(fast.path(), "verdict"), "pass");
}
