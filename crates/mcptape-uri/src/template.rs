//! RFC 6570 URI templates: [`Template::expand`] (all four levels, RFC 6570 Appendix A, output a
//! URI: non-ASCII is percent-encoded) and
//! [`Template::match_uri`] (our own matcher that extracts the variable values:
//! percent-**decoded** for every operator but `+` and `#`, whose values are kept as matched).
//!
//! **The matcher is a Pike VM** (the template compiled to an NFA, simulated over the URI with
//! thread priorities, as RE2 and the `regex` crate do): it returns the match a backtracking
//! search in the order below finds first, in time linear in the URI (O(URI length × threads),
//! threads bounded by the template and [`MAX_TEMPLATE_VARS`]). The value rules below are run
//! byte by byte on each thread's value state. A literal is one instruction that a thread
//! enters only where the whole literal is (a long one is found by one substring search over
//! the URI), so a literal costs no thread at an end that cannot be followed by it; only a
//! literal that really occurs at many value ends (`{+x}` then `abab…` against `abab…`) keeps
//! a thread per occurrence, O(URI × literal) steps, still linear in each and bounded by
//! [`MAX_MATCH_STEPS`]. It replaced a memoized backtracking matcher that
//! was quadratic per variable in the URI (eight adjacent `{v}` against 600 bytes that fail at
//! the end ran out of its step budget; 314 execs/s for the `uri_template` fuzz target); that
//! matcher is kept under `cfg(test)` as the reference the VM is tested against.
//!
//! **Why not `iri-string`'s expander.** The template syntax is still validated by `iri-string`'s
//! RFC 6570 parser, but expansion is ours: fuzzing and property tests found `iri-string` 0.7.14
//! (1) panicking on any non-ASCII value in `{+x}`/`{#x}` and on `%C3%25%C3%25`, (2) dropping a
//! `%25` after an incomplete UTF-8 triplet (`{+x}` with `%C3%25B` → `%C3B`), (3) panicking
//! (debug) / mis-truncating (release) a prefix over a non-ASCII value (`{x:3}` with `Aꬰ0A`),
//! and (4) emitting `;l=` for an empty member of `{;l*}` where Appendix A gives `;l`. Our
//! expander passes the RFC's example tables and is tested differentially against `iri-string`
//! on the domain where it is correct. Regression seeds: `corpus/fuzz/uri_template/iri_string_*`.
//!
//! Matching rules (RFC 6570 defines expansion only; §1.4 notes matching is ambiguous):
//! - a value of `{var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}`, `{&var}` matches only RFC 3986
//!   `unreserved` characters, pct-encoded triplets and non-ASCII characters — so it never spans a
//!   `/`; `{+var}` and `{#var}` also match `reserved` characters, so they may span `/`;
//! - a value is what expanding it with the same template gives back the URI from (the inverse of
//!   RFC 6570 §3.2.1's encoding, per operator): `{+var}` and `{#var}` pass `%XX` triplets
//!   through unchanged (§3.2.3, §3.2.4), so their value is the matched text **as is**
//!   (`{+path}` on `a/b%2Fc.txt` is `a/b%2Fc.txt`, never the three-segment-looking
//!   `a/b/c.txt`; `%20` stays `%20`); every other operator encodes all but `unreserved`, so its
//!   value is percent-decoded once (`{name}` on `My%20File` is `My File`). Round trip:
//!   `expand(match(uri)) == uri` for a URI in RFC 3986 §6.2.2 normal form — the form every
//!   expansion has: uppercase hex, no triplet for an `unreserved` character, no raw non-ASCII;
//!   for another URI it gives that normal form (`%2f` → `%2F`, `%41` → `A`, `é` → `%C3%A9`)
//!   but for the `+`/`#` triplets, which stay as matched. `;x=` (an empty `{;x}` value written
//!   with `=`, which Appendix A never emits) is no match;
//! - a candidate whose decoding is not UTF-8 is no match, and a `%` not followed by two hex
//!   digits (`%ZZ`) is never part of a value;
//! - candidates are tried longest first (greedy), a defined variable before an undefined one;
//! - an exploded variable (`{/list*}`) matches as [`Value::List`]; for the named operators
//!   (`;`, `?`, `&`) each item must be `name=value` with the variable's own name (associative
//!   arrays are not recovered); a prefix `{var:3}` matches at most 3 decoded characters;
//! - a variable that occurs twice keeps its first binding (equality is not checked, so such a
//!   template is the one exception to the round trip above);
//! - a value that decodes to a path traversal is no match (the candidate is skipped, so the URI
//!   matches only if another split works), the same tricks [`crate::Root::resolve`] refuses:
//!   for any operator, a control character (`%00`, `%0A`: a value is never printed or joined
//!   with one), a character Unicode NFKC folds into `.`, `/` or `\` (the fullwidth `．．／`,
//!   [`crate::folds_to_dot_or_separator`], as the sanitizer's `CompatibilityDotOrSeparator`)
//!   and a value of dots and spaces only (`.`, `..`, `...`, `.. ` — Windows drops trailing dots
//!   and spaces); for every operator but the path-segment ones, a `%XX` left after decoding
//!   once (double encoding: `%252e%252e%252F`) and a leading drive letter (`C:`, `c:\…`); for
//!   the path-segment operators (`{var}`, `{.var}`, `{/var}`, `{;var}`), which cannot match a
//!   raw `/`, a `/` or `\` (so `file://docs/{name}` does not match
//!   `file://docs/..%2F..%2Fetc%2Fpasswd`), also double encoding and a drive letter; for
//!   `{+var}`, `{#var}`, `{?var}` and `{&var}`, which may hold `/`, a value that starts with `/`
//!   or `\` (an absolute path replaces the root it is joined to), an empty segment, or a
//!   segment of dots and spaces only (split at `/` and `\`). Query and fragment values are held
//!   to the path rules because servers join them to a root as often as path segments
//!   (`file:///read{?path}`): a value `Root::resolve` would refuse as a path is no match for
//!   every operator.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use iri_string::template::UriTemplateStr;

/// Longest template [`Template::parse`] accepts, in bytes; one more is
/// [`TemplateErrorKind::TooLong`].
pub const MAX_TEMPLATE_BYTES: usize = 4096;

/// Most variables (counted over all expressions, repeats included) a template
/// [`Template::parse`] accepts may name; one more is [`TemplateErrorKind::TooManyVars`]. The
/// matcher's work per URI byte grows with the variable count, so this (with
/// [`MAX_MATCH_URI_BYTES`]) bounds one match.
pub const MAX_TEMPLATE_VARS: usize = 64;

/// Longest URI [`Template::try_match_uri`] examines, in bytes (64 KiB); one more is
/// [`TemplateErrorKind::UriTooLong`]. Matching is linear in the URI (a Pike VM, module docs),
/// so this is well past the sanitizer's [`MAX_URI_BYTES`](crate::MAX_URI_BYTES): a query
/// template (`https://h/search{?q}`) may route a long URI that is never resolved to a path.
pub const MAX_MATCH_URI_BYTES: usize = 64 * 1024;

/// Most matcher states (one per literal, variable, exploded item and expression end) on the
/// matched path; more is [`TemplateErrorKind::MatchTooDeep`] — e.g. `{/list*}` stops matching
/// past 1022 items. Bounds the bindings a match returns.
pub const MAX_MATCH_DEPTH: usize = 1024;

/// Work budget of one [`Template::try_match_uri`] call, in steps (one per matcher thread per
/// URI byte, plus one per thread added). A match costs O(URI length × threads), the threads
/// bounded by the template: measured on ~60 KB URIs, `{+x}` takes 5 steps per byte, eight
/// adjacent `{v}` 82, 64 `{/v}` 225 (13.5 M steps: inside the budget), 64 adjacent `{v}` 698
/// (42 M: [`TemplateErrorKind::MatchBudgetExceeded`]). At ~10–20 ns per step in a release
/// build, the budget caps one match at a few hundred ms of CPU.
pub const MAX_MATCH_STEPS: usize = 16_000_000;

/// Which rule a template (or a match) broke. `#[non_exhaustive]`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TemplateErrorKind {
    /// The template is longer than [`MAX_TEMPLATE_BYTES`].
    TooLong,
    /// The template names more than [`MAX_TEMPLATE_VARS`] variables; the offset is that of the
    /// first variable past the limit.
    TooManyVars,
    /// A `{` without its `}` (RFC 6570 §2.2).
    UnclosedExpression,
    /// A character not allowed in a literal (RFC 6570 §2.1: space, `"`, `<`, `>`, `\`, `^`,
    /// `` ` ``, `|`, `}`, control characters; `'` is allowed per erratum 6937).
    InvalidLiteral,
    /// A `%` not followed by two hex digits, in a literal or a variable name.
    MalformedEscape,
    /// An operator reserved for future extensions (`=`, `,`, `!`, `@`, `|`, RFC 6570 §2.2).
    UnsupportedOperator,
    /// An empty expression, empty or malformed variable name (RFC 6570 §2.3).
    InvalidVarName,
    /// A prefix modifier that is not `1`–`9999` (RFC 6570 §2.4.1).
    InvalidPrefix,
    /// A prefix modifier (`{var:3}`) applied to a list or associative array value (RFC 6570
    /// §2.4.1: prefixes apply to strings only). The offset is that of the variable name.
    PrefixOnComposite,
    /// `iri-string`'s RFC 6570 parser rejected a template our parser accepted.
    Rejected,
    /// The URI given to [`Template::try_match_uri`] is longer than [`MAX_MATCH_URI_BYTES`].
    UriTooLong,
    /// Matching took more than [`MAX_MATCH_STEPS`] steps.
    MatchBudgetExceeded,
    /// Matching needed a chain of more than [`MAX_MATCH_DEPTH`] states.
    MatchTooDeep,
}

impl TemplateErrorKind {
    /// The kind's name, e.g. `"UnclosedExpression"` (stable; used in CLI output).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TooLong => "TooLong",
            Self::TooManyVars => "TooManyVars",
            Self::UnclosedExpression => "UnclosedExpression",
            Self::InvalidLiteral => "InvalidLiteral",
            Self::MalformedEscape => "MalformedEscape",
            Self::UnsupportedOperator => "UnsupportedOperator",
            Self::InvalidVarName => "InvalidVarName",
            Self::InvalidPrefix => "InvalidPrefix",
            Self::PrefixOnComposite => "PrefixOnComposite",
            Self::Rejected => "Rejected",
            Self::UriTooLong => "UriTooLong",
            Self::MatchBudgetExceeded => "MatchBudgetExceeded",
            Self::MatchTooDeep => "MatchTooDeep",
        }
    }
}

impl fmt::Display for TemplateErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A template or match error: the [`kind`](Self::kind) and the byte
/// [`offset`](Self::offset) in the template (or, for the match kinds, in the URI).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("URI template error: {kind} at byte {offset}")]
pub struct TemplateError {
    kind: TemplateErrorKind,
    offset: usize,
}

