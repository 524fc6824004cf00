//! SARIF 2.1.0 output (`mcptape check --format sarif`), the format GitHub code
//! scanning (`github/codeql-action/upload-sarif`) and other CI systems read.
//!
//! Source: OASIS *Static Analysis Results Interchange Format (SARIF) Version
//! 2.1.0* (errata 01), sections cited per item below. The log holds one run:
//!
//! * `runs[0].tool.driver` (§3.18–3.19): `name` `mcptape`, `version` /
//!   `semanticVersion` (the crate version), `informationUri` (the repository),
//!   and one `reportingDescriptor` per rule of [`RULES`] (§3.49), in catalogue
//!   order: `id`, `name` (the id in PascalCase), `shortDescription` (the rule's
//!   summary), `fullDescription` and `help` (its `explain` text, what
//!   `mcptape explain RULE` prints), `defaultConfiguration.level`, and
//!   `properties` with `source` (spec revision + section), `revisions`,
//!   `severity` and `tags`.
//! * `runs[0].artifacts` (§3.24): one per transcript, with its
//!   revision, revision source, record and message counts in `properties`.
//! * `runs[0].results` (§3.27): one per [`crate::Finding`], in file then record
//!   order: `ruleId`, `ruleIndex`, `level` (`error` / `warning` from the
//!   severity; `note` for a finding accepted by `--allow` or a baseline,
//!   which also carries a `suppressions` entry, §3.35), `message.text`,
//!   one `physicalLocation` whose `artifactLocation.uri` is the transcript
//!   path relative to the working directory (`uriBaseId` `SRCROOT`, §3.4.4;
//!   an absolute `file://` URI when the path is outside it) and whose
//!   `region.startLine` is the transcript line (omitted for line 0), the JSON
//!   Pointer (RFC 6901) in `logicalLocations[0].fullyQualifiedName`
//!   (kind `member`) and in `properties.jsonPointer`, plus `properties.record`
//!   and `properties.requestId`; with a baseline, `baselineState` (§3.27.24)
//!   `new` or `unchanged`.
//! * `runs[0].invocations[0]` (§3.20): `executionSuccessful: true` (the check
//!   ran; findings are results, not execution failures) and `exitCode`
//!   (0 pass, 1 fail, as the command exits).
//!
//! Validated in `tests/sarif.rs` by Microsoft's SARIF Multitool (`validate`)
//! and by the SARIF 2.1.0 JSON schema it ships.
//!
//! Written one result at a time ([`write()`], [`write_streamed`]): since
//! `exitCode` and `artifacts` come before `results`, the results go compact
//! to an anonymous temporary file first and are pretty-printed from it; the
//! bytes are those of `serde_json::to_string_pretty` of [`sarif_log`].

use std::path::{Component, Path};

use serde::ser::{Error as _, SerializeSeq as _, SerializeStruct as _};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use crate::baseline::BaselineOutcome;
use crate::output::WriteError;
use crate::report::{FileFindings, FileReport, FindingRef, HeldFindings, Report, StreamedFindings};
use crate::rules::{RULES, Rule, Severity};

/// The SARIF version written (`version`).
pub const SARIF_VERSION: &str = "2.1.0";

/// The `$schema` URI written: the SARIF 2.1.0 schema as SchemaStore
/// publishes it (the URI GitHub's documentation uses).
pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The `uriBaseId` of every relative artifact URI: the directory `check`
/// ran in (for CI, the repository root), SARIF §3.4.4 / §3.14.14.
pub const SRCROOT: &str = "SRCROOT";

/// `tool.driver.name`.
pub const TOOL_NAME: &str = "mcptape";

/// How [`render_with`] places and qualifies results.
#[derive(Debug, Clone, Copy, Default)]
pub struct SarifOptions<'a> {
    /// Directory that relative artifact URIs are relative to (the working
    /// directory of `check`). `None`: paths are written as the findings name
    /// them (normalized, see [`artifact_path`]).
    pub base_dir: Option<&'a Path>,
    /// The outcome of `--baseline` (sets `baselineState` on every result).
    pub baseline: Option<&'a BaselineOutcome>,
}

