//! Property tests (proptest) of the sanitizer: for any input, an `Ok` path is inside the root by
//! whole segments, has no `.`/`..`/empty segment, and resolving its `to_uri()` gives itself.
//! Also: no input panics, and template expansion of simple `{var}` templates matches back.

use mcptape_uri::fuzzing::check_sanitize;
use mcptape_uri::template::{Template, Vars};
use mcptape_uri::{ResolvedPath, Root};
use proptest::prelude::*;

fn assert_properties(root: &Root, uri: &str, p: &ResolvedPath) -> Result<(), TestCaseError> {
    let path = p.as_str();
    let segs: Vec<&str> = if path == "/" {
        Vec::new()
    } else {
        path[1..].split('/').collect()
    };
    let root_segs = root.segments();
    // inside the root by whole segments
    prop_assert!(
        segs.len() >= root_segs.len(),
        "{uri:?} -> {path:?} shorter than root"
    );
    for (a, b) in segs.iter().zip(root_segs) {
        prop_assert_eq!(*a, b.as_str(), "{:?} -> {:?} leaves the root", uri, path);
    }
    // no dot or empty segment
    for s in &segs {
        prop_assert!(
            !matches!(*s, "" | "." | ".."),
            "{uri:?} -> {path:?} has {s:?}"
        );
    }
    // idempotent: a fixed point
    let again = root.resolve(&p.to_uri());
    prop_assert_eq!(
        again.as_ref(),
        Ok(p),
        "{:?} -> {:?} not a fixed point",
        uri,
        p.to_uri()
    );
    // and the shared fuzz check agrees
    prop_assert_eq!(check_sanitize(root, uri, &|u| root.resolve(u)), Ok(()));
    Ok(())
}

/// The fixed path pieces `piece` draws from, each as likely as one regex arm.
const PIECES: &[&str] = &[
    "..",
    ".",
    "%2e%2e",
    "%2E.",
    "%2e",
    "%2f",
    "%2F..",
    "%252e",
    "%25",
    "%5c",
    "%00",
    "%c0%ae",
    "%C3%BC",
    "ü",
    "..bar",
    "srv",
    "allowed",
    "allowed_evil",
    "allowed2",
    "",
    "%",
    ";",
];

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        PIECES.len() as u32 => prop::sample::select(PIECES).prop_map(str::to_owned),
        1 => "[a-z0-9_.~-]{1,6}",
        1 => "[ -~]{1,4}",
    ]
}

fn structured_uri() -> impl Strategy<Value = String> {
    let prefix = prop_oneof![
        Just("file:///"),
        Just("file://localhost/"),
        Just("FILE:/"),
        Just("file:"),
        Just("file:////"),
        Just("file://evil/"),
        Just("http:///"),
    ];
    (prefix, prop::collection::vec(piece(), 0..10), any::<bool>()).prop_map(|(p, segs, slash)| {
        let mut s = format!("{p}{}", segs.join("/"));
        if slash {
            s.push('/');
        }
        s
    })
}