impl TemplateError {
    fn new(kind: TemplateErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// The rule that fired.
    pub fn kind(&self) -> TemplateErrorKind {
        self.kind
    }

    /// Byte offset in the template (in the URI for [`TemplateErrorKind::UriTooLong`] and
    /// [`TemplateErrorKind::MatchBudgetExceeded`]; `0` for [`TemplateErrorKind::Rejected`], whose
    /// position `iri-string` does not expose).
    pub fn offset(&self) -> usize {
        self.offset
    }
}

/// A variable value (RFC 6570 §2.3: string, list, or associative array with ordered keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string value (`"Hello World!"`).
    String(String),
    /// A list value (`["red", "green", "blue"]`).
    List(Vec<String>),
    /// An associative array, keys in order (`[("semi", ";"), ("dot", ".")]`).
    Assoc(Vec<(String, String)>),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

/// Variables for expansion, or extracted by matching: name → [`Value`]. A name that is absent is
/// undefined (RFC 6570 §2.3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars(BTreeMap<String, Value>);

impl Vars {
    /// No variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` to `value`; returns the previous value.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Value>) -> Option<Value> {
        self.0.insert(name.into(), value.into())
    }

    /// The value of `name`, if defined.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// The value of `name` if it is a [`Value::String`].
    pub fn get_str(&self, name: &str) -> Option<&str> {
        match self.0.get(name) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// Number of defined variables.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `true` if no variable is defined.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The variables in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Vars {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Vars(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

/// RFC 6570 §3.2.1 / Appendix A operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn first(self) -> &'static [u8] {
        match self {
            Op::Simple | Op::Reserved => b"",
            Op::Fragment => b"#",
            Op::Label => b".",
            Op::Path => b"/",
            Op::PathParam => b";",
            Op::Query => b"?",
            Op::QueryCont => b"&",
        }
    }
    fn sep(self) -> &'static [u8] {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => b",",
            Op::Label => b".",
            Op::Path => b"/",
            Op::PathParam => b";",
            Op::Query | Op::QueryCont => b"&",
        }
    }
    fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryCont)
    }
    fn allow_reserved(self) -> bool {
        matches!(self, Op::Reserved | Op::Fragment)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    offset: usize,
    prefix: Option<usize>,
    explode: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// The literal as it appears in an expansion (non-ASCII percent-encoded).
    Literal(Vec<u8>),
    Expr {
        op: Op,
        vars: Vec<VarSpec>,
    },
}

/// A parsed RFC 6570 URI template (levels 1–4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    parts: Vec<Part>,
    /// `parts` compiled for [`Template::try_match_uri`].
    program: Program,
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// RFC 6570 §3.2.1 value encoding for reserved (`+`) and fragment (`#`) expansion: characters
/// in `unreserved` / `reserved` pass, `%XX` triplets pass unchanged, any other `%` becomes `%25`,
/// everything else is UTF-8 percent-encoded; a prefix modifier (§2.4.1) counts characters, a
/// triplet being one, so neither a triplet nor a multi-byte character is split.
///
/// We do `+`/`#` ourselves instead of through `iri-string` 0.7.14, whose pass-through of
/// triplets is broken: it panics on a value holding `%` and a non-ASCII character (`"%ü"`,
/// `"ü%2e"`), panics on `"%C3%25%C3%25"`, and silently drops a `%25` after an incomplete UTF-8
/// triplet (`"%C3%25B"` → `"%C3B"`). All three were found by the `uri_template` fuzz target
/// (seeds `corpus/fuzz/uri_template/iri_string_*`).
fn encode_reserved(v: &str, prefix: Option<usize>) -> String {
    let b = v.as_bytes();
    let mut out = String::with_capacity(v.len());
    let mut units = 0;
    let mut i = 0;
    while i < b.len() {
        if prefix.is_some_and(|n| units >= n) {
            break;
        }
        units += 1;
        if b[i] == b'%' {
            if i + 2 < b.len() && is_hex(b[i + 1]) && is_hex(b[i + 2]) {
                out.push_str(&v[i..i + 3]);
                i += 3;
            } else {
                out.push_str("%25");
                i += 1;
            }
            continue;
        }
        let c = v[i..].chars().next().unwrap_or('\u{FFFD}');
        if c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=".contains(c) {
            out.push(c);
        } else {
            push_pct_str(&mut out, c);
        }
        i += c.len_utf8();
    }
    out
}

fn push_pct(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    for b in c.encode_utf8(&mut buf).bytes() {
        out.extend_from_slice(format!("%{b:02X}").as_bytes());
    }
}

fn parse_expr(body: &str, base: usize) -> Result<Part, TemplateError> {
    use TemplateErrorKind as K;
    let bytes = body.as_bytes();
    let (op, mut i) = match bytes.first() {
        Some(b'+') => (Op::Reserved, 1),
        Some(b'#') => (Op::Fragment, 1),
        Some(b'.') => (Op::Label, 1),
        Some(b'/') => (Op::Path, 1),
        Some(b';') => (Op::PathParam, 1),
        Some(b'?') => (Op::Query, 1),
        Some(b'&') => (Op::QueryCont, 1),
        Some(b'=' | b',' | b'!' | b'@' | b'|') => {
            return Err(TemplateError::new(K::UnsupportedOperator, base));
        }
        _ => (Op::Simple, 0),
    };
    let mut vars = Vec::new();
    loop {
        // varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" / pct-encoded
        let start = i;
        let mut prev_dot = true;
        while i < bytes.len() {
            match bytes[i] {
                b'%' => {
                    if i + 2 < bytes.len() && is_hex(bytes[i + 1]) && is_hex(bytes[i + 2]) {
                        i += 3;
                    } else {
                        return Err(TemplateError::new(K::MalformedEscape, base + i));
                    }
                    prev_dot = false;
                }
                b'.' if !prev_dot => {
                    i += 1;
                    prev_dot = true;
                }
                b if b.is_ascii_alphanumeric() || b == b'_' => {
                    i += 1;
                    prev_dot = false;
                }
                _ => break,
            }
        }
        if i == start || prev_dot {
            return Err(TemplateError::new(K::InvalidVarName, base + i));
        }
        let mut spec = VarSpec {
            name: body[start..i].to_owned(),
            offset: base + start,
            prefix: None,
            explode: false,
        };
        match bytes.get(i) {
            Some(b':') => {
                let dstart = i + 1;
                let mut j = dstart;
                while j < bytes.len() && bytes[j].is_ascii_digit() {
                    j += 1;
                }
                let digits = &body[dstart..j];
                if digits.is_empty() || digits.len() > 4 || digits.starts_with('0') {
                    return Err(TemplateError::new(K::InvalidPrefix, base + dstart));
                }
                spec.prefix = digits.parse().ok();
                i = j;
            }
            Some(b'*') => {
                spec.explode = true;
                i += 1;
            }
            _ => {}
        }
        vars.push(spec);
        match bytes.get(i) {
            None => break,
            Some(b',') => i += 1,
            Some(_) => return Err(TemplateError::new(K::InvalidVarName, base + i)),
        }
    }
    Ok(Part::Expr { op, vars })
}

/// `c` percent-encoded (its UTF-8 bytes as `%XX`, RFC 3986 §2.1) onto `out`.
fn push_pct_str(out: &mut String, c: char) {
    let mut enc = Vec::new();
    push_pct(&mut enc, c);
    out.push_str(&String::from_utf8_lossy(&enc));
}

/// RFC 6570 §3.2.1 value encoding for the operators that allow `unreserved` only: everything
/// else is UTF-8 percent-encoded (including `%`). A prefix modifier keeps the first `n` Unicode
/// scalar values (§2.4.1). `iri-string` 0.7.14 panics in debug builds (and mis-truncates in
/// release) on a prefix over a non-ASCII value (`{x:3}` with `"Aꬰ0A"`: it subtracts a byte
/// index from a character count), found by the property tests.
fn encode_unreserved(v: &str, prefix: Option<usize>) -> String {
    let mut out = String::with_capacity(v.len());
    for (k, c) in v.chars().enumerate() {
        if prefix.is_some_and(|n| k >= n) {
            break;
        }
        if c.is_ascii_alphanumeric() || "-._~".contains(c) {
            out.push(c);
        } else {
            push_pct_str(&mut out, c);
        }
    }
    out
}

/// One value or exploded item into `out` (RFC 6570 Appendix A): `name=encoded` under a named
/// operator (`name` then `ifemp` when `value` is empty), else `encoded` alone.
fn push_item(out: &mut String, name: Option<&str>, ifemp: &str, value: &str, encoded: String) {
    if let Some(name) = name {
        out.push_str(name);
        if value.is_empty() {
            out.push_str(ifemp);
            return;
        }
        out.push('=');
    }
    out.push_str(&encoded);
}

/// RFC 6570 Appendix A expansion of one expression into `out`.
fn expand_native(op: Op, specs: &[VarSpec], vars: &Vars, out: &mut String) {
    let ifemp = if matches!(op, Op::Query | Op::QueryCont) {
        "="
    } else {
        ""
    };
    let enc = |x: &str, prefix: Option<usize>| {
        if op.allow_reserved() {
            encode_reserved(x, prefix)
        } else {
            encode_unreserved(x, prefix)
        }
    };
    let first = std::str::from_utf8(op.first()).unwrap_or_default();
    let sep = std::str::from_utf8(op.sep()).unwrap_or_default();
    let mut any = false;
    for spec in specs {
        let value = match vars.get(&spec.name) {
            None => continue,
            Some(Value::List(l)) if l.is_empty() => continue,
            Some(Value::Assoc(a)) if a.is_empty() => continue,
            Some(v) => v,
        };
        out.push_str(if any { sep } else { first });
        any = true;
        let name = spec.name.as_str();
        let named = op.named();
        match value {
            Value::String(x) => {
                push_item(out, named.then_some(name), ifemp, x, enc(x, spec.prefix))
            }
            Value::List(l) if spec.explode => {
                for (k, item) in l.iter().enumerate() {
                    if k > 0 {
                        out.push_str(sep);
                    }
                    push_item(out, named.then_some(name), ifemp, item, enc(item, None));
                }
            }
            Value::Assoc(a) if spec.explode => {
                for (k, (key, item)) in a.iter().enumerate() {
                    if k > 0 {
                        out.push_str(sep);
                    }
                    out.push_str(&enc(key, None));
                    if op.named() && item.is_empty() {
                        out.push_str(ifemp);
                        continue;
                    }
                    out.push('=');
                    out.push_str(&enc(item, None));
                }
            }
            Value::List(l) => {
                if op.named() {
                    out.push_str(name);
                    out.push('=');
                }
                let items: Vec<String> = l.iter().map(|x| enc(x, None)).collect();
                out.push_str(&items.join(","));
            }
            Value::Assoc(a) => {
                if op.named() {
                    out.push_str(name);
                    out.push('=');
                }
                let items: Vec<String> = a
                    .iter()
                    .flat_map(|(k, x)| [enc(k, None), enc(x, None)])
                    .collect();
                out.push_str(&items.join(","));
            }
        }
    }
}

