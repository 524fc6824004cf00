//! Regression: writers replaced their own input (`import har rec.har -o rec.har` turned the HAR
//! into a transcript, `check c1.jsonl -o c1.jsonl` replaced the transcript by the report). Every
//! writer now refuses an output that is one of its inputs (same file: the path as given, another
//! spelling, a symlink or a hard link) with exit 2, naming both paths, the input untouched; an
//! output next to the inputs or inside an input directory is written.

use std::path::Path;
use std::process::{Command, Output};

use crate::record_support::{
    mcptape_in as mcptape, repo_root as repo, run_bounded, stderr_text as stderr,
};

/// Runs `args` in `dir`, expects the refusal of writing `out` over `input` (both as spelled in
/// `args`) and `file` unchanged.
fn assert_refused(dir: &Path, args: &[&str], flag: &str, out: &str, input: &str, file: &str) {
    let want =
        format!("{flag} {out}: refusing to write over the input {input} ({flag} is that file)");
    assert_refusal(dir.join(file), args, || mcptape(dir, args), &want);
}

/// Runs `run` (the command `args`), expects exit 2 with `want` in its stderr, and `file`
/// unchanged.
fn assert_refusal(
    file: std::path::PathBuf,
    args: &[&str],
    run: impl FnOnce() -> Output,
    want: &str,
) {
    let before = std::fs::read(&file).unwrap();
    let o = run();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert!(e.contains(want), "{args:?}: {e}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "{args:?}: the input is untouched"
    );
}

/// Runs `args` in `dir`, which must exit `code`.
fn assert_exits(dir: &Path, args: &[&str], code: i32) {
    let o = mcptape(dir, args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
}

/// Runs `args` in `dir`, which must exit 0 having written `file` (an output that is no input).
fn assert_writes(dir: &Path, args: &[&str], file: &str) {
    assert_exits(dir, args, 0);
    assert!(dir.join(file).is_file(), "{args:?}: no {file}");
}

/// A temp dir with `rec-http.jsonl` (a Streamable HTTP recording) and `c1.jsonl` (a violation).
fn workdir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("corpus/transcripts/everything-http.jsonl"),
        tmp.path().join("rec-http.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        repo().join("corpus/violations/error-id-null.jsonl"),
        tmp.path().join("c1.jsonl"),
    )
    .unwrap();
    tmp
}

#[test]
fn import_har_refuses_to_write_over_its_input() {
    let tmp = workdir();
    let d = tmp.path();
    assert_exits(d, &["export", "har", "rec-http.jsonl", "-o", "rec.har"], 0);
    let args = ["import", "har", "rec.har", "-o", "rec.har"];
    assert_refused(d, &args, "-o", "rec.har", "rec.har", "rec.har");
    let args = ["import", "har", "rec.har", "-o", "./rec.har"];
    assert_refused(d, &args, "-o", "./rec.har", "rec.har", "rec.har");
    std::os::unix::fs::symlink("rec.har", d.join("link.har")).unwrap();
    let args = ["import", "har", "rec.har", "-o", "link.har"];
    assert_refused(d, &args, "-o", "link.har", "rec.har", "rec.har");
    // Another file is written.
    let args = ["import", "har", "rec.har", "-o", "back.jsonl"];
    assert_writes(d, &args, "back.jsonl");
}

#[test]
fn export_har_refuses_to_write_over_its_input() {
    let tmp = workdir();
    let d = tmp.path();
    let args = ["export", "har", "rec-http.jsonl", "-o", "rec-http.jsonl"];
    assert_refused(
        d,
        &args,
        "-o",
        "rec-http.jsonl",
        "rec-http.jsonl",
        "rec-http.jsonl",
    );
    std::fs::hard_link(d.join("rec-http.jsonl"), d.join("hard.jsonl")).unwrap();
    let args = ["export", "har", "rec-http.jsonl", "-o", "hard.jsonl"];
    assert_refused(
        d,
        &args,
        "-o",
        "hard.jsonl",
        "rec-http.jsonl",
        "rec-http.jsonl",
    );
}

