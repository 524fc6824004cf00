//! RFC 6570 templates: expansion against the RFC's own example tables (§1.2 levels 1–4 and
//! §3.2.1–§3.2.9, `tests/data/rfc6570_examples.tsv`), matching with decoding, limits, and the
//! rule that every expansion still goes through the sanitizer.

use mcptape_uri::template::{
    MAX_MATCH_DEPTH, MAX_MATCH_URI_BYTES, MAX_TEMPLATE_BYTES, MAX_TEMPLATE_VARS, Template,
    TemplateErrorKind, Value, Vars,
};
use mcptape_uri::{Root, SanitizeErrorKind};

fn rfc_vars() -> Vars {
    mcptape_uri::fuzzing::rfc6570_example_vars()
}

fn t(s: &str) -> Template {
    Template::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Vars holding one variable.
fn var(name: &str, value: impl Into<Value>) -> Vars {
    let mut v = Vars::new();
    v.insert(name, value);
    v
}

/// The variables `uri` binds against `tpl`; panics when it does not match.
fn matched(tpl: &str, uri: &str) -> Vars {
    t(tpl)
        .match_uri(uri)
        .unwrap_or_else(|| panic!("{tpl} does not match {uri}"))
}

#[test]
fn rfc6570_example_tables_expand_exactly() {
    let vars = rfc_vars();
    let mut failures = Vec::new();
    let mut sections = std::collections::BTreeSet::new();
    let mut rows = 0;
    for line in include_str!("data/rfc6570_examples.tsv").lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 3, "{line:?}");
        rows += 1;
        sections.insert(cols[0]);
        let got = t(cols[1]).expand(&vars);
        if got.as_deref() != Ok(cols[2]) {
            failures.push(format!(
                "§{} {}: want {} got {got:?}",
                cols[0], cols[1], cols[2]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(rows >= 170, "{rows} rows");
    for s in [
        "1.2-level1",
        "1.2-level2",
        "1.2-level3",
        "1.2-level4",
        "3.2.1",
        "3.2.2",
        "3.2.3",
        "3.2.4",
        "3.2.5",
        "3.2.6",
        "3.2.7",
        "3.2.8",
        "3.2.9",
    ] {
        assert!(sections.contains(s), "section {s} missing");
    }
}

#[test]
fn non_ascii_literal_is_percent_encoded_on_expansion() {
    let tpl = t("file:///docs/über/{name}");
    let v = var("name", "Grüße.txt");
    assert_eq!(
        tpl.expand(&v).unwrap(),
        "file:///docs/%C3%BCber/Gr%C3%BC%C3%9Fe.txt"
    );
    // and the encoded literal matches back
    let m = tpl
        .match_uri("file:///docs/%C3%BCber/Gr%C3%BC%C3%9Fe.txt")
        .unwrap();
    assert_eq!(m.get_str("name"), Some("Grüße.txt"));
    // lowercase hex in the URI is the same literal (RFC 3986 §2.1), other letters are not
    let m = tpl.match_uri("file:///docs/%c3%bcber/x").unwrap();
    assert_eq!(m.get_str("name"), Some("x"));
    assert_eq!(tpl.match_uri("file:///DOCS/%C3%BCber/x"), None);
}

#[test]
fn reserved_expansion_of_percent_values_is_exact_and_does_not_panic() {
    // iri-string 0.7.14 panics on these; found by the uri_template fuzz target
    let cases = [
        ("{+path}", "%ü", "%25%C3%BC"),
        ("{+path}", "%2ü", "%252%C3%BC"),
        ("{#path}", "a%üx", "#a%25%C3%BCx"),
        ("{+path:2}", "%ü", "%25%C3%BC"),
        ("{+path}", "%2e%", "%2e%25"),
        ("{path}", "%ü", "%25%C3%BC"),
        ("{+path}", "ü%2e", "%C3%BC%2e"),
        ("{#path}", "%2eü", "#%2e%C3%BC"),
        ("{+path}", "%FFü", "%FF%C3%BC"),
        ("{+path:2}", "ü%2ex", "%C3%BC%2e"),
        // iri-string 0.7.14 panics on the first and drops the `%25` of the second
        ("{+path}", "%C3%25%C3%25", "%C3%25%C3%25"),
        ("{+path}", "%C3%25B", "%C3%25B"),
        (
            "{#path}",
            "a b\"<>^`{|}\\",
            "#a%20b%22%3C%3E%5E%60%7B%7C%7D%5C",
        ),
    ];
    for (tpl, value, want) in cases {
        let v = var("path", value);
        assert_eq!(
            t(tpl).expand(&v).as_deref(),
            Ok(want),
            "{tpl} with {value:?}"
        );
    }
    let v = var("list", Value::List(vec!["%ü".into(), "%41".into()]));
    assert_eq!(t("{+list}").expand(&v).as_deref(), Ok("%25%C3%BC,%41"));
}

#[test]
fn prefix_counts_characters_not_bytes() {
    // iri-string 0.7.14 panics here (debug) or mis-truncates (release)
    let v = var("x", "Aꬰ0A");
    assert_eq!(t("{x:3}").expand(&v).as_deref(), Ok("A%EA%AC%B00"));
    assert_eq!(t("{?x:2}").expand(&v).as_deref(), Ok("?x=A%EA%AC%B0"));
    assert_eq!(t("{+x:2}").expand(&v).as_deref(), Ok("A%EA%AC%B0"));
}

#[test]
fn named_explode_empty_member_uses_ifemp() {
    // RFC 6570 Appendix A: an empty member appends ifemp ("" for `;`, "=" for `?`/`&`)
    let mut v = Vars::new();
    v.insert("l", Value::List(vec![String::new(), "a".into()]));
    v.insert("k", Value::Assoc(vec![("e".into(), String::new())]));
    assert_eq!(t("{;l*}").expand(&v).as_deref(), Ok(";l;l=a"));
    assert_eq!(t("{?l*}").expand(&v).as_deref(), Ok("?l=&l=a"));
    assert_eq!(t("{;k*}").expand(&v).as_deref(), Ok(";e"));
    assert_eq!(t("{&k*}").expand(&v).as_deref(), Ok("&e="));
    assert_eq!(t("{/k*}").expand(&v).as_deref(), Ok("/e="));
}

#[test]
fn match_decodes_space() {
    assert_eq!(
        matched("file:///project/{name}", "file:///project/My%20File.txt").get_str("name"),
        Some("My File.txt")
    );
}

#[test]
fn match_decodes_utf8_umlaut() {
    let m = matched("file:///project/{name}", "file:///project/%C3%BC");
    assert_eq!(m.get_str("name"), Some("ü"));
}

#[test]
fn match_malformed_escape_is_no_match() {
    let tpl = t("file:///project/{name}");
    assert_eq!(tpl.match_uri("file:///project/%ZZ"), None);
    assert_eq!(tpl.match_uri("file:///project/a%2"), None);
    assert_eq!(
        t("file:///project/{+name}").match_uri("file:///project/%ZZ"),
        None
    );
}

#[test]
fn match_invalid_utf8_after_decoding_is_no_match() {
    assert_eq!(t("file:///p/{name}").match_uri("file:///p/%C3"), None);
    assert_eq!(t("file:///p/{name}").match_uri("file:///p/%c0%ae"), None);
}

#[test]
fn simple_var_never_matches_across_slash() {
    let tpl = t("file:///project/{name}");
    assert_eq!(tpl.match_uri("file:///project/a/b.txt"), None);
    // Nor across an encoded one: a decoded `/` is a traversal for a path segment (issue 15,
    // `match_dot_dot_encoded_slash_is_no_match` in tests/match_traversal.rs).
    assert_eq!(tpl.match_uri("file:///project/a%2Fb.txt"), None);
}

#[test]
fn reserved_var_may_match_across_slash() {
    let m = matched("file:///project/{+path}", "file:///project/a/b/c.txt");
    assert_eq!(m.get_str("path"), Some("a/b/c.txt"));
    let m = matched("{#frag}", "#a/b?c");
    assert_eq!(m.get_str("frag"), Some("a/b?c"));
}

#[test]
fn match_is_greedy_then_backtracks_to_the_literal() {
    let m = matched("file:///{+dir}/{name}.{ext}", "file:///a/b/c.d.tar.gz");
    assert_eq!(m.get_str("dir"), Some("a/b"));
    assert_eq!(m.get_str("name"), Some("c.d.tar"));
    assert_eq!(m.get_str("ext"), Some("gz"));
}

#[test]
fn match_rfc_operator_forms() {
    let m = matched("{/var,x}/here", "/value/1024/here");
    assert_eq!(
        (m.get_str("var"), m.get_str("x")),
        (Some("value"), Some("1024"))
    );

    let m = matched("{;x,y,empty}", ";x=1024;y=768;empty");
    assert_eq!(m.get_str("x"), Some("1024"));
    assert_eq!(m.get_str("y"), Some("768"));
    assert_eq!(m.get_str("empty"), Some(""));

    let m = matched("{?x,y,undef}", "?x=1024&y=768");
    assert_eq!(m.len(), 2);
    assert_eq!(m.get("undef"), None);

    let m = matched("?fixed=yes{&x}", "?fixed=yes&x=1024");
    assert_eq!(m.get_str("x"), Some("1024"));

    let red_green_blue = Value::List(vec!["red".into(), "green".into(), "blue".into()]);
    let m = matched("{/list*}", "/red/green/blue");
    assert_eq!(m.get("list"), Some(&red_green_blue));
    let m = matched("{?list*}", "?list=red&list=green&list=blue");
    assert_eq!(m.get("list"), Some(&red_green_blue));

    let m = matched("X{.var:3}", "X.val");
    assert_eq!(m.get_str("var"), Some("val"));
    assert_eq!(t("X{.var:3}").match_uri("X.value"), None);

    let m = matched("{#path,x}/here", "#foo/bar,1024/here");
    assert_eq!(
        m.get_str("path"),
        Some("foo/bar,1024"),
        "greedy: ambiguous per RFC 6570 §1.4"
    );
    assert_eq!(m.get("x"), None);
    // The RFC's own `#/foo/bar,1024/here`: a fragment value is held to the `{+var}` path rules
    // (issue 15 review), and an absolute path `/foo/bar,1024` is no match.
    assert_eq!(t("{#path,x}/here").match_uri("#/foo/bar,1024/here"), None);
}

#[test]
fn match_literal_mismatch_is_none() {
    for uri in ["file:///b/c", "file:///a/c/"] {
        assert_eq!(t("file:///a/{x}").match_uri(uri), None, "{uri}");
    }
}

#[test]
fn expansion_of_traversal_values_is_legal_then_rejected_by_resolve() {
    let root = Root::new("file:///project/").unwrap();
    let plus = t("file:///project/{+path}");
    for (value, kind) in [
        ("../../etc", SanitizeErrorKind::EscapesRoot),
        ("%2e%2e/x", SanitizeErrorKind::EscapesRoot),
        ("..%2f..%2fetc", SanitizeErrorKind::EncodedSeparator),
    ] {
        let v = var("path", value);
        let uri = plus.expand(&v).unwrap();
        assert_eq!(
            uri,
            format!("file:///project/{value}"),
            "{{+path}} passes reserved and %XX"
        );
        let err = root.resolve(&uri).unwrap_err();
        assert_eq!(err.kind(), kind, "{uri}");
    }
    let simple = t("file:///project/{path}");
    for (value, want, kind) in [
        // `{path}` encodes `/` as `%2F`: an encoded separator is rejected (it would
        // turn one segment into `../../etc` after one decoding)
        (
            "../../etc",
            "file:///project/..%2F..%2Fetc",
            SanitizeErrorKind::EncodedSeparator,
        ),
        // `{path}` with a pre-encoded value: `%` is encoded, so it is double encoding
        (
            "%2e%2e",
            "file:///project/%252e%252e",
            SanitizeErrorKind::DoubleEncoding,
        ),
    ] {
        let uri = simple.expand(&var("path", value)).unwrap();
        assert_eq!(uri, want);
        assert_eq!(root.resolve(&uri).unwrap_err().kind(), kind, "{uri}");
    }
    // a benign value resolves, and matching gives it back decoded
    let uri = simple.expand(&var("path", "My File.txt")).unwrap();
    assert_eq!(root.resolve(&uri).unwrap().relative(), "My File.txt");
    assert_eq!(
        simple.match_uri(&uri).unwrap().get_str("path"),
        Some("My File.txt")
    );
}

#[test]
fn parse_errors_name_the_rule_and_offset() {
    let cases: &[(&str, TemplateErrorKind, usize)] = &[
        ("file:///{name", TemplateErrorKind::UnclosedExpression, 8),
        ("file:///{a{b}", TemplateErrorKind::UnclosedExpression, 10),
        ("file:///{}", TemplateErrorKind::InvalidVarName, 9),
        ("file:///{a b}", TemplateErrorKind::InvalidVarName, 10),
        ("file:///{a.}", TemplateErrorKind::InvalidVarName, 11),
        ("file:///{=a}", TemplateErrorKind::UnsupportedOperator, 9),
        ("file:///{|a}", TemplateErrorKind::UnsupportedOperator, 9),
        ("file:///{a:0}", TemplateErrorKind::InvalidPrefix, 11),
        ("file:///{a:10000}", TemplateErrorKind::InvalidPrefix, 11),
        ("file:///{a:}", TemplateErrorKind::InvalidPrefix, 11),
        ("file:///a b", TemplateErrorKind::InvalidLiteral, 9),
        ("file:///a}", TemplateErrorKind::InvalidLiteral, 9),
        ("file:///a%ZZ", TemplateErrorKind::MalformedEscape, 9),
        ("file:///{a%Z}", TemplateErrorKind::MalformedEscape, 10),
    ];
    for (tpl, kind, offset) in cases {
        let e = Template::parse(tpl).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (*kind, *offset), "{tpl}");
    }
    assert_eq!(t("{a:9999}").as_str(), "{a:9999}");
}

#[test]
fn prefix_on_list_is_an_error_not_a_silent_default() {
    let v = var("list", Value::List(vec!["a".into()]));
    let e = t("x{list:2}").expand(&v).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (TemplateErrorKind::PrefixOnComposite, 2)
    );
}

#[test]
fn max_template_bytes_at_the_limit_and_one_past() {
    let at = format!("{{x}}{}", "a".repeat(MAX_TEMPLATE_BYTES - 3));
    assert_eq!(at.len(), MAX_TEMPLATE_BYTES);
    assert!(Template::parse(&at).is_ok());
    let past = format!("{at}a");
    let e = Template::parse(&past).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (TemplateErrorKind::TooLong, MAX_TEMPLATE_BYTES)
    );
}

