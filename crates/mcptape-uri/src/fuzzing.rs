//! Fuzz entry points (rustls style: the fuzz targets in `fuzz/` are one line each). Seeds live
//! in `corpus/fuzz/uri_sanitize/` and `corpus/fuzz/uri_template/`, dictionaries in
//! `corpus/fuzz/uri_sanitize.dict` and `corpus/fuzz/uri_template.dict`.
//!
//! # Does the `uri_sanitize` property have teeth? (planted-bug experiment)
//! The tests below swap the component-wise containment check for a string-prefix check
//! (`"/srv/allowed_evil".starts_with("/srv/allowed")`, compiled only under `cfg(test)`) and show
//! that [`check_sanitize`] rejects it, both on the seed corpus and under a proptest search.
//! The same bug planted in a scratch copy of this crate and fuzzed with libFuzzer
//! (`-dict=corpus/fuzz/uri_sanitize.dict`, **empty** corpus, `-s none`, 1 job) crashed after
//! 8,678 executions (< 1 s) on `file:/srv/allowed:/./` → `/srv/allowed:`, now the seed and table
//! row `sibling_prefix_with_colon_found_by_libfuzzer`. The real crate ran 2,665,046 executions
//! (150 s, 17,649 exec/s, cov 386, ft 1343) and later 6,733,987 (120 s, 55,652 exec/s, cov 390)
//! from the seed corpus without a finding; `uri_template` after the fixes below: 274,269
//! executions (180 s, 1,515 exec/s, cov 876) without a finding.
//!
//! The `uri_template` target found real panics in `iri-string` 0.7.14's expander (non-ASCII or
//! stray `%` in `{+x}`/`{#x}` values), and the property tests two more deviations; expansion is
//! now our own (see the `template` module docs) and the seeds `iri_string_*` are regressions.

use crate::template::{Template, Vars};
use crate::{PathStyle, ResolvedPath, Root, SanitizeError};

/// Root used by [`uri_sanitize`] when the input has no `\n` ([`PathStyle::Posix`]).
pub const DEFAULT_FUZZ_ROOT: &str = "file:///srv/allowed/";

/// Root used by [`uri_sanitize`] when a [`PathStyle::Windows`] input has no `\n`.
pub const DEFAULT_FUZZ_ROOT_WINDOWS: &str = "file:///C:/Users/allowed/";

/// Which fuzz property an input broke ([`check_sanitize`], [`check_match_round_trip`]).
/// `#[non_exhaustive]`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViolationKind {
    /// A Windows drive path without the `/` after its drive (`C:x`); offset 2.
    DriveWithoutSlash,
    /// A Windows drive path whose drive letter is not upper case; offset 0.
    DriveLetterNotUpperCase,
    /// A path that starts with neither `/` nor (Windows) a drive; offset 0.
    NotAbsolute,
    /// A path not inside the root by whole segments (RFC 3986 §3.3 segments); offset of the
    /// first segment that differs from the root's (the path's length if it is shorter).
    OutsideRoot,
    /// An empty, `.` or `..` segment (RFC 3986 §5.2.4 leaves none); offset of the segment.
    DotOrEmptySegment,
    /// A `\` in the path; offset of the first one.
    Backslash,
    /// A Windows segment holding a `:` (an alternate data stream) other than the drive's;
    /// offset of the segment.
    ColonInSegment,
    /// A Windows segment ending in `.` or a space; offset of the segment.
    TrailingDotOrSpace,
    /// A Windows segment that is a DOS device name (`CON`, `LPT1`, ...); offset of the segment.
    DeviceName,
    /// `relative()` is not the part of the path after the root; offset 0.
    RelativeMismatch,
    /// `to_uri()` holds an empty segment (`//` after its prefix); offset of the `//` in the URI.
    EmptySegmentInUri,
    /// Resolving `to_uri()` does not give the path again; offset 0.
    NotAFixedPoint,
    /// A match of an expansion expands back to another URI (up to RFC 3986 §6.2.2
    /// normalization); offset of the first differing byte of the normalized URIs.
    MatchDoesNotExpandBack,
    /// A match of an expansion does not expand at all; offset of the expansion error (in the
    /// template).
    MatchDoesNotExpand,
}

