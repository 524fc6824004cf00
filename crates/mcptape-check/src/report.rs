//! Findings and reports: what a check produced for each transcript.

use serde::Serialize;

use crate::revision::{Revision, RevisionSource};
use crate::rules::{Rule, Severity};

/// One rule firing on one place of one transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The rule's stable id (see [`crate::rules::RULES`]).
    pub rule: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// True when `--allow RULE` named this rule: reported, but it does not
    /// fail the check.
    pub allowed: bool,
    /// The transcript file, as given on the command line (or found under a
    /// directory given there).
    pub file: String,
    /// 1-based record number: record `n` is line `n + 1` of the file (the
    /// header is record 0; a line that could not be read, reported
    /// `transcript-unreadable`, keeps its number too); 0 for a finding on
    /// the file as a whole.
    pub record: usize,
    /// 1-based line number in the file (record `n` is on line `n + 1`).
    pub line: usize,
    /// The JSON-RPC id involved, as JSON text (`1`, `"abc"`), if any.
    pub request_id: Option<String>,
    /// RFC 6901 JSON pointer of the offending member within the record's
    /// message (`/result/contents/0/blob`); empty for the whole message or a
    /// non-message record.
    pub pointer: String,
    /// What exactly is wrong, with the values involved.
    pub message: String,
}

impl Finding {
    /// Whether this finding fails the check: error severity and not allowed.
    pub fn is_failure(&self) -> bool {
        self.severity == Severity::Error && !self.allowed
    }
}

impl Finding {
    /// The finding as a [`FindingRef`] (its fields borrowed).
    pub(crate) fn as_ref(&self) -> FindingRef<'_> {
        FindingRef {
            rule: self.rule,
            severity: self.severity,
            allowed: self.allowed,
            file: &self.file,
            record: self.record,
            line: self.line,
            request_id: self.request_id.as_deref(),
            pointer: &self.pointer,
            message: &self.message,
        }
    }
}

/// A [`Finding`] with its fields borrowed (read back from the findings'
/// store without a string per field): the same fields, serialized the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FindingRef<'a> {
    pub(crate) rule: &'static str,
    pub(crate) severity: Severity,
    pub(crate) allowed: bool,
    pub(crate) file: &'a str,
    pub(crate) record: usize,
    pub(crate) line: usize,
    pub(crate) request_id: Option<&'a str>,
    pub(crate) pointer: &'a str,
    pub(crate) message: &'a str,
}

impl FindingRef<'_> {
    /// The finding with its strings owned.
    pub(crate) fn to_owned(self) -> Finding {
        Finding {
            rule: self.rule,
            severity: self.severity,
            allowed: self.allowed,
            file: self.file.to_owned(),
            record: self.record,
            line: self.line,
            request_id: self.request_id.map(str::to_owned),
            pointer: self.pointer.to_owned(),
            message: self.message.to_owned(),
        }
    }
}

/// The result of checking one transcript file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileReport {
    /// The file, as named (see [`Finding::file`]).
    pub file: String,
    /// The protocol revision the revision-dependent rules used.
    pub revision: Revision,
    /// Where [`FileReport::revision`] came from.
    pub revision_source: RevisionSource,
    /// Records read (not counting the header, nor the lines that could not
    /// be read).
    pub records: usize,
    /// JSON-RPC messages checked (batch elements counted one by one).
    pub messages: usize,
    /// Every finding, in record order.
    pub findings: Vec<Finding>,
}

impl FileReport {
    /// Findings of error severity that are not allowed.
    pub fn failures(&self) -> usize {
        self.findings.iter().filter(|f| f.is_failure()).count()
    }
}

/// Totals over a [`Report`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Transcript files checked.
    pub files: usize,
    /// Unallowed error findings (non-zero means the check fails).
    pub errors: usize,
    /// Warning findings (allowed or not).
    pub warnings: usize,
    /// Error findings that `--allow` named.
    pub allowed: usize,
}

/// The result of checking every transcript named on the command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// One report per file, in path order.
    pub files: Vec<FileReport>,
    /// The rules named by `--allow`.
    pub allowed_rules: Vec<String>,
    /// Totals.
    pub summary: Summary,
}

impl Report {
    /// Builds a report and its [`Summary`] from per-file reports.
    pub fn new(files: Vec<FileReport>, allowed_rules: Vec<String>) -> Report {
        let mut summary = Summary {
            files: files.len(),
            ..Summary::default()
        };
        for f in files.iter().flat_map(|r| &r.findings) {
            match (f.severity, f.allowed) {
                (Severity::Error, false) => summary.errors += 1,
                (Severity::Error, true) => summary.allowed += 1,
                (Severity::Warning, _) => summary.warnings += 1,
            }
        }
        Report {
            files,
            allowed_rules,
            summary,
        }
    }

