//! Credential redaction for recorded HTTP headers, URLs, message bodies and
//! the server's argv (on by default), and folding of the recording machine's
//! paths out of the transcript header. Pure functions: the working directory
//! and `$HOME` are passed in as values, never read here.
//!
//! * **Headers** — deny by default: a header whose name contains one of
//!   [`CREDENTIAL_WORDS`] (ASCII case-insensitive: `Authorization`, `Cookie`,
//!   `Mcp-Auth`, `X-Upstream-Token`, `X-Api-Key`, …) has its value replaced
//!   by [`REDACTED`]; for the `Authorization`-like headers of
//!   [`SCHEME_HEADERS`] the scheme is kept (`Bearer [redacted]`, RFC 9110
//!   §11.6.2, §11.7.2). `--redact-header NAME` adds a name, `--keep-header
//!   NAME` exempts one ([`RedactRules`]).
//! * **Session ids** — `Mcp-Session-Id` (MCP 2025-11-25 › Transports ›
//!   Session Management) contains "session" and is a bearer credential for the
//!   session, so its value is not kept; it is replaced by a pseudonym that is
//!   stable within one transcript (`[redacted:1]` for the first session seen,
//!   `[redacted:2]` for the next, …), so a reader still sees which exchanges
//!   shared a session and when a new one began. Nothing reads the recorded
//!   value back: `serve --listen` mints its own session ids and only looks at
//!   whether the header is present. [`PSEUDONYM_HEADERS`] lists such names.
//! * **URLs** — URL userinfo (RFC 3986 §3.2.1) and the values of token-like
//!   query parameters ([`SENSITIVE_PARAMS`]) are replaced by [`REDACTED`].
//! * **Bodies** — `--redact-json POINTER` (RFC 6901): the value at the
//!   pointer, in each message (each member of a batch), is replaced by the
//!   string [`REDACTED`]; only a message where a pointer matched is
//!   re-serialized ([`Redactor::json_body`]), and its record says so.
//! * **argv** — [`Redactor::argv`]: values after credential-like flags
//!   (`--token X`, `--api-key=X`, `-p X`), `KEY=value` with a credential-like
//!   `KEY`, `Name: value` header arguments and URLs are redacted; absolute
//!   paths under the working directory become relative, others under `$HOME`
//!   start with `~` (path folding happens even with `--no-redact`).
//!
//! The recorder's `--no-redact` switch sets [`Redactor::enabled`] to `false`:
//! nothing but paths is changed then. [`Redactor::summary`] gives the
//! transcript header's [`Redaction`] record (names, pointers and argv
//! positions, never values).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::model::Redaction;

/// The marker that replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// Words that make a header name (or a flag, or an environment variable
/// name in argv) credential-like when it contains one, compared ASCII
/// case-insensitively.
pub const CREDENTIAL_WORDS: &[&str] = &[
    "auth",
    "token",
    "key",
    "secret",
    "cookie",
    "session",
    "password",
    "signature",
];

/// Extra words that make an argv flag or `KEY=value` name credential-like
/// (besides [`CREDENTIAL_WORDS`]).
pub const ARGV_CREDENTIAL_WORDS: &[&str] = &["passwd", "credential"];

/// Short flags (after one `-`) whose value is a password (`mysql -p X`).
pub const ARGV_PASSWORD_SHORT_FLAGS: &[&str] = &["p"];

/// Header names whose values are replaced by a per-transcript pseudonym
/// (`[redacted:N]`) instead of [`REDACTED`]: `Mcp-Session-Id`.
pub const PSEUDONYM_HEADERS: &[&str] = &["mcp-session-id"];

/// Headers whose value starts with an auth scheme that is kept
/// (`Bearer [redacted]`): RFC 9110 §11.6.1, §11.6.2, §11.7.1, §11.7.2.
pub const SCHEME_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "www-authenticate",
    "proxy-authenticate",
];

