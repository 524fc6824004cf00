//! `Template::match_uri` is the inverse of `Template::expand`, per operator (RFC 6570 §3.2):
//! `{+var}`/`{#var}` values are kept as matched (triplets pass through expansion unchanged),
//! every other operator's are decoded once. Expanding a match gives the URI back, and an encoded
//! separator is either kept encoded or the match is refused with a reason.

use mcptape_uri::template::{Template, Value, Vars};
use proptest::prelude::*;

fn t(s: &str) -> Template {
    Template::parse(s).unwrap()
}

/// `uri` matched against `template`, then expanded again.
fn round_trip(template: &str, uri: &str) -> (Vars, String) {
    let tpl = t(template);
    let vars = tpl
        .match_uri(uri)
        .unwrap_or_else(|| panic!("{template} should match {uri}"));
    let again = tpl.expand(&vars).unwrap();
    (vars, again)
}

/// `uri` is refused by `template` with exactly one reason: (the variable, its value decoded).
fn refused_once(template: &str, uri: &str) -> (String, String) {
    let tpl = t(template);
    assert_eq!(tpl.match_uri(uri), None, "{template} ~ {uri}");
    let mut why = tpl.traversal_rejections(uri);
    assert_eq!(why.len(), 1, "{template} ~ {uri}: {why:?}");
    why.remove(0)
}

#[test]
fn match_reserved_expansion_keeps_an_encoded_slash_encoded() {
    let (vars, again) = round_trip("file:///docs/{+path}", "file:///docs/a/b%2Fc.txt");
    assert_eq!(vars.get_str("path"), Some("a/b%2Fc.txt"));
    assert_eq!(again, "file:///docs/a/b%2Fc.txt");
    // The fragment operator passes triplets through too.
    let (vars, again) = round_trip("file:///docs/x{#frag}", "file:///docs/x#a/b%2Fc");
    assert_eq!(vars.get_str("frag"), Some("a/b%2Fc"));
    assert_eq!(again, "file:///docs/x#a/b%2Fc");
    // A simple `{name}` decodes, so `b%2Fc.txt` would be `b/c.txt`: refused, with the reason.
    let simple = t("file:///docs/a/{name}");
    assert_eq!(simple.match_uri("file:///docs/a/b%2Fc.txt"), None);
    assert_eq!(
        simple.traversal_rejections("file:///docs/a/b%2Fc.txt"),
        vec![("name".to_owned(), "b/c.txt".to_owned())]
    );
}

/// (URI in normal form, the variable's expected value) of one template.
type Matches = &'static [(&'static str, &'static str)];

/// (template, its variable, each URI that matches it).
const EXACT: &[(&str, &str, Matches)] = &[
    (
        "file:///docs/{+path}",
        "path",
        &[
            ("file:///docs/a/b%2Fc.txt", "a/b%2Fc.txt"),
            ("file:///docs/My%20File.txt", "My%20File.txt"),
            ("file:///docs/caf%C3%A9/%C3%BC.md", "caf%C3%A9/%C3%BC.md"),
            (
                "file:///docs/a/b:c@d!$&'()*+,;=.txt",
                "a/b:c@d!$&'()*+,;=.txt",
            ),
            ("file:///docs/a/b%2fc", "a/b%2fc"),
            ("file:///docs/a/b/", "a/b/"),
        ],
    ),
    (
        "x{#frag}",
        "frag",
        &[("x#sec%20tion/2", "sec%20tion/2"), ("x#a?b=c", "a?b=c")],
    ),
    (
        "file:///docs/{name}",
        "name",
        &[
            ("file:///docs/My%20File.txt", "My File.txt"),
            ("file:///docs/%C3%BC%E2%82%AC", "ü€"),
            ("file:///docs/ab%3Ac%40d%21", "ab:c@d!"),
            ("file:///docs/50%25", "50%"),
        ],
    ),
    (
        "file:///docs{/name}",
        "name",
        &[("file:///docs/a%3Fb", "a?b")],
    ),
    (
        "file:///docs/x{.ext}",
        "ext",
        &[("file:///docs/x.tar.gz", "tar.gz")],
    ),
    (
        "file:///docs/x{;v}",
        "v",
        &[("file:///docs/x;v=a%2Cb", "a,b"), ("file:///docs/x;v", "")],
    ),
    (
        "file:///read{?path}",
        "path",
        &[
            ("file:///read?path=a%2Fb%20c", "a/b c"),
            ("file:///read?path=", ""),
        ],
    ),
    (
        "file:///read?a=1{&q}",
        "q",
        &[
            ("file:///read?a=1&q=x%26y%3Dz", "x&y=z"),
            ("file:///read?a=1&q=%E6%97%A5%E6%9C%AC", "日本"),
        ],
    ),
    ("x:{+p:3}", "p", &[("x:%C3%A9a", "%C3%A9a")]),
    ("x:{p:3}", "p", &[("x:%C3%A9ab", "éab")]),
];

