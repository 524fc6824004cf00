//! Report formats: human text, JSON, JUnit XML, SARIF 2.1.0 ([`crate::sarif`]).
//!
//! * human — one line per finding, `FILE:LINE: SEVERITY[RULE] MESSAGE (id ID, at POINTER)`,
//!   a per-file header with the revision used, and a summary line; with
//!   [`HumanOptions::max_per_rule`], at most that many findings of a rule per file and a
//!   line counting the rest.
//! * JSON — the [`Report`] serialized (camelCase): `files[].findings[]` with
//!   `rule`, `severity`, `allowed`, `file`, `record`, `line`, `requestId`,
//!   `pointer`, `message`; `summary` with `files`, `errors`, `warnings`, `allowed`.
//! * JUnit — the de-facto schema CI systems read (Jenkins / GitLab / GitHub
//!   reporters): `<testsuites>` with one `<testsuite>` per transcript and one
//!   `<testcase classname="FILE" name="RULE">` per rule of the catalogue. A
//!   test case holds a `<failure>` when unallowed error findings fired, is
//!   `<skipped>` when they fired but were allowed, and lists warning
//!   findings in `<system-out>`; a rule that did not fire is a passing case.
//!
//! Every format is written one finding at a time ([`write_report`],
//! [`write_streamed`]); JUnit and SARIF, whose totals come before their
//! findings, pass them through temporary files.

use crate::report::{FindingRef, Report};
use crate::rules::Severity;

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

/// Writes `report` in `format` to `out` as it is rendered, finding by
/// finding, never held whole in memory (the same bytes as [`render`]; JUnit
/// by [`write_junit`], SARIF by [`crate::sarif::write`] with default
/// options).
///
/// # Errors
/// The writer's I/O error.
pub fn write_report(
    report: &Report,
    format: Format,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    write_report_with(report, format, HumanOptions::default(), out)
}

/// [`write_report`] with the human format's options (`human`; the other formats always hold
/// every finding).
///
/// # Errors
/// The writer's I/O error.
pub fn write_report_with(
    report: &Report,
    format: Format,
    human: HumanOptions,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Human => write_human(report, human, out),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, report).map_err(std::io::Error::other)?;
            out.write_all(b"\n")
        }
        Format::Junit => write_junit(report, out),
        Format::Sarif => crate::sarif::write(report, &crate::sarif::SarifOptions::default(), out),
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

/// Options of the human format (`mcptape check --max-per-rule`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HumanOptions {
    /// Findings of one rule shown per transcript at most (`None`: every one), its allowed
    /// findings and its failing ones each. The findings past it are not printed; after the
    /// transcript's findings one line per such rule says how many were left out,
    /// and the summary line counts every finding.
    pub max_per_rule: Option<std::num::NonZeroUsize>,
}

/// The findings of one transcript held to [`HumanOptions::max_per_rule`] per rule: which to
/// print, and the count of those left out, said after them as
/// `  FILE: N more SEVERITY[RULE] finding(s) not shown (--max-per-rule MAX)`.
struct RuleCap {
    max: Option<std::num::NonZeroUsize>,
    /// Per rule and allowed flag seen in this transcript, in order of first finding: (rule,
    /// severity, allowed, shown, left out). A rule's allowed findings (`--allow`, or expected
    /// by a baseline) and its failing ones are held apart, so the failing ones are shown and
    /// counted as such. The catalogue has a few dozen rules: a linear search.
    seen: Vec<(&'static str, Severity, bool, usize, u64)>,
}

impl RuleCap {
    fn new(opts: HumanOptions) -> Self {
        Self {
            max: opts.max_per_rule,
            seen: Vec::new(),
        }
    }

    /// Whether finding `f` is printed; counts it either way.
    fn admit(&mut self, f: FindingRef<'_>) -> bool {
        let Some(max) = self.max else { return true };
        let i = match self
            .seen
            .iter()
            .position(|s| s.0 == f.rule && s.2 == f.allowed)
        {
            Some(i) => i,
            None => {
                self.seen.push((f.rule, f.severity, f.allowed, 0, 0));
                self.seen.len() - 1
            }
        };
        let s = &mut self.seen[i];
        if s.3 < max.get() {
            s.3 += 1;
            true
        } else {
            s.4 += 1;
            false
        }
    }