/// The transcript path of a finding as a `/`-separated path relative to
/// `base_dir` when it lies below it: `./a/b.jsonl` → `a/b.jsonl`,
/// `/work/repo/a.jsonl` with base `/work/repo` → `a.jsonl`. `.` components are
/// dropped; `..` and absolute paths outside `base_dir` are kept as they are.
/// No filesystem access (no canonicalization: a symlinked path stays as named).
pub fn artifact_path(file: &str, base_dir: Option<&Path>) -> String {
    let p = Path::new(file);
    let rel = match base_dir {
        Some(b) if p.is_absolute() => p.strip_prefix(b).unwrap_or(p),
        _ => p,
    };
    let mut out = String::new();
    for c in rel.components() {
        match c {
            Component::CurDir => continue,
            Component::RootDir => out.push('/'),
            Component::Prefix(x) => out.push_str(&x.as_os_str().to_string_lossy()),
            Component::ParentDir | Component::Normal(_) => {
                if !out.is_empty() && !out.ends_with('/') {
                    out.push('/');
                }
                out.push_str(&c.as_os_str().to_string_lossy());
            }
        }
    }
    if out.is_empty() { ".".to_owned() } else { out }
}

/// Percent-encodes a `/`-separated path for a URI path (RFC 3986 §2.1, §3.3):
/// [`mcptape_uri::encode_path`].
fn uri_path(path: &str) -> String {
    mcptape_uri::encode_path(path)
}

/// The `artifactLocation` of a transcript: relative (`uriBaseId` SRCROOT) or
/// an absolute `file://` URI.
fn artifact_location(file: &str, base_dir: Option<&Path>, index: usize) -> Value {
    let path = artifact_path(file, base_dir);
    if path.starts_with('/') {
        json!({ "uri": format!("file://{}", uri_path(&path)), "index": index })
    } else {
        json!({ "uri": uri_path(&path), "uriBaseId": SRCROOT, "index": index })
    }
}