/// A broken fuzz property: its [`ViolationKind`], a byte offset (in the resolved path for the
/// sanitizer's kinds, in `to_uri()` for [`ViolationKind::EmptySegmentInUri`], in the normalized
/// URI or the template for the round trip's: each kind says), and the input and values it was
/// found on, for the fuzz finding's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?} at byte {offset}: {detail}")]
pub struct Violation {
    kind: ViolationKind,
    offset: usize,
    detail: String,
}

impl Violation {
    fn new(kind: ViolationKind, offset: usize, detail: String) -> Self {
        Self {
            kind,
            offset,
            detail,
        }
    }

    /// The property broken.
    pub fn kind(&self) -> ViolationKind {
        self.kind
    }

    /// Byte offset of the violation (see [`ViolationKind`] for the string it is in).
    pub fn offset(&self) -> usize {
        self.offset
    }
}

/// Splits fuzz input into `(root, uri)` at the first `\n`; without one, the root is
/// [`DEFAULT_FUZZ_ROOT`].
pub fn split_sanitize_input(data: &[u8]) -> (&[u8], &[u8]) {
    split_with_default(data, DEFAULT_FUZZ_ROOT)
}

fn split_with_default<'a>(data: &'a [u8], default_root: &'static str) -> (&'a [u8], &'a [u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (default_root.as_bytes(), data),
    }
}

/// The [`uri_sanitize`] input format: an optional style byte, then `root \n uri`. A first byte
/// below `0x20` (a control byte, which no URI starts with) is the style byte: odd is
/// [`PathStyle::Windows`] (default root [`DEFAULT_FUZZ_ROOT_WINDOWS`]), even
/// [`PathStyle::Posix`]; any other input is `root \n uri` read [`PathStyle::Posix`], as before
/// the style byte existed (the committed seeds keep their meaning). Without the byte the target
/// could never reach the Windows rules (drive letters, `\` separators, DOS device names,
/// trailing dots, UNC, alternate data streams): coverage showed them unreached.
pub fn sanitize_input(data: &[u8]) -> (PathStyle, &[u8], &[u8]) {
    match data {
        [b, rest @ ..] if *b < 0x20 && b % 2 == 1 => {
            let (root, uri) = split_with_default(rest, DEFAULT_FUZZ_ROOT_WINDOWS);
            (PathStyle::Windows, root, uri)
        }
        [b, rest @ ..] if *b < 0x20 => {
            let (root, uri) = split_sanitize_input(rest);
            (PathStyle::Posix, root, uri)
        }
        _ => {
            let (root, uri) = split_sanitize_input(data);
            (PathStyle::Posix, root, uri)
        }
    }
}

/// Fuzz target `uri_sanitize`: input is an optional style byte and `root \n uri` (see
/// [`sanitize_input`]). Never panics on any input except when [`check_sanitize`] finds a
/// violated property.
pub fn uri_sanitize(data: &[u8]) {
    let (style, root, uri) = sanitize_input(data);
    let (Ok(root), Ok(uri)) = (std::str::from_utf8(root), std::str::from_utf8(uri)) else {
        return;
    };
    let Ok(root) = Root::with_style(root, style) else {
        return;
    };
    if let Err(violation) = check_sanitize(&root, uri, &|u| root.resolve(u)) {
        panic!("uri_sanitize property violated: {violation}");
    }
}