fn root_strategy() -> impl Strategy<Value = Root> {
    prop_oneof![
        Just("file:///srv/allowed/"),
        Just("file:///srv/allowed"),
        Just("file:///"),
        Just("file://localhost/srv/"),
        Just("file:///srv/allowed/ü/"),
    ]
    .prop_map(|r| Root::new(r).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn structured_ok_paths_are_inside_dotless_and_fixed_points(root in root_strategy(), uri in structured_uri()) {
        if let Ok(p) = root.resolve(&uri) {
            assert_properties(&root, &uri, &p)?;
        }
    }

    #[test]
    fn arbitrary_strings_never_panic_and_ok_paths_hold(root in root_strategy(), tail in any::<String>()) {
        for uri in [format!("file:///srv/allowed/{tail}"), tail.clone()] {
            if let Ok(p) = root.resolve(&uri) {
                assert_properties(&root, &uri, &p)?;
            }
        }
    }

    #[test]
    fn reserved_and_fragment_expansion_never_panic(value in any::<String>(), n in 1usize..6) {
        // iri-string 0.7.14 panics on non-ASCII in `{+x}` (found by the fuzzer); ours must not
        let mut vars = Vars::new();
        vars.insert("x", value.as_str());
        vars.insert("l", mcptape_uri::template::Value::List(vec![value.clone(), value.clone()]));
        for tpl in ["{+x}", "{#x}", "{+x,l}", "{#l*}", "{+l}"] {
            let out = Template::parse(tpl).unwrap().expand(&vars).unwrap();
            prop_assert!(out.is_ascii(), "{tpl}: {out:?}");
        }
        let out = Template::parse(&format!("{{+x:{n}}}")).unwrap().expand(&vars).unwrap();
        prop_assert!(out.is_ascii());
    }

    #[test]
    fn own_reserved_expansion_agrees_with_iri_string_without_percent(value in "[ -$&-~]{0,12}", n in 1usize..6) {
        // on ASCII values without `%` (where iri-string 0.7.14 does not panic or drop bytes:
        // it panics on any non-ASCII value in `{+x}`/`{#x}`), both implementations agree
        use iri_string::spec::UriSpec;
        use iri_string::template::UriTemplateStr;
        use iri_string::template::simple_context::SimpleContext;
        let mut ctx = SimpleContext::new();
        ctx.insert("x", value.as_str());
        ctx.insert("l", iri_string::template::simple_context::Value::List(vec![value.clone(), "b c".into()]));
        let mut vars = Vars::new();
        vars.insert("x", value.as_str());
        vars.insert("l", mcptape_uri::template::Value::List(vec![value.clone(), "b c".into()]));
        for tpl in ["{+x}".to_owned(), "{#x}".into(), "{+x,l}".into(), "{#l*}".into(), format!("{{+x:{n}}}"), format!("{{#x:{n},x}}")] {
            let theirs = UriTemplateStr::new(&tpl).unwrap().expand::<UriSpec, _>(&ctx).unwrap().to_string();
            let ours = Template::parse(&tpl).unwrap().expand(&vars).unwrap();
            prop_assert_eq!(ours, theirs, "{}", tpl);
        }
    }

    #[test]
    fn non_reserved_operators_and_prefixes_never_panic(value in any::<String>(), n in 1usize..6) {
        let mut vars = Vars::new();
        vars.insert("x", value.as_str());
        vars.insert("l", mcptape_uri::template::Value::List(vec![value.clone(), value.clone()]));
        vars.insert("k", mcptape_uri::template::Value::Assoc(vec![(value.clone(), value.clone())]));
        for tpl in ["{x}".to_owned(), "{.x,l}".into(), "{/l*}".into(), "{;x,k*}".into(), "{?x,l*}".into(), format!("{{&x:{n}}}"), "{k}".into()] {
            let out = Template::parse(&tpl).unwrap().expand(&vars).unwrap();
            prop_assert!(out.is_ascii(), "{}: {:?}", tpl, out);
        }
    }

    #[test]
    fn simple_template_expansion_matches_back(values in prop::collection::vec(any::<String>(), 1..5)) {
        let mut tpl = String::from("file:///docs");
        let mut vars = Vars::new();
        for (i, v) in values.iter().enumerate() {
            tpl.push_str(&format!("/{{v{i}}}"));
            vars.insert(format!("v{i}"), v.as_str());
        }
        let t = Template::parse(&tpl).unwrap();
        let uri = t.expand(&vars).unwrap();
        // A traversal value (`.`, `..`, a `/` or `\\`) is refused: the URI is then no match.
        let refused = values.iter().any(|v| !mcptape_uri::template::simple_value_is_matchable(v));
        prop_assert_eq!(t.match_uri(&uri), (!refused).then_some(vars));
    }
}

#[test]
fn structured_strategy_is_not_vacuous() {
    // the properties above only bite on `Ok` results: make sure the generator produces plenty of
    // both outcomes, including `Ok` paths that went through dot-segment removal
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let root = Root::new("file:///srv/allowed/").unwrap();
    let mut runner = TestRunner::deterministic();
    let (mut ok, mut err, mut ok_with_dots) = (0, 0, 0);
    for _ in 0..1000 {
        let uri = structured_uri().new_tree(&mut runner).unwrap().current();
        let uri = format!(
            "file:///srv/allowed/{}",
            uri.split_once("//").map_or("", |x| x.1)
        );
        match root.resolve(&uri) {
            Ok(_) => {
                ok += 1;
                if uri.contains("/..") || uri.contains("%2e") {
                    ok_with_dots += 1;
                }
            }
            Err(_) => err += 1,
        }
    }
    eprintln!("ok {ok} err {err} dots {ok_with_dots}");
    assert!(
        ok >= 50 && err >= 50 && ok_with_dots >= 10,
        "ok {ok} err {err} dots {ok_with_dots}"
    );
}