#[test]
fn export_k6_refuses_to_write_over_its_input() {
    let tmp = workdir();
    let d = tmp.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    let args = [
        "export",
        "k6",
        "rec-http.jsonl",
        "-o",
        "sub/../rec-http.jsonl",
    ];
    assert_refused(
        d,
        &args,
        "-o",
        "sub/../rec-http.jsonl",
        "rec-http.jsonl",
        "rec-http.jsonl",
    );
    let args = ["export", "k6", "rec-http.jsonl", "-o", "sub/k6.js"];
    assert_writes(d, &args, "sub/k6.js");
}

#[test]
fn check_output_refuses_to_write_over_its_input_in_every_format() {
    let tmp = workdir();
    let d = tmp.path();
    for format in ["human", "json", "junit", "sarif"] {
        let args = ["check", "c1.jsonl", "--format", format, "-o", "c1.jsonl"];
        assert_refused(d, &args, "-o", "c1.jsonl", "c1.jsonl", "c1.jsonl");
    }
    // A file of an input directory is an input; a new file inside it is not.
    std::fs::create_dir(d.join("t")).unwrap();
    std::fs::copy(d.join("c1.jsonl"), d.join("t/c1.jsonl")).unwrap();
    let args = ["check", "t", "-o", "t/c1.jsonl"];
    assert_refused(d, &args, "-o", "t/c1.jsonl", "t/c1.jsonl", "t/c1.jsonl");
    assert_exits(d, &["check", "t", "-o", "t/report.txt"], 1);
    assert!(
        std::fs::read_to_string(d.join("t/report.txt"))
            .unwrap()
            .contains("error-id-null")
    );
    // --write-baseline over a transcript, -o over the baseline read.
    let args = ["check", "t", "--write-baseline", "t/c1.jsonl"];
    assert_refused(
        d,
        &args,
        "--write-baseline",
        "t/c1.jsonl",
        "t/c1.jsonl",
        "t/c1.jsonl",
    );
    assert_exits(d, &["check", "t", "--write-baseline", "b.json"], 0);
    let args = ["check", "t", "--baseline", "b.json", "-o", "b.json"];
    assert_refused(d, &args, "-o", "b.json", "b.json", "b.json");
}

#[test]
fn bench_out_refuses_to_write_over_its_transcript() {
    let tmp = workdir();
    // A transcript that happens to be named like one of bench's outputs.
    std::fs::rename(
        tmp.path().join("rec-http.jsonl"),
        tmp.path().join("report.json"),
    )
    .unwrap();
    assert_refused(
        tmp.path(),
        &["bench", "report.json", "--out", "."],
        "--out",
        "./report.json",
        "report.json",
        "report.json",
    );
}

#[test]
fn record_refuses_a_transcript_that_is_its_own_stdin() {
    let tmp = workdir();
    let t = tmp.path().join("c1.jsonl");
    let before = std::fs::read(&t).unwrap();
    // `record -o t -- cat < t` read back what it wrote, without end (3.6 GB in 30 s).
    let o = Command::new(env!("CARGO_BIN_EXE_mcptape"))
        .args(["record", "-o", "c1.jsonl", "--", "cat"])
        .current_dir(tmp.path())
        .stdin(std::fs::File::open(&t).unwrap())
        .output()
        .expect("run mcptape");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("-o c1.jsonl: refusing to write over the input /dev/stdin (-o is that file)"),
        "{e}"
    );
    assert_eq!(std::fs::read(&t).unwrap(), before, "the input is untouched");
}