#[test]
fn max_template_vars_at_the_limit_and_one_past() {
    let names: Vec<String> = (0..MAX_TEMPLATE_VARS).map(|i| format!("v{i}")).collect();
    let at = format!("x:{{/{}}}", names.join(","));
    let tpl = t(&at);
    assert_eq!(tpl.var_names().count(), MAX_TEMPLATE_VARS);
    // a template at the limit matches its own expansion back
    let vars: Vars = names
        .iter()
        .map(|n| (n.clone(), format!("val-{n}")))
        .collect();
    let uri = tpl.expand(&vars).unwrap();
    assert_eq!(tpl.match_uri(&uri), Some(vars));
    // one more, in a second expression: the offset is that variable's name
    let past = format!("{at}{{extra}}");
    let e = Template::parse(&past).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (TemplateErrorKind::TooManyVars, at.len() + 1)
    );
    // repeats count: the same name 65 times is one past too
    let repeated = format!("x:{{{}}}", vec!["a"; MAX_TEMPLATE_VARS + 1].join(","));
    let e = Template::parse(&repeated).unwrap_err();
    assert_eq!(e.kind(), TemplateErrorKind::TooManyVars);
}

#[test]
fn max_match_uri_bytes_at_the_limit_and_one_past() {
    let tpl = t("x:{+rest}");
    let at = format!("x:{}", "a".repeat(MAX_MATCH_URI_BYTES - 2));
    let m = tpl.try_match_uri(&at).unwrap().unwrap();
    assert_eq!(
        m.get_str("rest").map(str::len),
        Some(MAX_MATCH_URI_BYTES - 2)
    );
    let past = format!("{at}a");
    let e = tpl.try_match_uri(&past).unwrap_err();
    assert_eq!(e.kind(), TemplateErrorKind::UriTooLong);
    assert_eq!(tpl.match_uri(&past), None);
}

