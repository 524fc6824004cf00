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
//! * `runs[0].results` (§3.27): one per [`Finding`], in file then record
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

use std::path::{Component, Path};

use serde_json::{Map, Value, json};

use crate::baseline::BaselineOutcome;
use crate::report::{Finding, Report};
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

fn result(
    f: &Finding,
    artifact: usize,
    opts: &SarifOptions<'_>,
    baselined: Option<bool>,
    report: &Report,
) -> Value {
    let rule_index = RULES.iter().position(|r| r.id == f.rule);
    let accepted_by_allow = f.allowed && report.allowed_rules.iter().any(|a| a == f.rule);
    let accepted = f.allowed;
    let mut physical = Map::new();
    physical.insert(
        "artifactLocation".into(),
        artifact_location(&f.file, opts.base_dir, artifact),
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
    if let Some(id) = &f.request_id {
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
    r.insert("message".into(), json!({ "text": sentence(&f.message) }));
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

/// The SARIF log of `report` as a JSON value (see the module docs for its
/// shape).
pub fn sarif_log(report: &Report, opts: &SarifOptions<'_>) -> Value {
    let mut artifacts = Vec::with_capacity(report.files.len());
    let mut results = Vec::new();
    for (i, fr) in report.files.iter().enumerate() {
        let mut loc = artifact_location(&fr.file, opts.base_dir, i);
        if let Value::Object(m) = &mut loc {
            m.remove("index");
        }
        artifacts.push(json!({
            "location": loc,
            "roles": ["analysisTarget"],
            "mimeType": "application/jsonl",
            "properties": {
                "revision": fr.revision.as_str(),
                "revisionSource": fr.revision_source.to_string(),
                "records": fr.records,
                "messages": fr.messages,
            },
        }));
        for (j, f) in fr.findings.iter().enumerate() {
            let baselined = opts.baseline.map(|b| b.is_baselined(i, j));
            results.push(result(f, i, opts, baselined, report));
        }
    }
    let exit_code = i32::from(!report.passed());
    json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {
                "driver": {
                    "name": TOOL_NAME,
                    "fullName": "mcptape check (MCP transcript conformance rules)",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": RULES.iter().map(|r| descriptor(r)).collect::<Vec<_>>(),
                }
            },
            "invocations": [{
                "executionSuccessful": true,
                "exitCode": exit_code,
            }],
            "artifacts": artifacts,
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    })
}

/// The SARIF log of `report`, pretty-printed with a trailing newline.
pub fn render_with(report: &Report, opts: &SarifOptions<'_>) -> String {
    // A tree of strings and numbers always serializes.
    let mut s = serde_json::to_string_pretty(&sarif_log(report, opts))
        .unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()));
    s.push('\n');
    s
}

/// [`render_with`] with default options (paths as named, no baseline).
pub fn sarif(report: &Report) -> String {
    render_with(report, &SarifOptions::default())
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn pascal_case_of_rule_ids() {
        assert_eq!(pascal_case("contents-text-and-blob"), "ContentsTextAndBlob");
        assert_eq!(
            pascal_case("result-missing-resultType"),
            "ResultMissingResultType"
        );
    }
}