/// The sanitizer properties for one input: if `resolve(uri)` is `Ok(p)`, then `p` is inside
/// `root` by whole segments, has no `.`/`..`/empty segment and no `\`, its `relative()` is the
/// part after the root, and `resolve(p.to_uri())` is `Ok(p)` again (a fixed point). In
/// [`PathStyle::Windows`] (the root's style) a path is either absolute (`/…`) or a drive path
/// (`C:/…`, the drive's root `C:/`) whose drive letter is upper case, and no segment is a DOS
/// device name, ends in `.` or a space, or holds a `:` other than the leading drive's.
///
/// # Errors
/// The first violated property as a [`Violation`] (kind, byte offset in the resolved path,
/// the input). `resolve` is a parameter so tests can plug in a deliberately broken resolver and
/// show the check catches it.
pub fn check_sanitize(
    root: &Root,
    uri: &str,
    resolve: &dyn Fn(&str) -> Result<ResolvedPath, SanitizeError>,
) -> Result<(), Violation> {
    use ViolationKind as K;
    let Ok(p) = resolve(uri) else {
        return Ok(());
    };
    let path = p.as_str();
    let fail = |kind, offset, what: std::fmt::Arguments<'_>| {
        Err(Violation::new(
            kind,
            offset,
            format!("{uri:?}: path {path:?} {what}"),
        ))
    };
    // Byte offset of segment `s` (a slice of `path`) in `path`.
    let at = |s: &str| s.as_ptr() as usize - path.as_ptr() as usize;
    let windows = root.style() == PathStyle::Windows;
    let b = path.as_bytes();
    let drive = windows && b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    let segs: Vec<&str> = if drive {
        if b.len() < 3 || b[2] != b'/' {
            return fail(
                K::DriveWithoutSlash,
                2,
                format_args!("has no `/` after the drive"),
            );
        }
        if !b[0].is_ascii_uppercase() {
            return fail(
                K::DriveLetterNotUpperCase,
                0,
                format_args!("has a lower-case drive letter"),
            );
        }
        if b.len() == 3 {
            vec![&path[..2]]
        } else {
            path.split('/').collect()
        }
    } else {
        if !path.starts_with('/') {
            return fail(K::NotAbsolute, 0, format_args!("is not absolute"));
        }
        if path == "/" {
            Vec::new()
        } else {
            path[1..].split('/').collect()
        }
    };
    let root_segs = root.segments();
    let differs = (0..root_segs.len()).find(|&i| segs.get(i) != Some(&root_segs[i].as_str()));
    if let Some(i) = differs {
        return fail(
            K::OutsideRoot,
            segs.get(i).map_or(path.len(), |s| at(s)),
            format_args!("is not inside root {:?} by whole segments", root.to_uri()),
        );
    }
    if let Some(bad) = segs.iter().find(|s| matches!(**s, "" | "." | "..")) {
        return fail(
            K::DotOrEmptySegment,
            at(bad),
            format_args!("has segment {bad:?}"),
        );
    }
    if let Some(i) = path.find('\\') {
        return fail(K::Backslash, i, format_args!("holds a backslash"));
    }
    if windows {
        for (i, s) in segs.iter().enumerate() {
            let is_drive = i == 0 && drive;
            if !is_drive && s.contains(':') {
                return fail(
                    K::ColonInSegment,
                    at(s),
                    format_args!("has a `:` in segment {s:?}"),
                );
            }
            if s.ends_with('.') || s.ends_with(' ') {
                return fail(
                    K::TrailingDotOrSpace,
                    at(s),
                    format_args!("has segment {s:?} ending in a dot or space"),
                );
            }
            if crate::is_reserved_device_name(s) {
                return fail(
                    K::DeviceName,
                    at(s),
                    format_args!("has segment {s:?}, a DOS device name"),
                );
            }
        }
    }
    let mut want_rel = segs[root_segs.len()..].join("/");
    if drive && b.len() == 3 && root_segs.is_empty() {
        // A drive's root under a root above every drive (`file:///`): `C:/`, not `C:` (on
        // Windows `C:` names the drive's current directory, another place).
        want_rel = path.to_owned();
    }
    if p.relative() != want_rel {
        return fail(
            K::RelativeMismatch,
            0,
            format_args!("has relative() {:?}, not {want_rel:?}", p.relative()),
        );
    }
    let again_uri = p.to_uri();
    if let Some(i) = again_uri[p.prefix_len()..].find("//") {
        return fail(
            K::EmptySegmentInUri,
            p.prefix_len() + i,
            format_args!("has to_uri {again_uri:?} with an empty segment"),
        );
    }
    match resolve(&again_uri) {
        Ok(q) if q == p => Ok(()),
        other => fail(
            K::NotAFixedPoint,
            0,
            format_args!("is not a fixed point: {again_uri:?} resolves to {other:?}"),
        ),
    }
}

