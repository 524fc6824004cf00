//! `mcptape merge` (issue 12) on the logs of real `mcptape bench` runs (embedded `serve` child
//! over stdio, shipped transcript): merged counts are the sums of the runs' report.json counts,
//! merged quantiles are those of the decoded input histograms added together, the merged log
//! reads back in Python `hdrhistogram` (`.tools/venv`) and in mcptape; a cut line and a
//! different `--timeout` are errors naming the file.

use crate::record_support as support;

/// Python's reading of an HdrHistogram log, shared with the replay crate's `hlog_python` test.
use crate::hdrh_python;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcptape_report::render::merge_hlog_tagged;
use support::*;

/// `mcptape bench corpus/transcripts/everything-stdio.jsonl ARGS --out OUT` (must succeed); its
/// report.json.
fn bench(args: &[&str], out: &Path) -> serde_json::Value {
    let transcript = corpus_transcript("everything-stdio.jsonl");
    let (o, _) = run_bench(&transcript, args, Some(out));
    assert_success(&o, "bench");
    read_json(&out.join("report.json"))
}

/// `mcptape merge LOGS... --out OUT`, which must exit `code`: (stdout, stderr).
fn merge(logs: &[PathBuf], out: &Path, code: i32) -> (String, String) {
    let mut cmd = Command::new(mcptape());
    cmd.arg("merge").args(logs).arg("--out").arg(out);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{stdout}\n{stderr}");
    (stdout, stderr)
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
    let (stdout, _) = merge(&logs, &m, 0);
    // The table names its columns and says what the counts are.
    assert_has_all(
        &stdout,
        &[
            "tag",
            "n (sum)",
            "n per input",
            "p50 ms",
            "p99.9 ms",
            "max ms",
            "mean ms",
        ],
    );
    assert_has(
        &stdout,
        "every merged count is the sum of the inputs' counts",
    );
    assert!(stdout.lines().count() <= 25, "one screen:\n{stdout}");

    let rm = read_json(&m.join("report.json"));
    assert_eq!(u(&rm["runs"]), 2);
    let tag = |name: &str| element(&rm["tags"], "tag", name).clone();
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
        assert_has(&stdout, &format!("{na}+{nb}"));
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
    assert_has(&text, "#[mcptape: {");
    assert_eq!(
        merge_hlog_tagged(&merged, Some("single")).unwrap().len(),
        80
    );

    // Python hdrhistogram reads the merged log (header line included).
    let (py, out) = hdrh_python::read_log(&m.join("latency.hlog"));
    let tags = rm["tags"].as_array().unwrap();
    assert_eq!(py.len(), tags.len(), "{out}");
    for (line, t) in py.iter().zip(tags) {
        assert_eq!(line.tag, t["tag"].as_str().unwrap(), "{out}");
        assert_eq!(line.count, u(&t["latency"]["count"]), "{out}");
        let h = merge_hlog_tagged(&merged, Some(&line.tag)).unwrap();
        // (Python's percentile rank rounds differently from the Rust crate's: compare min.)
        assert!(h.equivalent(line.min, h.min()), "{out}");
        assert!(h.equivalent(line.max, u(&t["latency"]["maxUs"])), "{out}");
    }
}

/// Regression (issue 12): a log cut in the middle of its last line is an error naming the file
/// and the line; a log without the `#[mcptape: …]` header is refused, even with the run's
/// report.json beside it (no reading of older logs' counters from there).
#[test]
fn merge_names_the_file_and_line_of_a_cut_log() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("A");
    bench(
        &["--reads", "10", "--turns", "2", "--latency", "fixed:1ms"],
        &a,
    );
    let log = std::fs::read_to_string(a.join("latency.hlog")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let last = lines[lines.len() - 1];
    assert_has(last, ",HISTF");
    let cut_dir = dir.path().join("cut");
    std::fs::create_dir(&cut_dir).unwrap();
    let cut = cut_dir.join("latency.hlog");
    let keep = lines[..lines.len() - 1].join("\n");
    std::fs::write(&cut, format!("{keep}\n{}", &last[..last.len() / 2])).unwrap();
    let (_, stderr) = merge(
        &[a.join("latency.hlog"), cut.clone()],
        &dir.path().join("M"),
        2,
    );
    assert_has(
        &stderr,
        &format!("{}: line {}: ", cut.display(), lines.len()),
    );
    assert!(!dir.path().join("M/report.json").exists());

    // Without the header line: refused (its counters and settings are unknown), even with the
    // run's report.json beside it.
    let bare_dir = dir.path().join("bare");
    std::fs::create_dir(&bare_dir).unwrap();
    let bare: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with("#[mcptape: "))
        .collect();
    assert_eq!(bare.len(), lines.len() - 1);
    std::fs::write(bare_dir.join("latency.hlog"), bare.join("\n") + "\n").unwrap();
    std::fs::copy(a.join("report.json"), bare_dir.join("report.json")).unwrap();
    let (_, stderr) = merge(&[bare_dir.join("latency.hlog")], &dir.path().join("M"), 2);
    assert_has(&stderr, "no counters");
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
    let (_, stderr) = merge(
        &[a.join("latency.hlog"), b.join("latency.hlog")],
        &dir.path().join("M"),
        2,
    );
    let b_log = b.join("latency.hlog");
    assert!(
        stderr.contains(&format!("{}: --timeout", b_log.display()))
            && stderr.contains("2000000 µs")
            && stderr.contains("5000000 µs"),
        "{stderr}"
    );
}

