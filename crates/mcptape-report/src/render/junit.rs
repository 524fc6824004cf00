//! XML: the one escaper of the workspace's XML output (SVG, JUnit) and the one JUnit XML
//! writer (`bench`'s `slo.xml`, `check --format junit`).
//!
//! JUnit XML is the de-facto schema CI systems read (Jenkins / GitLab / GitHub reporters):
//! `<testsuites>` holding `<testsuite>`s of `<testcase>`s, a case holding a `<failure>`, a
//! `<skipped>` and a `<system-out>` as it has them.
//!
//! ```
//! use mcptape_report::render::junit::{Failure, TestCase, TestSuite, document};
//!
//! let suite = TestSuite {
//!     name: "mcptape bench slo".into(),
//!     properties: vec![],
//!     cases: vec![
//!         TestCase::new("mcptape.slo", "read.p99<50ms"),
//!         TestCase {
//!             failure: Some(Failure::new("slo", "measured 61ms, limit <50ms")),
//!             ..TestCase::new("mcptape.slo", "errors<1%")
//!         },
//!     ],
//! };
//! let xml = document("mcptape bench", &[suite]);
//! assert!(xml.contains("<testsuites name=\"mcptape bench\" tests=\"2\" failures=\"1\""));
//! assert!(xml.contains("name=\"read.p99&lt;50ms\"/>"));
//! ```

use std::fmt::Write as _;

/// The entity of `&`, `<`, `>` or `"`, written alike in XML and HTML (the apostrophe is
/// not: `&apos;` is XML's, `&#39;` the one every HTML reader takes); `None` for any other
/// character.
pub(crate) fn markup_entity(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        _ => None,
    }
}

/// Escapes text for XML attribute values and character data (XML 1.0 §2.4, §3.3.3):
/// `& < > " '` as entities, tab / LF / CR as character references (kept through attribute
/// value normalization); characters XML 1.0 cannot hold (C0 controls other than tab, LF,
/// CR; U+FFFE, U+FFFF) become the text `\u{..}`.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if let Some(e) = markup_entity(c) {
            out.push_str(e);
            continue;
        }
        match c {
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

/// A `<failure type=KIND message=MESSAGE>TEXT</failure>` (no text: an empty element).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The `type` attribute (the rule, `slo`, `regression`).
    pub kind: String,
    /// The `message` attribute: one line.
    pub message: String,
    /// The element's text (the findings, one a line), if any.
    pub text: Option<String>,
}

impl Failure {
    /// A failure of `kind` saying `message`, without text.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            kind: kind.into(),
            message: message.into(),
            text: None,
        }
    }
}

/// One `<testcase classname=… name=…>`: passing when it holds no failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    /// The `classname` attribute.
    pub classname: String,
    /// The `name` attribute.
    pub name: String,
    /// Its `<failure>`, if it failed.
    pub failure: Option<Failure>,
    /// The `message` of its `<skipped>`, if it was skipped.
    pub skipped: Option<String>,
    /// Its `<system-out>` text, if any.
    pub system_out: Option<String>,
}

impl TestCase {
    /// A passing case with nothing to say.
    pub fn new(classname: impl Into<String>, name: impl Into<String>) -> TestCase {
        TestCase {
            classname: classname.into(),
            name: name.into(),
            failure: None,
            skipped: None,
            system_out: None,
        }
    }
}

/// One `<testsuite name=… tests=… failures=… errors="0" skipped=…>`, its `<properties>` (if
/// any) and its cases; the counts are the cases'.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TestSuite {
    /// The `name` attribute.
    pub name: String,
    /// `<property name value>` pairs, in order.
    pub properties: Vec<(String, String)>,
    /// The cases, in order.
    pub cases: Vec<TestCase>,
}

impl TestSuite {
    /// How many cases hold a failure.
    pub fn failures(&self) -> usize {
        self.cases.iter().filter(|c| c.failure.is_some()).count()
    }

    /// The suite as XML, indented two spaces (a `<testsuites>` child).
    pub fn xml(&self) -> String {
        let mut out = String::new();
        let skipped = self.cases.iter().filter(|c| c.skipped.is_some()).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{skipped}\">",
            xml_escape(&self.name),
            self.cases.len(),
            self.failures(),
        );
        if !self.properties.is_empty() {
            out.push_str("    <properties>\n");
            for (n, v) in &self.properties {
                let _ = writeln!(
                    out,
                    "      <property name=\"{}\" value=\"{}\"/>",
                    xml_escape(n),
                    xml_escape(v)
                );
            }
            out.push_str("    </properties>\n");
        }
        for c in &self.cases {
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml_escape(&c.classname),
                xml_escape(&c.name)
            );
            if c.failure.is_none() && c.skipped.is_none() && c.system_out.is_none() {
                out.push_str("/>\n");
                continue;
            }
            out.push_str(">\n");
            if let Some(f) = &c.failure {
                let _ = write!(
                    out,
                    "      <failure type=\"{}\" message=\"{}\"",
                    xml_escape(&f.kind),
                    xml_escape(&f.message)
                );
                match &f.text {
                    Some(t) => {
                        let _ = writeln!(out, ">{}</failure>", xml_escape(t));
                    }
                    None => out.push_str("/>\n"),
                }
            }
            if let Some(m) = &c.skipped {
                let _ = writeln!(out, "      <skipped message=\"{}\"/>", xml_escape(m));
            }
            if let Some(t) = &c.system_out {
                let _ = writeln!(out, "      <system-out>{}</system-out>", xml_escape(t));
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
        out
    }
}

/// A JUnit XML document: the declaration and `<testsuites name=NAME tests failures
/// errors="0">` (the suites' sums) around `suites`' XML.
pub fn document(name: &str, suites: &[TestSuite]) -> String {
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites.iter().map(TestSuite::failures).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">",
        xml_escape(name)
    );
    for s in suites {
        out.push_str(&s.xml());
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escape_writes_entities_references_and_unholdable_controls() {
        assert_eq!(
            xml_escape("a<b>&\"c\" 'd'\t\n\r\u{1}\u{FFFF}é"),
            "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;&#9;&#10;&#13;\\u{1}\\u{ffff}é"
        );
    }

    #[test]
    fn document_counts_the_suites_cases_failures_and_skips() {
        let s = TestSuite {
            name: "s<1>".into(),
            properties: vec![("revision".into(), "2026-07-28".into())],
            cases: vec![
                TestCase::new("c", "pass"),
                TestCase {
                    failure: Some(Failure {
                        text: Some("line 1\nline <2>".into()),
                        ..Failure::new("rule", "1 finding")
                    }),
                    system_out: Some("warn".into()),
                    ..TestCase::new("c", "fail")
                },
                TestCase {
                    skipped: Some("allowed".into()),
                    ..TestCase::new("c", "skip")
                },
            ],
        };
        let x = document("all", &[s.clone(), s]);
        assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"all\" tests=\"6\" failures=\"2\" errors=\"0\">\n"));
        assert!(x.contains(
            "<testsuite name=\"s&lt;1&gt;\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\">"
        ));
        assert!(x.contains("<property name=\"revision\" value=\"2026-07-28\"/>"));
        assert!(x.contains("<testcase classname=\"c\" name=\"pass\"/>"));
        assert!(x.contains(
            "<failure type=\"rule\" message=\"1 finding\">line 1&#10;line &lt;2&gt;</failure>"
        ));
        assert!(x.contains("<skipped message=\"allowed\"/>"));
        assert!(x.contains("<system-out>warn</system-out>"));
        assert!(x.ends_with("  </testsuite>\n</testsuites>\n"));
    }
}