impl Template {
    /// Parses an RFC 6570 template (§2: literals and `{op var[:n|*],...}` expressions). The
    /// template is also validated by `iri-string`'s parser, which performs the expansion.
    ///
    /// # Errors
    /// [`TemplateError`] with the kind and byte offset of the first syntax error;
    /// [`TemplateErrorKind::TooLong`] past [`MAX_TEMPLATE_BYTES`].
    pub fn parse(template: &str) -> Result<Template, TemplateError> {
        use TemplateErrorKind as K;
        if template.len() > MAX_TEMPLATE_BYTES {
            return Err(TemplateError::new(K::TooLong, MAX_TEMPLATE_BYTES));
        }
        let mut parts = Vec::new();
        let mut n_vars = 0;
        let mut lit: Vec<u8> = Vec::new();
        let mut normalized = String::with_capacity(template.len());
        let bytes = template.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match b {
                b'{' => {
                    let close = template[i + 1..]
                        .find('}')
                        .ok_or(TemplateError::new(K::UnclosedExpression, i))?;
                    let body = &template[i + 1..i + 1 + close];
                    if let Some(k) = body.find('{') {
                        return Err(TemplateError::new(K::UnclosedExpression, i + 1 + k));
                    }
                    if !lit.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut lit)));
                    }
                    let expr = parse_expr(body, i + 1)?;
                    if let Part::Expr { vars, .. } = &expr {
                        if let Some(past) = vars.get(MAX_TEMPLATE_VARS.saturating_sub(n_vars)) {
                            return Err(TemplateError::new(K::TooManyVars, past.offset));
                        }
                        n_vars += vars.len();
                    }
                    parts.push(expr);
                    normalized.push_str(&template[i..i + close + 2]);
                    i += close + 2;
                }
                b'%' => {
                    if i + 2 < bytes.len() && is_hex(bytes[i + 1]) && is_hex(bytes[i + 2]) {
                        lit.extend_from_slice(&bytes[i..i + 3]);
                        normalized.push_str(&template[i..i + 3]);
                        i += 3;
                    } else {
                        return Err(TemplateError::new(K::MalformedEscape, i));
                    }
                }
                b if b >= 0x80 => {
                    let c = template[i..].chars().next().unwrap_or('\u{FFFD}');
                    if c.is_control() {
                        return Err(TemplateError::new(K::InvalidLiteral, i));
                    }
                    let before = lit.len();
                    push_pct(&mut lit, c);
                    normalized.push_str(&String::from_utf8_lossy(&lit[before..]));
                    i += c.len_utf8();
                }
                b if b <= 0x20
                    || b == 0x7f
                    || matches!(b, b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'|' | b'}') =>
                {
                    return Err(TemplateError::new(K::InvalidLiteral, i));
                }
                _ => {
                    lit.push(b);
                    normalized.push(char::from(b));
                    i += 1;
                }
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Literal(lit));
        }
        // `iri-string` accepts ASCII literals only: validate the form with non-ASCII literals
        // percent-encoded, which is also what expansion emits for them.
        if UriTemplateStr::new(&normalized).is_err() {
            return Err(TemplateError::new(K::Rejected, 0));
        }
        let program = Program::compile(&parts);
        Ok(Template {
            source: template.to_owned(),
            parts,
            program,
        })
    }

    /// The template text as given.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names in order of appearance (duplicates kept).
    pub fn var_names(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|p| match p {
            Part::Expr { vars, .. } => vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            Part::Literal(_) => Vec::new(),
        })
    }

    /// Expands the template with `vars` (RFC 6570 §3, all four levels). Characters outside the
    /// allowed set of each operator — and non-ASCII literals — are percent-encoded as UTF-8
    /// (RFC 6570 §3.2.1, URI not IRI). An absent variable is undefined and expands to nothing.
    ///
    /// # Errors
    /// [`TemplateErrorKind::PrefixOnComposite`] for `{var:n}` with a list/assoc value;
    /// (Expansion itself cannot fail otherwise.)
    pub fn expand(&self, vars: &Vars) -> Result<String, TemplateError> {
        use TemplateErrorKind as K;
        for part in &self.parts {
            if let Part::Expr { vars: specs, .. } = part {
                for spec in specs {
                    let composite =
                        matches!(vars.get(&spec.name), Some(Value::List(_) | Value::Assoc(_)));
                    if spec.prefix.is_some() && composite {
                        return Err(TemplateError::new(K::PrefixOnComposite, spec.offset));
                    }
                }
            }
        }
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(lit) => out.push_str(&String::from_utf8_lossy(lit)),
                Part::Expr {
                    op, vars: specs, ..
                } => expand_native(*op, specs, vars, &mut out),
            }
        }
        Ok(out)
    }

    /// Matches a concrete URI against the template and returns the variables: percent-decoded
    /// once for `{var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}`, `{&var}` (`My%20File.txt` →
    /// `My File.txt`), as matched for `{+var}` and `{#var}` (`a/b%2Fc.txt` stays `a/b%2Fc.txt`:
    /// RFC 6570 §3.2.3 passes triplets through), so that [`expand`](Self::expand) of the result
    /// gives `uri` back (exactly for a URI in RFC 3986 §6.2.2 normal form; module docs).
    /// `None` if it does not match or a limit is hit (see
    /// [`try_match_uri`](Self::try_match_uri) to tell those apart). Never panics.
    pub fn match_uri(&self, uri: &str) -> Option<Vars> {
        self.try_match_uri(uri).ok().flatten()
    }

    /// Like [`match_uri`](Self::match_uri), but reports the limits.
    ///
    /// # Errors
    /// [`TemplateErrorKind::UriTooLong`] past [`MAX_MATCH_URI_BYTES`];
    /// [`TemplateErrorKind::MatchBudgetExceeded`] past [`MAX_MATCH_STEPS`];
    /// [`TemplateErrorKind::MatchTooDeep`] past [`MAX_MATCH_DEPTH`].
    pub fn try_match_uri(&self, uri: &str) -> Result<Option<Vars>, TemplateError> {
        self.match_with_limits(uri, MAX_MATCH_STEPS, MAX_MATCH_DEPTH)
            .map(|(v, _)| v)
    }

    /// Why `uri` is no match although it fits the template's structure: the variables (name,
    /// value percent-decoded once — for `{+var}`/`{#var}` too, although a match keeps theirs
    /// encoded: the guard judges the decoded value) whose values the traversal guard rejected (module docs: a value that is
    /// `.` or `..`, a `/` or `\` decoded from `%2F` / `%5C` in a path-segment variable, a dot
    /// segment in `{+var}`). Empty when `uri` matches, does not fit the structure either, or a
    /// limit is hit ([`try_match_uri`](Self::try_match_uri) tells those apart). For `mcptape uri
    /// match` to say why; matching itself never returns such values.
    pub fn traversal_rejections(&self, uri: &str) -> Vec<(String, String)> {
        if !matches!(self.try_match_uri(uri), Ok(None)) {
            return Vec::new();
        }
        self.traversal_rejections_of_no_match(uri)
    }

    /// [`traversal_rejections`](Self::traversal_rejections) for a `uri` already known to be no
    /// match (`try_match_uri` gave `Ok(None)`): the fuzz target has matched it already.
    pub(crate) fn traversal_rejections_of_no_match(&self, uri: &str) -> Vec<(String, String)> {
        let Ok((Some(vars), _)) = self.match_guarded(uri, MAX_MATCH_STEPS, MAX_MATCH_DEPTH, false)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for part in &self.parts {
            let Part::Expr {
                op, vars: specs, ..
            } = part
            else {
                continue;
            };
            for spec in specs {
                let values: Vec<&str> = match vars.0.get(&spec.name) {
                    Some(Value::String(v)) => vec![v.as_str()],
                    Some(Value::List(l)) => l.iter().map(String::as_str).collect(),
                    _ => continue,
                };
                for v in values {
                    // `+`/`#` values are bound as matched (encoded); judge and report decoded.
                    let decoded = if op.allow_reserved() {
                        decode(v.as_bytes()).unwrap_or_else(|| v.to_owned())
                    } else {
                        v.to_owned()
                    };
                    if !safe_value(*op, &decoded)
                        && !out.iter().any(|(n, x)| n == &spec.name && *x == decoded)
                    {
                        out.push((spec.name.clone(), decoded));
                    }
                }
            }
        }
        out
    }

    /// Matching with explicit limits; also returns the steps used and the deepest chain.
    pub(crate) fn match_with_limits(
        &self,
        uri: &str,
        budget: usize,
        max_depth: usize,
    ) -> Result<(Option<Vars>, MatchStats), TemplateError> {
        self.match_guarded(uri, budget, max_depth, true)
    }

    /// [`match_with_limits`](Self::match_with_limits); `guard: false` turns the traversal guard
    /// ([`safe_value`]) off, for [`traversal_rejections`](Self::traversal_rejections) only.
    fn match_guarded(
        &self,
        uri: &str,
        budget: usize,
        max_depth: usize,
        guard: bool,
    ) -> Result<(Option<Vars>, MatchStats), TemplateError> {
        if uri.len() > MAX_MATCH_URI_BYTES {
            return Err(TemplateError::new(
                TemplateErrorKind::UriTooLong,
                MAX_MATCH_URI_BYTES,
            ));
        }
        let u = uri.as_bytes();
        let vm = Vm {
            prog: &self.program,
            u,
            guard,
            max_depth,
            budget,
            steps: 0,
            binds: Vec::new(),
            collect_at: 4096,
            seen_at: vec![u32::MAX; self.program.insts.len()],
            seen_values: vec![Vec::new(); self.program.insts.len()],
            touched: Vec::new(),
            seen_many: HashSet::new(),
            many_log: Vec::new(),
            stack: Vec::new(),
            occurrences: Vec::new(),
            folded_uri: None,
        };
        let (path, stats) = vm.run()?;
        let Some(path) = path else {
            return Ok((None, stats));
        };
        let binds = path.into_iter().filter_map(|(part, var, start, end)| {
            let Part::Expr { op, .. } = &self.parts[part] else {
                return None;
            };
            let raw = &u[start..end];
            // Raw for `+`/`#`, decoded once for the rest (module docs); both are UTF-8, the
            // value rules checked it.
            let value = if op.allow_reserved() {
                std::str::from_utf8(raw).ok()?.to_owned()
            } else {
                decode(raw)?
            };
            Some((part, var, value))
        });
        Ok((Some(self.vars_from_binds(binds)), stats))
    }

    /// The variables of a match from its bindings `(part, var, value)` in match order: a
    /// repeated variable keeps its first binding, an exploded one collects a list.
    fn vars_from_binds(&self, binds: impl IntoIterator<Item = (usize, usize, String)>) -> Vars {
        let mut out: BTreeMap<String, Value> = BTreeMap::new();
        let mut first_site: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for (part, var, value) in binds {
            let Part::Expr { vars, .. } = &self.parts[part] else {
                continue;
            };
            let spec = &vars[var];
            let site = *first_site.entry(spec.name.clone()).or_insert((part, var));
            if site != (part, var) {
                continue; // a repeated variable keeps its first binding
            }
            if spec.explode {
                match out
                    .entry(spec.name.clone())
                    .or_insert_with(|| Value::List(Vec::new()))
                {
                    Value::List(l) => l.push(value),
                    _ => continue,
                }
            } else {
                out.insert(spec.name.clone(), Value::String(value));
            }
        }
        Vars(out)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for Template {
    type Err = TemplateError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Template::parse(s)
    }
}

