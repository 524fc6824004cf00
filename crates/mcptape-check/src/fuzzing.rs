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

/// Fuzz target `check_engine`: the engine's properties on arbitrary bytes —
/// checking twice gives the same findings (no hidden state), findings are in
/// (record, line) order, every JSON pointer is empty or starts with `/`
/// (RFC 6901), and the `inspect` report of the same bytes never panics, its
/// counts match its items and every item's line is inside the input.
pub fn check_engine(data: &[u8]) {
    use crate::inspect::{Item, inspect};
    let opts = Options::default();
    let a = check_bytes("fuzz.jsonl", data, &opts);
    let b = check_bytes("fuzz.jsonl", data, &opts);
    assert_eq!(
        a.findings.len(),
        b.findings.len(),
        "check is not deterministic"
    );
    for (x, y) in a.findings.iter().zip(&b.findings) {
        assert_eq!((x.rule, x.line, &x.pointer), (y.rule, y.line, &y.pointer));
    }
    assert!(
        a.findings
            .windows(2)
            .all(|w| (w[0].record, w[0].line) <= (w[1].record, w[1].line)),
        "findings out of order"
    );
    for f in &a.findings {
        assert!(
            f.pointer.is_empty() || f.pointer.starts_with('/'),
            "pointer {:?}",
            f.pointer
        );
    }
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    for lenient in [false, true] {
        let r = inspect(data, lenient);
        let mut bad = 0;
        let mut results = 0;
        for item in &r.items {
            let line = match item {
                Item::BadLine { line, .. } => {
                    bad += 1;
                    *line
                }
                Item::ReadResult { line, .. } => {
                    results += 1;
                    *line
                }
                Item::InvalidResult { line, .. }
                | Item::ErrorResponse { line, .. }
                | Item::Unanswered { line, .. }
                | Item::NoExitRecord { line, .. } => *line,
            };
            assert!(line >= 1 && line <= lines, "line {line} of {lines}");
        }
        assert_eq!(bad, r.summary.bad_lines);
        assert_eq!(results, r.summary.results);
        serde_json::to_string(&r).expect("inspect report serializes");
    }
}