/// Fuzz target `uri_template`. First byte even: the rest is `template \n name=value \n ...`
/// (`name*=a,b` a list, `name%=k1:v1,k2:v2` an associative array);
/// parse, expand, match the expansion and the template text back — none may panic — and a match
/// of the expansion expands back to it ([`check_match_round_trip`]). First byte
/// odd: the rest is `\n`-separated values `v0, v1, ...` (at most 16) for the simple template
/// `x:/{v0}/{v1}/...`; its expansion must match back to exactly those values (unless the
/// expansion exceeds [`MAX_MATCH_URI_BYTES`](crate::template::MAX_MATCH_URI_BYTES)), or be no
/// match when a value is a traversal the matcher refuses (`.`, `..`, a `/` or `\\`).
pub fn uri_template(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode % 2 == 0 {
        let mut lines = text.split('\n');
        let tpl = lines.next().unwrap_or("");
        let mut vars = Vars::new();
        for line in lines {
            if let Some((name, value)) = line.split_once('=') {
                if let Some(name) = name.strip_suffix('%') {
                    // `name%=k1:v1,k2:v2`: an associative array (coverage showed its expansion
                    // unreached while the format had no way to write one).
                    let pairs = value
                        .split(',')
                        .map(|kv| {
                            let (k, v) = kv.split_once(':').unwrap_or((kv, ""));
                            (k.to_owned(), v.to_owned())
                        })
                        .collect();
                    vars.insert(name, crate::template::Value::Assoc(pairs));
                } else if let Some(name) = name.strip_suffix('*') {
                    let items: Vec<String> = value.split(',').map(str::to_owned).collect();
                    vars.insert(name, crate::template::Value::List(items));
                } else {
                    vars.insert(name, value);
                }
            }
        }
        if let Ok(t) = Template::parse(tpl) {
            if let Ok(s) = t.expand(&vars) {
                let matched = t.try_match_uri(&s);
                if let Err(why) = check_round_trip_of(&t, &s, &matched) {
                    panic!("{why}");
                }
                // One input in four (the mode byte's bits 1 and 2: it costs one more match)
                // also runs the unguarded match behind `mcptape uri match`'s explanation, which
                // coverage showed the target never reached: it never panics and names only the
                // template's variables. (`traversal_rejections` without its own guarded
                // match: `matched` is that match.)
                if mode & 6 == 6 && matches!(matched, Ok(None)) {
                    let names: Vec<&str> = t.var_names().collect();
                    for (name, _) in t.traversal_rejections_of_no_match(&s) {
                        assert!(
                            names.contains(&name.as_str()),
                            "{t}: traversal_rejections names {name:?}"
                        );
                    }
                }
            }
            let _ = t.try_match_uri(tpl);
        }
        return;
    }
    let values: Vec<&str> = text.split('\n').take(16).collect();
    let mut tpl = String::from("x:");
    let mut vars = Vars::new();
    for (i, v) in values.iter().enumerate() {
        tpl.push_str(&format!("/{{v{i}}}"));
        vars.insert(format!("v{i}"), *v);
    }
    let t = Template::parse(&tpl).expect("generated simple template parses");
    let expanded = t.expand(&vars).expect("simple template expands");
    if expanded.len() > crate::template::MAX_MATCH_URI_BYTES {
        return;
    }
    let matched = t.match_uri(&expanded);
    // A value the matcher refuses as a traversal (`.`, `..`, or holding `/` or `\`, which a
    // simple `{v}` expands to `%2F` / `%5C`) makes the whole URI no match.
    let refused = values
        .iter()
        .any(|v| !crate::template::simple_value_is_matchable(v));
    assert_eq!(
        matched.as_ref(),
        (!refused).then_some(&vars),
        "{tpl} expanded to {expanded:?} did not match back"
    );
}

/// The match round trip for one expansion `uri` of `t`: if `t` matches `uri`, expanding the
/// match gives `uri` back exactly (an expansion is in RFC 3986 §6.2.2 normal form; `+`/`#`
/// values are kept as matched, the rest decoded once: `template` module docs). Skipped for a
/// template naming a variable twice (a repeated variable keeps its first binding, so a second
/// occurrence need not expand alike).
///
/// # Errors
/// [`ViolationKind::MatchDoesNotExpandBack`] (offset: first differing byte of the normalized
/// URIs) or [`ViolationKind::MatchDoesNotExpand`] (offset: the expansion error's).
pub fn check_match_round_trip(t: &Template, uri: &str) -> Result<(), Violation> {
    check_round_trip_of(t, uri, &t.try_match_uri(uri))
}