/// One instruction of the compiled matcher ([`Program`]): a Pike VM (Thompson NFA simulation
/// with thread priorities, as in RE2 and the `regex` crate's `PikeVM`). Priorities reproduce the
/// backtracking order of the module docs (a value longest first, an item before skipping its
/// variable), so the match is the one a depth-first search would find first, in time
/// O(URI length × live threads) with no backtracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inst {
    /// Consume the literal `Program::lits[lit]` (one or more bytes), then continue at `next`. A
    /// thread enters it only if the whole literal is at its position (checked once, by
    /// [`Lit::at`]), then walks it one byte per position without further checks, so a thread
    /// that would die inside a literal costs one step, and one that lives costs one cheap step
    /// per byte (a long literal compiled to one instruction per byte made each byte a full
    /// `add`: the `uri_template` fuzz target's slowest inputs).
    Lit { lit: u32, next: u32 },
    /// Try `a`, then (lower priority) `b`.
    Split { a: u32, b: u32 },
    /// Entering a matcher state (a literal, a variable, an exploded item, the end of an
    /// expression): counted against [`MAX_MATCH_DEPTH`].
    State { next: u32 },
    /// A value of variable `var` of expression `part`: consumes value bytes (longest first),
    /// then binds `u[start..end]` and continues at `next`.
    Value {
        part: u32,
        var: u32,
        op: Op,
        prefix: Option<u16>,
        next: u32,
    },
    /// Binds the empty value (`;name`, RFC 6570 §3.2.7) and continues at `next`.
    BindEmpty { part: u32, var: u32, next: u32 },
    /// The end of the template: a match if the URI is consumed.
    Match,
}

/// A template compiled for matching: `insts`, entered at `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Program {
    insts: Vec<Inst>,
    /// The literals of the [`Inst::Lit`] instructions.
    lits: Vec<Lit>,
    start: u32,
}

/// A literal of the compiled template: its bytes, and per byte whether it compares ASCII
/// case-insensitively (a hex digit of a literal `%XX`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Lit {
    bytes: Vec<u8>,
    ci: Vec<bool>,
    /// Longer than [`SCANNED_LITERAL_BYTES`], and case-insensitive exactly at the two bytes
    /// after each `%` (what [`fold_triplets`] folds): found by [`Lit::occurrences`].
    scanned: bool,
}

/// Literals longer than this are found with one scan of the URI per match ([`Occurrences`];
/// [`Lit::scanned`]); shorter ones are compared where a thread enters them.
const SCANNED_LITERAL_BYTES: usize = 16;

/// Where one long literal occurs in the URI: one bit per position.
struct Occurrences(Vec<u64>);

impl Occurrences {
    fn has(&self, pos: usize) -> bool {
        self.0
            .get(pos / 64)
            .is_some_and(|w| w & (1u64 << (pos % 64)) != 0)
    }
}

/// `u` with the hex letters of its triplets in upper case (a byte `a`–`f` one or two bytes
/// after a `%`): a literal's case-insensitive bytes are exactly those, so a literal in the
/// same form (`Lit::folded`) occurs in it by plain byte equality from its third byte on.
fn fold_triplets(u: &[u8]) -> Vec<u8> {
    let mut out = u.to_vec();
    for i in 1..out.len() {
        if (u[i - 1] == b'%' || (i >= 2 && u[i - 2] == b'%')) && matches!(u[i], b'a'..=b'f') {
            out[i] = u[i].to_ascii_uppercase();
        }
    }
    out
}

impl Lit {
    /// `lit`, its hex digits after a `%` compared case-insensitively if `ci_hex`.
    fn new(lit: &[u8], ci_hex: bool) -> Lit {
        let mut ci = vec![false; lit.len()];
        if ci_hex {
            let mut i = 0;
            while i < lit.len() {
                if lit[i] == b'%' {
                    for k in [i + 1, i + 2] {
                        if let Some(c) = ci.get_mut(k) {
                            *c = true;
                        }
                    }
                    i += 3;
                } else {
                    i += 1;
                }
            }
        }
        let after_pct = |k: usize| (k >= 1 && lit[k - 1] == b'%') || (k >= 2 && lit[k - 2] == b'%');
        let scanned =
            lit.len() > SCANNED_LITERAL_BYTES && (0..lit.len()).all(|k| ci[k] == after_pct(k));
        Lit {
            bytes: lit.to_vec(),
            ci,
            scanned,
        }
    }

    /// The literal's bytes with its case-insensitive ones in upper case (see [`fold_triplets`]).
    fn folded(&self) -> Vec<u8> {
        self.bytes
            .iter()
            .zip(&self.ci)
            .map(|(&b, &ci)| if ci { b.to_ascii_uppercase() } else { b })
            .collect()
    }

    /// Every position of `u` (folded: `fu`) where the whole literal is, in O(|u| + |lit|): a
    /// substring search for its folded bytes from the third on (where `fu` was folded exactly
    /// where the literal compares case-insensitively: the two bytes after one of its `%`),
    /// then the first two bytes compared as [`Lit::at`] does (a `%` just before the literal
    /// folds `fu` there although the literal does not).
    fn occurrences(&self, u: &[u8], fu: &[u8]) -> Occurrences {
        let mut bits = vec![0u64; u.len() / 64 + 1];
        let folded = self.folded();
        let head = 2.min(folded.len());
        // Overlapping occurrences too (`find_iter` skips past each hit, so a literal that
        // occurs again inside its own occurrence was missed: regression
        // `long_literal_occurrences_are_where_it_compares_equal`, `%c3%a9`×4 + `%`).
        let finder = memchr::memmem::Finder::new(&folded[head..]);
        let mut from = 0;
        while let Some(found) = fu.get(from..).and_then(|rest| finder.find(rest)) {
            let at = from + found;
            from = at + 1;
            let Some(pos) = at.checked_sub(head) else {
                continue;
            };
            if self.head_at(u, pos, head) {
                bits[pos / 64] |= 1u64 << (pos % 64);
            }
        }
        Occurrences(bits)
    }

    /// The first `n` bytes of the literal are at `u[pos..]`.
    fn head_at(&self, u: &[u8], pos: usize, n: usize) -> bool {
        (0..n).all(|k| {
            u.get(pos + k).is_some_and(|c| {
                if self.ci[k] {
                    self.bytes[k].eq_ignore_ascii_case(c)
                } else {
                    self.bytes[k] == *c
                }
            })
        })
    }

    /// Whether the whole literal is at `u[pos..]`, and the bytes compared to tell (at least 1;
    /// the whole literal when it is there), which the matcher counts as steps.
    fn at(&self, u: &[u8], pos: usize) -> (bool, usize) {
        let here = u.get(pos..).unwrap_or_default();
        let same = self
            .bytes
            .iter()
            .zip(&self.ci)
            .zip(here)
            .take_while(|((b, ci), c)| {
                if **ci {
                    b.eq_ignore_ascii_case(c)
                } else {
                    b == c
                }
            })
            .count();
        (same == self.bytes.len(), (same + 1).min(self.bytes.len()))
    }

    fn len(&self) -> u32 {
        u32::try_from(self.bytes.len()).unwrap_or(u32::MAX)
    }
}

impl Program {
    fn push(&mut self, i: Inst) -> u32 {
        self.insts.push(i);
        u32::try_from(self.insts.len() - 1).unwrap_or(u32::MAX)
    }

    /// Bytes `lit` then `next`; hex digits after a `%` compare case-insensitively if `ci_hex`.
    fn bytes(&mut self, lit: &[u8], ci_hex: bool, next: u32) -> u32 {
        if lit.is_empty() {
            return next;
        }
        self.lits.push(Lit::new(lit, ci_hex));
        let lit = u32::try_from(self.lits.len() - 1).unwrap_or(u32::MAX);
        self.push(Inst::Lit { lit, next })
    }

    /// Compiles `parts` (built back to front, so every `next` already exists).
    fn compile(parts: &[Part]) -> Program {
        let mut p = Program {
            insts: Vec::new(),
            lits: Vec::new(),
            start: 0,
        };
        let mut next = p.push(Inst::Match);
        for (pi, part) in parts.iter().enumerate().rev() {
            let pi = u32::try_from(pi).unwrap_or(u32::MAX);
            match part {
                Part::Literal(lit) => {
                    let body = p.bytes(lit, true, next);
                    next = p.push(Inst::State { next: body });
                }
                Part::Expr { op, vars } => {
                    let op = *op;
                    // The state after the last variable (either `emitted` flag).
                    let end = p.push(Inst::State { next });
                    let (mut after_t, mut after_f) = (end, end);
                    for (vi, spec) in vars.iter().enumerate().rev() {
                        let vi = u32::try_from(vi).unwrap_or(u32::MAX);
                        let prefix = spec.prefix.and_then(|n| u16::try_from(n).ok());
                        let item = |p: &mut Program, next: u32| -> u32 {
                            let value = p.push(Inst::Value {
                                part: pi,
                                var: vi,
                                op,
                                prefix,
                                next,
                            });
                            if !op.named() {
                                return value;
                            }
                            let eq = p.bytes(b"=", false, value);
                            let alt = if op == Op::PathParam {
                                let empty = p.push(Inst::BindEmpty {
                                    part: pi,
                                    var: vi,
                                    next,
                                });
                                p.push(Inst::Split { a: eq, b: empty })
                            } else {
                                eq
                            };
                            p.bytes(spec.name.as_bytes(), false, alt)
                        };
                        // After an item: the exploded loop, or the next variable (emitted).
                        let after_item = if spec.explode {
                            // Loop state: `sep item` again, or on to the next variable.
                            let loop_state = p.push(Inst::Match); // placeholder, patched below
                            let again = item(&mut p, loop_state);
                            let sep = p.bytes(op.sep(), false, again);
                            let split = p.push(Inst::Split { a: sep, b: after_t });
                            p.insts[loop_state as usize] = Inst::State { next: split };
                            loop_state
                        } else {
                            after_t
                        };
                        let block = |p: &mut Program, emitted: bool, skip: u32| -> u32 {
                            let first_item = item(p, after_item);
                            let lead = if emitted { op.sep() } else { op.first() };
                            let lead = p.bytes(lead, false, first_item);
                            let split = p.push(Inst::Split { a: lead, b: skip });
                            p.push(Inst::State { next: split })
                        };
                        let t = block(&mut p, true, after_t);
                        let f = block(&mut p, false, after_f);
                        (after_t, after_f) = (t, f);
                    }
                    next = after_f;
                }
            }
        }
        p.start = next;
        p
    }
}

/// The incremental form of the value rules (module docs; [`safe_value`] and the `candidate`
/// rules) for a value being matched byte by byte: a thread's value state. Two threads in the
/// same instruction with the same `ValueState` have the same future, so the lower-priority one
/// is dropped: that is what keeps matching linear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct ValueState {
    /// Hex digits of a `%XX` triplet still to come (2, 1) or 0.
    trip: u8,
    /// The decoded byte of the triplet so far.
    trip_val: u8,
    /// UTF-8 continuation bytes still needed by the decoded character.
    utf_need: u8,
    /// Allowed range of the next continuation byte.
    utf_lo: u8,
    utf_hi: u8,
    /// The decoded character so far.
    cp: u32,
    /// Prefix units (RFC 6570 §2.4.1) so far; tracked only under a prefix modifier.
    units: u16,
    /// Raw bytes consumed (`;x=` with an empty value is no match).
    nonempty: bool,
    /// Decoded bytes so far, saturating at 2 (drive letter `C:`).
    nbytes: u8,
    /// The first decoded byte is an ASCII letter.
    first_alpha: bool,
    /// Double encoding: 1 after a decoded `%`, 2 after `%` and a hex digit.
    dbl: u8,
    /// The current segment (since the last decoded `/` or `\`) is not empty.
    seg_nonempty: bool,
    /// The current segment is dots and spaces only (so far).
    seg_dots: bool,
}

