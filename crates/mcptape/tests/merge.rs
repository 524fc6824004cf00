//! `mcptape merge` (issue 12) on the logs of real `mcptape bench` runs (embedded `serve` child
//! over stdio, shipped transcript): merged counts are the sums of the runs' report.json counts,
//! merged quantiles are those of the decoded input histograms added together, the merged log
//! reads back in Python `hdrhistogram` (`.tools/venv`) and in mcptape; a cut line and a
//! different `--timeout` are errors naming the file.

#[path = "record_support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcptape_replay::render::merge_hlog_tagged;
use support::*;

fn python() -> PathBuf {
    std::env::var_os("MCPTAPE_PYTHON")
        .map_or_else(|| repo_root().join(".tools/venv/bin/python"), Into::into)
}

/// `mcptape bench corpus/transcripts/everything-stdio.jsonl ARGS --out OUT`; its report.json.
fn bench(args: &[&str], out: &Path) -> serde_json::Value {
    let mut cmd = Command::new(mcptape());
    cmd.arg("bench")
        .arg(repo_root().join("corpus/transcripts/everything-stdio.jsonl"))
        .args(args)
        .arg("--out")
        .arg(out);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    assert!(
        o.status.success(),
        "bench failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// `mcptape merge LOGS... --out OUT`: (exit code, stdout, stderr).
fn merge(logs: &[PathBuf], out: &Path) -> (i32, String, String) {
    let mut cmd = Command::new(mcptape());
    cmd.arg("merge").args(logs).arg("--out").arg(out);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

const RUN: &str = "--reads 40 --turns 10 --latency fixed:1ms";

#[test]
fn merge_of_two_bench_runs_sums_counts_and_adds_the_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, m) = (
        dir.path().join("A"),
        dir.path().join("B"),
        dir.path().join("M"),
    );
    let args = |seed: &'static str| {
        let mut v: Vec<&str> = RUN.split(' ').collect();
        v.extend(["--seed", seed]);
        v
    };
    let ra = bench(&args("1"), &a);
    let rb = bench(&args("2"), &b);
    let logs = [a.join("latency.hlog"), b.join("latency.hlog")];
    let (code, stdout, stderr) = merge(&logs, &m);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // The table names its columns and says what the counts are.
    for needle in [
        "tag",
        "n (sum)",
        "n per input",
        "p50 ms",
        "p99.9 ms",
        "max ms",
        "mean ms",
    ] {
        assert!(stdout.contains(needle), "{needle:?} in\n{stdout}");
    }
    assert!(
        stdout.contains("every merged count is the sum of the inputs' counts"),
        "{stdout}"
    );
    assert!(stdout.lines().count() <= 25, "one screen:\n{stdout}");

    let rm: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.join("report.json")).unwrap()).unwrap();
    assert_eq!(u(&rm["runs"]), 2);
    let tag = |name: &str| {
        rm["tags"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tag"] == name)
            .unwrap_or_else(|| panic!("tag {name} in {rm:#}"))
            .clone()
    };
    // Merged count = sum of both runs' report.json counts, per view.
    for (name, view) in [
        ("single", "single"),
        ("single-ok", "singleOk"),
        ("turn", "turn"),
        ("turn-reads", "turnReadsAll"),
    ] {
        let t = tag(name);
        let (na, nb) = (u(&ra[view]["count"]), u(&rb[view]["count"]));
        assert!(na > 0 && nb > 0, "{view}: {na} {nb}");
        assert_eq!(u(&t["latency"]["count"]), na + nb, "{name}");
        assert_eq!(t["inputCounts"], serde_json::json!([na, nb]), "{name}");
        assert!(stdout.contains(&format!("{na}+{nb}")), "{stdout}");
    }
    assert_eq!(u(&tag("single")["latency"]["count"]), 80);
    assert_eq!(u(&tag("turn")["latency"]["count"]), 20);
    for (phase, field) in [
        ("singlePhase", "sent"),
        ("singlePhase", "answeredOk"),
        ("turnPhase", "sent"),
        ("turnPhase", "answeredOk"),
    ] {
        assert_eq!(
            u(&rm[phase][field]),
            u(&ra[phase][field]) + u(&rb[phase][field]),
            "{phase}.{field}"
        );
    }
    assert_eq!(u(&rm["turns"]), u(&ra["turns"]) + u(&rb["turns"]));
    assert_eq!(rm["timeoutUs"], ra["timeoutUs"]);
    assert_eq!(rm["inputs"][0]["countersFrom"], "hlogHeader");
    assert_eq!(rm["inputs"][1]["seed"], 2);
    assert_eq!(rm["warnings"], serde_json::json!([]));

    // Merged quantiles = those of the decoded input histograms added together.
    let (la, lb) = (
        std::fs::read(&logs[0]).unwrap(),
        std::fs::read(&logs[1]).unwrap(),
    );
    for name in ["single", "single-ok", "turn", "turn-reads"] {
        let mut h = merge_hlog_tagged(&la, Some(name)).unwrap();
        h.add(merge_hlog_tagged(&lb, Some(name)).unwrap()).unwrap();
        let q = &tag(name)["latency"];
        assert_eq!(u(&q["count"]), h.len(), "{name}");
        assert_eq!(u(&q["p50Us"]), h.value_at_quantile(0.5), "{name}");
        assert_eq!(u(&q["p90Us"]), h.value_at_quantile(0.9), "{name}");
        assert_eq!(u(&q["p99Us"]), h.value_at_quantile(0.99), "{name}");
        assert_eq!(u(&q["p999Us"]), h.value_at_quantile(0.999), "{name}");
        assert_eq!(u(&q["maxUs"]), h.max(), "{name}");
        assert!(
            (q["meanUs"].as_f64().unwrap() - h.mean()).abs() < 1e-6,
            "{name}"
        );
    }

    // mcptape reads the merged log back.
    let merged = std::fs::read(m.join("latency.hlog")).unwrap();
    let text = String::from_utf8(merged.clone()).unwrap();
    assert!(text.contains("#[mcptape: {"), "{text}");
    assert_eq!(
        merge_hlog_tagged(&merged, Some("single")).unwrap().len(),
        80
    );

    // Python hdrhistogram reads the merged log (header line included).
    let script = r#"
import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
ref = HdrHistogram(1, 3600 * 1000 * 1000, 3)
r = HistogramLogReader(sys.argv[1], ref)
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    print("%s %d %d %d" % (h.get_tag(), h.get_total_count(), h.get_min_value(), h.get_max_value()))
"#;
    let o = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(m.join("latency.hlog"))
        .output()
        .expect("python (run scripts/install-peers.sh)");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let py: Vec<Vec<&str>> = out.lines().map(|l| l.split(' ').collect()).collect();
    let tags = rm["tags"].as_array().unwrap();
    assert_eq!(py.len(), tags.len(), "{out}");
    for (line, t) in py.iter().zip(tags) {
        assert_eq!(line[0], t["tag"].as_str().unwrap(), "{out}");
        assert_eq!(
            line[1].parse::<u64>().unwrap(),
            u(&t["latency"]["count"]),
            "{out}"
        );
        let h = merge_hlog_tagged(&merged, Some(line[0])).unwrap();
        // (Python's percentile rank rounds differently from the Rust crate's: compare min.)
        assert!(h.equivalent(line[2].parse().unwrap(), h.min()), "{out}");
        assert!(
            h.equivalent(line[3].parse().unwrap(), u(&t["latency"]["maxUs"])),
            "{out}"
        );
    }
}

