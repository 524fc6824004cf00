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

use std::fmt::Write as _;

use crate::report::{Finding, Report};
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

fn finding_line(f: &Finding) -> String {
    let mut s = format!(
        "{}:{}: {}[{}] {}",
        f.file, f.line, f.severity, f.rule, f.message
    );
    let mut extra = Vec::new();
    if f.record > 0 {
        extra.push(format!("record {}", f.record));
    }
    if let Some(id) = &f.request_id {
        extra.push(format!("id {id}"));
    }
    if !f.pointer.is_empty() {
        extra.push(format!("at {}", f.pointer));
    }
    if f.allowed {
        extra.push("allowed".to_owned());
    }
    if !extra.is_empty() {
        let _ = write!(s, " ({})", extra.join(", "));
    }
    s
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
        for f in &fr.findings {
            writeln!(out, "  {}", finding_line(f))?;
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

/// Escapes text for XML attribute values and character data (XML 1.0 §2.4,
/// §3.3.3); characters XML 1.0 cannot hold (C0 controls other than tab, LF,
/// CR) become `\u{..}`.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML report.
pub fn junit(report: &Report) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total_tests = report.files.len() * RULES.len();
    let total_failures: usize = report
        .files
        .iter()
        .map(|fr| {
            RULES
                .iter()
                .filter(|r| fr.findings.iter().any(|f| f.rule == r.id && f.is_failure()))
                .count()
        })
        .sum();
    let _ = writeln!(
        out,
        "<testsuites name=\"mcptape check\" tests=\"{total_tests}\" failures=\"{total_failures}\" errors=\"0\">"
    );
    for fr in &report.files {
        let mut failures = 0;
        let mut skipped = 0;
        let mut cases = String::new();
        for r in RULES {
            let hits: Vec<&Finding> = fr.findings.iter().filter(|f| f.rule == r.id).collect();
            let _ = write!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml_escape(&fr.file),
                r.id
            );
            if hits.is_empty() {
                cases.push_str("/>\n");
                continue;
            }
            cases.push_str(">\n");
            let failing: Vec<&&Finding> = hits.iter().filter(|f| f.is_failure()).collect();
            let allowed = hits
                .iter()
                .any(|f| f.severity == Severity::Error && f.allowed);
            if !failing.is_empty() {
                failures += 1;
                let body: Vec<String> = failing.iter().map(|f| finding_line(f)).collect();
                let _ = writeln!(
                    cases,
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>",
                    r.id,
                    xml_escape(&format!("{} finding(s): {}", failing.len(), r.summary)),
                    xml_escape(&body.join("\n"))
                );
            } else if allowed {
                skipped += 1;
                let _ = writeln!(
                    cases,
                    "      <skipped message=\"{}\"/>",
                    xml_escape(&format!("allowed with --allow {}", r.id))
                );
            }
            let body: Vec<String> = hits
                .iter()
                .filter(|f| !f.is_failure())
                .map(|f| finding_line(f))
                .collect();
            if !body.is_empty() {
                let _ = writeln!(
                    cases,
                    "      <system-out>{}</system-out>",
                    xml_escape(&body.join("\n"))
                );
            }
            cases.push_str("    </testcase>\n");
        }
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
            xml_escape(&fr.file),
            RULES.len()
        );
        let _ = writeln!(
            out,
            "    <properties>\n      <property name=\"revision\" value=\"{}\"/>\n      <property name=\"revisionSource\" value=\"{}\"/>\n      <property name=\"records\" value=\"{}\"/>\n    </properties>",
            xml_escape(fr.revision.as_str()),
            fr.revision_source,
            fr.records
        );
        out.push_str(&cases);
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