/// Header names (compared ASCII case-insensitively) that were redacted by
/// the fixed list before deny-by-default; every one contains a
/// [`CREDENTIAL_WORDS`] word, so they are redacted unless kept.
pub const SENSITIVE_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
    "x-auth-token",
];

/// Query parameter names (compared ASCII case-insensitively, after
/// percent-decoding) whose values are redacted.
pub const SENSITIVE_PARAMS: &[&str] = &[
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "api_key",
    "apikey",
    "api-key",
    "key",
    "code",
    "sig",
    "signature",
    "secret",
    "client_secret",
    "password",
    "auth",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
];

/// Most `--redact-header`, `--keep-header` and `--redact-json` rules in one
/// [`RedactRules`] (all three counted together); more is
/// [`RedactRuleError::TooManyRules`].
pub const MAX_REDACT_RULES: usize = 256;

/// Most distinct values one [`PSEUDONYM_HEADERS`] header gets a pseudonym
/// for in one transcript; values past it are recorded as plain
/// [`REDACTED`] (still redacted, no longer told apart).
pub const MAX_PSEUDONYMS: usize = 4096;

/// Why [`Redactor::with_rules`] refused its rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedactRuleError {
    /// A `--redact-header` / `--keep-header` name is not an RFC 9110 §5.1
    /// field name (a non-empty `token`).
    #[error("header rule {index}: {name:?} is not a header field name (RFC 9110 §5.1)")]
    InvalidHeaderName {
        /// 0-based index of the rule among the header rules of its kind.
        index: usize,
        /// The name as given.
        name: String,
    },
    /// The same name was given to both `--redact-header` and `--keep-header`.
    #[error("header {name:?} is given both to --redact-header and --keep-header")]
    RedactedAndKept {
        /// The name, lowercased.
        name: String,
    },
    /// A `--redact-json` pointer is not an RFC 6901 JSON Pointer.
    #[error("--redact-json {pointer:?} (pointer {index}): byte {offset}: {reason}")]
    InvalidPointer {
        /// 0-based index of the pointer among the pointers.
        index: usize,
        /// The pointer as given.
        pointer: String,
        /// Byte offset of the problem in the pointer.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// The empty pointer (the whole message) cannot be redacted: the record
    /// would no longer be a JSON-RPC message.
    #[error(
        "--redact-json \"\" (pointer {index}): the empty pointer would replace the whole message"
    )]
    WholeMessagePointer {
        /// 0-based index of the pointer among the pointers.
        index: usize,
    },
    /// More than [`MAX_REDACT_RULES`] rules.
    #[error("{count} redaction rules, more than the {max} allowed")]
    TooManyRules {
        /// Rules given.
        count: usize,
        /// [`MAX_REDACT_RULES`].
        max: usize,
    },
}

/// User redaction rules: `--redact-header`, `--keep-header`, `--redact-json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedactRules {
    /// Header names whose values are redacted too (any case).
    pub redact_headers: Vec<String>,
    /// Header names kept in the clear although credential-like (any case).
    pub keep_headers: Vec<String>,
    /// RFC 6901 JSON Pointers into message bodies (`/params/arguments/password`).
    pub json_pointers: Vec<String>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Rules {
    redact: Vec<String>,
    keep: Vec<String>,
    pointers: Vec<(String, Vec<String>)>,
}

/// Per-transcript pseudonyms: lowercased header name → value → number (from 1).
type Pseudonyms = HashMap<String, HashMap<String, usize>>;

/// Applies redaction when [`Redactor::enabled`]; a disabled redactor returns
/// everything unchanged (except that [`Redactor::argv`] still folds paths).
///
/// Use one redactor (and its clones, which share its pseudonyms) per
/// transcript.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// Redact (default `true`); `false` for `--no-redact`.
    pub enabled: bool,
    rules: Arc<Rules>,
    pseudonyms: Arc<Mutex<Pseudonyms>>,
}

impl PartialEq for Redactor {
    /// Same switch and same rules (pseudonyms seen so far are not compared).
    fn eq(&self, other: &Self) -> bool {
        self.enabled == other.enabled && self.rules == other.rules
    }
}

