//! `check --format sarif`: the log validated by real validators — Microsoft's
//! SARIF Multitool 5.7.0 (`validate`: the SARIF 2.1.0 JSON schema plus its
//! SARIF1xxx/2xxx rules) and the SARIF 2.1.0 JSON schema that package ships,
//! applied by Python `jsonschema` — and its content checked against the
//! report it renders. The validators are installed by
//! `scripts/install-peers.sh` (`MCPTAPE_SARIF_MULTITOOL`,
//! `MCPTAPE_SARIF_SCHEMA`, `MCPTAPE_PYTHON` in `.tools/env.sh`); a missing
//! one FAILS the test.

use crate::support::repo;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcptape_check::baseline::{self, Baseline};
use mcptape_check::output::{self, Format};
use mcptape_check::sarif::{self, SarifOptions};
use mcptape_check::{Options, RULES, Report, Severity, check_paths};
use serde_json::Value;

fn tool(key: &str) -> PathBuf {
    if let Ok(v) = std::env::var(key) {
        return PathBuf::from(v);
    }
    let env = std::fs::read_to_string(repo().join(".tools/env.sh")).unwrap_or_default();
    let prefix = format!("export {key}=");
    let p = env
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| PathBuf::from(v.trim_matches('"')))
        .unwrap_or_else(|| {
            panic!("{key} not set and not in .tools/env.sh: run scripts/install-peers.sh")
        });
    assert!(
        p.exists(),
        "{key}={} missing: run scripts/install-peers.sh",
        p.display()
    );
    p
}

fn report_of(dir: &str, opts: &Options) -> Report {
    check_paths(&[repo().join(dir)], opts).unwrap()
}

/// Runs `Sarif.Multitool validate FILE -o OUT` and returns its output log.
/// The SARIF log of `corpus/violations` checked with `opts`, default SARIF options.
fn violations_log(opts: &Options) -> Value {
    sarif::sarif_log(
        &report_of("corpus/violations", opts),
        &SarifOptions::default(),
    )
}

fn multitool(file: &Path) -> Value {
    let out = file.with_extension("validation.sarif");
    let st = Command::new(tool("MCPTAPE_SARIF_MULTITOOL"))
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .arg("validate")
        .arg(file)
        .arg("-o")
        .arg(&out)
        .args(["--log", "ForceOverwrite", "--quiet"])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "multitool failed: {}\n{}",
        String::from_utf8_lossy(&st.stdout),
        String::from_utf8_lossy(&st.stderr)
    );
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

/// The multitool's findings on the validated file at level error or warning.
fn problems(validation: &Value) -> Vec<String> {
    let run = &validation["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "Sarif.Multitool");
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| matches!(r["level"].as_str(), None | Some("error" | "warning")))
        .map(|r| format!("{} {}", r["ruleId"], r["message"]))
        .collect()
}

/// JSON-schema errors of `file` against the SARIF 2.1.0 schema, by Python jsonschema.
fn schema_errors(file: &Path) -> Vec<String> {
    let script = "import json,sys,jsonschema\n\
        s=json.load(open(sys.argv[1]))\n\
        v=jsonschema.validators.validator_for(s)(s)\n\
        for e in v.iter_errors(json.load(open(sys.argv[2]))): print('/'.join(map(str,e.absolute_path)), e.message)\n";
    let out = Command::new(tool("MCPTAPE_PYTHON"))
        .args(["-c", script])
        .arg(tool("MCPTAPE_SARIF_SCHEMA"))
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write_tmp(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn sarif_of_violations_and_transcripts_passes_the_multitool_and_the_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let root = repo();
    for dir in ["corpus/violations", "corpus/transcripts"] {
        let report = report_of(dir, &Options::default());
        let text = sarif::render_with(
            &report,
            &SarifOptions {
                base_dir: Some(&root),
                baseline: None,
            },
        );
        let f = write_tmp(
            tmp.path(),
            &format!("{}.sarif", dir.replace('/', "-")),
            &text,
        );
        assert_eq!(problems(&multitool(&f)), Vec::<String>::new(), "{dir}");
        assert_eq!(schema_errors(&f), Vec::<String>::new(), "{dir}");
    }
}

#[test]
fn multitool_flags_a_driver_without_version_negative_control() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = violations_log(&Options::default());
    let driver = log["runs"][0]["tool"]["driver"].as_object_mut().unwrap();
    driver.remove("version");
    driver.remove("semanticVersion");
    let f = write_tmp(tmp.path(), "noversion.sarif", &log.to_string());
    let p = problems(&multitool(&f));
    assert!(p.iter().any(|m| m.contains("SARIF2005")), "{p:?}");
}

#[test]
fn schema_refuses_a_bad_level_negative_control() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = violations_log(&Options::default());
    log["runs"][0]["results"][0]["level"] = "fatal".into();
    let f = write_tmp(tmp.path(), "badlevel.sarif", &log.to_string());
    let errs = schema_errors(&f);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with("runs/0/results/0/level "), "{errs:?}");
}

#[test]
fn sarif_has_one_descriptor_per_rule_with_its_explain_text() {
    let log: Value = serde_json::from_str(&output::render(
        &report_of("corpus/violations", &Options::default()),
        Format::Sarif,
    ))
    .unwrap();
    assert_eq!(log["version"], "2.1.0");
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "mcptape");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(driver["informationUri"], env!("CARGO_PKG_REPOSITORY"));
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), RULES.len());
    for (d, r) in rules.iter().zip(RULES) {
        assert_eq!(d["id"], r.id);
        assert!(
            d["shortDescription"]["text"]
                .as_str()
                .unwrap()
                .starts_with(r.summary)
        );
        assert!(
            d["fullDescription"]["text"]
                .as_str()
                .unwrap()
                .starts_with(r.explain.trim_end_matches('.'))
        );
        assert!(d["help"]["text"].as_str().unwrap().contains(r.source));
        assert_eq!(d["properties"]["source"], r.source);
        assert_eq!(d["defaultConfiguration"]["level"], r.severity.as_str());
    }
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
    assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], 1);
}