#[test]
fn adjacent_ambiguous_variables_against_a_long_uri_that_fails_at_the_end_are_no_match() {
    // the backtracking matcher ran out of its budget here (quadratic per variable); the Pike VM
    // answers within the limits at any length up to MAX_MATCH_URI_BYTES
    let tpl = t(&format!("x:{}!", "{a}{b}{c}{d}{e}{f}{g}{h}"));
    for n in [600, MAX_MATCH_URI_BYTES - 2] {
        let uri = format!("x:{}", "a".repeat(n));
        assert_eq!(tpl.try_match_uri(&uri), Ok(None), "{n} bytes");
        let hit = format!("{uri}!");
        if hit.len() <= MAX_MATCH_URI_BYTES {
            let m = tpl.try_match_uri(&hit).unwrap().unwrap();
            assert_eq!(
                m.get_str("a").map(str::len),
                Some(n),
                "greedy: the first takes all"
            );
        }
    }
}

#[test]
fn max_match_depth_fits_a_small_stack_and_one_past_is_an_error() {
    // `{/l*}` with k items builds a chain of k + 2 states (one per item, one for the end of the
    // item list, one for the end of the expression)
    let run = |items: usize| {
        let uri = "/a".repeat(items);
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || t("{/l*}").try_match_uri(&uri))
            .unwrap()
            .join()
            .expect("no stack overflow")
    };
    let at = run(MAX_MATCH_DEPTH - 2).unwrap().unwrap();
    match at.get("l") {
        Some(Value::List(items)) => assert_eq!(items.len(), MAX_MATCH_DEPTH - 2),
        other => panic!("{other:?}"),
    }
    let past = run(MAX_MATCH_DEPTH - 1).unwrap_err();
    assert_eq!(past.kind(), TemplateErrorKind::MatchTooDeep);
    // the longest URI the matcher accepts is an error, not a crash
    let e = run(MAX_MATCH_URI_BYTES / 2).unwrap_err();
    assert_eq!(e.kind(), TemplateErrorKind::MatchTooDeep);
}