#[test]
fn expanding_a_match_gives_the_uri_back_exactly() {
    for &(template, name, cases) in EXACT {
        for &(uri, want) in cases {
            let (vars, again) = round_trip(template, uri);
            assert_eq!(vars.get_str(name), Some(want), "{template} ~ {uri}");
            assert_eq!(again, uri, "{template} ~ {uri}: {vars:?}");
        }
    }
    let (vars, again) = round_trip(
        "file:///{+dir}/{name}.{ext}",
        "file:///a%20b/c/My%20File.tar.gz",
    );
    assert_eq!(
        ["dir", "name", "ext"].map(|n| vars.get_str(n)),
        [Some("a%20b/c"), Some("My File.tar"), Some("gz")]
    );
    assert_eq!(again, "file:///a%20b/c/My%20File.tar.gz");
    let (vars, again) = round_trip("file:///docs{/list*}", "file:///docs/a%20b/c");
    assert_eq!(
        vars.get("list"),
        Some(&Value::List(vec!["a b".into(), "c".into()]))
    );
    assert_eq!(again, "file:///docs/a%20b/c");
}

#[test]
fn a_uri_not_in_normal_form_comes_back_normalized() {
    for (template, uri, normal) in [
        // lowercase hex in a decoded value comes back uppercase (RFC 3986 §6.2.2.1)
        (
            "file:///docs/{name}",
            "file:///docs/ab%3ac",
            "file:///docs/ab%3Ac",
        ),
        // a triplet for an unreserved character comes back as the character (§6.2.2.2)
        (
            "file:///docs/{name}",
            "file:///docs/%41b",
            "file:///docs/Ab",
        ),
        // an IRI's non-ASCII character comes back percent-encoded (a URI, not an IRI)
        (
            "file:///docs/{name}",
            "file:///docs/é",
            "file:///docs/%C3%A9",
        ),
        (
            "file:///docs/{+path}",
            "file:///docs/a/é",
            "file:///docs/a/%C3%A9",
        ),
    ] {
        let (_, again) = round_trip(template, uri);
        assert_eq!(again, normal, "{template} ~ {uri}");
    }
}

#[test]
fn an_encoded_separator_is_kept_encoded_or_refused_with_a_reason() {
    // (template, uri, variable): the `%2F` / `%5C` sits in a path-segment variable.
    for (template, uri, name) in [
        ("file:///docs/{name}", "file:///docs/b%2Fc.txt", "name"),
        ("file:///docs/{name}", "file:///docs/b%5Cc.txt", "name"),
        ("file:///docs{/name}", "file:///docs/b%2Fc", "name"),
        ("file:///docs/x{.ext}", "file:///docs/x.b%2Fc", "ext"),
        ("file:///docs/x{;v}", "file:///docs/x;v=b%2Fc", "v"),
    ] {
        assert_eq!(refused_once(template, uri).0, name);
    }
    // `+` and `#`: matched, with the triplet as is; no printed value holds a `/` that was `%2F`.
    for (template, uri) in [
        ("file:///docs/{+path}", "file:///docs/a/b%2Fc.txt"),
        ("file:///docs/{+path}", "file:///docs/a%2Fb%2Fc"),
        ("file:///docs/x{#frag}", "file:///docs/x#b%2Fc"),
    ] {
        let vars = t(template).match_uri(uri).unwrap();
        let (_, value) = vars.iter().next().unwrap();
        let Value::String(s) = value else {
            panic!("{value:?}")
        };
        assert!(s.contains("%2F"), "{template} ~ {uri}: {s}");
        assert!(uri.ends_with(s.as_str()), "{template} ~ {uri}: {s}");
    }
    // A traversal hidden by the encoding is still judged decoded, and reported decoded.
    let plus = t("file:///docs/{+path}");
    assert_eq!(plus.match_uri("file:///docs/a/..%2F..%2Fetc"), None);
    assert_eq!(
        plus.traversal_rejections("file:///docs/a/..%2F..%2Fetc"),
        vec![("path".to_owned(), "a/../../etc".to_owned())]
    );
    // Double encoding (`%252F` decodes once to `%2F`) is refused in every operator, reported
    // decoded once.
    for (template, uri, decoded) in [
        ("file:///docs/{+path}", "file:///docs/a/b%252Fc", "a/b%2Fc"),
        ("file:///docs/{name}", "file:///docs/b%252Fc", "b%2Fc"),
        ("file:///read{?path}", "file:///read?path=b%252Fc", "b%2Fc"),
    ] {
        assert_eq!(refused_once(template, uri).1, decoded);
    }
}

