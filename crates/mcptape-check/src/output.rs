//! Report formats: human text, JSON, JUnit XML, SARIF 2.1.0 ([`crate::sarif`]).
//!
//! * human — one line per finding, `FILE:LINE: SEVERITY[RULE] MESSAGE (id ID, at POINTER)`,
//!   a per-file header with the revision used, and a summary line.
//! * JSON — the [`Report`] serialized (camelCase): `files[].findings[]` with
//!   `rule`, `severity`, `allowed`, `file`, `record`, `line`, `requestId`,
//!   `pointer`, `message`; `summary` with `files`, `errors`, `warnings`, `allowed`.
//! * JUnit — the de-facto schema CI systems read (Jenkins / GitLab / GitHub
//!   reporters): `<testsuites>` with one `<testsuite>` per transcript and one
//!   `<testcase classname="FILE" name="RULE">` per rule of the catalogue. A
//!   test case holds a `<failure>` when unallowed error findings fired, is
//!   `<skipped>` when they fired but were allowed, and lists warning
//!   findings in `<system-out>`; a rule that did not fire is a passing case.

use mcptape_report::render::junit::{Failure, TestCase, TestSuite, document};

use crate::report::{Finding, FindingRef, Report};
use crate::rules::{RULES, Severity};

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text for people.
    Human,
    /// The JSON report.
    Json,
    /// JUnit XML for CI.
    Junit,
    /// SARIF 2.1.0 for code scanning ([`crate::sarif`]; paths as named, no
    /// baseline: use [`crate::sarif::render_with`] for those).
    Sarif,
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Human => human(report),
        Format::Json => json(report),
        Format::Junit => junit(report),
        Format::Sarif => crate::sarif::sarif(report),
    }
}

/// Writes `report` in `format` to `out` as it is rendered: the human and
/// JSON formats go out finding by finding, never held whole in memory (the
/// same bytes as [`render`]); JUnit and SARIF are rendered, then written.
///
/// # Errors
/// The writer's I/O error.
pub fn write_report(
    report: &Report,
    format: Format,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Human => write_human(report, out),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, report).map_err(std::io::Error::other)?;
            out.write_all(b"\n")
        }
        Format::Junit | Format::Sarif => out.write_all(render(report, format).as_bytes()),
    }
}

/// One finding's human line, `FILE:LINE: SEVERITY[RULE] MESSAGE (record R,
/// id ID, at POINTER, allowed)` (each part in parentheses only when it
/// applies; no parentheses when none does), written straight into the
/// output: no string per line or part (125,000 findings of a long
/// transcript, issue 22).
struct FindingLine<'a>(FindingRef<'a>);

impl FindingLine<'_> {
    /// The line's pieces in order, each given to `put` (no `core::fmt`
    /// machinery per piece; the numbers by `itoa`).
    fn each_piece<E>(&self, mut put: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
        let f = &self.0;
        let mut num = itoa::Buffer::new();
        for piece in [
            f.file,
            ":",
            num.format(f.line),
            ": ",
            f.severity.as_str(),
            "[",
        ] {
            put(piece)?;
        }
        for piece in [f.rule, "] ", f.message] {
            put(piece)?;
        }
        let mut sep = " (";
        let mut part = |put: &mut dyn FnMut(&str) -> Result<(), E>, label: &str, value: &str| {
            put(sep)?;
            sep = ", ";
            put(label)?;
            put(value)
        };
        if f.record > 0 {
            part(&mut put, "record ", num.format(f.record))?;
        }
        if let Some(id) = f.request_id {
            part(&mut put, "id ", id)?;
        }
        if !f.pointer.is_empty() {
            part(&mut put, "at ", f.pointer)?;
        }
        if f.allowed {
            part(&mut put, "allowed", "")?;
        }
        if sep == ", " {
            put(")")?;
        }
        Ok(())
    }

    /// Writes `  LINE\n` (the report's indented finding line) to `out`
    /// in one write, assembled in `line` (a buffer reused from line to line).
    fn write_indented(
        &self,
        line: &mut Vec<u8>,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        line.clear();
        line.extend_from_slice(b"  ");
        let _ = self.each_piece(|s| {
            line.extend_from_slice(s.as_bytes());
            Ok::<(), std::convert::Infallible>(())
        });
        line.push(b'\n');
        out.write_all(line)
    }
}

impl std::fmt::Display for FindingLine<'_> {
    fn fmt(&self, w: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.each_piece(|s| w.write_str(s))
    }
}

/// Human-readable text report.
pub fn human(report: &Report) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail, and every piece written is UTF-8.
    let _ = write_human(report, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`human`] written to `out` line by line.
