//! Table-driven sanitizer test: `tests/data/sanitize_cases.tsv`, one named row per trick
//! (attacks and benign look-alikes), each also a seed in `corpus/fuzz/uri_sanitize/`.

use mcptape_uri::{Root, SanitizeErrorKind};

const DEFAULT_ROOT: &str = "file:///srv/allowed/";

struct Case {
    line: usize,
    name: String,
    root: String,
    uri: String,
    expected: String,
}

/// `\xNN` → byte NN, `\\` → `\`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            out.push(u8::from_str_radix(&s[i + 2..i + 4], 16).expect("hex escape"));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("table rows are UTF-8")
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/sanitize_cases.tsv");
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 4, "line {}: {l:?}", i + 1);
            Case {
                line: i + 1,
                name: cols[0].to_owned(),
                root: if cols[1] == "-" {
                    DEFAULT_ROOT.to_owned()
                } else {
                    cols[1].to_owned()
                },
                uri: unescape(cols[2]),
                expected: cols[3].to_owned(),
            }
        })
        .collect()
}

fn kind_from_name(name: &str) -> SanitizeErrorKind {
    use SanitizeErrorKind as K;
    [
        K::TooLong,
        K::TooManySegments,
        K::InvalidChar,
        K::ControlChar,
        K::Backslash,
        K::EncodedSeparator,
        K::MissingScheme,
        K::SchemeMismatch,
        K::AuthorityMismatch,
        K::QueryOrFragment,
        K::RelativePath,
        K::MalformedEscape,
        K::DoubleEncoding,
        K::InvalidUtf8,
        K::EmptySegment,
        K::EscapesRoot,
        K::CompatibilityDotOrSeparator,
    ]
    .into_iter()
    .find(|k| k.as_str() == name)
    .unwrap_or_else(|| panic!("unknown kind {name}"))
}

#[test]
fn sanitize_table_has_at_least_60_named_rows_with_unique_names() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} rows", cases.len());
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "duplicate row names");
    let attacks = cases
        .iter()
        .filter(|c| !c.expected.starts_with("ok "))
        .count();
    assert!(
        attacks >= 40 && cases.len() - attacks >= 20,
        "{attacks} attacks"
    );
}

#[test]
fn sanitize_table() {
    let mut failures = Vec::new();
    for c in cases() {
        let root = Root::new(&c.root).unwrap_or_else(|e| panic!("{}: root: {e}", c.name));
        let got = root.resolve(&c.uri);
        let ok = if let Some(path) = c.expected.strip_prefix("ok ") {
            match &got {
                Ok(p) => {
                    // fixed point and relative() consistent with the root
                    let again = root.resolve(&p.to_uri());
                    let root_len: usize = root.segments().iter().map(|s| s.len() + 1).sum();
                    let want_rel = if p.as_str().len() > root_len {
                        &p.as_str()[root_len + 1..]
                    } else {
                        ""
                    };
                    p.as_str() == path && again.as_ref() == Ok(p) && p.relative() == want_rel
                }
                Err(_) => false,
            }
        } else {
            let (kind, offset) = if let Some((k, marker)) = c.expected.split_once('@') {
                let marker = unescape(marker);
                let at = c
                    .uri
                    .find(&marker)
                    .unwrap_or_else(|| panic!("{}: marker {marker:?} not in uri", c.name));
                (kind_from_name(k), at)
            } else {
                let (k, n) = c
                    .expected
                    .split_once('#')
                    .expect("Kind@marker or Kind#offset");
                (kind_from_name(k), n.parse().expect("offset"))
            };
            matches!(&got, Err(e) if e.kind() == kind && e.offset() == offset)
        };
        if !ok {
            failures.push(format!(
                "line {} {}: uri {:?} expected {} got {:?}",
                c.line, c.name, c.uri, c.expected, got
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_row_is_a_fuzz_seed() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/fuzz/uri_sanitize"
    );
    for c in cases() {
        let path = format!("{dir}/{}", c.name);
        let seed = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(
            seed,
            format!("{}\n{}", c.root, c.uri).into_bytes(),
            "seed {path} differs from the table row"
        );
    }
}