#[test]
fn sarif_results_carry_path_line_and_pointer_of_each_finding() {
    let root = repo();
    // check_paths names files as given: absolute, below the repo root.
    let report = check_paths(&[root.join("corpus/violations")], &Options::default()).unwrap();
    let log = sarif::sarif_log(
        &report,
        &SarifOptions {
            base_dir: Some(&root),
            baseline: None,
        },
    );
    let results = log["runs"][0]["results"].as_array().unwrap();
    let findings: Vec<_> = report.files.iter().flat_map(|f| &f.findings).collect();
    assert_eq!(results.len(), findings.len());
    assert!(!results.is_empty());
    let mut rules_seen = BTreeSet::new();
    for (r, f) in results.iter().zip(&findings) {
        assert_eq!(r["ruleId"], f.rule);
        assert_eq!(RULES[r["ruleIndex"].as_u64().unwrap() as usize].id, f.rule);
        assert_eq!(r["level"], f.severity.as_str());
        let loc = &r["locations"][0];
        let art = &loc["physicalLocation"]["artifactLocation"];
        let file_name = Path::new(&f.file).file_name().unwrap().to_str().unwrap();
        assert_eq!(art["uri"], format!("corpus/violations/{file_name}"));
        assert_eq!(art["uriBaseId"], "SRCROOT");
        if f.line > 0 {
            assert_eq!(loc["physicalLocation"]["region"]["startLine"], f.line);
        }
        assert_eq!(r["properties"]["jsonPointer"], f.pointer.as_str());
        if !f.pointer.is_empty() {
            assert_eq!(
                loc["logicalLocations"][0]["fullyQualifiedName"],
                f.pointer.as_str()
            );
        }
        assert!(
            r["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with(&f.message)
        );
        rules_seen.insert(f.rule);
    }
    // Every rule's violation file yields a result of that rule.
    assert_eq!(rules_seen.len(), RULES.len());
}

#[test]
fn sarif_allowed_finding_is_a_note_with_an_accepted_suppression() {
    let log = violations_log(&Options {
        allow: ["error-id-null".to_owned()].into(),
        ..Options::default()
    });
    let results = log["runs"][0]["results"].as_array().unwrap();
    let allowed: Vec<_> = results
        .iter()
        .filter(|r| r["ruleId"] == "error-id-null")
        .collect();
    assert!(!allowed.is_empty());
    for r in allowed {
        assert_eq!(r["level"], "note");
        assert_eq!(r["suppressions"][0]["kind"], "external");
        assert_eq!(r["suppressions"][0]["status"], "accepted");
        assert_eq!(r["properties"]["allowed"], true);
    }
    let other = results
        .iter()
        .find(|r| r["ruleId"] == "not-found-code")
        .unwrap();
    assert_eq!(other["level"], "error");
    assert!(other.get("suppressions").is_none());
    let warn = results
        .iter()
        .find(|r| r["ruleId"] == "response-after-cancel")
        .unwrap();
    assert_eq!(
        mcptape_check::rule("response-after-cancel")
            .unwrap()
            .severity,
        Severity::Warning
    );
    assert_eq!(warn["level"], "warning");
}

#[test]
fn sarif_with_baseline_marks_results_new_or_unchanged() {
    let root = repo();
    let mut report = check_paths(&[root.join("corpus/violations")], &Options::default()).unwrap();
    let mut b = Baseline::from_report(&report, Some(&root));
    b.findings.retain(|e| e.rule != "not-found-code");
    let outcome = baseline::apply(&mut report, &b, Some(&root));
    let log = sarif::sarif_log(
        &report,
        &SarifOptions {
            base_dir: Some(&root),
            baseline: Some(&outcome),
        },
    );
    let results = log["runs"][0]["results"].as_array().unwrap();
    let new: Vec<&str> = results
        .iter()
        .filter(|r| r["baselineState"] == "new" && r["level"] == "error")
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert!(!new.is_empty());
    assert!(new.iter().all(|r| *r == "not-found-code"), "{new:?}");
    let unchanged = results
        .iter()
        .filter(|r| r["baselineState"] == "unchanged")
        .count();
    assert_eq!(unchanged, b.total());
    assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], 1);
}

#[test]
fn sarif_uri_of_absolute_path_outside_base_is_a_file_uri() {
    let tmp = tempfile::tempdir().unwrap();
    let src = repo().join("corpus/violations/not-found-code.jsonl");
    let dst = tmp.path().join("with space.jsonl");
    std::fs::copy(src, &dst).unwrap();
    let report = check_paths(&[dst], &Options::default()).unwrap();
    let log = sarif::sarif_log(
        &report,
        &SarifOptions {
            base_dir: Some(Path::new("/nonexistent-base")),
            baseline: None,
        },
    );
    let art = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    let uri = art["uri"].as_str().unwrap();
    assert!(uri.starts_with("file:///"), "{uri}");
    assert!(uri.ends_with("/with%20space.jsonl"), "{uri}");
    assert!(art.get("uriBaseId").is_none());
}