/// Why a value thread died or can go on.
type Alive = Option<ValueState>;

impl ValueState {
    fn fresh() -> Self {
        ValueState {
            seg_dots: true,
            ..ValueState::default()
        }
    }

    /// `self` with the fields that no longer matter zeroed (a finished triplet's byte, a
    /// finished character, the first byte's class once two are seen, raw emptiness but for
    /// `;`), so threads with the same future compare equal and merge.
    fn normalized(mut self, op: Op) -> Self {
        if self.trip == 0 {
            self.trip_val = 0;
        }
        if self.utf_need == 0 {
            (self.cp, self.utf_lo, self.utf_hi) = (0, 0, 0);
        }
        if self.nbytes >= 2 {
            self.first_alpha = false;
        }
        if op != Op::PathParam {
            self.nonempty = false;
        }
        self
    }

    /// All fields in one integer: what two states are compared by when threads merge (one
    /// 128-bit compare instead of thirteen; the fuzz build traces every compare).
    fn key(&self) -> u128 {
        u128::from(self.trip)
            | u128::from(self.trip_val) << 8
            | u128::from(self.utf_need) << 16
            | u128::from(self.utf_lo) << 24
            | u128::from(self.utf_hi) << 32
            | u128::from(self.cp) << 40
            | u128::from(self.units) << 72
            | u128::from(self.nbytes) << 88
            | u128::from(self.dbl) << 96
            | u128::from(self.nonempty) << 104
            | u128::from(self.first_alpha) << 105
            | u128::from(self.seg_nonempty) << 106
            | u128::from(self.seg_dots) << 107
    }

    /// The value may end here: no half triplet or character, and (guard on) the last segment is
    /// not dots and spaces only; `;x=` needs a value.
    fn can_stop(&self, op: Op, guard: bool) -> bool {
        self.trip == 0
            && self.utf_need == 0
            && !(guard && self.seg_nonempty && self.seg_dots)
            && (op != Op::PathParam || self.nonempty)
    }

    /// Consumes URI byte `u[pos]` into the value, or `None` if no value can hold it here.
    fn step(mut self, u: &[u8], pos: usize, op: Op, prefix: Option<u16>, guard: bool) -> Alive {
        let b = u[pos];
        let reserved = op.allow_reserved();
        self.nonempty = true;
        if self.trip > 0 {
            // A hex digit of a triplet checked at its `%`.
            let d = (b as char).to_digit(16)? as u8;
            self.trip_val = (self.trip_val << 4) | d;
            self.trip -= 1;
            if self.trip > 0 {
                return Some(self);
            }
            return self.decoded(self.trip_val, op, guard, prefix);
        }
        if b == b'%' {
            if !(pos + 2 < u.len() && is_hex(u[pos + 1]) && is_hex(u[pos + 2])) {
                return None;
            }
            if reserved {
                self.unit(prefix)?;
            }
            self.trip = 2;
            self.trip_val = 0;
            return Some(self);
        }
        let in_class = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || b >= 0x80
            || (reserved && b":/?#[]@!$&'()*+,;=".contains(&b));
        if !in_class {
            return None;
        }
        // `reserved_units`: a raw character is one unit, counted at its first byte.
        if reserved && !(0x80..0xC0).contains(&b) {
            self.unit(prefix)?;
        }
        self.decoded(b, op, guard, prefix)
    }

    /// One more prefix unit; `None` past the prefix.
    fn unit(&mut self, prefix: Option<u16>) -> Option<()> {
        if let Some(n) = prefix {
            self.units += 1;
            if self.units > n {
                return None;
            }
        }
        Some(())
    }

    /// One decoded byte `d`: UTF-8 validity (as `String::from_utf8`), then the guard's byte
    /// rules, then the character rules when a character completes.
    fn decoded(mut self, d: u8, op: Op, guard: bool, prefix: Option<u16>) -> Alive {
        if guard {
            if self.nbytes == 0 {
                self.first_alpha = d.is_ascii_alphabetic();
            } else if self.nbytes == 1 && self.first_alpha && d == b':' {
                return None; // a drive letter: `C:`
            }
            self.nbytes = (self.nbytes + 1).min(2);
            self.dbl = match (self.dbl, d) {
                (2, d) if is_hex(d) => return None, // `%XX` left after one decoding
                (1, d) if is_hex(d) => 2,
                (_, b'%') => 1,
                _ => 0,
            };
        }
        let c = if self.utf_need == 0 {
            let (need, lo, hi, bits) = match d {
                0x00..=0x7F => (0, 0, 0, u32::from(d)),
                0xC2..=0xDF => (1, 0x80, 0xBF, u32::from(d & 0x1F)),
                0xE0 => (2, 0xA0, 0xBF, u32::from(d & 0x0F)),
                0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF, u32::from(d & 0x0F)),
                0xED => (2, 0x80, 0x9F, u32::from(d & 0x0F)),
                0xF0 => (3, 0x90, 0xBF, u32::from(d & 0x07)),
                0xF1..=0xF3 => (3, 0x80, 0xBF, u32::from(d & 0x07)),
                0xF4 => (3, 0x80, 0x8F, u32::from(d & 0x07)),
                _ => return None,
            };
            if need > 0 {
                (self.utf_need, self.utf_lo, self.utf_hi, self.cp) = (need, lo, hi, bits);
                return Some(self);
            }
            bits
        } else {
            if !(self.utf_lo..=self.utf_hi).contains(&d) {
                return None;
            }
            self.cp = (self.cp << 6) | u32::from(d & 0x3F);
            self.utf_need -= 1;
            (self.utf_lo, self.utf_hi) = (0x80, 0xBF);
            if self.utf_need > 0 {
                return Some(self);
            }
            self.cp
        };
        let c = char::from_u32(c)?;
        if !op.allow_reserved() {
            self.unit(prefix)?; // a decoded character is one unit
        }
        if !guard {
            return Some(self);
        }
        if c.is_control() || crate::sanitize::folds_to_dot_or_separator(c) {
            return None;
        }
        if c == '/' || c == '\\' {
            // Path-segment operators hold no separator; the others no leading separator, no
            // empty segment before the last, no dots-only segment.
            let path_segment = matches!(op, Op::Simple | Op::Label | Op::Path | Op::PathParam);
            if path_segment || !self.seg_nonempty || self.seg_dots {
                return None;
            }
            self.seg_nonempty = false;
            self.seg_dots = true;
        } else {
            self.seg_nonempty = true;
            self.seg_dots &= c == '.' || c == ' ';
        }
        Some(self)
    }
}

/// A thread of the Pike VM.
#[derive(Debug, Clone, Copy)]
struct Thread {
    pc: u32,
    /// Bytes of the literal at `pc` ([`Inst::Lit`]) consumed so far; 0 elsewhere.
    off: u32,
    value: ValueState,
    /// Where the value being matched (at a `Value` instruction) started.
    start: u32,
    /// This path's last binding `(part, var, start, end)` (`part == NO_BIND`: none), kept in
    /// the thread so a path that dies right after binding costs no arena entry.
    last: (u32, u32, u32, u32),
    /// The binding before `last` (index into the arena), or `NO_BIND`.
    bind: u32,
    /// Matcher states entered on this path.
    depth: u32,
    /// Where the path first went past the depth limit, or `NO_BIND`.
    too_deep_at: u32,
}

const NO_BIND: u32 = u32::MAX;

/// One binding on a thread's path: (previous binding, part, var, start, end).
type BindNode = (u32, u32, u32, u32, u32);

/// The Pike VM run of `prog` over `u`.
struct Vm<'p, 'u> {
    prog: &'p Program,
    u: &'u [u8],
    guard: bool,
    max_depth: usize,
    budget: usize,
    steps: usize,
    binds: Vec<BindNode>,
    /// Arena size that triggers the next [`Vm::collect`].
    collect_at: usize,
    /// Per instruction, the position it was last added at (non-`Value` instructions).
    seen_at: Vec<u32>,
    /// Per `Value` instruction, the value states added at the current position (few: states
    /// are [`ValueState::normalized`]), and the instructions to clear.
    seen_values: Vec<Vec<u128>>,
    touched: Vec<u32>,
    /// `(instruction, value state)` added at the current position, for an instruction with many.
    seen_many: HashSet<(u32, u128)>,
    /// What was put in `seen_many` at the current position: taken out one by one at the next
    /// (`HashSet::clear` costs the set's capacity, the largest it ever grew, at every position).
    many_log: Vec<(u32, u128)>,
    stack: Vec<Thread>,
    /// Per literal longer than [`SCANNED_LITERAL_BYTES`], where it occurs (once looked up).
    occurrences: Vec<Option<Occurrences>>,
    /// The URI as [`fold_triplets`] gives it (once a long literal is looked up).
    folded_uri: Option<Vec<u8>>,
}

/// What the matcher returns: the winning path's bindings `(part, var, start, end)` in order,
/// or the limit that stopped it.
type VmOutcome = Result<(Option<Vec<(usize, usize, usize, usize)>>, MatchStats), TemplateError>;

impl Vm<'_, '_> {
    fn tick(&mut self, pos: usize) -> Result<(), TemplateError> {
        self.charge(1, pos)
    }

    /// Whether literal `lit` is whole at `pos`. A short one is compared there, each byte
    /// compared past the first counted as a step; a long one ([`Lit::scanned`]) is looked up in its occurrences,
    /// found by one scan of the URI on its first use (counted as one step per 8 URI bytes):
    /// comparing a long literal at every value end was quadratic when the URI repeats it
    /// (`{+path}` then `%EF%BF%BD` × 160: 120,000 steps for 1,449 bytes).
    fn lit_at(&mut self, lit: u32, pos: usize) -> Result<bool, TemplateError> {
        let l = &self.prog.lits[lit as usize];
        if !l.scanned {
            let (here, compared) = l.at(self.u, pos);
            self.charge(compared - 1, pos)?;
            return Ok(here);
        }
        if let Some(Some(occ)) = self.occurrences.get(lit as usize) {
            return Ok(occ.has(pos));
        }
        self.charge(self.u.len() / 8, pos)?;
        let folded = self.folded_uri.get_or_insert_with(|| fold_triplets(self.u));
        let occ = l.occurrences(self.u, folded);
        let here = occ.has(pos);
        if self.occurrences.len() <= lit as usize {
            self.occurrences.resize_with(lit as usize + 1, || None);
        }
        self.occurrences[lit as usize] = Some(occ);
        Ok(here)
    }

    /// Counts `n` steps against the budget.
    fn charge(&mut self, n: usize, pos: usize) -> Result<(), TemplateError> {
        self.steps += n;
        if self.steps > self.budget {
            return Err(TemplateError::new(
                TemplateErrorKind::MatchBudgetExceeded,
                pos,
            ));
        }
        Ok(())
    }