impl Eq for Redactor {}

impl Default for Redactor {
    fn default() -> Self {
        Self {
            enabled: true,
            rules: Arc::default(),
            pseudonyms: Arc::default(),
        }
    }
}

/// How one header's value is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderTreatment {
    /// Recorded as is.
    Keep,
    /// Replaced by [`REDACTED`] (the scheme kept for [`SCHEME_HEADERS`]).
    Redact,
    /// Replaced by a per-transcript pseudonym `[redacted:N]`.
    Pseudonym,
}

/// What [`Redactor::argv`] did to an argv.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArgvRedaction {
    /// The argv to store.
    pub argv: Vec<String>,
    /// 0-based positions whose credential value was replaced by [`REDACTED`].
    pub redacted: Vec<usize>,
    /// 0-based positions where an absolute path was made relative to the
    /// working directory or folded to `~`.
    pub paths: Vec<usize>,
}

/// Whether `name` contains one of [`CREDENTIAL_WORDS`] (ASCII case-insensitive).
pub fn is_credential_name(name: &str) -> bool {
    contains_word(name, CREDENTIAL_WORDS)
}

fn contains_word(name: &str, words: &[&str]) -> bool {
    let l = name.trim().to_ascii_lowercase();
    words.iter().any(|w| l.contains(w))
}

fn is_argv_credential_name(name: &str) -> bool {
    is_credential_name(name) || contains_word(name, ARGV_CREDENTIAL_WORDS)
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_field_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// Parses an RFC 6901 JSON Pointer into its unescaped reference tokens.
///
/// # Errors
/// `(offset, reason)`: the pointer does not start with `/`, or a `~` is not
/// followed by `0` or `1` (RFC 6901 §3, §4).
fn parse_pointer(p: &str) -> Result<Vec<String>, (usize, &'static str)> {
    if p.is_empty() {
        return Ok(Vec::new());
    }
    if !p.starts_with('/') {
        return Err((0, "a JSON Pointer starts with '/' (RFC 6901 §3)"));
    }
    let mut tokens = Vec::new();
    let mut offset = 1;
    for raw in p[1..].split('/') {
        let b = raw.as_bytes();
        let mut t = String::with_capacity(raw.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'~' {
                match b.get(i + 1) {
                    Some(b'0') => t.push('~'),
                    Some(b'1') => t.push('/'),
                    _ => {
                        return Err((
                            offset + i,
                            "'~' must be followed by '0' or '1' (RFC 6901 §3)",
                        ));
                    }
                }
                i += 2;
            } else {
                // Copy one UTF-8 char.
                let ch = raw[i..].chars().next().unwrap_or('\u{fffd}');
                t.push(ch);
                i += ch.len_utf8();
            }
        }
        tokens.push(t);
        offset += raw.len() + 1;
    }
    Ok(tokens)
}

/// An RFC 6901 §4 array index: `0` or digits without a leading zero.
fn array_index(t: &str) -> Option<usize> {
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || (t.len() > 1 && t.starts_with('0'))
    {
        return None;
    }
    t.parse().ok()
}

/// Replaces the value at `tokens` with [`REDACTED`]; `true` if a value
/// other than the marker itself was there.
fn redact_at(v: &mut Value, tokens: &[String]) -> bool {
    let mut cur = v;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => match m.get_mut(t.as_str()) {
                Some(x) => x,
                None => return false,
            },
            Value::Array(a) => match array_index(t).and_then(|i| a.get_mut(i)) {
                Some(x) => x,
                None => return false,
            },
            _ => return false,
        };
    }
    if cur.as_str() == Some(REDACTED) {
        return false;
    }
    *cur = Value::String(REDACTED.to_owned());
    true
}