/// [`check_match_round_trip`] given `matched`, the result of `t.try_match_uri(uri)`.
fn check_round_trip_of(
    t: &Template,
    uri: &str,
    matched: &Result<Option<Vars>, crate::template::TemplateError>,
) -> Result<(), Violation> {
    let Ok(Some(matched)) = matched else {
        return Ok(());
    };
    let names: Vec<&str> = t.var_names().collect();
    let repeated = names
        .iter()
        .enumerate()
        .any(|(i, n)| names[..i].contains(n));
    if repeated {
        return Ok(());
    }
    let (kind, offset, again) = match t.expand(matched) {
        Ok(again) => {
            let (a, b) = (normalized(&again), normalized(uri));
            if a == b {
                return Ok(());
            }
            let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            (ViolationKind::MatchDoesNotExpandBack, at, Ok(again))
        }
        Err(e) => (ViolationKind::MatchDoesNotExpand, e.offset(), Err(e)),
    };
    Err(Violation::new(
        kind,
        offset,
        format!("{t} matched {uri:?} as {matched:?}, which expands to {again:?}"),
    ))
}

/// `uri` under RFC 3986 §6.2.2 percent-encoding normalization: a triplet of an unreserved
/// character (§2.3: ALPHA, DIGIT, `-`, `.`, `_`, `~`) decoded, every other triplet's hex in upper
/// case. A match decodes `%2e` to `.` and expansion leaves `.` as it is, so the round trip is
/// exact only up to this equivalence (found by the fuzz target: `{/a*}` over `..%2e%2e`).
fn normalized(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
        {
            // Both hex digits are ASCII: the slice is on character boundaries.
            let hex = &uri[i + 1..i + 3];
            let v = u8::from_str_radix(hex, 16).unwrap_or(0);
            if v.is_ascii_alphanumeric() || b"-._~".contains(&v) {
                out.push(v as char);
            } else {
                out.push('%');
                out.push_str(&hex.to_ascii_uppercase());
            }
            i += 3;
            continue;
        }
        let ch = uri[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8().max(1);
    }
    out
}