/// One short bench run into `dir/NAME`: its `latency.hlog`.
fn small_run(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["--reads", "10", "--turns", "2", "--latency", "fixed:1ms"];
    args.extend_from_slice(extra);
    bench(&args, &dir.join(name));
    dir.join(name).join("latency.hlog")
}

/// Regression: `merge runA/latency.hlog runB/latency.hlog --out runA` overwrote the input
/// runA/latency.hlog; `--out` an existing file said only "File exists (os error 17)".
#[test]
fn merge_refuses_out_over_an_input_and_out_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = small_run(dir.path(), "runA", &[]);
    let b = small_run(dir.path(), "runB", &["--seed", "2"]);
    let before = std::fs::read(&a).unwrap();
    let report_before = std::fs::read(dir.path().join("runA/report.json")).unwrap();
    let (_, stderr) = merge(&[a.clone(), b.clone()], &dir.path().join("runA"), 2);
    assert_has(
        &stderr,
        &format!("latency.hlog is the input {}", a.display()),
    );
    assert_eq!(std::fs::read(&a).unwrap(), before, "the input is untouched");
    assert_eq!(
        std::fs::read(dir.path().join("runA/report.json")).unwrap(),
        report_before
    );
    let f = dir.path().join("F");
    std::fs::write(&f, "x").unwrap();
    let (_, stderr) = merge(&[a.clone(), b], &f, 2);
    assert_has(
        &stderr,
        &format!("--out {}: is a file, not a directory", f.display()),
    );
    assert!(!stderr.contains("os error 17"), "{stderr}");
}

/// Regression: a log cut at a line boundary (`head -n 8 latency.hlog`) merged with exit 0 and
/// partial=false; an edited header `"sent":999` was accepted.
#[test]
fn merge_refuses_a_log_cut_by_head_n_8_or_an_edited_sent_999() {
    let dir = tempfile::tempdir().unwrap();
    let a = small_run(dir.path(), "A", &[]);
    // The real log merges (its counters fit its histograms).
    merge(std::slice::from_ref(&a), &dir.path().join("M"), 0);
    let text = std::fs::read_to_string(&a).unwrap();
    let report = read_json(&dir.path().join("A/report.json"));
    // `head -n 8` of a run whose single phase fit in two 100 ms intervals: the log up to
    // its first turn line. A loaded machine spreads the phase over more intervals, so cut
    // at that line rather than at a fixed count.
    let lines: Vec<&str> = text.lines().collect();
    let first_turn = lines
        .iter()
        .position(|l| l.starts_with("Tag=turn,"))
        .unwrap_or_else(|| panic!("no turn line: {lines:?}"));
    let cut = dir.path().join("cut.hlog");
    std::fs::write(&cut, lines[..=first_turn].join("\n") + "\n").unwrap();
    let (_, stderr) = merge(std::slice::from_ref(&cut), &dir.path().join("M2"), 2);
    let ok = u(&report["singlePhase"]["answeredOk"]);
    assert_has(
        &stderr,
        &format!(
            "{}: tag \"single-ok\": header says {ok} single reads answered ok, the histograms hold 0: a cut or edited log",
            cut.display()
        ),
    );
    assert!(!dir.path().join("M2").exists());
    let sent = u(&report["singlePhase"]["sent"]);
    let edited = dir.path().join("edited.hlog");
    std::fs::write(
        &edited,
        text.replacen(&format!("\"sent\":{sent},"), "\"sent\":999,", 1),
    )
    .unwrap();
    let (_, stderr) = merge(std::slice::from_ref(&edited), &dir.path().join("M2"), 2);
    assert_has(
        &stderr,
        &format!("tag \"single\": header says 999 single reads sent, the histograms hold {sent}"),
    );
}