impl Redactor {
    /// A redactor that redacts with the default rules only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A redactor that changes nothing (`--no-redact`).
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// A redacting redactor with the user's `rules` added to the defaults.
    ///
    /// # Errors
    /// [`RedactRuleError::TooManyRules`] past [`MAX_REDACT_RULES`] rules,
    /// [`RedactRuleError::InvalidHeaderName`] for a name that is not an
    /// RFC 9110 field name, [`RedactRuleError::RedactedAndKept`] for a name
    /// in both lists, [`RedactRuleError::InvalidPointer`] /
    /// [`RedactRuleError::WholeMessagePointer`] for a bad pointer.
    pub fn with_rules(rules: &RedactRules) -> Result<Self, RedactRuleError> {
        let count =
            rules.redact_headers.len() + rules.keep_headers.len() + rules.json_pointers.len();
        if count > MAX_REDACT_RULES {
            return Err(RedactRuleError::TooManyRules {
                count,
                max: MAX_REDACT_RULES,
            });
        }
        let names = |list: &[String]| -> Result<Vec<String>, RedactRuleError> {
            let mut out: Vec<String> = Vec::with_capacity(list.len());
            for (index, n) in list.iter().enumerate() {
                let t = n.trim();
                if !is_field_name(t) {
                    return Err(RedactRuleError::InvalidHeaderName {
                        index,
                        name: n.clone(),
                    });
                }
                let l = t.to_ascii_lowercase();
                if !out.contains(&l) {
                    out.push(l);
                }
            }
            Ok(out)
        };
        let redact = names(&rules.redact_headers)?;
        let keep = names(&rules.keep_headers)?;
        if let Some(n) = redact.iter().find(|n| keep.contains(n)) {
            return Err(RedactRuleError::RedactedAndKept { name: n.clone() });
        }
        let mut pointers = Vec::with_capacity(rules.json_pointers.len());
        for (index, p) in rules.json_pointers.iter().enumerate() {
            let tokens =
                parse_pointer(p).map_err(|(offset, reason)| RedactRuleError::InvalidPointer {
                    index,
                    pointer: p.clone(),
                    offset,
                    reason,
                })?;
            if tokens.is_empty() {
                return Err(RedactRuleError::WholeMessagePointer { index });
            }
            if !pointers.iter().any(|(q, _)| q == p) {
                pointers.push((p.clone(), tokens));
            }
        }
        Ok(Self {
            enabled: true,
            rules: Arc::new(Rules {
                redact,
                keep,
                pointers,
            }),
            pseudonyms: Arc::default(),
        })
    }

    /// Whether `name` is a header whose value the default policy redacts
    /// (contains one of [`CREDENTIAL_WORDS`], case-insensitive).
    pub fn is_sensitive_header(name: &str) -> bool {
        is_credential_name(name)
            || SENSITIVE_HEADERS
                .iter()
                .any(|h| h.eq_ignore_ascii_case(name.trim()))
    }

    /// How the value of header `name` is recorded by this redactor.
    pub fn header_treatment(&self, name: &str) -> HeaderTreatment {
        if !self.enabled {
            return HeaderTreatment::Keep;
        }
        let l = name.trim().to_ascii_lowercase();
        if self.rules.keep.contains(&l) {
            HeaderTreatment::Keep
        } else if self.rules.redact.contains(&l) {
            HeaderTreatment::Redact
        } else if PSEUDONYM_HEADERS.contains(&l.as_str()) {
            HeaderTreatment::Pseudonym
        } else if Self::is_sensitive_header(&l) {
            HeaderTreatment::Redact
        } else {
            HeaderTreatment::Keep
        }
    }