    /// Adds `t` and everything reachable from it without consuming a byte to `list`, in
    /// priority order, dropping threads whose future an earlier (higher-priority) one shares.
    fn add(&mut self, list: &mut Vec<Thread>, t: Thread, pos: usize) -> Result<(), TemplateError> {
        let p32 = u32::try_from(pos).unwrap_or(u32::MAX);
        self.stack.push(t);
        while let Some(mut t) = self.stack.pop() {
            self.tick(pos)?;
            let inst = self.prog.insts[t.pc as usize];
            if let Inst::Value { .. } = inst {
                // A short list per instruction; past `FEW` (prefix counters), a hash set.
                const FEW: usize = 8;
                let key = t.value.key();
                let seen = &mut self.seen_values[t.pc as usize];
                let dup = if seen.len() < FEW {
                    seen.contains(&key)
                } else {
                    self.seen_many.contains(&(t.pc, key))
                };
                if dup {
                    continue;
                }
                if seen.is_empty() {
                    self.touched.push(t.pc);
                }
                if seen.len() < FEW {
                    seen.push(key);
                    if seen.len() == FEW {
                        self.seen_many.extend(seen.iter().map(|k| (t.pc, *k)));
                        self.many_log.extend(seen.iter().map(|k| (t.pc, *k)));
                    }
                } else {
                    self.seen_many.insert((t.pc, key));
                    self.many_log.push((t.pc, key));
                }
            } else {
                if self.seen_at[t.pc as usize] == p32 {
                    continue;
                }
                self.seen_at[t.pc as usize] = p32;
            }
            match inst {
                Inst::Lit { lit, .. } => {
                    // Enter only if the whole literal is here (`t.off` is 0: a thread enters a
                    // literal at its start).
                    if self.lit_at(lit, pos)? {
                        list.push(t);
                    }
                }
                Inst::Match => list.push(t),
                Inst::Split { a, b } => {
                    self.stack.push(Thread { pc: b, ..t });
                    self.stack.push(Thread { pc: a, ..t });
                }
                Inst::State { next } => {
                    if t.depth as usize >= self.max_depth && t.too_deep_at == NO_BIND {
                        t.too_deep_at = p32;
                    }
                    t.depth = t.depth.saturating_add(1);
                    self.stack.push(Thread { pc: next, ..t });
                }
                Inst::Value {
                    part,
                    var,
                    op,
                    next,
                    ..
                } => {
                    // Longest first: consuming on has priority over ending the value here.
                    list.push(t);
                    // (`next` is a state: skip the binding if a better path reached it here.)
                    if t.value.can_stop(op, self.guard) && self.seen_at[next as usize] != p32 {
                        let b = self.bound(t, (part, var, t.start, p32));
                        self.stack.push(self.enter(next, b, b.bind, p32));
                    }
                }
                Inst::BindEmpty { part, var, next } if self.seen_at[next as usize] != p32 => {
                    let b = self.bound(t, (part, var, p32, p32));
                    self.stack.push(self.enter(next, b, b.bind, p32));
                }
                Inst::BindEmpty { .. } => {}
            }
        }
        Ok(())
    }

    /// Drops the arena's bindings no thread of `list` can reach (most: a value ends at every
    /// byte it could, and most of those paths die at the next byte), once the arena doubled
    /// since the last collection: the arena stays O(live bindings), amortized O(1) per binding.
    fn collect(&mut self, list: &mut [Thread]) {
        if self.binds.len() < self.collect_at {
            return;
        }
        const DEAD: u32 = u32::MAX;
        let mut remap = vec![DEAD; self.binds.len()];
        for t in list.iter() {
            let mut at = t.bind;
            while at != NO_BIND && remap[at as usize] == DEAD {
                remap[at as usize] = 0; // live; renumbered below
                at = self.binds[at as usize].0;
            }
        }
        let mut kept = 0u32;
        for r in remap.iter_mut() {
            if *r != DEAD {
                *r = kept;
                kept += 1;
            }
        }
        let old = std::mem::take(&mut self.binds);
        self.binds = old
            .into_iter()
            .enumerate()
            .filter(|(i, _)| remap[*i] != DEAD)
            .map(|(_, (parent, part, var, s, e))| {
                let parent = if parent == NO_BIND {
                    NO_BIND
                } else {
                    remap[parent as usize]
                };
                (parent, part, var, s, e)
            })
            .collect();
        for t in list.iter_mut() {
            if t.bind != NO_BIND {
                t.bind = remap[t.bind as usize];
            }
        }
        self.collect_at = (2 * self.binds.len()).max(4096);
    }

    /// `t` with `bind` as its last binding (the previous last one moved to the arena).
    fn bound(&mut self, mut t: Thread, bind: (u32, u32, u32, u32)) -> Thread {
        if t.last.0 != NO_BIND {
            let (part, var, s, e) = t.last;
            self.binds.push((t.bind, part, var, s, e));
            t.bind = u32::try_from(self.binds.len() - 1).unwrap_or(NO_BIND);
        }
        t.last = bind;
        t
    }

    /// `t` moved on to `pc` (a fresh value state if `pc` starts a value).
    fn enter(&self, pc: u32, t: Thread, bind: u32, pos: u32) -> Thread {
        Thread {
            pc,
            value: ValueState::fresh(),
            start: pos,
            bind,
            ..t
        }
    }

    fn run(mut self) -> VmOutcome {
        let n = self.u.len();
        let mut clist: Vec<Thread> = Vec::new();
        let mut nlist: Vec<Thread> = Vec::new();
        let first = Thread {
            pc: self.prog.start,
            off: 0,
            value: ValueState::fresh(),
            start: 0,
            last: (NO_BIND, 0, 0, 0),
            bind: NO_BIND,
            depth: 0,
            too_deep_at: NO_BIND,
        };
        self.add(&mut clist, first, 0)?;
        for pos in 0..n {
            if clist.is_empty() {
                break;
            }
            for pc in self.touched.drain(..) {
                self.seen_values[pc as usize].clear();
            }
            for k in self.many_log.drain(..) {
                self.seen_many.remove(&k);
            }
            for &t in &clist {
                self.tick(pos)?;
                match self.prog.insts[t.pc as usize] {
                    Inst::Lit { lit, next } => {
                        // Checked whole on entry (`add`): byte `t.off` is `c`.
                        if t.off + 1 < self.prog.lits[lit as usize].len() {
                            nlist.push(Thread {
                                off: t.off + 1,
                                ..t
                            });
                        } else {
                            let start = u32::try_from(pos + 1).unwrap_or(u32::MAX);
                            let nt = self.enter(next, Thread { off: 0, ..t }, t.bind, start);
                            self.add(&mut nlist, nt, pos + 1)?;
                        }
                    }
                    Inst::Value { op, prefix, .. } => {
                        if let Some(v) = t.value.step(self.u, pos, op, prefix, self.guard) {
                            let value = v.normalized(op);
                            self.add(&mut nlist, Thread { value, ..t }, pos + 1)?;
                        }
                    }
                    _ => {}
                }
            }
            std::mem::swap(&mut clist, &mut nlist);
            nlist.clear();
            self.collect(&mut clist);
        }
        // `clist` holds the threads at the end of the URI (or none, if all died early).
        let winner = clist
            .iter()
            .find(|t| matches!(self.prog.insts[t.pc as usize], Inst::Match))
            .copied();
        let Some(w) = winner else {
            return Ok((
                None,
                MatchStats {
                    steps: self.steps,
                    deepest: 0,
                },
            ));
        };
        if w.too_deep_at != NO_BIND {
            return Err(TemplateError::new(
                TemplateErrorKind::MatchTooDeep,
                w.too_deep_at as usize,
            ));
        }
        let mut path = Vec::new();
        if w.last.0 != NO_BIND {
            let (part, var, s, e) = w.last;
            path.push((part as usize, var as usize, s as usize, e as usize));
        }
        let mut at = w.bind;
        while at != NO_BIND {
            let (prev, part, var, s, e) = self.binds[at as usize];
            path.push((part as usize, var as usize, s as usize, e as usize));
            at = prev;
        }
        path.reverse();
        Ok((
            Some(path),
            MatchStats {
                steps: self.steps,
                deepest: w.depth as usize,
            },
        ))
    }
}

/// `false` for a decoded value that is a path traversal in disguise, which is then no match (the
/// rules are listed in the module docs): control characters and dots-and-spaces-only values for
/// every operator; double encoding and a leading drive letter for the path operators; `/` or
/// `\` for the path-segment operators; a leading separator, an empty or dots-only segment for
/// `{+var}` and, the same, for query (`{?var}`, `{&var}`) and fragment (`{#var}`) values, which
/// may hold `/`. Every operator also refuses a character NFKC folds into `.`, `/` or `\`
/// ([`crate::folds_to_dot_or_separator`]: `．．／`).
fn safe_value(op: Op, value: &str) -> bool {
    // `.`, `..`, `...`, `.. `: Windows trims trailing dots and spaces, so each is `.` or `..`.
    let dots = |s: &str| !s.is_empty() && s.chars().all(|c| c == '.' || c == ' ');
    if dots(value)
        || value
            .chars()
            .any(|c| c.is_control() || crate::sanitize::folds_to_dot_or_separator(c))
    {
        return false;
    }
    let b = value.as_bytes();
    let double_encoded = b
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit());
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    match op {
        Op::Simple | Op::Label | Op::Path | Op::PathParam => {
            !value.contains(['/', '\\']) && !double_encoded && !drive
        }
        // Query and fragment values may hold `/` (as `{+var}` may), but are held to its rules:
        // servers join `?path=` and `#frag` values to a root as often as path segments.
        Op::Reserved | Op::Fragment | Op::Query | Op::QueryCont => {
            !value.starts_with(['/', '\\']) && !double_encoded && !drive && {
                // An empty segment (`a//b`) but for a trailing `/` (a directory).
                let segs: Vec<&str> = value.split(['/', '\\']).collect();
                let inner = &segs[..segs.len().saturating_sub(1)];
                !inner.iter().any(|seg| seg.is_empty()) && !segs.iter().any(|seg| dots(seg))
            }
        }
    }
}

/// `true` if a simple `{var}` can match `value` back (it is not `.` or `..` and holds no `/`
/// or `\\`: see the module's matching rules). For the fuzz property of `fuzzing::uri_template`.
#[doc(hidden)]
pub fn simple_value_is_matchable(value: &str) -> bool {
    safe_value(Op::Simple, value)
}

fn decode(raw: &[u8]) -> Option<String> {
    let bytes: Vec<u8> = percent_encoding::percent_decode(raw).collect();
    String::from_utf8(bytes).ok()
}