#[test]
fn empty_path_parameter_written_with_equals_is_no_match() {
    // Appendix A expands an empty `{;v}` as `;v`, never `;v=`.
    assert_eq!(t("x{;v}").match_uri("x;v="), None);
    assert_eq!(t("x{;v}").match_uri("x;v").unwrap().get_str("v"), Some(""));
}

#[test]
fn reserved_prefix_counts_a_triplet_as_one_character() {
    let tpl = t("x:{+p:2}");
    assert_eq!(tpl.match_uri("x:a%2F").unwrap().get_str("p"), Some("a%2F"));
    assert_eq!(tpl.match_uri("x:a%2Fb"), None);
}

fn value_strategy() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a",
        "B",
        "z9",
        "-",
        "_",
        "~",
        ".",
        " ",
        "/",
        "\\",
        "%",
        "%2F",
        "%252F",
        "%20",
        "%2e",
        ":",
        "@",
        "!",
        "$",
        "&",
        "'",
        "(",
        ")",
        "*",
        "+",
        ",",
        ";",
        "=",
        "?",
        "#",
        "[",
        "]",
        "ü",
        "日本",
        "€",
        "\u{1F600}",
        "..",
    ]);
    prop::collection::vec(piece, 0..6).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]
    /// For every operator: expand a value, match the result, expand again: the same URI. A
    /// value may be refused (a traversal), but a match always round-trips, and a `{+}`/`{#}`
    /// match gives the value itself back.
    #[test]
    fn every_operator_round_trips(
        value in value_strategy(),
        op in prop::sample::select(vec!["", "+", "#", ".", "/", ";", "?", "&"]),
        prefix in prop::option::of(1usize..5),
    ) {
        let modifier = prefix.map(|n| format!(":{n}")).unwrap_or_default();
        let template = format!("file:///docs/r{{{op}v{modifier}}}");
        let tpl = t(&template);
        let mut vars = Vars::new();
        vars.insert("v", value.as_str());
        let uri = tpl.expand(&vars).unwrap();
        if let Some(m) = tpl.match_uri(&uri) {
            prop_assert_eq!(tpl.expand(&m).unwrap(), uri.clone(), "{} with {:?} -> {:?}", template, value, m);
            // `+`/`#`: the value is the expansion's own text (triplets and all), not decoded.
            let lead = if op == "#" { "file:///docs/r#" } else { "file:///docs/r" };
            let text = uri.strip_prefix(lead);
            if matches!(op, "+" | "#") {
                prop_assert_eq!(m.get_str("v"), text);
            }
        }
    }
}

/// The fuzz property (`fuzzing::check_match_round_trip`) on the RFC 6570 example tables: every
/// expansion the matcher matches expands back exactly, and it matches most of them (not
/// vacuous). The whole `uri_template` target also runs over the committed seeds.
#[test]
fn fuzz_round_trip_property_holds_on_the_rfc_tables_and_the_seeds() {
    let vars = mcptape_uri::fuzzing::rfc6570_example_vars();
    let (mut rows, mut matched) = (0, 0);
    for line in include_str!("data/rfc6570_examples.tsv").lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let tpl = t(cols[1]);
        let uri = tpl.expand(&vars).unwrap();
        assert_eq!(
            mcptape_uri::fuzzing::check_match_round_trip(&tpl, &uri),
            Ok(())
        );
        rows += 1;
        matched += usize::from(tpl.match_uri(&uri).is_some());
    }
    assert!(rows >= 170 && matched >= rows / 2, "{matched} of {rows}");
    let seeds = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/fuzz/uri_template"
    );
    let mut n = 0;
    for entry in std::fs::read_dir(seeds).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        mcptape_uri::fuzzing::uri_template(&data);
        n += 1;
    }
    assert!(n >= 30, "{n} seeds");
}