/// `contents-text-and-blob` → `ContentsTextAndBlob` (SARIF §3.49.7: a
/// friendly name, distinct from the opaque id).
fn pascal_case(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// A rule's text for SARIF: `message` strings should end with a period (the
/// Multitool's SARIF2008 / SARIF1001 advice for plain text).
fn sentence(s: &str) -> String {
    let s = s.trim_end();
    if s.ends_with(['.', '!', '?']) {
        s.to_owned()
    } else {
        format!("{s}.")
    }
}

fn descriptor(r: &Rule) -> Value {
    let explain = sentence(r.explain);
    json!({
        "id": r.id,
        "name": pascal_case(r.id),
        "shortDescription": { "text": sentence(r.summary) },
        "fullDescription": { "text": explain },
        "help": {
            "text": format!("{explain} Source: {}. Revisions: {}.", r.source, r.revisions),
            "markdown": format!(
                "**{}** ({})\n\n{}\n\nSource: {}. Revisions: {}. Run `mcptape explain {}` for this text.",
                r.id, r.severity, explain, r.source, r.revisions, r.id
            ),
        },
        "defaultConfiguration": { "level": level(r.severity) },
        "properties": {
            "source": r.source,
            "revisions": r.revisions,
            "severity": r.severity.as_str(),
            "tags": ["mcp", "conformance"],
        },
    })
}

/// The `result` of finding `f` of artifact `artifact`; `allowed_rules`:
/// the rules named by `--allow`.
fn result(
    f: FindingRef<'_>,
    artifact: usize,
    opts: &SarifOptions<'_>,
    baselined: Option<bool>,
    allowed_rules: &[String],
) -> Value {
    let rule_index = RULES.iter().position(|r| r.id == f.rule);
    let accepted_by_allow = f.allowed && allowed_rules.iter().any(|a| a == f.rule);
    let accepted = f.allowed;
    let mut physical = Map::new();
    physical.insert(
        "artifactLocation".into(),
        artifact_location(f.file, opts.base_dir, artifact),
    );
    if f.line > 0 {
        physical.insert("region".into(), json!({ "startLine": f.line }));
    }
    let mut location = Map::new();
    location.insert("physicalLocation".into(), Value::Object(physical));
    if !f.pointer.is_empty() {
        let name = f.pointer.rsplit('/').next().unwrap_or_default();
        location.insert(
            "logicalLocations".into(),
            json!([{ "name": name, "fullyQualifiedName": f.pointer, "kind": "member" }]),
        );
    }
    let mut props = Map::new();
    props.insert("jsonPointer".into(), json!(f.pointer));
    props.insert("record".into(), json!(f.record));
    if let Some(id) = f.request_id {
        props.insert("requestId".into(), json!(id));
    }
    props.insert("allowed".into(), json!(f.allowed));
    let mut r = Map::new();
    r.insert("ruleId".into(), json!(f.rule));
    if let Some(i) = rule_index {
        r.insert("ruleIndex".into(), json!(i));
    }
    r.insert(
        "level".into(),
        json!(if accepted { "note" } else { level(f.severity) }),
    );
    r.insert("message".into(), json!({ "text": sentence(f.message) }));
    r.insert("locations".into(), json!([Value::Object(location)]));
    if let Some(b) = baselined {
        r.insert(
            "baselineState".into(),
            json!(if b { "unchanged" } else { "new" }),
        );
    }
    if accepted {
        let why = if baselined == Some(true) && !accepted_by_allow {
            "in the --baseline file of expected findings".to_owned()
        } else {
            format!("allowed with --allow {}", f.rule)
        };
        r.insert(
            "suppressions".into(),
            json!([{ "kind": "external", "status": "accepted", "justification": why }]),
        );
    }
    r.insert("properties".into(), Value::Object(props));
    Value::Object(r)
}

/// The `artifacts` entry of transcript `fr` (number `index`).
fn artifact(fr: &FileReport, index: usize, opts: &SarifOptions<'_>) -> Value {
    let mut loc = artifact_location(&fr.file, opts.base_dir, index);
    if let Value::Object(m) = &mut loc {
        m.remove("index");
    }
    json!({
        "location": loc,
        "roles": ["analysisTarget"],
        "mimeType": "application/jsonl",
        "properties": {
            "revision": fr.revision.as_str(),
            "revisionSource": fr.revision_source.to_string(),
            "records": fr.records,
            "messages": fr.messages,
        },
    })
}

/// `runs[0].tool`.
fn tool() -> Value {
    json!({
        "driver": {
            "name": TOOL_NAME,
            "fullName": "mcptape check (MCP transcript conformance rules)",
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "informationUri": env!("CARGO_PKG_REPOSITORY"),
            "rules": RULES.iter().map(|r| descriptor(r)).collect::<Vec<_>>(),
        }
    })
}

/// `runs[0].invocations`: the check ran, exiting `exit_code`.
fn invocations(exit_code: i32) -> Value {
    json!([{
        "executionSuccessful": true,
        "exitCode": exit_code,
    }])
}

/// The SARIF log of `report` as a JSON value (see the module docs for its
/// shape). Holds every result in memory: [`write()`] streams the same log.
pub fn sarif_log(report: &Report, opts: &SarifOptions<'_>) -> Value {
    let mut artifacts = Vec::with_capacity(report.files.len());
    let mut results = Vec::new();
    for (i, fr) in report.files.iter().enumerate() {
        artifacts.push(artifact(fr, i, opts));
        for (j, f) in fr.findings.iter().enumerate() {
            let baselined = opts.baseline.map(|b| b.is_baselined(i, j));
            results.push(result(
                f.as_ref(),
                i,
                opts,
                baselined,
                &report.allowed_rules,
            ));
        }
    }
    let exit_code = i32::from(!report.passed());
    json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": tool(),
            "invocations": invocations(exit_code),
            "artifacts": artifacts,
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    })
}