/// Work done by one match (for the limit tests).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MatchStats {
    /// Steps counted against [`MAX_MATCH_STEPS`].
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) steps: usize,
    /// Deepest state chain, counted against [`MAX_MATCH_DEPTH`].
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) deepest: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Template {
        Template::parse(s).unwrap()
    }

    #[test]
    fn traversal_rejections_name_the_variable_the_guard_refused() {
        let tpl = t("file://docs/{name}");
        let why = tpl.traversal_rejections("file://docs/..%2F..%2Fetc%2Fpasswd");
        assert_eq!(
            why,
            vec![("name".to_owned(), "../../etc/passwd".to_owned())]
        );
        assert!(
            tpl.match_uri("file://docs/..%2F..%2Fetc%2Fpasswd")
                .is_none()
        );
        // A match, and a URI that does not fit at all, have no rejection to explain.
        assert!(tpl.traversal_rejections("file://docs/a.md").is_empty());
        assert!(tpl.traversal_rejections("http://other/a.md").is_empty());
        let plus = t("file:///{+path}");
        assert_eq!(
            plus.traversal_rejections("file:///src/../../etc"),
            vec![("path".to_owned(), "src/../../etc".to_owned())]
        );
    }

    /// `uri` matched against `file:///{+dir}/{name}.{ext}` within the default limits:
    /// the template, the variables and the work done.
    fn match_dir_name_ext(uri: &str) -> (Template, Vars, MatchStats) {
        let tpl = t("file:///{+dir}/{name}.{ext}");
        let (vars, stats) = tpl
            .match_with_limits(uri, MAX_MATCH_STEPS, MAX_MATCH_DEPTH)
            .unwrap();
        (tpl, vars.expect("a match"), stats)
    }

    #[test]
    fn match_budget_at_the_limit_and_one_past() {
        let uri = "file:///a/b/c/My%20File.tar.gz";
        let (tpl, vars, stats) = match_dir_name_ext(uri);
        let used = stats.steps;
        let got = ["dir", "name", "ext"].map(|n| vars.get_str(n));
        assert_eq!(got, [Some("a/b/c"), Some("My File.tar"), Some("gz")]);
        assert!(used > 10 && used < 1000, "steps used: {used}");
        let (again, _) = tpl.match_with_limits(uri, used, MAX_MATCH_DEPTH).unwrap();
        assert_eq!(again, Some(vars));
        let err = tpl
            .match_with_limits(uri, used - 1, MAX_MATCH_DEPTH)
            .unwrap_err();
        assert_eq!(err.kind(), TemplateErrorKind::MatchBudgetExceeded);
    }

    use iri_string::spec::UriSpec;
    use iri_string::template::simple_context::{SimpleContext, Value as IriValue};

    fn to_iri_value(v: &Value) -> IriValue {
        match v {
            Value::String(s) => IriValue::String(s.clone()),
            Value::List(l) => IriValue::List(l.clone()),
            Value::Assoc(a) => IriValue::Assoc(a.clone()),
        }
    }

    fn rfc_vars() -> Vars {
        crate::fuzzing::rfc6570_example_vars()
    }

    #[test]
    fn expander_passes_the_rfc6570_tables_in_unit_tests_too() {
        let vars = rfc_vars();
        let mut rows = 0;
        for line in include_str!("../tests/data/rfc6570_examples.tsv").lines() {
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            let got = t(cols[1]).expand(&vars).unwrap();
            assert_eq!(got, cols[2], "§{} {}", cols[0], cols[1]);
            rows += 1;
        }
        assert!(rows >= 170);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 1000, failure_persistence: None, ..Default::default() })]
        /// Differential test against `iri-string` on the domain where it is correct (ASCII
        /// values without `%`, no empty member of a named exploded list/assoc, where it emits
        /// `;l=` instead of RFC 6570 Appendix A's `;l`).
        #[test]
        fn native_and_iri_string_agree(
            x in "[ -$&-~]{0,8}",
            items in proptest::collection::vec("[ -$&-~]{1,4}", 0..3),
            op in proptest::sample::select(vec!["", "+", "#", ".", "/", ";", "?", "&"]),
            explode in proptest::bool::ANY,
        ) {
            let mut vars = Vars::new();
            vars.insert("x", x.as_str());
            vars.insert("l", Value::List(items.clone()));
            let pairs: Vec<(String, String)> = items.iter().map(|i| (format!("k{i}"), i.clone())).collect();
            vars.insert("a", Value::Assoc(pairs));
            let star = if explode { "*" } else { "" };
            let tpl = t(&format!("X{{{op}x,l{star},a{star},undef,x:2}}Y{{{op}l{star}}}"));
            let native = tpl.expand(&vars).unwrap();
            let mut ctx = SimpleContext::new();
            for (k, v) in vars.iter() {
                ctx.insert(k, to_iri_value(v));
            }
            let theirs = UriTemplateStr::new(tpl.as_str()).unwrap().expand::<UriSpec, _>(&ctx).unwrap().to_string();
            proptest::prop_assert_eq!(native, theirs);
        }
    }

    #[test]
    fn match_depth_at_the_limit_and_one_past() {
        let uri = "file:///a/b/My%20File.tar.gz";
        let (tpl, vars, stats) = match_dir_name_ext(uri);
        // 3 literals + 3 variables + 3 expression ends on the successful path
        assert_eq!(stats.deepest, 9);
        let (again, _) = tpl
            .match_with_limits(uri, MAX_MATCH_STEPS, stats.deepest)
            .unwrap();
        assert_eq!(again, Some(vars));
        let err = tpl
            .match_with_limits(uri, MAX_MATCH_STEPS, stats.deepest - 1)
            .unwrap_err();
        assert_eq!(err.kind(), TemplateErrorKind::MatchTooDeep);
    }

    /// A template from generated pieces: literals, and expressions of any operator whose
    /// variables (from a small set, so some repeat) may be exploded or prefixed.
    fn gen_template() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let lit =
            proptest::sample::select(vec!["x:", "/", ".", "a", "%41", "%c3%a9", "é", "=", "-"]);
        let var = (
            proptest::sample::select(vec!["a", "b", "c", "list"]),
            proptest::sample::select(vec!["", "", "*", ":1", ":3"]),
        )
            .prop_map(|(n, m)| format!("{n}{m}"));
        let expr = (
            proptest::sample::select(vec!["", "+", "#", ".", "/", ";", "?", "&"]),
            proptest::collection::vec(var, 1..3),
        )
            .prop_map(|(op, vars)| format!("{{{op}{}}}", vars.join(",")));
        let piece = prop_oneof![lit.prop_map(str::to_owned), expr];
        proptest::collection::vec(piece, 1..5).prop_map(|p| p.concat())
    }

    /// A URI from pieces the value rules care about: separators, dots, triplets (double
    /// encoded, non-ASCII, invalid UTF-8), drive letters, the named operators' `=`/`;`/`&`.
    fn gen_uri() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        let piece = proptest::sample::select(vec![
            "a", "b", ".", "..", "/", "%2F", "%2E", "%2e", "%41", "%C3%A9", "%C3", "%A9", "é",
            "%25", "%2541", "C:", "c", "=", ";", "?", "&", "#", ",", "x:", "%20", " ", "%0A",
            "list=", "a=", "%", "\\", "%5C", "．",
        ]);
        proptest::collection::vec(piece, 0..9).prop_map(|p| p.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4000, failure_persistence: None, ..Default::default() })]
        /// The Pike VM finds exactly the match the backtracking reference finds first (same
        /// variables, same values), with the traversal guard on and off.
        #[test]
        fn vm_and_backtracking_reference_agree(tpl in gen_template(), uri in gen_uri(), guard in proptest::bool::ANY) {
            let Ok(tpl) = Template::parse(&tpl) else { return Ok(()); };
            let reference = dfs_reference::match_dfs(&tpl, &uri, MAX_MATCH_STEPS, MAX_MATCH_DEPTH, guard);
            let vm = tpl.match_guarded(&uri, MAX_MATCH_STEPS, MAX_MATCH_DEPTH, guard).map(|(v, _)| v);
            proptest::prop_assert_eq!(vm, reference, "{} on {:?}", tpl, uri);
        }
    }

    /// Asserts `tpl` fails to match `uri_of(n)` (about `n` bytes) in steps linear in `n`: 64
    /// times the bytes (1 KiB, 64 KiB), at most 65 times the steps (a quadratic matcher takes
    /// ~4096 times).
    fn assert_linear_steps(tpl: &Template, uri_of: impl Fn(usize) -> String) {
        let steps = |n: usize| {
            let (m, stats) = tpl
                .match_with_limits(&uri_of(n), MAX_MATCH_STEPS, MAX_MATCH_DEPTH)
                .unwrap();
            assert_eq!(m, None);
            stats.steps
        };
        let (small, large) = (steps(1024), steps(64 * 1024));
        assert!(
            large <= small * 65,
            "1 KiB: {small} steps, 64 KiB: {large} steps"
        );
    }

    /// Adjacent ambiguous variables against a long URI that fails at the very end: the shape
    /// that made the backtracking matcher quadratic per variable (and blow its step budget at
    /// 600 bytes with eight variables) is now linear: steps per URI byte stay flat.
    #[test]
    fn adjacent_variables_failing_at_the_end_take_linear_steps() {
        let tpl = t(&format!("x:{}!", "{a}{b}{c}{d}{e}{f}{g}{h}"));
        assert_linear_steps(&tpl, |n| format!("x:{}", "a".repeat(n - 2)));
    }

    /// A `{+x}` followed by a literal that never comes: every value end is tried, once.
    #[test]
    fn reserved_variable_before_a_missing_literal_takes_linear_steps() {
        let tpl = t("x:{+a}/{b}{#c}!");
        assert_linear_steps(&tpl, |n| format!("x:{}", "a/b%20c".repeat(n / 7)));
    }

    /// `{+path}` before a long literal the path's characters also make up (the shape of the
    /// `uri_template` fuzz target's slowest inputs: 253,000 steps for a 1,494-byte URI when a
    /// literal was one instruction per byte and a thread entered it at every value end): a
    /// thread enters the literal only where all of it is, so the steps stay a few per byte.
    #[test]
    fn reserved_variable_before_a_long_literal_takes_few_steps_per_byte() {
        let lit = "%EF%BF%BD".repeat(160);
        let tpl = t(&format!("x:{{+path}}{lit}"));
        let vars: Vars = [("path", "a/b%20c")].into_iter().collect();
        let uri = tpl.expand(&vars).unwrap();
        let (m, stats) = tpl
            .match_with_limits(&uri, MAX_MATCH_STEPS, MAX_MATCH_DEPTH)
            .unwrap();
        assert_eq!(m, Some(vars));
        assert!(
            stats.steps <= 4 * uri.len(),
            "{} steps for {} bytes",
            stats.steps,
            uri.len()
        );
    }

    /// Regression (proptest `long_literal_occurrences_are_where_it_compares_equal`, CI-like run):
    /// the literal `%c3%a9`×4 + `%` occurs at 0 and, overlapping, at 6 of `%c3%a9`×5 + `%`; the
    /// substring search skipped past each hit and missed the one at 6.
    #[test]
    fn overlapping_long_literal_occurrences_are_all_found() {
        let lit = Lit::new("%c3%a9%c3%a9%c3%a9%c3%a9%".as_bytes(), true);
        let u = "%c3%a9%c3%a9%c3%a9%c3%a9%c3%a9%".as_bytes();
        assert!(lit.scanned);
        let occ = lit.occurrences(u, &fold_triplets(u));
        let found: Vec<usize> = (0..=u.len()).filter(|&p| occ.has(p)).collect();
        assert_eq!(found, [0, 6]);
        assert!(lit.at(u, 6).0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, failure_persistence: None, ..Default::default() })]
        /// A long literal's occurrences (one substring search over the folded URI) are exactly
        /// the positions where comparing it byte by byte finds it.
        #[test]
        fn long_literal_occurrences_are_where_it_compares_equal(
            lit in proptest::collection::vec(proptest::sample::select(vec!["%41", "%c3%a9", "%C3%A9", "a", "A", "c", "%", "/", "3"]), 5..12),
            pre in proptest::collection::vec(proptest::sample::select(vec!["%41", "%61", "%c3%a9", "%C3%a9", "a", "A", "c", "C", "%", "%%", "/", "3"]), 0..6),
            post in proptest::collection::vec(proptest::sample::select(vec!["%41", "%c3%a9", "a", "A", "c", "%", "/"]), 0..6),
            copies in 0..3usize,
            case in 0..3u8,
            ci_hex in proptest::bool::ANY,
        ) {
            let lit = lit.concat();
            // The literal itself in the URI, as is, lower-cased or upper-cased.
            let copy = match case {
                0 => lit.clone(),
                1 => lit.to_ascii_lowercase(),
                _ => lit.to_ascii_uppercase(),
            };
            let lit = Lit::new(lit.as_bytes(), ci_hex);
            let u = format!("{}{}{}", pre.concat(), copy.repeat(copies), post.concat()).into_bytes();
            if lit.scanned {
                let occ = lit.occurrences(&u, &fold_triplets(&u));
                for pos in 0..=u.len() + 1 {
                    proptest::prop_assert_eq!(occ.has(pos), lit.at(&u, pos).0, "at {}", pos);
                }
            }
        }
    }

    /// A `{+x}` before a periodic literal (`ab` repeated) that fits at every other byte: each
    /// fitting end walks the literal, so the work is the URI times the literal, linear in the
    /// URI for a given template (and bounded by [`MAX_MATCH_STEPS`]).
    #[test]
    fn reserved_variable_before_a_periodic_literal_takes_linear_steps() {
        let tpl = t(&format!("x:{{+a}}{}!", "ab".repeat(32)));
        assert_linear_steps(&tpl, |n| format!("x:{}", "ab".repeat(n / 2 - 1)));
    }

    #[test]
    fn repeated_variable_keeps_first_binding() {
        let v = t("{x}/{x}").match_uri("a/b").unwrap();
        assert_eq!(v.get_str("x"), Some("a"));
        assert_eq!(v.len(), 1);
    }
}