    /// The value to record for header `name`: see [`Redactor::header_treatment`].
    /// For [`SCHEME_HEADERS`] the scheme is kept (`Bearer [redacted]`) so
    /// transcripts still show which scheme was used; a pseudonym is
    /// `[redacted:N]`, N counting the distinct values of that header from 1.
    pub fn header_value<'a>(&self, name: &str, value: &'a str) -> Cow<'a, str> {
        match self.header_treatment(name) {
            HeaderTreatment::Keep => Cow::Borrowed(value),
            HeaderTreatment::Pseudonym => Cow::Owned(self.pseudonym(name, value)),
            HeaderTreatment::Redact => {
                let lname = name.trim().to_ascii_lowercase();
                if SCHEME_HEADERS.contains(&lname.as_str()) {
                    let v = value.trim_start();
                    if let Some((scheme, _)) = v.split_once(' ')
                        && !scheme.is_empty()
                        && scheme
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    {
                        return Cow::Owned(format!("{scheme} {REDACTED}"));
                    }
                }
                Cow::Borrowed(REDACTED)
            }
        }
    }

    fn pseudonym(&self, name: &str, value: &str) -> String {
        let mut g = self.pseudonyms.lock().unwrap_or_else(|p| p.into_inner());
        let per = g.entry(name.trim().to_ascii_lowercase()).or_default();
        if let Some(n) = per.get(value) {
            return format!("[redacted:{n}]");
        }
        if per.len() >= MAX_PSEUDONYMS {
            return REDACTED.to_owned();
        }
        let n = per.len() + 1;
        per.insert(value.to_owned(), n);
        format!("[redacted:{n}]")
    }

    /// Redacts the values of sensitive headers in place (`[name, value]` pairs).
    pub fn headers(&self, headers: &mut [(String, String)]) {
        for (name, value) in headers.iter_mut() {
            if let Cow::Owned(v) = self.header_value(name, value) {
                *value = v;
            } else if self.header_treatment(name) == HeaderTreatment::Redact {
                *value = REDACTED.to_owned();
            }
        }
    }

    /// Whether [`Redactor::json_body`] can change anything (redacting, with
    /// at least one pointer): callers skip the JSON parse otherwise.
    pub fn redacts_json(&self) -> bool {
        self.enabled && !self.rules.pointers.is_empty()
    }

    /// A message body with the value at each `--redact-json` pointer replaced
    /// by the string [`REDACTED`] (in a batch — a JSON array — the pointers
    /// apply to each member). `None` when no pointer matched (or the body is
    /// not JSON, or the redactor is disabled): the body is then recorded
    /// byte-exact. `Some((compact JSON text, pointers that matched))`
    /// otherwise; the text has no line break.
    pub fn json_body(&self, body: &[u8]) -> Option<(String, Vec<String>)> {
        if !self.redacts_json() {
            return None;
        }
        let mut v: Value = serde_json::from_slice(body).ok()?;
        let mut matched: Vec<String> = Vec::new();
        let mut apply = |m: &mut Value| {
            for (p, tokens) in &self.rules.pointers {
                if redact_at(m, tokens) && !matched.contains(p) {
                    matched.push(p.clone());
                }
            }
        };
        match &mut v {
            Value::Array(items) => items.iter_mut().for_each(&mut apply),
            other => apply(other),
        }
        if matched.is_empty() {
            return None;
        }
        let text = serde_json::to_string(&v).ok()?;
        Some((text, matched))
    }

    /// The redaction record for a transcript header: this redactor's policy
    /// (words, header rules, pseudonymized headers, pointers); the argv
    /// positions come from [`Redaction::with_argv`]. Never holds a value.
    pub fn summary(&self) -> Redaction {
        if !self.enabled {
            return Redaction {
                enabled: false,
                ..Redaction::default()
            };
        }
        Redaction {
            enabled: true,
            header_words: CREDENTIAL_WORDS.iter().map(|w| (*w).to_owned()).collect(),
            redact_headers: self.rules.redact.clone(),
            keep_headers: self.rules.keep.clone(),
            pseudonym_headers: PSEUDONYM_HEADERS
                .iter()
                .filter(|h| !self.rules.keep.iter().any(|k| k == *h))
                .filter(|h| !self.rules.redact.iter().any(|k| k == *h))
                .map(|h| (*h).to_owned())
                .collect(),
            json_pointers: self.rules.pointers.iter().map(|(p, _)| p.clone()).collect(),
            argv_values: Vec::new(),
            argv_paths: Vec::new(),
        }
    }

    /// The server argv to store in a transcript header.
    ///
    /// Credentials (only when [`Redactor::enabled`]): the argument after a
    /// credential-like flag (`--token X`, `--api-key X`, `-p X`; not when
    /// it starts with `-`, nor after a `--no-…` flag), the value of
    /// `--flag=X`, of `KEY=value` with a credential-like `KEY`, of a
    /// `Name: value` header argument with a credential-like name, and the
    /// secrets of a URL ([`Redactor::url`]) become [`REDACTED`]. A flag
    /// name is credential-like when it contains a [`CREDENTIAL_WORDS`] or
    /// [`ARGV_CREDENTIAL_WORDS`] word, or is one of
    /// [`ARGV_PASSWORD_SHORT_FLAGS`].
    ///
    /// Paths (always): an argument that is, or a `--flag=`/`KEY=` value that
    /// is, an absolute path under `cwd` becomes relative to it (`.` for `cwd`
    /// itself); one under `home` becomes `~/…`. `cwd`/`home` of `None`, empty
    /// or `/` fold nothing.
    pub fn argv(&self, argv: &[String], cwd: Option<&str>, home: Option<&str>) -> ArgvRedaction {
        let mut out = ArgvRedaction {
            argv: Vec::with_capacity(argv.len()),
            ..ArgvRedaction::default()
        };
        let mut value_next = false;
        for (i, arg) in argv.iter().enumerate() {
            if self.enabled {
                if value_next && !arg.starts_with('-') {
                    value_next = false;
                    out.argv.push(REDACTED.to_owned());
                    out.redacted.push(i);
                    continue;
                }
                value_next = false;
                if let Some((redacted, takes_next)) = self.credential_arg(arg) {
                    value_next = takes_next;
                    if let Some(r) = redacted {
                        out.argv.push(r);
                        out.redacted.push(i);
                        continue;
                    }
                }
            }
            match fold_arg(arg, cwd, home) {
                Some(f) => {
                    out.argv.push(f);
                    out.paths.push(i);
                }
                None => out.argv.push(arg.clone()),
            }
        }
        out
    }

    /// For one argument: `Some((replacement if this argument itself holds a
    /// secret, whether the next argument is a flag's secret value))`, `None`
    /// when it is not credential-related.
    fn credential_arg(&self, arg: &str) -> Option<(Option<String>, bool)> {
        if let Some(flag) = arg.strip_prefix('-').filter(|f| !f.is_empty()) {
            let single = !flag.starts_with('-');
            let name_part = flag.trim_start_matches('-');
            let (name, value) = match name_part.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (name_part, None),
            };
            if name.is_empty() || name.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return None; // `--`, `-1`, a negative number
            }
            let credential = is_argv_credential_name(name)
                || (single && ARGV_PASSWORD_SHORT_FLAGS.contains(&name));
            if !credential || name.to_ascii_lowercase().starts_with("no-") {
                return None;
            }
            return Some(match value {
                Some(v) if v != REDACTED => {
                    let prefix = &arg[..arg.len() - v.len()];
                    (Some(format!("{prefix}{REDACTED}")), false)
                }
                Some(_) => (None, false),
                None => (None, true),
            });
        }
        if arg.contains("://") {
            return match self.url(arg) {
                Cow::Owned(u) => Some((Some(u), false)),
                Cow::Borrowed(_) => None,
            };
        }
        if let Some((k, v)) = arg.split_once('=')
            && is_env_name(k)
            && is_argv_credential_name(k)
            && v != REDACTED
        {
            return Some((Some(format!("{k}={REDACTED}")), false));
        }
        if let Some((k, v)) = arg.split_once(':')
            && is_field_name(k)
            && (is_argv_credential_name(k) || self.header_treatment(k) != HeaderTreatment::Keep)
        {
            let shown = self.header_value(k, v.trim_start());
            if shown != v.trim_start() {
                return Some((Some(format!("{k}: {shown}")), false));
            }
        }
        None
    }

    /// The URL to record: userinfo and the values of token-like query
    /// parameters replaced by [`REDACTED`]. Works on any string shaped like
    /// `scheme://[userinfo@]host/path?query#fragment`, or a bare path with a
    /// query; the rest is kept byte for byte.
    pub fn url<'a>(&self, url: &'a str) -> Cow<'a, str> {
        if !self.enabled {
            return Cow::Borrowed(url);
        }
        let (before_frag, frag) = match url.find('#') {
            Some(i) => (&url[..i], Some(&url[i..])),
            None => (url, None),
        };
        let (base, query) = match before_frag.find('?') {
            Some(i) => (&before_frag[..i], Some(&before_frag[i + 1..])),
            None => (before_frag, None),
        };
        let mut changed = false;
        let mut out = String::with_capacity(url.len());
        // userinfo
        match base.find("://") {
            Some(s) => {
                let auth_start = s + 3;
                let auth_end = base[auth_start..]
                    .find('/')
                    .map_or(base.len(), |i| auth_start + i);
                match base[auth_start..auth_end].rfind('@') {
                    Some(at) => {
                        out.push_str(&base[..auth_start]);
                        out.push_str(REDACTED);
                        out.push_str(&base[auth_start + at..]);
                        changed = true;
                    }
                    None => out.push_str(base),
                }
            }
            None => out.push_str(base),
        }
        if let Some(q) = query {
            out.push('?');
            for (i, pair) in q.split('&').enumerate() {
                if i > 0 {
                    out.push('&');
                }
                match pair.split_once('=') {
                    Some((k, v)) if is_sensitive_param(k) && v != REDACTED => {
                        out.push_str(k);
                        out.push('=');
                        out.push_str(REDACTED);
                        changed = true;
                    }
                    _ => out.push_str(pair),
                }
            }
        }
        if let Some(f) = frag {
            out.push_str(f);
        }
        if changed {
            Cow::Owned(out)
        } else {
            Cow::Borrowed(url)
        }
    }
}