/// The SARIF log of `report`, pretty-printed with a trailing newline: the
/// bytes [`write()`] writes.
pub fn render_with(report: &Report, opts: &SarifOptions<'_>) -> String {
    let mut out = Vec::new();
    // Writing into a Vec fails only when the temporary file of results
    // cannot be made or read back.
    if let Err(e) = write(report, opts, &mut out) {
        return format!("{{\"error\":{:?}}}\n", e.to_string());
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`render_with`] with default options (paths as named, no baseline).
pub fn sarif(report: &Report) -> String {
    render_with(report, &SarifOptions::default())
}

/// Writes the SARIF log of `report` to `out`, pretty-printed with a
/// trailing newline (the bytes of `serde_json::to_string_pretty` of
/// [`sarif_log`]), one result at a time: the results go to an anonymous
/// temporary file as they are made (`invocations[0].exitCode` and
/// `artifacts` come before them in the log), then are copied out; memory
/// holds one result and one artifact per transcript, besides `report`.
///
/// # Errors
/// I/O errors of `out` and of the temporary file.
pub fn write(
    report: &Report,
    opts: &SarifOptions<'_>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let files = report
        .files
        .iter()
        .map(|report| Ok(HeldFindings { report, at: 0 }));
    write_files(files, &report.allowed_rules, opts, out)
        .map(|_| ())
        .map_err(|e| match e {
            WriteError::Io(e) => e,
            e => std::io::Error::other(e),
        })
}

/// Writes the SARIF log of `reports` (from [`crate::check_paths_streamed`])
/// as the files are checked, one finding at a time: the bytes [`write()`]
/// gives for the [`Report`] [`crate::check_paths`] would build, without
/// ever holding every finding (`opts.baseline` applies to that report's
/// finding numbers). `allowed_rules`: the rules named by `--allow`. Returns
/// the totals (the exit status is [`crate::Summary::errors`] `== 0`).
///
/// # Errors
/// [`WriteError::Check`] when a file cannot be checked (nothing has been
/// written to `out` then); [`WriteError::Io`] for `out`, the temporary
/// file, or spilled findings read back.
pub fn write_streamed(
    reports: &mut dyn Iterator<Item = Result<crate::StreamedReport, crate::CheckError>>,
    allowed_rules: &[String],
    opts: &SarifOptions<'_>,
    out: &mut dyn std::io::Write,
) -> Result<crate::Summary, WriteError> {
    let files = reports.map(|r| {
        r.map(|report| StreamedFindings { report, at: 0 })
            .map_err(WriteError::from)
    });
    let summary = write_files(files, allowed_rules, opts, out)?;
    out.flush()?;
    Ok(summary)
}

/// Write buffer of the temporary file of results, and read buffer of it (64 KiB).
const RESULTS_BUFFER_BYTES: usize = 64 << 10;

/// The log of `files`: their results written compact, one a line, to a
/// temporary file while the artifacts and totals are gathered, then the log
/// serialized with those lines read back one at a time.
fn write_files<F: FileFindings>(
    files: impl Iterator<Item = Result<F, WriteError>>,
    allowed_rules: &[String],
    opts: &SarifOptions<'_>,
    out: &mut dyn std::io::Write,
) -> Result<crate::Summary, WriteError> {
    use std::io::{Seek as _, Write as _};

    let mut summary = crate::Summary::default();
    let mut artifacts = Vec::new();
    let mut tmp = tempfile::tempfile()?;
    let mut w = std::io::BufWriter::with_capacity(RESULTS_BUFFER_BYTES, &mut tmp);
    for (i, file) in files.enumerate() {
        let mut file = file?;
        summary.files += 1;
        artifacts.push(artifact(file.head(), i, opts));
        let mut j = 0;
        while let Some(f) = file.next_ref() {
            let f = f?;
            crate::output::count(&mut summary, f);
            let baselined = opts.baseline.map(|b| b.is_baselined(i, j));
            serde_json::to_writer(&mut w, &result(f, i, opts, baselined, allowed_rules))
                .map_err(std::io::Error::from)?;
            w.write_all(b"\n")?;
            j += 1;
        }
    }
    w.flush()?;
    drop(w);
    tmp.rewind()?;
    let log = Log {
        exit_code: i32::from(summary.errors != 0),
        artifacts,
        results: std::cell::RefCell::new(Some(std::io::BufReader::with_capacity(
            RESULTS_BUFFER_BYTES,
            tmp,
        ))),
        failed: std::cell::RefCell::new(None),
    };
    let written = serde_json::to_writer_pretty(&mut *out, &log);
    if let Some(e) = log.failed.borrow_mut().take() {
        return Err(e.into());
    }
    // `From`, not `other`: the writer's error keeps its kind (a reader gone
    // away stays `BrokenPipe`, which `check` ends quietly on).
    written.map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(summary)
}

/// The log as [`sarif_log`] builds it, its results read back from the
/// temporary file as they are serialized.
struct Log {
    exit_code: i32,
    artifacts: Vec<Value>,
    results: std::cell::RefCell<Option<std::io::BufReader<std::fs::File>>>,
    /// Why reading the results back stopped.
    failed: std::cell::RefCell<Option<std::io::Error>>,
}

impl Serialize for Log {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Log", 3)?;
        st.serialize_field("$schema", SARIF_SCHEMA_URI)?;
        st.serialize_field("version", SARIF_VERSION)?;
        st.serialize_field("runs", &[RunOut(self)])?;
        st.end()
    }
}

struct RunOut<'l>(&'l Log);

impl Serialize for RunOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Run", 5)?;
        st.serialize_field("tool", &tool())?;
        st.serialize_field("invocations", &invocations(self.0.exit_code))?;
        st.serialize_field("artifacts", &self.0.artifacts)?;
        st.serialize_field("results", &ResultsOut(self.0))?;
        st.serialize_field("columnKind", "unicodeCodePoints")?;
        st.end()
    }
}