fn write_human(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for fr in &report.files {
        writeln!(
            out,
            "{}: {} records, {} messages, revision {} ({})",
            fr.file, fr.records, fr.messages, fr.revision, fr.revision_source
        )?;
        let mut line = Vec::new();
        for f in &fr.findings {
            FindingLine(f.as_ref()).write_indented(&mut line, out)?;
        }
    }
    let s = &report.summary;
    writeln!(
        out,
        "{}: {} file(s), {} error(s), {} warning(s), {} allowed",
        if report.passed() { "PASS" } else { "FAIL" },
        s.files,
        s.errors,
        s.warnings,
        s.allowed
    )
}

/// JSON report (pretty-printed, trailing newline).
pub fn json(report: &Report) -> String {
    // Serializing plain structs of strings and numbers cannot fail.
    let mut s = serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()));
    s.push('\n');
    s
}

/// JUnit XML report, written by [`mcptape_report::render::junit`]: one
/// [`TestSuite`] per transcript.
pub fn junit(report: &Report) -> String {
    let suites: Vec<TestSuite> = report
        .files
        .iter()
        .map(|fr| TestSuite {
            name: fr.file.clone(),
            properties: vec![
                ("revision".into(), fr.revision.as_str().to_owned()),
                ("revisionSource".into(), fr.revision_source.to_string()),
                ("records".into(), fr.records.to_string()),
            ],
            cases: RULES.iter().map(|r| rule_case(fr, r)).collect(),
        })
        .collect();
    document("mcptape check", &suites)
}