/// Regression (issue 12): a log cut in the middle of its last line is an error naming the file
/// and the line; a log without the `#[mcptape: …]` header takes its counters from the
/// report.json beside it.
#[test]
fn merge_names_the_file_and_line_of_a_cut_log() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("A");
    let ra = bench(
        &["--reads", "10", "--turns", "2", "--latency", "fixed:1ms"],
        &a,
    );
    let log = std::fs::read_to_string(a.join("latency.hlog")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let last = lines[lines.len() - 1];
    assert!(last.contains(",HISTF"), "{last}");
    let cut_dir = dir.path().join("cut");
    std::fs::create_dir(&cut_dir).unwrap();
    let cut = cut_dir.join("latency.hlog");
    let keep = lines[..lines.len() - 1].join("\n");
    std::fs::write(&cut, format!("{keep}\n{}", &last[..last.len() / 2])).unwrap();
    let (code, stdout, stderr) = merge(
        &[a.join("latency.hlog"), cut.clone()],
        &dir.path().join("M"),
    );
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("{}: line {}: ", cut.display(), lines.len())),
        "{stderr}"
    );
    assert!(!dir.path().join("M/report.json").exists());

    // Without the header line and without report.json: refused; with report.json: merged.
    let bare_dir = dir.path().join("bare");
    std::fs::create_dir(&bare_dir).unwrap();
    let bare: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with("#[mcptape: "))
        .collect();
    assert_eq!(bare.len(), lines.len() - 1);
    std::fs::write(bare_dir.join("latency.hlog"), bare.join("\n") + "\n").unwrap();
    let (code, _, stderr) = merge(&[bare_dir.join("latency.hlog")], &dir.path().join("M"));
    assert_eq!(code, 2);
    assert!(stderr.contains("no counters"), "{stderr}");
    std::fs::copy(a.join("report.json"), bare_dir.join("report.json")).unwrap();
    let (code, stdout, stderr) = merge(&[bare_dir.join("latency.hlog")], &dir.path().join("M"));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("(counters: report.json)"), "{stdout}");
    let rm: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("M/report.json")).unwrap()).unwrap();
    assert_eq!(rm["singlePhase"]["sent"], ra["singlePhase"]["sent"]);
    assert_eq!(rm["inputs"][0]["countersFrom"], "reportJson");
}

/// Regression (issue 12): runs with different `--timeout` (the censoring bound) are not merged.
#[test]
fn merge_refuses_runs_with_different_timeouts() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("A"), dir.path().join("B"));
    let run = [
        "--reads",
        "10",
        "--turns",
        "2",
        "--latency",
        "fixed:1ms",
        "--timeout",
    ];
    let mut one = run.to_vec();
    one.push("5s");
    let mut two = run.to_vec();
    two.push("2s");
    bench(&one, &a);
    bench(&two, &b);
    let (code, stdout, stderr) = merge(
        &[a.join("latency.hlog"), b.join("latency.hlog")],
        &dir.path().join("M"),
    );
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    let b_log = b.join("latency.hlog");
    assert!(
        stderr.contains(&format!("{}: --timeout", b_log.display()))
            && stderr.contains("2000000 µs")
            && stderr.contains("5000000 µs"),
        "{stderr}"
    );
}