/// The depth-first backtracking matcher the Pike VM replaced, kept as the reference the VM is
/// tested against (`vm_and_backtracking_reference_agree`): same rules, same priorities, but
/// quadratic (or worse) in the URI for adjacent variables.
#[cfg(test)]
mod dfs_reference {
    use super::*;

    /// A matcher state: (part, var, emitted, exploding), where matching continues after a value.
    type Next = (usize, usize, bool, bool);

    struct Matcher<'t, 'u> {
        parts: &'t [Part],
        u: &'u [u8],
        /// Memoized failing states: (part, var, emitted, exploding, pos).
        failed: HashSet<(usize, usize, bool, bool, usize)>,
        /// (part index, var index, decoded value), in match order.
        binds: Vec<(usize, usize, String)>,
        steps: usize,
        budget: usize,
        depth: usize,
        max_depth: usize,
        deepest: usize,
        /// The limit that stopped the search, and the URI offset where it did.
        over_at: Option<(TemplateErrorKind, usize)>,
        /// The traversal guard ([`safe_value`]) is on (always, but for
        /// [`Template::traversal_rejections`]).
        guard: bool,
    }

    /// `true` if `u[pos..]` starts with the literal; the hex digits of its `%XX` triplets compare
    /// case-insensitively (RFC 3986 §2.1: `%c3` and `%C3` are equivalent).
    fn literal_at(lit: &[u8], u: &[u8], pos: usize) -> bool {
        let Some(window) = u.get(pos..pos + lit.len()) else {
            return false;
        };
        let mut hex_left = 0;
        lit.iter().zip(window).all(|(&a, &b)| {
            if hex_left > 0 {
                hex_left -= 1;
                return a.eq_ignore_ascii_case(&b);
            }
            if a == b'%' {
                hex_left = 2;
            }
            a == b
        })
    }

    /// Length of a `{+var}` / `{#var}` value as a prefix modifier counts it (RFC 6570 §2.4.1, as
    /// [`encode_reserved`] does): a `%XX` triplet is one unit, any other character one.
    fn reserved_units(raw: &str) -> usize {
        let b = raw.as_bytes();
        let mut units = 0;
        let mut i = 0;
        while i < b.len() {
            units += 1;
            if b[i] == b'%' && i + 2 < b.len() && is_hex(b[i + 1]) && is_hex(b[i + 2]) {
                i += 3;
            } else {
                i += raw[i..].chars().next().map_or(1, char::len_utf8);
            }
        }
        units
    }

    impl Matcher<'_, '_> {
        fn tick(&mut self, n: usize, pos: usize) -> bool {
            self.steps += n;
            if self.steps > self.budget {
                self.over_at
                    .get_or_insert((TemplateErrorKind::MatchBudgetExceeded, pos));
                return false;
            }
            true
        }

        /// Ends (exclusive) of candidate values starting at `pos`, longest first.
        fn value_ends(&self, pos: usize, reserved: bool) -> Vec<usize> {
            let mut ends = vec![pos];
            let mut i = pos;
            let u = self.u;
            while i < u.len() {
                let b = u[i];
                let step = if b == b'%' {
                    if i + 2 < u.len() && is_hex(u[i + 1]) && is_hex(u[i + 2]) {
                        3
                    } else {
                        break;
                    }
                } else if b.is_ascii_alphanumeric()
                    || matches!(b, b'-' | b'.' | b'_' | b'~')
                    || b >= 0x80
                    || (reserved && b":/?#[]@!$&'()*+,;=".contains(&b))
                {
                    1
                } else {
                    break;
                };
                i += step;
                ends.push(i);
            }
            ends.reverse();
            ends
        }

        /// The operator and variables of expression `part` (`None` for a literal).
        fn expr(&self, part: usize) -> Option<(Op, &[VarSpec])> {
            match &self.parts[part] {
                Part::Expr { op, vars } => Some((*op, vars)),
                Part::Literal(_) => None,
            }
        }

        /// Binds `value` to (part, var) and continues with `next` at `end`; unbinds on failure.
        fn bind_then(
            &mut self,
            part: usize,
            var: usize,
            value: String,
            next: Next,
            end: usize,
        ) -> bool {
            self.binds.push((part, var, value));
            if self.state(next, end) {
                return true;
            }
            self.binds.pop();
            false
        }

        /// The value `u[pos..end]` binds to (module docs: raw for `+`/`#`, decoded once for the
        /// rest), or `None` if it is no candidate. Out of line, so the recursion's frames stay small
        /// ([`MAX_MATCH_DEPTH`] must fit a 2 MiB stack).
        #[inline(never)]
        fn candidate(
            &self,
            op: Op,
            prefix: Option<usize>,
            pos: usize,
            end: usize,
        ) -> Option<String> {
            let raw = &self.u[pos..end];
            // The guard judges the decoded value, whatever is bound.
            let decoded = decode(raw)?;
            if self.guard && !safe_value(op, &decoded) {
                return None;
            }
            // `;x=` with nothing after `=` is not an expansion (Appendix A: an empty value is
            // `;x`), so it would not round-trip.
            if op == Op::PathParam && raw.is_empty() {
                return None;
            }
            // `+` and `#` pass triplets unchanged (§3.2.3, §3.2.4): their value is the raw text,
            // so `a/b%2Fc` stays `a/b%2Fc` (one decoding would make `%2F` a bare `/`).
            let (value, units) = if op.allow_reserved() {
                let text = std::str::from_utf8(raw).ok()?;
                (text.to_owned(), reserved_units(text))
            } else {
                let n = decoded.chars().count();
                (decoded, n)
            };
            if prefix.is_some_and(|n| units > n) {
                return None;
            }
            Some(value)
        }

        /// Tries every value candidate at `pos` for (part, var), then continues with `next`.
        fn value_then(&mut self, part: usize, var: usize, pos: usize, next: Next) -> bool {
            let Some((op, vars)) = self.expr(part) else {
                return false;
            };
            let prefix = vars[var].prefix;
            for end in self.value_ends(pos, op.allow_reserved()) {
                if !self.tick(end - pos + 1, pos) {
                    return false;
                }
                let Some(value) = self.candidate(op, prefix, pos, end) else {
                    continue;
                };
                if self.bind_then(part, var, value, next, end) {
                    return true;
                }
                if self.over_at.is_some() {
                    return false;
                }
            }
            false
        }

        /// One item at `pos` (after its leading `first`/`sep`): `value`, or for named operators
        /// `name=value` / `name` (`;` with an empty value).
        fn item_then(&mut self, part: usize, var: usize, pos: usize, next: Next) -> bool {
            let Some((op, vars)) = self.expr(part) else {
                return false;
            };
            if !op.named() {
                return self.value_then(part, var, pos, next);
            }
            let name = vars[var].name.as_bytes();
            if !self.u[pos..].starts_with(name) {
                return false;
            }
            let after = pos + name.len();
            if self.u.get(after) == Some(&b'=') && self.value_then(part, var, after + 1, next) {
                return true;
            }
            if self.over_at.is_some() {
                return false;
            }
            op == Op::PathParam && self.bind_then(part, var, String::new(), next, after)
        }

        /// Matches from `pos` in state `at` to the end of the URI; memoizes failures.
        fn state(&mut self, at: Next, pos: usize) -> bool {
            let (part, var, emitted, exploding) = at;
            if part == self.parts.len() {
                return pos == self.u.len();
            }
            let key = (part, var, emitted, exploding, pos);
            if self.failed.contains(&key) || !self.tick(1, pos) {
                return false;
            }
            if self.depth == self.max_depth {
                self.over_at
                    .get_or_insert((TemplateErrorKind::MatchTooDeep, pos));
                return false;
            }
            self.depth += 1;
            self.deepest = self.deepest.max(self.depth);
            let ok = self.state_inner(at, pos);
            self.depth -= 1;
            if !ok && self.over_at.is_none() {
                self.failed.insert(key);
            }
            ok
        }

        fn state_inner(&mut self, (part, var, emitted, exploding): Next, pos: usize) -> bool {
            match &self.parts[part] {
                Part::Literal(lit) => {
                    literal_at(lit, self.u, pos)
                        && self.state((part + 1, 0, false, false), pos + lit.len())
                }
                Part::Expr { op, vars, .. } => {
                    let op = *op;
                    if var == vars.len() {
                        self.state((part + 1, 0, false, false), pos)
                    } else if exploding {
                        let sep = op.sep();
                        (self.u[pos..].starts_with(sep)
                            && self.item_then(part, var, pos + sep.len(), (part, var, true, true)))
                            || (self.over_at.is_none()
                                && self.state((part, var + 1, true, false), pos))
                    } else {
                        let lead = if emitted { op.sep() } else { op.first() };
                        let next = if vars[var].explode {
                            (part, var, true, true)
                        } else {
                            (part, var + 1, true, false)
                        };
                        (self.u[pos..].starts_with(lead)
                            && self.item_then(part, var, pos + lead.len(), next))
                            || (self.over_at.is_none()
                                && self.state((part, var + 1, emitted, false), pos))
                    }
                }
            }
        }
    }

    /// The reference match: the bindings in match order, or `None`; `Err` on a limit.
    pub(super) fn match_dfs(
        t: &Template,
        uri: &str,
        budget: usize,
        max_depth: usize,
        guard: bool,
    ) -> Result<Option<Vars>, TemplateError> {
        let mut m = Matcher {
            parts: &t.parts,
            u: uri.as_bytes(),
            failed: HashSet::new(),
            binds: Vec::new(),
            steps: 0,
            budget,
            depth: 0,
            max_depth,
            deepest: 0,
            over_at: None,
            guard,
        };
        let ok = m.state((0, 0, false, false), 0);
        if let Some((kind, at)) = m.over_at {
            return Err(TemplateError::new(kind, at));
        }
        Ok(ok.then(|| t.vars_from_binds(m.binds)))
    }
}