/// The test case of rule `r` in file `fr`: a failure when unallowed error findings fired,
/// skipped when they fired but were allowed, the warnings in `<system-out>`.
fn rule_case(fr: &crate::report::FileReport, r: &crate::rules::Rule) -> TestCase {
    let hits: Vec<&Finding> = fr.findings.iter().filter(|f| f.rule == r.id).collect();
    let failing: Vec<&&Finding> = hits.iter().filter(|f| f.is_failure()).collect();
    let allowed = hits
        .iter()
        .any(|f| f.severity == Severity::Error && f.allowed);
    let lines = |fs: &mut dyn Iterator<Item = &&Finding>| {
        fs.map(|f| FindingLine(f.as_ref()).to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let out = lines(&mut hits.iter().filter(|f| !f.is_failure()));
    TestCase {
        failure: (!failing.is_empty()).then(|| Failure {
            text: Some(lines(&mut failing.iter().copied())),
            ..Failure::new(r.id, format!("{} finding(s): {}", failing.len(), r.summary))
        }),
        skipped: (failing.is_empty() && allowed).then(|| format!("allowed with --allow {}", r.id)),
        system_out: (!out.is_empty()).then_some(out),
        ..TestCase::new(fr.file.clone(), r.id)
    }
}

/// Why [`write_streamed`] stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A transcript could not be checked (as [`crate::check_paths`] fails).
    #[error(transparent)]
    Check(#[from] crate::CheckError),
    /// Writing the report, or reading spilled findings back, failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Writes the report of `reports` (from [`crate::check_paths_streamed`]) in
/// `format` as the files are checked, one finding at a time: the same bytes
/// [`render`] gives for the [`Report`] [`crate::check_paths`] would build,
/// without ever holding every finding. Human and JSON only (JUnit and SARIF
/// group findings by rule: use [`render`]); returns the totals (the exit
/// status is [`crate::Summary::errors`] `== 0`).
///
/// # Errors
/// [`WriteError::Check`] when a file cannot be checked (the output written so
/// far is then incomplete); [`WriteError::Io`] for the writer.
pub fn write_streamed(
    reports: &mut dyn Iterator<Item = Result<crate::StreamedReport, crate::CheckError>>,
    allowed_rules: &[String],
    format: Format,
    out: &mut dyn std::io::Write,
) -> Result<crate::Summary, WriteError> {
    let mut summary = crate::Summary::default();
    match format {
        Format::Json => {
            let json = streamed::JsonReport {
                files: std::cell::RefCell::new(Some(reports)),
                failed: std::cell::RefCell::new(None),
                summary: std::cell::Cell::new(summary),
                allowed_rules,
            };
            let written = serde_json::to_writer_pretty(&mut *out, &json);
            if let Some(e) = json.failed.borrow_mut().take() {
                return Err(e);
            }
            written.map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
            summary = json.summary.get();
        }
        _ => {
            for r in reports {
                let crate::StreamedReport { head, findings } = r?;
                summary.files += 1;
                writeln!(
                    out,
                    "{}: {} records, {} messages, revision {} ({})",
                    head.file, head.records, head.messages, head.revision, head.revision_source
                )?;
                let mut findings = findings;
                let mut line = Vec::new();
                for f in &head.findings {
                    streamed::count(&mut summary, f.as_ref());
                    FindingLine(f.as_ref()).write_indented(&mut line, out)?;
                }
                while let Some(f) = findings.next_ref() {
                    let f = f?;
                    streamed::count(&mut summary, f);
                    FindingLine(f).write_indented(&mut line, out)?;
                }
            }
            writeln!(
                out,
                "{}: {} file(s), {} error(s), {} warning(s), {} allowed",
                if summary.errors == 0 { "PASS" } else { "FAIL" },
                summary.files,
                summary.errors,
                summary.warnings,
                summary.allowed
            )?;
        }
    }
    out.flush()?;
    Ok(summary)
}

/// The JSON report serialized as it is produced: the same fields, in the
/// same order, through the same serializer as [`Report`]'s derive.
mod streamed {
    use std::cell::{Cell, RefCell};

    use serde::ser::{Error as _, SerializeSeq, SerializeStruct};
    use serde::{Serialize, Serializer};

    use super::WriteError;
    use crate::engine::findings::Sorted;
    use crate::report::{Finding, FindingRef, Summary};
    use crate::rules::Severity;
    use crate::{CheckError, StreamedReport};

    type Files<'i> = &'i mut dyn Iterator<Item = Result<StreamedReport, CheckError>>;

    /// Adds `f` to the totals as [`crate::Report::new`] does.
    pub(super) fn count(s: &mut Summary, f: FindingRef<'_>) {
        match (f.severity, f.allowed) {
            (Severity::Error, false) => s.errors += 1,
            (Severity::Error, true) => s.allowed += 1,
            (Severity::Warning, _) => s.warnings += 1,
        }
    }

    pub(super) struct JsonReport<'i, 'a> {
        pub(super) files: RefCell<Option<Files<'i>>>,
        /// Why serializing stopped, when it was not the serializer.
        pub(super) failed: RefCell<Option<WriteError>>,
        pub(super) summary: Cell<Summary>,
        pub(super) allowed_rules: &'a [String],
    }

    impl Serialize for JsonReport<'_, '_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut st = s.serialize_struct("Report", 3)?;
            st.serialize_field("files", &FilesSeq(self))?;
            st.serialize_field("allowedRules", self.allowed_rules)?;
            st.serialize_field("summary", &self.summary.get())?;
            st.end()
        }
    }

    struct FilesSeq<'r, 'i, 'a>(&'r JsonReport<'i, 'a>);

    impl Serialize for FilesSeq<'_, '_, '_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(None)?;
            let files = self.0.files.borrow_mut().take();
            for r in files.into_iter().flatten() {
                match r {
                    Ok(r) => {
                        let mut sum = self.0.summary.get();
                        sum.files += 1;
                        self.0.summary.set(sum);
                        seq.serialize_element(&FileOut {
                            report: RefCell::new(Some(r)),
                            json: self.0,
                        })?;
                    }
                    Err(e) => {
                        *self.0.failed.borrow_mut() = Some(e.into());
                        return Err(S::Error::custom("a transcript could not be checked"));
                    }
                }
            }
            seq.end()
        }
    }

    struct FileOut<'r, 'i, 'a> {
        report: RefCell<Option<StreamedReport>>,
        json: &'r JsonReport<'i, 'a>,
    }

    impl Serialize for FileOut<'_, '_, '_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let Some(StreamedReport { head, findings }) = self.report.borrow_mut().take() else {
                return Err(S::Error::custom("a file report serialized twice"));
            };
            let mut st = s.serialize_struct("FileReport", 6)?;
            st.serialize_field("file", &head.file)?;
            st.serialize_field("revision", &head.revision)?;
            st.serialize_field("revisionSource", &head.revision_source)?;
            st.serialize_field("records", &head.records)?;
            st.serialize_field("messages", &head.messages)?;
            st.serialize_field(
                "findings",
                &FindingsSeq {
                    findings: RefCell::new(Some((head.findings, findings))),
                    json: self.json,
                },
            )?;
            st.end()
        }
    }

    struct FindingsSeq<'r, 'i, 'a> {
        /// The findings of the report's head, then the sorted rest.
        findings: RefCell<Option<(Vec<Finding>, Sorted)>>,
        json: &'r JsonReport<'i, 'a>,
    }

    impl Serialize for FindingsSeq<'_, '_, '_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(None)?;
            let Some((head, mut rest)) = self.findings.borrow_mut().take() else {
                return seq.end();
            };
            let mut one = |f: FindingRef<'_>| {
                let mut sum = self.json.summary.get();
                count(&mut sum, f);
                self.json.summary.set(sum);
                seq.serialize_element(&f)
            };
            for f in &head {
                one(f.as_ref())?;
            }
            while let Some(f) = rest.next_ref() {
                match f {
                    Ok(f) => one(f)?,
                    Err(e) => {
                        *self.json.failed.borrow_mut() = Some(e.into());
                        return Err(S::Error::custom("spilled findings could not be read back"));
                    }
                }
            }
            seq.end()
        }
    }
}
