//! Fuzz entry points (for one-line targets in `fuzz/`). Not a public API.

use crate::{Options, Severity, check_bytes, output};

/// Fuzz target `check_transcript`: [`check_bytes`] on arbitrary bytes must not
/// panic, every finding must name a rule of the catalogue with that rule's
/// severity and a line inside the input, and the three report formats must
/// render (the JSON one must parse back).
pub fn check_transcript(data: &[u8]) {
    let report = check_bytes("fuzz.jsonl", data, &Options::default());
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    for f in &report.findings {
        let rule = crate::rule(f.rule).expect("finding names a catalogue rule");
        assert_eq!(f.severity, rule.severity);
        assert!(f.line >= 1 && f.line <= lines, "line {} of {lines}", f.line);
        assert_eq!(f.is_failure(), f.severity == Severity::Error);
    }
    let report = crate::Report::new(vec![report], Vec::new());
    let json = output::render(&report, output::Format::Json);
    serde_json::from_str::<serde_json::Value>(&json).expect("JSON report parses");
    let _ = output::render(&report, output::Format::Human);
    let _ = output::render(&report, output::Format::Junit);
}