    /// Writes the left-out line of each rule that had any, for transcript `file`, and forgets
    /// the transcript.
    fn finish(&mut self, file: &str, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        for &(rule, severity, allowed, _, left) in &self.seen {
            if left > 0 {
                writeln!(
                    out,
                    "  {file}: {left} more {}[{rule}] finding(s){} not shown (--max-per-rule {})",
                    severity.as_str(),
                    if allowed { ", allowed," } else { "" },
                    self.max.map_or(0, std::num::NonZeroUsize::get)
                )?;
            }
        }
        self.seen.clear();
        Ok(())
    }
}

/// Human-readable text report.
pub fn human(report: &Report) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail, and every piece written is UTF-8.
    let _ = write_human(report, HumanOptions::default(), &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`human`] written to `out` line by line, held to `opts`.
fn write_human(
    report: &Report,
    opts: HumanOptions,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut cap = RuleCap::new(opts);
    for fr in &report.files {
        writeln!(
            out,
            "{}: {} records, {} messages, revision {} ({})",
            fr.file, fr.records, fr.messages, fr.revision, fr.revision_source
        )?;
        let mut line = Vec::new();
        for f in &fr.findings {
            if cap.admit(f.as_ref()) {
                FindingLine(f.as_ref()).write_indented(&mut line, out)?;
            }
        }
        cap.finish(&fr.file, out)?;
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

/// JUnit XML report: the document [`mcptape_report::render::junit::document`]
/// makes of one [`mcptape_report::render::junit::TestSuite`] per transcript
/// (see the module docs), written by [`write_junit`].
pub fn junit(report: &Report) -> String {
    let mut out = Vec::new();
    // Writing into a Vec fails only when a temporary file cannot be made or
    // read back.
    if let Err(e) = write_junit(report, &mut out) {
        return format!("<!-- error: {} -->\n", e.to_string().replace("--", "- -"));
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes [`junit`]'s document of `report` to `out`, one finding at a time:
/// each file's finding lines grouped by rule (at most 1 MiB of them in
/// memory, the rest in an anonymous temporary file), its suite to a second
/// temporary file, then the `<testsuites>` totals and the suites copied out.
///
/// # Errors
/// I/O errors of `out` and of the temporary files.
pub fn write_junit(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let files = report
        .files
        .iter()
        .map(|report| Ok(crate::report::HeldFindings { report, at: 0 }));
    junit::write_files(files, out)
        .map(|_| ())
        .map_err(|e| match e {
            WriteError::Io(e) => e,
            e => std::io::Error::other(e),
        })
}

/// The JUnit document written as the findings come, the same bytes as
/// [`mcptape_report::render::junit::document`] of the suites [`junit`] made
/// (test cases grouped by rule, the counts ahead of them).
mod junit {
    use std::io::{Read as _, Seek as _, SeekFrom, Write as _};

    use mcptape_report::render::junit::xml_escape;

    use super::{FindingLine, WriteError, count};
    use crate::report::FileFindings;
    use crate::rules::{RULES, Severity};

    /// Escaped finding lines held in memory, over all of a file's rules,
    /// before they are moved to the temporary file (1 MiB).
    const HELD_TEXT_BYTES: usize = 1 << 20;

    /// Buffer of the temporary files' writes and reads (64 KiB).
    const TMP_BUFFER_BYTES: usize = 64 << 10;

    /// The escaped lines of one rule's failing findings, or of its others
    /// (warnings, allowed errors), of one file, joined by `&#10;` (an
    /// escaped line feed): the last ones in `held`, the earlier in chunks of
    /// the temporary file.
    #[derive(Default)]
    struct Lines {
        count: usize,
        /// (offset, length) of each chunk moved out, in order.
        chunks: Vec<(u64, u64)>,
        held: Vec<u8>,
    }

    impl Lines {
        /// Writes the lines (the chunks read back from `tmp`) to `out`.
        fn copy_to(
            &self,
            tmp: &mut std::fs::File,
            buf: &mut [u8],
            out: &mut dyn std::io::Write,
        ) -> std::io::Result<()> {
            for &(at, len) in &self.chunks {
                tmp.seek(SeekFrom::Start(at))?;
                let mut left = len;
                while left > 0 {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
                    tmp.read_exact(&mut buf[..n])?;
                    out.write_all(&buf[..n])?;
                    left -= n as u64;
                }
            }
            out.write_all(&self.held)
        }
    }

    /// Writes the document of `files` to `out`: each file's findings read
    /// once, its finding lines grouped by rule (at most
    /// [`HELD_TEXT_BYTES`] of them in memory, the rest in a temporary file
    /// emptied for each file), its suite written to a second temporary file,
    /// then the `<testsuites>` totals and the suites copied out. Returns the
    /// totals of the findings.
    pub(super) fn write_files<F: FileFindings>(
        files: impl Iterator<Item = Result<F, WriteError>>,
        out: &mut dyn std::io::Write,
    ) -> Result<crate::Summary, WriteError> {
        let mut summary = crate::Summary::default();
        let mut lines_tmp = tempfile::tempfile()?;
        let mut suites_tmp = tempfile::tempfile()?;
        let mut suites = std::io::BufWriter::with_capacity(TMP_BUFFER_BYTES, &mut suites_tmp);
        let (mut tests, mut failures) = (0usize, 0usize);
        let mut buf = vec![0u8; TMP_BUFFER_BYTES];
        let mut line = Vec::new();
        for file in files {
            let mut file = file?;
            summary.files += 1;
            // Per rule: [failing, other] lines; whether an allowed error fired.
            let mut by_rule: Vec<[Lines; 2]> = RULES.iter().map(|_| Default::default()).collect();
            let mut allowed = vec![false; RULES.len()];
            let mut held = 0usize;
            let mut tmp_end = 0u64;
            lines_tmp.set_len(0)?;
            while let Some(f) = file.next_ref() {
                let f = f?;
                count(&mut summary, f);
                let Some(r) = RULES.iter().position(|r| r.id == f.rule) else {
                    continue;
                };
                allowed[r] |= f.severity == Severity::Error && f.allowed;
                let lines = &mut by_rule[r][usize::from(!f.is_failure())];
                line.clear();
                let _ = FindingLine(f).each_piece(|s| {
                    line.extend_from_slice(s.as_bytes());
                    Ok::<(), std::convert::Infallible>(())
                });
                let text = xml_escape(&String::from_utf8_lossy(&line));
                if lines.count > 0 {
                    lines.held.extend_from_slice(b"&#10;");
                    held += 5;
                }
                lines.held.extend_from_slice(text.as_bytes());
                held += text.len();
                lines.count += 1;
                if held >= HELD_TEXT_BYTES {
                    let mut w = std::io::BufWriter::with_capacity(TMP_BUFFER_BYTES, &mut lines_tmp);
                    w.seek(SeekFrom::Start(tmp_end))?;
                    for l in by_rule.iter_mut().flatten() {
                        if !l.held.is_empty() {
                            w.write_all(&l.held)?;
                            l.chunks.push((tmp_end, l.held.len() as u64));
                            tmp_end += l.held.len() as u64;
                            l.held.clear();
                        }
                    }
                    w.flush()?;
                    held = 0;
                }
            }
            let head = file.head();
            let failing = by_rule.iter().filter(|[f, _]| f.count > 0).count();
            let skipped = by_rule
                .iter()
                .zip(&allowed)
                .filter(|([f, _], a)| f.count == 0 && **a)
                .count();
            tests += RULES.len();
            failures += failing;
            let file_name = xml_escape(&head.file);
            writeln!(
                suites,
                "  <testsuite name=\"{file_name}\" tests=\"{}\" failures=\"{failing}\" errors=\"0\" skipped=\"{skipped}\">",
                RULES.len(),
            )?;
            suites.write_all(b"    <properties>\n")?;
            for (n, v) in [
                ("revision", head.revision.as_str().to_owned()),
                ("revisionSource", head.revision_source.to_string()),
                ("records", head.records.to_string()),
            ] {
                writeln!(
                    suites,
                    "      <property name=\"{}\" value=\"{}\"/>",
                    xml_escape(n),
                    xml_escape(&v)
                )?;
            }
            suites.write_all(b"    </properties>\n")?;
            for ((rule, [fail, other]), allowed) in RULES.iter().zip(&by_rule).zip(&allowed) {
                let id = xml_escape(rule.id);
                write!(
                    suites,
                    "    <testcase classname=\"{file_name}\" name=\"{id}\""
                )?;
                let skip = fail.count == 0 && *allowed;
                if fail.count == 0 && !skip && other.count == 0 {
                    suites.write_all(b"/>\n")?;
                    continue;
                }
                suites.write_all(b">\n")?;
                if fail.count > 0 {
                    let message = format!("{} finding(s): {}", fail.count, rule.summary);
                    write!(
                        suites,
                        "      <failure type=\"{id}\" message=\"{}\">",
                        xml_escape(&message)
                    )?;
                    fail.copy_to(&mut lines_tmp, &mut buf, &mut suites)?;
                    suites.write_all(b"</failure>\n")?;
                }
                if skip {
                    let message = format!("allowed with --allow {}", rule.id);
                    writeln!(
                        suites,
                        "      <skipped message=\"{}\"/>",
                        xml_escape(&message)
                    )?;
                }
                if other.count > 0 {
                    suites.write_all(b"      <system-out>")?;
                    other.copy_to(&mut lines_tmp, &mut buf, &mut suites)?;
                    suites.write_all(b"</system-out>\n")?;
                }
                suites.write_all(b"    </testcase>\n")?;
            }
            suites.write_all(b"  </testsuite>\n")?;
        }
        suites.flush()?;
        drop(suites);
        out.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")?;
        writeln!(
            out,
            "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">",
            xml_escape(super::JUNIT_NAME)
        )?;
        suites_tmp.rewind()?;
        let mut r = &suites_tmp;
        loop {
            let n = r.read(&mut buf)?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n])?;
        }
        out.write_all(b"</testsuites>\n")?;
        Ok(summary)
    }
}

/// The `name` of the JUnit document's `<testsuites>`.
const JUNIT_NAME: &str = "mcptape check";

/// Adds `f` to the totals as [`crate::Report::new`] does.
pub(crate) fn count(s: &mut crate::Summary, f: FindingRef<'_>) {
    match (f.severity, f.allowed) {
        (Severity::Error, false) => s.errors += 1,
        (Severity::Error, true) => s.allowed += 1,
        (Severity::Warning, _) => s.warnings += 1,
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
/// without ever holding every finding (SARIF with default options: see
/// [`crate::sarif::write_streamed`] for the others; JUnit and SARIF pass
/// their grouped findings or results through temporary files, their totals
/// coming first). Returns the totals (the exit status is
/// [`crate::Summary::errors`] `== 0`).
///
/// # Errors
/// [`WriteError::Check`] when a file cannot be checked (the output written so
/// far is then incomplete; for JUnit and SARIF, nothing is written);
/// [`WriteError::Io`] for the writer and the temporary files.
pub fn write_streamed(
    reports: &mut dyn Iterator<Item = Result<crate::StreamedReport, crate::CheckError>>,
    allowed_rules: &[String],
    format: Format,
    out: &mut dyn std::io::Write,
) -> Result<crate::Summary, WriteError> {
    write_streamed_with(reports, allowed_rules, format, HumanOptions::default(), out)
}

/// [`write_streamed`] with the human format's options (`human`: the bytes
/// [`write_report_with`] gives; the other formats always hold every finding).
///
/// # Errors
/// As [`write_streamed`].
pub fn write_streamed_with(
    reports: &mut dyn Iterator<Item = Result<crate::StreamedReport, crate::CheckError>>,
    allowed_rules: &[String],
    format: Format,
    human: HumanOptions,
    out: &mut dyn std::io::Write,
) -> Result<crate::Summary, WriteError> {
    let mut summary = crate::Summary::default();
    match format {
        Format::Sarif => {
            return crate::sarif::write_streamed(
                reports,
                allowed_rules,
                &crate::sarif::SarifOptions::default(),
                out,
            );
        }
        Format::Junit => {
            let files = reports.map(|r| {
                r.map(|report| crate::report::StreamedFindings { report, at: 0 })
                    .map_err(WriteError::from)
            });
            summary = junit::write_files(files, out)?;
        }
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
        Format::Human => {
            let mut cap = RuleCap::new(human);
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
                    count(&mut summary, f.as_ref());
                    if cap.admit(f.as_ref()) {
                        FindingLine(f.as_ref()).write_indented(&mut line, out)?;
                    }
                }
                while let Some(f) = findings.next_ref() {
                    let f = f?;
                    count(&mut summary, f);
                    if cap.admit(f) {
                        FindingLine(f).write_indented(&mut line, out)?;
                    }
                }
                cap.finish(&head.file, out)?;
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
    use super::count;
    use crate::engine::findings::Sorted;
    use crate::report::{Finding, FindingRef, Summary};
    use crate::{CheckError, StreamedReport};

    type Files<'i> = &'i mut dyn Iterator<Item = Result<StreamedReport, CheckError>>;

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

#[cfg(test)]
mod tests {
    use mcptape_report::render::junit::{Failure, TestCase, TestSuite, document};

    use super::*;
    use crate::report::{FileReport, Finding};
    use crate::rules::RULES;

    /// The JUnit document as it was built before it was streamed: every
    /// suite and case in memory, rendered by
    /// [`mcptape_report::render::junit::document`].
    fn junit_of_suites(report: &Report) -> String {
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

    fn rule_case(fr: &FileReport, r: &crate::rules::Rule) -> TestCase {
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
            skipped: (failing.is_empty() && allowed)
                .then(|| format!("allowed with --allow {}", r.id)),
            system_out: (!out.is_empty()).then_some(out),
            ..TestCase::new(fr.file.clone(), r.id)
        }
    }

    /// 40,000 findings (several MB of escaped lines: past
    /// `HELD_TEXT_BYTES`, so chunks of them are moved to the temporary file
    /// and read back in order), a failing, a skipped and a warning rule,
    /// texts to escape, a file without findings: [`write_junit`] gives the
    /// bytes of the document of the suites held whole.
    #[test]
    fn junit_written_a_finding_at_a_time_is_the_document_of_the_suites() {
        let report = crate::report::samples::report(40_000);
        let want = junit_of_suites(&report);
        assert!(want.len() > 3 * (1 << 20), "{} bytes", want.len());
        assert!(want.contains("<skipped message="));
        assert!(want.contains("<system-out>"));
        assert!(want.contains("finding(s): "));
        let mut out = Vec::new();
        write_junit(&report, &mut out).unwrap();
        assert!(out == want.as_bytes(), "write_junit differs");
        assert!(junit(&report) == want, "junit differs");
        let none = Report::new(Vec::new(), Vec::new());
        assert_eq!(junit(&none), junit_of_suites(&none));
    }

    /// The writer's `BrokenPipe` comes back as it is, in JUnit and SARIF
    /// (`check | head -1` ends quietly on it).
    #[test]
    fn write_report_into_a_closed_pipe_fails_with_broken_pipe() {
        let report = crate::report::samples::report(10);
        for format in [Format::Junit, Format::Sarif] {
            let e =
                write_report(&report, format, &mut crate::sarif::tests::ClosedPipe).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{format:?}: {e}");
        }
    }
}