/// An environment-variable-like name: `[A-Za-z_][A-Za-z0-9_.-]*`.
fn is_env_name(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// A usable base directory: absolute, not `/`, without trailing slashes.
fn base_dir(d: Option<&str>) -> Option<&str> {
    let d = d?.trim_end_matches('/');
    (d.starts_with('/') && d.len() > 1).then_some(d)
}

/// `path` made relative to `cwd` (`.` for `cwd` itself), else folded to
/// `~/…` under `home`; `None` when it is under neither (or not absolute).
/// `cwd`/`home` of `None`, empty or `/` fold nothing.
pub fn fold_path(path: &str, cwd: Option<&str>, home: Option<&str>) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let under = |base: &str| -> Option<String> {
        let rest = path.strip_prefix(base)?;
        if rest.is_empty() {
            Some(String::new())
        } else {
            rest.strip_prefix('/')
                .map(|r| r.trim_start_matches('/').to_owned())
        }
    };
    if let Some(c) = base_dir(cwd)
        && let Some(r) = under(c)
    {
        return Some(if r.is_empty() { ".".to_owned() } else { r });
    }
    if let Some(h) = base_dir(home)
        && let Some(r) = under(h)
    {
        return Some(if r.is_empty() {
            "~".to_owned()
        } else {
            format!("~/{r}")
        });
    }
    None
}

/// One argument with its absolute path folded: the whole argument, or the
/// value after the first `=` of a `--flag=`/`KEY=` argument.
fn fold_arg(arg: &str, cwd: Option<&str>, home: Option<&str>) -> Option<String> {
    if let Some(f) = fold_path(arg, cwd, home) {
        return Some(f);
    }
    let (k, v) = arg.split_once('=')?;
    let f = fold_path(v, cwd, home)?;
    Some(format!("{k}={f}"))
}

fn is_sensitive_param(raw_name: &str) -> bool {
    let name = percent_decode_lossy(raw_name);
    SENSITIVE_PARAMS
        .iter()
        .any(|p| p.eq_ignore_ascii_case(&name))
}

fn percent_decode_lossy(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}