/// The variable set of RFC 6570's example tables (§1.2 levels 1–4 and §3.2), shared by the
/// expansion tests of [`crate::template`] and `tests/template.rs`.
pub fn rfc6570_example_vars() -> crate::template::Vars {
    use crate::template::{Value, Vars};
    let list = |items: &[&str]| Value::List(items.iter().map(|s| (*s).to_owned()).collect());
    let kv = |k: &str, x: &str| (k.to_owned(), x.to_owned());
    let mut v = Vars::new();
    v.insert("count", list(&["one", "two", "three"]));
    v.insert("dom", list(&["example", "com"]));
    v.insert("dub", "me/too");
    v.insert("hello", "Hello World!");
    v.insert("half", "50%");
    v.insert("var", "value");
    v.insert("who", "fred");
    v.insert("base", "http://example.com/home/");
    v.insert("path", "/foo/bar");
    v.insert("list", list(&["red", "green", "blue"]));
    v.insert(
        "keys",
        Value::Assoc(vec![kv("semi", ";"), kv("dot", "."), kv("comma", ",")]),
    );
    v.insert("v", "6");
    v.insert("x", "1024");
    v.insert("y", "768");
    v.insert("empty", "");
    v.insert("empty_keys", Value::Assoc(Vec::new()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    /// The planted bug: containment as a string prefix (`/srv/allowed_evil` starts with
    /// `/srv/allowed`). Compiled only in tests.
    fn contains_by_string_prefix(root: &[String], path: &[String]) -> bool {
        let r = format!("/{}", root.join("/"));
        let p = format!("/{}", path.join("/"));
        p.starts_with(&r)
    }

    fn seeds() -> Vec<(String, Vec<u8>)> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../corpus/fuzz/uri_sanitize"
        );
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .expect("corpus/fuzz/uri_sanitize exists")
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        out.sort();
        out
    }

    fn check_seed(data: &[u8], buggy: bool) -> Result<(), Violation> {
        let (style, root, uri) = sanitize_input(data);
        let (Ok(root), Ok(uri)) = (std::str::from_utf8(root), std::str::from_utf8(uri)) else {
            return Ok(());
        };
        let Ok(root) = Root::with_style(root, style) else {
            return Ok(());
        };
        if buggy {
            check_sanitize(&root, uri, &|u| {
                root.resolve_with(u, contains_by_string_prefix)
            })
        } else {
            check_sanitize(&root, uri, &|u| root.resolve(u))
        }
    }

    #[test]
    fn seed_corpus_holds_the_properties() {
        let seeds = seeds();
        assert!(seeds.len() >= 60, "only {} seeds", seeds.len());
        for (name, data) in &seeds {
            uri_sanitize(data);
            check_seed(data, false).unwrap_or_else(|e| panic!("seed {name}: {e}"));
        }
    }

    #[test]
    fn planted_string_prefix_containment_is_caught_by_the_seed_corpus() {
        let caught: Vec<String> = seeds()
            .into_iter()
            .filter(|(_, data)| check_seed(data, true).is_err())
            .map(|(name, _)| name)
            .collect();
        assert!(
            caught.iter().any(|n| n == "sibling_prefix_allowed_evil"),
            "caught: {caught:?}"
        );
        assert!(
            caught.iter().any(|n| n == "sibling_prefix_allowed2"),
            "caught: {caught:?}"
        );
        // the input libFuzzer found from an empty corpus against the planted variant
        assert!(
            caught
                .iter()
                .any(|n| n == "sibling_prefix_with_colon_found_by_libfuzzer"),
            "caught: {caught:?}"
        );
    }

    /// The violation is typed: the planted string-prefix bug is `OutsideRoot` at the first
    /// segment that differs from the root's (`allowed_evil`, byte 5 of `/srv/allowed_evil/x`).
    #[test]
    fn planted_string_prefix_containment_is_outside_root_at_the_differing_segment() {
        let root = Root::new(DEFAULT_FUZZ_ROOT).unwrap();
        let v = check_sanitize(&root, "file:///srv/allowed_evil/x", &|u| {
            root.resolve_with(u, contains_by_string_prefix)
        })
        .unwrap_err();
        assert_eq!((v.kind(), v.offset()), (ViolationKind::OutsideRoot, 5));
        assert!(v.to_string().contains("/srv/allowed_evil/x"), "{v}");
    }

    /// A match that expands to another URI is `MatchDoesNotExpandBack` at the first byte where
    /// the two differ; a template naming a variable twice is skipped.
    #[test]
    fn round_trip_violation_is_at_the_first_differing_byte() {
        let t = Template::parse("x:{a}/y").unwrap();
        let mut wrong = Vars::new();
        wrong.insert("a", "bc");
        let v = check_round_trip_of(&t, "x:bd/y", &Ok(Some(wrong.clone()))).unwrap_err();
        assert_eq!(
            (v.kind(), v.offset()),
            (ViolationKind::MatchDoesNotExpandBack, 3)
        );
        let twice = Template::parse("x:{a}/{a}").unwrap();
        assert_eq!(
            check_round_trip_of(&twice, "x:q/r", &Ok(Some(wrong))),
            Ok(())
        );
    }

    #[test]
    fn style_byte_selects_the_path_style_and_its_default_root() {
        assert_eq!(
            sanitize_input(b"\x01file:///C:/x"),
            (
                PathStyle::Windows,
                DEFAULT_FUZZ_ROOT_WINDOWS.as_bytes(),
                &b"file:///C:/x"[..]
            )
        );
        assert_eq!(
            sanitize_input(b"\x00file:///r/\nfile:///r/a"),
            (PathStyle::Posix, &b"file:///r/"[..], &b"file:///r/a"[..])
        );
        // No style byte: the format before it, POSIX.
        assert_eq!(
            sanitize_input(b"file:///r/a"),
            (
                PathStyle::Posix,
                DEFAULT_FUZZ_ROOT.as_bytes(),
                &b"file:///r/a"[..]
            )
        );
    }

    #[test]
    fn windows_seeds_reach_the_windows_rules() {
        use crate::SanitizeErrorKind as K;
        let kind = |name: &str| {
            let data = seeds()
                .into_iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("seed {name}"))
                .1;
            let (style, root, uri) = sanitize_input(&data);
            let root = Root::with_style(std::str::from_utf8(root).unwrap(), style).unwrap();
            root.resolve(std::str::from_utf8(uri).unwrap())
                .map_err(|e| e.kind())
        };
        for (seed, want) in [
            ("windows_device_con", K::ReservedDeviceName),
            ("windows_alternate_data_stream", K::AlternateDataStream),
            ("windows_trailing_dot", K::TrailingDotOrSpace),
            ("windows_drive_not_first", K::DriveNotFirst),
            ("windows_unc_four_slashes", K::UncPath),
        ] {
            assert_eq!(kind(seed).unwrap_err(), want, "{seed}");
        }
        assert_eq!(
            kind("windows_drive_root_lowercase_uri").unwrap().as_str(),
            "C:/Windows/System32"
        );
        assert_eq!(
            kind("windows_backslash_inside").unwrap().relative(),
            "a/b.txt"
        );
    }

    /// The Windows properties have teeth: a resolver that reads a Windows root's URIs as POSIX
    /// (no drive, device-name or `:` rules) is caught on the Windows seeds.
    #[test]
    fn planted_posix_resolver_for_a_windows_root_is_caught_by_the_seed_corpus() {
        let caught: Vec<String> = seeds()
            .into_iter()
            .filter(|(_, data)| {
                let (style, root, uri) = sanitize_input(data);
                let (Ok(root), Ok(uri)) = (std::str::from_utf8(root), std::str::from_utf8(uri))
                else {
                    return false;
                };
                let (Ok(root), Ok(posix)) = (Root::with_style(root, style), Root::new(root)) else {
                    return false;
                };
                check_sanitize(&root, uri, &|u| posix.resolve(u)).is_err()
            })
            .map(|(name, _)| name)
            .collect();
        for name in [
            "windows_device_con",
            "windows_alternate_data_stream",
            "windows_trailing_dot",
        ] {
            assert!(
                caught.iter().any(|n| n == name),
                "{name} not caught: {caught:?}"
            );
        }
    }

    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("allowed".to_owned()),
            Just("allowed_evil".to_owned()),
            Just("allowed2".to_owned()),
            Just("srv".to_owned()),
            Just("..".to_owned()),
            Just(".".to_owned()),
            Just("%2e%2e".to_owned()),
            Just("a.txt".to_owned()),
            "[a-z_]{1,8}",
        ]
    }

    fn uri_strategy() -> impl Strategy<Value = String> {
        prop::collection::vec(segment(), 0..6).prop_map(|s| format!("file:///{}", s.join("/")))
    }

    #[test]
    fn planted_string_prefix_containment_is_caught_by_proptest() {
        let root = Root::new(DEFAULT_FUZZ_ROOT).unwrap();
        let mut runner = TestRunner::new(Config {
            cases: 2000,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&uri_strategy(), |uri| {
            check_sanitize(&root, &uri, &|u| {
                root.resolve_with(u, contains_by_string_prefix)
            })
            .map_err(|v| TestCaseError::fail(format!("{:?}: {v}", v.kind())))
        });
        let err = result.expect_err("the planted bug must be found");
        let msg = err.to_string();
        assert!(msg.contains("OutsideRoot"), "{msg}");
        // and the real resolver passes the same search
        let mut runner = TestRunner::new(Config {
            cases: 2000,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&uri_strategy(), |uri| {
                check_sanitize(&root, &uri, &|u| root.resolve(u))
                    .map_err(|v| TestCaseError::fail(v.to_string()))
            })
            .unwrap();
    }

    #[test]
    fn template_seed_corpus_runs_clean() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../corpus/fuzz/uri_template"
        );
        let mut n = 0;
        for e in std::fs::read_dir(dir).expect("corpus/fuzz/uri_template exists") {
            let data = std::fs::read(e.unwrap().path()).unwrap();
            uri_template(&data);
            n += 1;
        }
        assert!(n >= 20, "only {n} template seeds");
    }

    #[test]
    fn uri_template_simple_mode_round_trips() {
        uri_template(b"\x01My File.txt\n\xc3\xbc\n\nslash/inside\n%ZZ");
        uri_template(b"\x00file:///{+path}/{name}\npath=a/b\nname=x y");
        uri_template(b"\x00{/list*}\nlist*=a,b,c");
    }
}