    /// True when no unallowed error-severity finding fired (exit status 0).
    pub fn passed(&self) -> bool {
        self.summary.errors == 0
    }

    /// How many findings of `rule` the report holds.
    pub fn count(&self, rule: &Rule) -> usize {
        self.files
            .iter()
            .flat_map(|f| &f.findings)
            .filter(|f| f.rule == rule.id)
            .count()
    }
}

impl FindingRef<'_> {
    /// Whether this finding fails the check ([`Finding::is_failure`]).
    pub(crate) fn is_failure(&self) -> bool {
        self.severity == Severity::Error && !self.allowed
    }
}

/// One transcript's report as the streaming writers read it (SARIF, JUnit):
/// its head (file, revision, counts), then its findings in report order,
/// one at a time.
pub(crate) trait FileFindings {
    /// The file's report; its `findings` are not read through this.
    fn head(&self) -> &FileReport;
    /// The next finding in report order, borrowed until the next call; an
    /// error when spilled findings cannot be read back.
    fn next_ref(&mut self) -> Option<std::io::Result<FindingRef<'_>>>;
}

/// A [`FileReport`] held whole (every finding in memory).
pub(crate) struct HeldFindings<'r> {
    pub(crate) report: &'r FileReport,
    pub(crate) at: usize,
}

impl FileFindings for HeldFindings<'_> {
    fn head(&self) -> &FileReport {
        self.report
    }

    fn next_ref(&mut self) -> Option<std::io::Result<FindingRef<'_>>> {
        let f = self.report.findings.get(self.at)?;
        self.at += 1;
        Some(Ok(f.as_ref()))
    }
}

/// A [`crate::StreamedReport`]: the head's findings, then the sorted rest.
pub(crate) struct StreamedFindings {
    pub(crate) report: crate::StreamedReport,
    pub(crate) at: usize,
}

impl FileFindings for StreamedFindings {
    fn head(&self) -> &FileReport {
        &self.report.head
    }

    fn next_ref(&mut self) -> Option<std::io::Result<FindingRef<'_>>> {
        if let Some(f) = self.report.head.findings.get(self.at) {
            self.at += 1;
            return Some(Ok(f.as_ref()));
        }
        self.report.findings.next_ref()
    }
}

/// Reports for the writers' tests.
#[cfg(test)]
pub(crate) mod samples {
    use super::*;
    use crate::revision::{Revision, RevisionSource};

    /// A finding of `rule` on record `record` (line `record + 1`).
    pub(crate) fn finding(
        file: &str,
        rule: &'static Rule,
        allowed: bool,
        record: usize,
        pointer: &str,
        message: &str,
    ) -> Finding {
        Finding {
            rule: rule.id,
            severity: rule.severity,
            allowed,
            file: file.to_owned(),
            record,
            line: if record == 0 { 0 } else { record + 1 },
            request_id: (record % 3 == 1).then(|| format!("\"r{record}\"")),
            pointer: pointer.to_owned(),
            message: message.to_owned(),
        }
    }

    /// Three files: `a <&"'>.jsonl` with `n` findings cycling over an error
    /// rule, an allowed error rule and a warning rule (texts to escape:
    /// `<`, `&`, quotes, a line feed, a control character, non-ASCII),
    /// `./dir/b.jsonl` with one finding on the file as a whole, and an empty
    /// `c.jsonl`. `--allow` names the allowed rule.
    pub(crate) fn report(n: usize) -> Report {
        let error = crate::rules::RULES
            .iter()
            .find(|r| r.severity == Severity::Error)
            .unwrap();
        let allowed = crate::rules::RULES
            .iter()
            .rfind(|r| r.severity == Severity::Error)
            .unwrap();
        let warning = crate::rules::RULES
            .iter()
            .find(|r| r.severity == Severity::Warning)
            .unwrap();
        let a = "a <&\"'>.jsonl";
        let mut findings = Vec::new();
        for i in 0..n {
            let f = match i % 3 {
                0 => finding(
                    a,
                    error,
                    false,
                    i + 1,
                    "/result/x",
                    "bad <x> & \"y\"\nnext\u{1}",
                ),
                1 => finding(a, allowed, true, i + 1, "", "allowed é"),
                _ => finding(a, warning, false, i + 1, "/params/'q'", "warned"),
            };
            findings.push(f);
        }
        let file = |name: &str, findings| FileReport {
            file: name.to_owned(),
            revision: Revision::v2025_06_18(),
            revision_source: RevisionSource::CommandLine,
            records: n,
            messages: n,
            findings,
        };
        Report::new(
            vec![
                file(a, findings),
                file(
                    "./dir/b.jsonl",
                    vec![finding("./dir/b.jsonl", error, false, 0, "", "whole file")],
                ),
                file("c.jsonl", Vec::new()),
            ],
            vec![allowed.id.to_owned()],
        )
    }
}