/// Regression: the same run twice (`merge A A`, or a copy) doubled every count silently.
#[test]
fn merge_same_run_twice_warns_and_the_same_file_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = small_run(dir.path(), "A", &[]);
    let (_, stderr) = merge(&[a.clone(), a.clone()], &dir.path().join("M"), 2);
    assert_has(&stderr, "the same file as input [1]");
    let copy = dir.path().join("copy.hlog");
    std::fs::copy(&a, &copy).unwrap();
    let (stdout, _) = merge(&[a.clone(), copy.clone()], &dir.path().join("M"), 0);
    assert_has(
        &stdout,
        &format!(
            "warning: {}: input [2] is the same run as [1] ({}) (same StartTime and header)",
            copy.display(),
            a.display()
        ),
    );
}

/// Regression: `--parallel 2` and `--parallel 4` runs merged with a warning and a header of
/// "4 reads per turn".
#[test]
fn merge_refuses_different_reads_per_turn() {
    let dir = tempfile::tempdir().unwrap();
    let a = small_run(dir.path(), "A", &["--parallel", "4"]);
    let b = small_run(dir.path(), "B", &["--parallel", "2"]);
    let (_, stderr) = merge(&[a.clone(), b.clone()], &dir.path().join("M"), 2);
    assert_has(
        &stderr,
        &format!(
            "{}: reads per turn (--parallel) is 2, the first input ({}) has 4: refusing to merge",
            b.display(),
            a.display()
        ),
    );
    assert!(!dir.path().join("M").exists());
}

/// Regression: `merge … | head -1` panicked "failed printing to stdout: Broken pipe" (exit 101).
#[test]
fn merge_into_a_closed_pipe_head_1_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let a = small_run(dir.path(), "A", &[]);
    let mut child = Command::new(mcptape())
        .arg("merge")
        .arg(&a)
        .arg("--out")
        .arg(dir.path().join("M"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before merge prints: every write fails with EPIPE.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(dir.path().join("M/latency.hlog").is_file());
}

/// Regression: `merge` of an empty file said "line 0".
#[test]
fn merge_of_an_empty_file_says_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let e = dir.path().join("empty.hlog");
    std::fs::write(&e, "").unwrap();
    let (_, stderr) = merge(std::slice::from_ref(&e), &dir.path().join("M"), 2);
    assert_has(&stderr, &format!("{}: empty file", e.display()));
    assert!(!stderr.contains("line 0"), "{stderr}");
}

/// Regression: `--out M` where `M/latency.hlog` is a hard link to an input passed the canonical
/// path check and truncated the input through the link; the shared same-file check (device and
/// inode) refuses it in merge's words.
#[test]
fn merge_refuses_out_over_a_hard_link_to_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = small_run(dir.path(), "runA", &[]);
    let b = small_run(dir.path(), "runB", &["--seed", "2"]);
    let m = dir.path().join("M");
    std::fs::create_dir(&m).unwrap();
    std::fs::hard_link(&a, m.join("latency.hlog")).unwrap();
    let before = std::fs::read(&a).unwrap();
    let (_, stderr) = merge(&[a.clone(), b], &m, 2);
    assert_has(
        &stderr,
        &format!(
            "--out {}: latency.hlog is the input {}: refusing to write over it",
            m.display(),
            a.display()
        ),
    );
    assert_eq!(std::fs::read(&a).unwrap(), before, "the input is untouched");
    assert!(!m.join("report.json").exists());
}

/// Issue 25: an input run with injected faults, and one cut at `--max-phase`, are each named
/// in a warning, on stderr and in report.json's `warnings`; a plain run adds none.
#[test]
fn merge_warns_about_a_faulted_input_and_a_cut_one_naming_each() {
    let dir = tempfile::tempdir().unwrap();
    let plain = small_run(dir.path(), "plain", &[]);
    let faulted = small_run(dir.path(), "faulted", &["--fault", "error=-32603@50%"]);
    bench(
        &[
            "--reads",
            "100000",
            "--turns",
            "2",
            "--latency",
            "fixed:1ms",
            "--max-phase",
            "300ms",
        ],
        &dir.path().join("cut"),
    );
    let cut = dir.path().join("cut").join("latency.hlog");
    let out = dir.path().join("M");
    let (_, stderr) = merge(&[plain.clone(), faulted.clone(), cut.clone()], &out, 0);
    let fault_warning = format!(
        "{}: a faulted run (--fault error=-32603@50%): its latencies and errors include injected faults",
        faulted.display()
    );
    let cut_warning = format!(
        "{}: a partial run: the single phase stopped at --max-phase 300 ms after",
        cut.display()
    );
    assert_has(&stderr, &format!("mcptape merge: warning: {fault_warning}"));
    assert!(stderr.contains(&cut_warning), "{stderr}");
    for what in ["a faulted run", "a partial run"] {
        let p = format!("{}: {what}", plain.display());
        assert!(!stderr.contains(&p), "{stderr}");
    }
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(warnings.contains(&fault_warning.as_str()), "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.starts_with(&cut_warning)),
        "{warnings:?}"
    );
}