struct ResultsOut<'l>(&'l Log);

impl Serialize for ResultsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use std::io::BufRead as _;

        let mut seq = s.serialize_seq(None)?;
        let Some(mut lines) = self.0.results.borrow_mut().take() else {
            return seq.end();
        };
        let mut line = String::new();
        loop {
            line.clear();
            let read = lines.read_line(&mut line).and_then(|n| {
                if n == 0 {
                    return Ok(None);
                }
                serde_json::from_str::<Value>(&line)
                    .map(Some)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            });
            match read {
                Ok(Some(r)) => seq.serialize_element(&r)?,
                Ok(None) => break,
                Err(e) => {
                    *self.0.failed.borrow_mut() = Some(e);
                    return Err(S::Error::custom("the results could not be read back"));
                }
            }
        }
        seq.end()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn artifact_path_relativizes_and_normalizes() {
        let base = Path::new("/work/repo");
        assert_eq!(artifact_path("./a/./b.jsonl", None), "a/b.jsonl");
        assert_eq!(
            artifact_path("/work/repo/a/b.jsonl", Some(base)),
            "a/b.jsonl"
        );
        assert_eq!(
            artifact_path("/elsewhere/b.jsonl", Some(base)),
            "/elsewhere/b.jsonl"
        );
        assert_eq!(artifact_path("../x.jsonl", Some(base)), "../x.jsonl");
    }

    #[test]
    fn uri_path_percent_encodes_space_and_percent() {
        assert_eq!(uri_path("a b/c%d#e.jsonl"), "a%20b/c%25d%23e.jsonl");
        assert_eq!(uri_path("é"), "%C3%A9");
    }

    /// The log as it was built before results were streamed: the whole
    /// `Value`, pretty-printed.
    fn pretty_log(report: &Report, opts: &SarifOptions<'_>) -> String {
        serde_json::to_string_pretty(&sarif_log(report, opts)).unwrap() + "\n"
    }

    /// 3,000 findings (errors, allowed errors, warnings; texts to escape),
    /// some baselined, three files (one without findings), paths relative
    /// to a base: [`write()`] gives the bytes of the pretty-printed
    /// [`sarif_log`], and so does [`write_files`] from streamed reports.
    #[test]
    fn sarif_written_a_result_at_a_time_is_the_pretty_printed_sarif_log() {
        let mut report = crate::report::samples::report(3000);
        report.files[0].findings[3].allowed = true;
        let outcome = BaselineOutcome {
            baselined: [(0, 3), (0, 4), (1, 0)].into_iter().collect(),
            new: vec![(0, 0)],
            fixed: Vec::new(),
        };
        let base = Path::new("/work/repo");
        for opts in [
            SarifOptions::default(),
            SarifOptions {
                base_dir: Some(base),
                baseline: Some(&outcome),
            },
        ] {
            let want = pretty_log(&report, &opts);
            assert!(want.contains("\"baselineState\"") == opts.baseline.is_some());
            assert!(render_with(&report, &opts) == want, "render_with differs");
            let mut out = Vec::new();
            write(&report, &opts, &mut out).unwrap();
            assert!(out == want.as_bytes(), "write differs");
        }
    }

    /// No transcript at all: empty `artifacts` and `results`, as before.
    #[test]
    fn sarif_of_no_transcripts_written_a_result_at_a_time_is_the_pretty_printed_sarif_log() {
        let report = Report::new(Vec::new(), Vec::new());
        let opts = SarifOptions::default();
        let got = render_with(&report, &opts);
        assert!(got.contains("\"results\": []"));
        assert_eq!(got, pretty_log(&report, &opts));
    }

    /// A writer whose reader went away.
    pub(crate) struct ClosedPipe;

    impl std::io::Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Regression: the log is serialized through `serde_json`, whose error
    /// must give back the writer's (`check | head -1` ends quietly on
    /// `BrokenPipe` only).
    #[test]
    fn sarif_write_into_a_closed_pipe_fails_with_broken_pipe() {
        let report = crate::report::samples::report(10);
        let e = write(&report, &SarifOptions::default(), &mut ClosedPipe).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }

    #[test]
    fn pascal_case_of_rule_ids() {
        assert_eq!(pascal_case("contents-text-and-blob"), "ContentsTextAndBlob");
        assert_eq!(
            pascal_case("result-missing-resultType"),
            "ResultMissingResultType"
        );
    }
}