#[test]
fn record_refuses_a_transcript_the_server_is_given() {
    let tmp = workdir();
    // `record -o t -- mcptape serve t` truncated serve's input before serve started.
    let bin = env!("CARGO_BIN_EXE_mcptape");
    assert_refused(
        tmp.path(),
        &["record", "-o", "c1.jsonl", "--", bin, "serve", "./c1.jsonl"],
        "-o",
        "c1.jsonl",
        "./c1.jsonl",
        "c1.jsonl",
    );
}

/// `mcptape ARGS` run in `dir` with `PATH` set to `path`, stdin closed, killed after 60 s (a
/// hang fails the test).
fn mcptape_bounded(dir: &Path, path: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcptape"));
    cmd.args(args).current_dir(dir);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    run_bounded(&mut cmd, std::time::Duration::from_secs(60)).0
}

/// A temp dir holding an executable script `srv.sh` (a server that exits at once).
fn script_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let s = tmp.path().join("srv.sh");
    std::fs::write(&s, "#!/bin/sh\nexit 0\n").unwrap();
    let mut perm = std::fs::metadata(&s).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&s, perm).unwrap();
    tmp
}

/// Expects `args` (run in `dir`) refused with exit 2 naming `-o OUT` and the server file
/// `input`, and `srv.sh` unchanged.
fn assert_server_file_refused(dir: &Path, path: Option<&Path>, args: &[&str], input: &str) {
    let want = format!("refusing to write over the input {input} (-o is that file)");
    assert_refusal(
        dir.join("srv.sh"),
        args,
        || mcptape_bounded(dir, path, args),
        &want,
    );
}

/// Regression (issue 28): `record -o ./srv.sh -- ./srv.sh` wrote the transcript header over the
/// server's own executable, then failed "Text file busy".
#[test]
fn record_refuses_the_servers_own_program_as_output() {
    let tmp = script_dir();
    assert_server_file_refused(
        tmp.path(),
        None,
        &["record", "-o", "./srv.sh", "--", "./srv.sh"],
        "./srv.sh",
    );
    // Another spelling of the same file.
    assert_server_file_refused(
        tmp.path(),
        None,
        &["record", "-o", "srv.sh", "--", "./srv.sh"],
        "./srv.sh",
    );
}

/// Regression (issue 28): `crawl -o srv.sh -- srv.sh` (found on PATH) overwrote the server's
/// executable: crawl had no overwrite guard at all.
#[test]
fn crawl_refuses_the_servers_program_found_on_path_as_output() {
    let tmp = script_dir();
    let path = tmp.path().to_owned();
    let on_path = path.join("srv.sh");
    assert_server_file_refused(
        tmp.path(),
        Some(&path),
        &["crawl", "-o", "srv.sh", "--", "srv.sh"],
        "srv.sh",
    );
    // From another directory: only PATH leads to it.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = mcptape_bounded(
        elsewhere.path(),
        Some(&path),
        &["crawl", "-o", on_path.to_str().unwrap(), "--", "srv.sh"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "refusing to write over the input {}",
            on_path.display()
        )),
        "{}",
        stderr(&o)
    );
}

/// Regression (issue 28): `crawl -o s.sh -- bash s.sh` let bash execute its own growing
/// transcript (64 KB of it); `record` refuses the same.
#[test]
fn crawl_and_record_refuse_a_script_given_to_an_interpreter_as_output() {
    let tmp = script_dir();
    for sub in ["crawl", "record"] {
        assert_server_file_refused(
            tmp.path(),
            None,
            &[sub, "-o", "srv.sh", "--", "sh", "srv.sh"],
            "srv.sh",
        );
    }
}

/// `serve --stats` over the transcript it serves would replace it with the stats JSON.
#[test]
fn serve_stats_refuses_to_write_over_the_transcript() {
    let tmp = workdir();
    assert_refused(
        tmp.path(),
        &["serve", "c1.jsonl", "--stats", "./c1.jsonl"],
        "--stats",
        "./c1.jsonl",
        "c1.jsonl",
        "c1.jsonl",
    );
}
