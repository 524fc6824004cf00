//! Credential redaction for recorded HTTP headers, URLs, message bodies and
//! the server's argv (on by default), and folding of the recording machine's
//! paths out of the transcript header. Pure functions: the working directory
//! and `$HOME` are passed in as values, never read here.
//!
//! * **Headers** — deny by default: a header whose name is credential-like
//!   ([`is_credential_name`]: a name part matches one of [`CREDENTIAL_WORDS`],
//!   the one word list for headers, URL parameters and argv; `Authorization`,
//!   `Cookie`, `Mcp-Auth`, `X-Upstream-Token`, `X-Api-Key`, `X-Sig`, …) has
//!   its value replaced by [`REDACTED`]; for the `Authorization`-like headers
//!   of [`SCHEME_HEADERS`] a registered scheme ([`AUTH_SCHEMES`]) is kept
//!   (`Bearer [redacted]`, RFC 9110 §11.6.2, §11.7.2). URLs inside kept
//!   values (`Referer`, `Location`) are redacted as URLs. `--redact-header
//!   NAME` adds a name, `--keep-header NAME` exempts one ([`RedactRules`]).
//! * **Session ids** — `Mcp-Session-Id` (MCP 2025-11-25 › Transports ›
//!   Session Management) contains "session" and is a bearer credential for the
//!   session, so its value is not kept; it is replaced by a pseudonym that is
//!   stable within one transcript (`[redacted:1]` for the first session seen,
//!   `[redacted:2]` for the next, …), so a reader still sees which exchanges
//!   shared a session and when a new one began. Nothing reads the recorded
//!   value back: `serve --listen` mints its own session ids and only looks at
//!   whether the header is present. [`PSEUDONYM_HEADERS`] lists such names.
//! * **URLs** — URL userinfo (RFC 3986 §3.2.1) and the values of query,
//!   fragment and path (`;jsessionid=`) parameters with credential-like names
//!   are replaced by [`REDACTED`] ([`Redactor::url`]).
//! * **Bodies** — `--redact-json POINTER` (RFC 6901): the value at the
//!   pointer, in each message (each member of a batch), is replaced by a
//!   pseudonym `[redacted:N]`; only a message where a pointer matched is
//!   re-serialized ([`Redactor::json_body`]), and its record says so; a body
//!   that does not parse as JSON while pointers are set is withheld, not
//!   stored verbatim ([`Redactor::body`], [`BodyRedaction::NotJson`]).
//! * **argv** — [`Redactor::argv`]: values after credential-like flags
//!   (`--token X`, `--api-key=X`, `-p X`, `-pX`), `KEY=value` with a
//!   credential-like `KEY`, `Name: value` header arguments, URLs, JSON
//!   object values under credential-like keys — also inside `--flag=…`
//!   values and `sh -c` scripts — are redacted; absolute
//!   paths under the working directory become relative, others under `$HOME`
//!   start with `~` (path folding happens even with `--no-redact`).
//!
//! * **Free text** — [`Redactor::text`] for `stderr` and `noise` lines and
//!   HTTP details: every value redacted anywhere in the transcript
//!   ([`Redactor::known_secrets`]), credential patterns (`token=…`,
//!   `"password": "…"`, `Bearer …`, connection strings, URLs) and the
//!   machine's directories ([`MachineDirs`]: `~`, `.`, `$TMPDIR`).
//! * **Messages** — [`Redactor::message_json`]: `--redact-json` pointers,
//!   credential-named tool arguments (`/params/arguments/password`) and
//!   known secrets, in stdio and HTTP messages; values at pointers become
//!   per-transcript pseudonyms `[redacted:N]`, which replay matches to any
//!   value.
//!
//! The recorder's `--no-redact` switch sets [`Redactor::enabled`] to `false`:
//! nothing but paths is changed then. [`Redactor::summary`] gives the
//! transcript header's [`Redaction`] record (names, pointers and argv
//! positions, never values).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcptape_wire::protocol::escape_token;
use serde_json::Value;

use crate::model::Redaction;

/// The marker that replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// The one list of credential words: a header name, a URL query, fragment
/// or path parameter name (RFC 3986 §3.3, §3.4, §3.5; after
/// percent-decoding), a flag, a `KEY=value` / `KEY: value` name in argv and
/// a JSON object key in an argv value is credential-like when one of its
/// **name parts** matches one of these words.
///
/// Name parts: the name split at every character that is not an ASCII
/// letter or digit (`-`, `_`, `.`, …) and at camelCase boundaries
/// (`apiKey` → `api` `key`, `HAuthorization` → `h` `authorization`,
/// `oauth2Token` → `oauth2` `token`), compared ASCII case-insensitively.
/// A word of at most [`SHORT_WORD_MAX_BYTES`] bytes (`key`, `sig`, `pat`, …)
/// matches only a whole part (`X-Sig`, `GH_PAT`, `api_key`; not `monkey`,
/// `keyboard`, `keys`, `signal`, `path`); a
/// longer word matches anywhere inside a part (`jsessionid`,
/// `accesstoken`, `x-apikey`, `Proxy-Authorization`).
///
/// `code` is listed for the OAuth authorization code (RFC 6749 §4.1.2,
/// `?code=…`, exchangeable for a token): it also blanks `--exit-code N` and
/// `X-Error-Code` values, accepted as the price of deny-by-default. Not
/// listed: `id`, `user`, `state`.
pub const CREDENTIAL_WORDS: &[&str] = &[
    "auth",
    "authorization",
    "authenticate",
    "authentication",
    "oauth",
    "token",
    "key",
    "apikey",
    "accesskey",
    "privatekey",
    "secret",
    "cookie",
    "session",
    "password",
    "passwd",
    "passphrase",
    "pass",
    "pwd",
    "credential",
    "signature",
    "sig",
    "jwt",
    "bearer",
    "pat",
    "code",
    "passcode",
    "pin",
    "otp",
    "tok",
    "license",
    "cert",
    "pw",
    "sid",
];

/// Known webhook URL shapes whose path is the credential (anyone holding the
/// URL can post): `(host, path prefix)`. A URL whose host is `host` or a
/// subdomain of it and whose path starts with the prefix has the rest of
/// its path replaced by [`REDACTED`] ([`Redactor::url`]):
/// `https://hooks.slack.com/services/[redacted]`.
pub const WEBHOOK_URLS: &[(&str, &str)] = &[
    ("hooks.slack.com", "/services/"),
    ("hooks.slack.com", "/workflows/"),
    ("hooks.slack.com", "/triggers/"),
    ("discord.com", "/api/webhooks/"),
    ("discordapp.com", "/api/webhooks/"),
    ("webhook.office.com", "/webhookb2/"),
    ("outlook.office.com", "/webhook/"),
    ("hooks.zapier.com", "/hooks/catch/"),
    ("api.telegram.org", "/bot"),
    ("events.pagerduty.com", "/integration/"),
    ("maker.ifttt.com", "/trigger/"),
];

/// Shortest value, in bytes, that [`Redactor::text`] and
/// [`Redactor::message_json`] look for elsewhere in the transcript once it
/// was redacted somewhere ([`Redactor::known_secrets`]): shorter values
/// (`true`, a 4-digit PIN) would blank common words and numbers; they are
/// still redacted where a rule finds them (`pin=1234`, `--pin 1234`).
pub const MIN_ECHO_SECRET_BYTES: usize = 6;

/// Shortest `name=value` pair value, in bytes, taken out of a redacted value holding pairs
/// (a `Cookie` header, `--cookie 'a=S; b=T'`, a `MY_COOKIE` variable) to look for elsewhere
/// on its own ([`pair_value_is_credential_like`]). A pair's value is often a preference, a
/// method or a date (`theme=dark`, `m=tools/call`, `v=2025-06-18`): hunted through every
/// message it would blank protocol words, so only values shaped like credentials are.
pub const MIN_ECHO_PAIR_VALUE_BYTES: usize = 8;

/// Whether `v`, the value of one `name=value` pair of a redacted value, is looked for
/// elsewhere on its own: at least [`MIN_ECHO_PAIR_VALUE_BYTES`] bytes, no white space, and
/// shaped like a credential — an ASCII letter and an ASCII digit both (session ids, UUIDs,
/// JWTs, API keys), or at least 16 bytes with both letter cases (random base64 without a
/// digit). `dark`, `english`, `tools/call`, `2025-06-18`, `everything` are not.
pub fn pair_value_is_credential_like(v: &str) -> bool {
    let b = v.as_bytes();
    let has = |f: fn(&u8) -> bool| b.iter().any(f);
    b.len() >= MIN_ECHO_PAIR_VALUE_BYTES
        && !has(u8::is_ascii_whitespace)
        && ((has(u8::is_ascii_alphabetic) && has(u8::is_ascii_digit))
            || (b.len() >= 16 && has(u8::is_ascii_lowercase) && has(u8::is_ascii_uppercase)))
}

/// Most distinct redacted values one transcript's redactor remembers to
/// look for elsewhere ([`Redactor::known_secrets`]); a value past it is
/// still redacted where a rule finds it, but no longer searched for in
/// other records ([`Redactor::secrets_dropped`] counts them).
pub const MAX_ECHO_SECRETS: usize = 4096;

/// What a folded machine directory becomes in the transcript: the working
/// directory `.`, a temporary directory [`TMPDIR_MARK`], the home directory `~`.
pub const TMPDIR_MARK: &str = "$TMPDIR";

/// Longest [`CREDENTIAL_WORDS`] word, in bytes, that matches only a whole
/// name part rather than anywhere inside one.
pub const SHORT_WORD_MAX_BYTES: usize = 4;

/// Short flags (after one `-`) whose value is a password: `mysql -p X`,
/// and attached `-pX` unless `X` is a lowercase word (`-path`, `-port`:
/// a single-dash long flag).
pub const ARGV_PASSWORD_SHORT_FLAGS: &[&str] = &["p"];

/// Shells whose `-c SCRIPT` argument is split into words and redacted with
/// the argv rules ([`Redactor::argv`]), matched on the program's file name.
pub const ARGV_SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ash", "ksh"];

/// Deepest nesting [`Redactor::argv`] looks into (a `sh -c` script in a
/// `sh -c` script, a `KEY=value` holding a URL, JSON objects in a JSON
/// argument): a value still nested past it is replaced whole by [`REDACTED`].
pub const MAX_ARGV_NESTING: usize = 16;

/// Header names whose values are replaced by a per-transcript pseudonym
/// (`[redacted:N]`) instead of [`REDACTED`]: `Mcp-Session-Id`.
pub const PSEUDONYM_HEADERS: &[&str] = &["mcp-session-id"];

/// Headers whose value starts with an auth scheme that is kept
/// (`Bearer [redacted]`) when the scheme is one of [`AUTH_SCHEMES`]:
/// RFC 9110 §11.6.1, §11.6.2, §11.7.1, §11.7.2.
pub const SCHEME_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "www-authenticate",
    "proxy-authenticate",
];

/// Auth schemes (compared ASCII case-insensitively, RFC 9110 §11.1) kept in
/// front of a redacted [`SCHEME_HEADERS`] value: the IANA "HTTP
/// Authentication Schemes" registry (RFC 9110 §16.4.1: Basic RFC 7617,
/// Bearer RFC 6750, Digest RFC 7616, HOBA RFC 7486, Mutual RFC 8120,
/// Negotiate RFC 4559, OAuth RFC 5849, SCRAM-SHA-1 / SCRAM-SHA-256 RFC 7804,
/// vapid RFC 8292) plus AWS4-HMAC-SHA256 (AWS Signature Version 4) and DPoP
/// (RFC 9449). Any other first word is part of the credential: the whole
/// value becomes [`REDACTED`].
pub const AUTH_SCHEMES: &[&str] = &[
    "basic",
    "bearer",
    "digest",
    "hoba",
    "mutual",
    "negotiate",
    "oauth",
    "scram-sha-1",
    "scram-sha-256",
    "vapid",
    "aws4-hmac-sha256",
    "dpop",
];

/// Header names (compared ASCII case-insensitively) that were redacted by
/// the fixed list before deny-by-default; every one matches
/// [`CREDENTIAL_WORDS`], so they are redacted unless kept.
pub const SENSITIVE_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
    "x-auth-token",
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

/// Per-transcript pseudonyms: lowercased header name (or [`JSON_PSEUDONYMS`]
/// for message values) → value → number (from 1).
type Pseudonyms = HashMap<String, HashMap<String, usize>>;

/// The pseudonym namespace of values redacted in message bodies (not a
/// header name: `/` is not an RFC 9110 `tchar`).
const JSON_PSEUDONYMS: &str = "/json";

/// The machine's directories folded out of what the recorder writes
/// ([`Redactor::with_dirs`]): absolute paths, without trailing `/`; `None`,
/// empty or `/` fold nothing. Passed in, never read here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineDirs {
    /// The working directory (and its other spellings, e.g. canonical):
    /// folds to `.`.
    pub cwd: Vec<String>,
    /// Temporary directories (`$TMPDIR`, `/tmp`, …): fold to [`TMPDIR_MARK`].
    pub tmp: Vec<String>,
    /// The home directory (and its other spellings): folds to `~`.
    pub home: Vec<String>,
}

/// Values redacted so far in one transcript, to look for elsewhere.
#[derive(Debug, Default)]
struct Secrets {
    values: Vec<String>,
    dropped: usize,
}

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
    secrets: Arc<Mutex<Secrets>>,
    dirs: Arc<MachineDirs>,
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
            secrets: Arc::default(),
            dirs: Arc::default(),
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

/// How [`Redactor::body`] says to record a message body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyRedaction {
    /// Record the bytes as they are.
    Verbatim,
    /// Record `text` (compact JSON, no line break) instead; `pointers` are
    /// the `--redact-json` pointers that matched.
    Redacted {
        /// The re-serialized message.
        text: String,
        /// Pointers that matched, for `http.redactedPointers`.
        pointers: Vec<String>,
    },
    /// `--redact-json` pointers are set but the body is not JSON: record
    /// [`withheld_body_line`] in its place, never the bytes.
    NotJson {
        /// serde_json's reason (with its line and column).
        reason: String,
    },
}

/// The text recorded (as a `noise` line) in place of a body
/// [`BodyRedaction::NotJson`] withheld: starts with [`REDACTED`], then says
/// which exchange, how many bytes and why, never a byte of the body.
pub fn withheld_body_line(exchange: u64, len: usize, reason: &str) -> String {
    format!(
        "{REDACTED} <mcptape: exchange {exchange}: {len}-byte body is not JSON ({reason}); \
         withheld because --redact-json pointers cannot apply to it>"
    )
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

/// Whether `name` is credential-like: one of its name parts matches one of
/// [`CREDENTIAL_WORDS`] (see there for the parts and the matching rule).
pub fn is_credential_name(name: &str) -> bool {
    name_parts(name).iter().any(|part| {
        CREDENTIAL_WORDS.iter().any(|w| {
            if w.len() <= SHORT_WORD_MAX_BYTES {
                part == w
            } else {
                part.contains(w)
            }
        })
    })
}

/// `name` split at non-alphanumeric ASCII characters and camelCase
/// boundaries (`aB` → `a` `B`; `ABc` → `A` `Bc`; `2T` → `2` `T`), lowercased.
fn name_parts(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut parts = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                parts.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
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

/// The value at `tokens`, if there is one.
fn value_at<'v>(v: &'v mut Value, tokens: &[String]) -> Option<&'v mut Value> {
    let mut cur = v;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m.get_mut(t.as_str())?,
            Value::Array(a) => array_index(t).and_then(|i| a.get_mut(i))?,
            _ => return None,
        };
    }
    Some(cur)
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
            ..Self::default()
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
    /// For [`SCHEME_HEADERS`] a registered auth scheme ([`AUTH_SCHEMES`]) is
    /// kept (`Bearer [redacted]`) so transcripts still show which scheme was
    /// used; any other value becomes [`REDACTED`] whole. A pseudonym is
    /// `[redacted:N]`, N counting the distinct values of that header from 1.
    /// A kept value holding URLs (`Referer`, `Location`, `Link`) has their
    /// credentials redacted ([`Redactor::url`]).
    ///
    /// Any other header whose value starts with a registered scheme and a
    /// credential (`X-Custom: Bearer S`) is redacted the same way
    /// (`Bearer [redacted]`); in a kept value, credential pairs
    /// (`X-Debug-Info: token=S`) and values redacted elsewhere are redacted
    /// as in [`Redactor::text`]. Every value redacted is remembered and
    /// looked for elsewhere ([`Redactor::known_secrets`]); of a redacted
    /// `Cookie` header each cookie's value is remembered on its own too, of
    /// a `Set-Cookie` header its cookie's value (not its attributes).
    pub fn header_value<'a>(&self, name: &str, value: &'a str) -> Cow<'a, str> {
        match self.header_treatment(name) {
            HeaderTreatment::Keep => {
                if !self.enabled {
                    return Cow::Borrowed(value);
                }
                if let Some((scheme, cred)) = scheme_and_credential(value) {
                    self.note(cred);
                    return Cow::Owned(format!("{scheme} {REDACTED}"));
                }
                // `X-Debug-Info: token=S`, a secret seen elsewhere, URLs.
                let v = chain(self.known_in_text(value), |t| self.pairs_in_text(t));
                chain(v, |t| self.urls_in_value(t))
            }
            HeaderTreatment::Pseudonym => {
                self.note(value.trim());
                Cow::Owned(self.pseudonym(name, value))
            }
            HeaderTreatment::Redact => {
                let lname = name.trim().to_ascii_lowercase();
                if value.trim() != REDACTED {
                    if lname == "set-cookie" {
                        // `sid=S; Path=/; Expires=…`: the cookie's value, not its attributes.
                        self.note_one(value.trim());
                        if let Some(v) = pair_values(value).next()
                            && pair_value_is_credential_like(v)
                        {
                            self.note_one(v);
                        }
                    } else {
                        // `Cookie: session=S; theme=dark`: S alone too (`note`).
                        self.note(value.trim());
                    }
                }
                if SCHEME_HEADERS.contains(&lname.as_str())
                    && let Some((scheme, cred)) = scheme_and_credential(value)
                {
                    self.note(cred);
                    return Cow::Owned(format!("{scheme} {REDACTED}"));
                }
                Cow::Borrowed(REDACTED)
            }
        }
    }

    /// Remembers `v`, a value just redacted, to look for elsewhere in the
    /// transcript ([`Redactor::known_secrets`]); values shorter than
    /// [`MIN_ECHO_SECRET_BYTES`] or already markers are not remembered. A value
    /// holding `name=value` pairs separated by `;` (a cookie string in a header,
    /// a flag or a variable: `a=S; b=T`, RFC 6265 §4.2.1) has each pair's value
    /// remembered on its own too when it is shaped like a credential
    /// ([`pair_value_is_credential_like`]).
    pub fn note(&self, v: &str) {
        self.note_one(v);
        if v.contains('=') {
            for p in pair_values(v).filter(|p| pair_value_is_credential_like(p)) {
                self.note_one(p);
            }
        }
    }

    /// [`Redactor::note`] of `v` alone (its pairs not split).
    fn note_one(&self, v: &str) {
        let v = v.trim();
        if !self.enabled || v.len() < MIN_ECHO_SECRET_BYTES || v.starts_with("[redacted") {
            return;
        }
        let mut g = self.secrets.lock().unwrap_or_else(|p| p.into_inner());
        if g.values.iter().any(|x| x == v) {
            return;
        }
        if g.values.len() >= MAX_ECHO_SECRETS {
            g.dropped += 1;
            return;
        }
        g.values.push(v.to_owned());
        // Longest first: a secret containing another is replaced whole.
        g.values.sort_by_key(|x| std::cmp::Reverse(x.len()));
    }

    /// The values redacted so far in this transcript (by any clone of this
    /// redactor) that [`Redactor::text`] and [`Redactor::message_json`]
    /// replace wherever else they appear: argv values, header values,
    /// `KEY=value` values, URL credentials, message values, and the values
    /// of credential-named environment variables the recorder was given
    /// ([`Redactor::note`]). Longest first; at most [`MAX_ECHO_SECRETS`].
    pub fn known_secrets(&self) -> Vec<String> {
        self.secrets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values
            .clone()
    }

    /// How many values were not remembered because [`MAX_ECHO_SECRETS`]
    /// were already.
    pub fn secrets_dropped(&self) -> usize {
        self.secrets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .dropped
    }

    /// This redactor folding the machine directories `dirs` out of argv,
    /// stderr and URLs ([`Redactor::argv`], [`Redactor::text`]).
    pub fn with_dirs(mut self, dirs: MachineDirs) -> Self {
        let clean = |v: Vec<String>| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for d in v {
                if let Some(b) = base_dir(Some(&d))
                    && !out.iter().any(|o| o == b)
                {
                    out.push(b.to_owned());
                }
            }
            out
        };
        self.dirs = Arc::new(MachineDirs {
            cwd: clean(dirs.cwd),
            tmp: clean(dirs.tmp),
            home: clean(dirs.home),
        });
        self
    }

    /// `value` with every URL-shaped word in it (one containing `://`, or
    /// starting with `/` — a path with a query) passed through
    /// [`Redactor::url`]; words end at white space, `<`, `>`, `"`, `'` and `,`.
    fn urls_in_value<'a>(&self, value: &'a str) -> Cow<'a, str> {
        // Only a query, fragment, path parameter or userinfo can change.
        if !self.enabled
            || !value.contains('/')
            || !(value.contains(['?', '#', ';', '@']) || value.contains("://"))
        {
            return Cow::Borrowed(value);
        }
        let delim = |c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | ',');
        map_words(value, delim, |word, out| {
            if word.contains("://") || word.starts_with('/') {
                let u = self.url(word);
                out.push_str(&u);
                matches!(u, Cow::Owned(_))
            } else {
                out.push_str(word);
                false
            }
        })
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

    /// Whether `--redact-json` pointers are set (and the redactor is
    /// enabled): a body that is not JSON is then withheld ([`Redactor::body`]).
    pub fn redacts_json(&self) -> bool {
        self.enabled && !self.rules.pointers.is_empty()
    }

    /// [`Redactor::message_json`] (the name it had when only pointers applied).
    pub fn json_body(&self, body: &[u8]) -> Option<(String, Vec<String>)> {
        self.message_json(body)
    }

    /// A message (a stdio line or an HTTP body) with its secrets redacted,
    /// in each message (each member of a batch):
    ///
    /// * the value at each `--redact-json` pointer (RFC 6901);
    /// * the default rule: each member of `params.arguments` (a `tools/call`,
    ///   a `prompts/get`) whose name is credential-like ([`is_credential_name`]:
    ///   `/params/arguments/password`, `/params/arguments/apiKey`);
    /// * every string holding a value redacted elsewhere in the transcript
    ///   ([`Redactor::known_secrets`]), the value replaced inside it by
    ///   [`REDACTED`].
    ///
    /// A value at a pointer becomes a pseudonym `[redacted:N]`, N counting
    /// the distinct values (by their JSON text) redacted in the transcript's
    /// messages from 1 (two different secrets stay apart; replay matches a
    /// pseudonym to any value, `mcptape_replay::tape`). `None` when nothing
    /// changed (or the body is not JSON, or the redactor is disabled): the
    /// message is then recorded byte-exact. `Some((compact JSON text,
    /// pointers that matched))` otherwise; the text has no line break. A
    /// message is parsed only when a rule can apply (pointers set, the text
    /// `"arguments"` or a `\u` escape in it, or a known secret in it).
    pub fn message_json(&self, body: &[u8]) -> Option<(String, Vec<String>)> {
        self.message_json_from(true, body)
    }

    /// [`Redactor::message_json`] of a message sent by the client
    /// (`from_client`) or by the server: a server message is not searched
    /// for the credential-argument rule's `"arguments"` (nor parsed for a
    /// `\u` escape), so a large server reply is parsed only when a pointer
    /// is set or a known secret is in it.
    pub fn message_json_from(
        &self,
        from_client: bool,
        body: &[u8],
    ) -> Option<(String, Vec<String>)> {
        use memchr::memmem;
        if !self.enabled {
            return None;
        }
        let echo = {
            let g = self.secrets.lock().unwrap_or_else(|p| p.into_inner());
            g.values
                .iter()
                .any(|v| memmem::find(body, v.as_bytes()).is_some())
        };
        let args = from_client
            && (memmem::find(body, b"\"arguments\"").is_some()
                || memmem::find(body, b"\\u").is_some());
        if !echo && !args && self.rules.pointers.is_empty() {
            return None;
        }
        let mut v: Value = serde_json::from_slice(body).ok()?;
        let mut matched: Vec<String> = Vec::new();
        let mut push = |p: String| {
            if !matched.contains(&p) {
                matched.push(p);
            }
        };
        let apply = |m: &mut Value, push: &mut dyn FnMut(String)| {
            for (p, tokens) in &self.rules.pointers {
                if let Some(x) = value_at(m, tokens)
                    && self.pseudonymize(x)
                {
                    push(p.clone());
                }
            }
            if let Some(Value::Object(a)) = m.get_mut("params").and_then(|p| p.get_mut("arguments"))
            {
                for (k, x) in a.iter_mut() {
                    if is_credential_name(k) && self.pseudonymize(x) {
                        push(format!("/params/arguments/{}", escape_token(k)));
                    }
                }
            }
        };
        match &mut v {
            Value::Array(items) => items.iter_mut().for_each(|m| apply(m, &mut push)),
            other => apply(other, &mut push),
        }
        // A secret just redacted at a pointer may be elsewhere in the message too.
        if echo || !matched.is_empty() {
            let mut echo_in = |m: &mut Value| {
                let mut path = String::new();
                let mut found = Vec::new();
                self.echo_in_value(m, &mut path, &mut |p| found.push(p));
                for p in found {
                    if !matched.contains(&p) {
                        matched.push(p);
                    }
                }
            };
            match &mut v {
                Value::Array(items) => items.iter_mut().for_each(&mut echo_in),
                other => echo_in(other),
            }
        }
        if matched.is_empty() {
            return None;
        }
        let text = serde_json::to_string(&v).ok()?;
        Some((text, matched))
    }

    /// Replaces `x` by its pseudonym (`[redacted:N]`); `false` when it is
    /// a redaction marker already.
    fn pseudonymize(&self, x: &mut Value) -> bool {
        if x.as_str().is_some_and(is_redaction_marker) {
            return false;
        }
        if let Value::String(s) = x {
            self.note(s);
        }
        *x = Value::String(self.pseudonym(JSON_PSEUDONYMS, &x.to_string()));
        true
    }

    /// Replaces known secrets inside the strings of `v` (at pointer `path`),
    /// calling `push` with the pointer of each string changed.
    fn echo_in_value(&self, v: &mut Value, path: &mut String, push: &mut impl FnMut(String)) {
        match v {
            Value::String(s) => {
                if let Cow::Owned(r) = self.known_in_text(s) {
                    *s = r;
                    push(path.clone());
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter_mut().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    self.echo_in_value(x, path, push);
                    path.truncate(len);
                }
            }
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&escape_token(k));
                    self.echo_in_value(x, path, push);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// How to record an HTTP message body under this redactor:
    /// [`BodyRedaction::Verbatim`] when nothing applies (or the redactor is
    /// disabled), [`BodyRedaction::Redacted`] as [`Redactor::message_json`],
    /// and [`BodyRedaction::NotJson`] when `--redact-json` pointers are set
    /// but the body does not parse as JSON (a UTF-8 BOM, UTF-16, a truncated
    /// body): the pointers cannot be applied, so the body must not be stored.
    pub fn body(&self, body: &[u8]) -> BodyRedaction {
        self.body_from(true, body)
    }

    /// [`Redactor::body`] of a message sent by the client (`from_client`)
    /// or by the server ([`Redactor::message_json_from`]).
    pub fn body_from(&self, from_client: bool, body: &[u8]) -> BodyRedaction {
        if self.redacts_json()
            && let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(body)
        {
            return BodyRedaction::NotJson {
                reason: e.to_string(),
            };
        }
        match self.message_json_from(from_client, body) {
            Some((text, pointers)) => BodyRedaction::Redacted { text, pointers },
            None => BodyRedaction::Verbatim,
        }
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
    /// Credentials (only when [`Redactor::enabled`]), each becoming
    /// [`REDACTED`]; a name is credential-like by [`is_credential_name`]:
    /// * the argument after a credential-like flag (`--token X`, `--pass X`,
    ///   `-p X`; not when it starts with `-`, nor after a `--no-…` flag), the
    ///   value of `--flag=X`, and the attached value of a password short flag
    ///   ([`ARGV_PASSWORD_SHORT_FLAGS`]: `-pX`, unless `X` is a lowercase
    ///   word, as in the single-dash long flag `-path`);
    /// * in any argument, in the value of any `--flag=…` and in the attached
    ///   value of a one-letter flag (`-HName:v`, `-Dkey=v`): the value of
    ///   `KEY=value` with a credential-like `KEY` (`GH_PAT=…`), of a
    ///   `Name: value` header with a credential-like name (a registered scheme
    ///   kept, [`Redactor::header_value`]), the secrets of a URL
    ///   ([`Redactor::url`]), the values under credential-like keys of a JSON
    ///   object or array argument (`{"apiKey":"…"}`, its strings and string
    ///   arrays redacted by these same rules);
    /// * the words of the script after `-c` (or `-ec`, `-lc`, …) of a shell
    ///   ([`ARGV_SHELLS`]), split as the shell would (quotes, backslashes,
    ///   `;` `&` `|` `(` `)` `<` `>`), by these same rules; the script is
    ///   stored with the redacted words replaced (quoted when they hold
    ///   white space).
    ///
    /// Nesting (a URL in a `KEY=value`, a script in a script) is followed up
    /// to [`MAX_ARGV_NESTING`] levels; a value nested deeper is redacted whole.
    ///
    /// Paths (always): an argument that is, or a `--flag=`/`KEY=` value that
    /// is, an absolute path under `cwd` becomes relative to it (`.` for `cwd`
    /// itself); one under a temporary directory of [`Redactor::with_dirs`]
    /// becomes `$TMPDIR/…`; one under `home` becomes `~/…` (the most
    /// specific directory wins). Directories inside any other argument (a
    /// `sh -c` script, `--path=a:/home/u/b`) are folded as in
    /// [`Redactor::text`] (`./…` for the working directory). `cwd`/`home`
    /// of `None`, empty or `/` fold nothing; the directories given to
    /// [`Redactor::with_dirs`] fold too.
    pub fn argv(&self, argv: &[String], cwd: Option<&str>, home: Option<&str>) -> ArgvRedaction {
        let (words, redacted) = if self.enabled {
            self.argv_words(argv, 0)
        } else {
            (argv.to_vec(), Vec::new())
        };
        let bases = self.bases(cwd, home);
        let mut out = ArgvRedaction {
            argv: Vec::with_capacity(argv.len()),
            redacted,
            ..ArgvRedaction::default()
        };
        for (i, arg) in words.into_iter().enumerate() {
            let folded = if out.redacted.contains(&i) {
                match bases.fold_text(&arg) {
                    Cow::Owned(f) => Some(f),
                    Cow::Borrowed(_) => None,
                }
            } else {
                bases.fold_arg(&arg)
            };
            match folded {
                Some(f) => {
                    out.argv.push(f);
                    out.paths.push(i);
                }
                None => out.argv.push(arg),
            }
        }
        out
    }

    /// The directories to fold: `cwd` and `home` if given, and those of
    /// [`Redactor::with_dirs`].
    fn bases(&self, cwd: Option<&str>, home: Option<&str>) -> Bases {
        let d = &self.dirs;
        let chain = |one: Option<&str>, more: &[String]| -> Vec<String> {
            one.into_iter()
                .map(str::to_owned)
                .chain(more.iter().cloned())
                .collect()
        };
        Bases::new(chain(cwd, &d.cwd), d.tmp.clone(), chain(home, &d.home))
    }

    /// A free-text line the recorder writes (a `stderr` record, a `noise`
    /// line, an HTTP `detail`), redacted:
    ///
    /// * every value redacted so far anywhere in the transcript
    ///   ([`Redactor::known_secrets`]: argv, headers, `KEY=value`, URLs,
    ///   message values, credential-named environment variables) is
    ///   replaced by [`REDACTED`] wherever it appears;
    /// * credential patterns: `NAME=VALUE`, `NAME: VALUE`, `"NAME": "VALUE"`
    ///   and `--NAME VALUE` with a credential-like `NAME`
    ///   ([`is_credential_name`]; the value ends at white space, `;`, `&`,
    ///   `,` or a bracket, or is quoted), so connection strings
    ///   (`Server=x;Password=S;User=a`) lose their password; a registered
    ///   scheme and its credential (`Bearer S`, [`AUTH_SCHEMES`]; for the
    ///   schemes that are English words, `basic`, `digest`, `mutual` and
    ///   `negotiate`, only when the next word has a digit, `+`, `/` or `=`);
    ///   and URLs ([`Redactor::url`]: userinfo, credential parameters,
    ///   webhooks);
    /// * the machine's directories ([`Redactor::with_dirs`]) are folded
    ///   (`~/…`, `./…`, `$TMPDIR/…`), also when the redactor is disabled.
    ///
    /// Values found by the patterns are remembered too.
    pub fn text<'a>(&self, line: &'a str) -> Cow<'a, str> {
        let mut cur: Cow<'a, str> = Cow::Borrowed(line);
        if self.enabled {
            cur = chain(cur, |t| self.known_in_text(t));
            cur = chain(cur, |t| self.urls_in_text(t));
            cur = chain(cur, |t| self.pairs_in_text(t));
            cur = chain(cur, |t| self.words_in_text(t));
        }
        let bases = self.bases(None, None);
        chain(cur, |t| bases.fold_text(t))
    }

    /// `text` with every known secret replaced by [`REDACTED`].
    fn known_in_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let secrets = self.secrets.lock().unwrap_or_else(|p| p.into_inner());
        let mut cur = Cow::Borrowed(text);
        for v in &secrets.values {
            if cur.contains(v.as_str()) {
                cur = Cow::Owned(cur.replace(v.as_str(), REDACTED));
            }
        }
        cur
    }

    /// `text` with every URL-shaped word (holding `://`) through [`Redactor::url`].
    fn urls_in_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !text.contains("://") {
            return Cow::Borrowed(text);
        }
        let delim = |c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`');
        map_words(text, delim, |word, out| match word.find("://") {
            Some(i) => {
                // The scheme starts after any punctuation before it (`(http://…`).
                let s = word[..i]
                    .char_indices()
                    .rev()
                    .find(|&(_, c)| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
                    .map_or(0, |(j, c)| j + c.len_utf8());
                out.push_str(&word[..s]);
                let u = self.url(&word[s..]);
                out.push_str(&u);
                matches!(u, Cow::Owned(_))
            }
            None => {
                out.push_str(word);
                false
            }
        })
    }

    /// `text` with the values of `NAME=VALUE`, `NAME: VALUE` and
    /// `"NAME": "VALUE"` pairs with a credential-like `NAME` redacted.
    fn pairs_in_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let b = text.as_bytes();
        let name_char = |c: u8| c.is_ascii_alphanumeric() || b"_.-".contains(&c);
        let stop = |c: u8| c.is_ascii_whitespace() || b";&,)]}\"'<>".contains(&c);
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while let Some(k) = memchr::memchr2(b'=', b':', &b[i..]) {
            let p = i + k;
            i = p + 1;
            // The name: before the separator, maybe in quotes.
            let mut end = p;
            let quoted = end > 0 && matches!(b[end - 1], b'"' | b'\'');
            if quoted {
                end -= 1;
            }
            let mut start = end;
            while start > 0 && name_char(b[start - 1]) {
                start -= 1;
            }
            if start == end || (quoted && (start == 0 || b[start - 1] != b[end])) {
                continue;
            }
            let name = &text[start..end];
            if !is_credential_name(name) || text[p + 1..].starts_with("//") {
                continue;
            }
            // The value: after blanks, quoted or up to a stop character.
            let mut v = p + 1;
            while v < b.len() && (b[v] == b' ' || b[v] == b'\t') {
                v += 1;
            }
            if v < b.len() && b[v] == b'=' {
                continue; // `==`
            }
            let (vs, ve) = if v < b.len() && matches!(b[v], b'"' | b'\'') {
                let q = b[v];
                match memchr::memchr(q, &b[v + 1..]) {
                    Some(e) => (v + 1, v + 1 + e),
                    None => (v + 1, b.len()),
                }
            } else {
                // A marker left by an earlier rule inside the value (`PASSWORD=[redacted]`)
                // is passed whole: its `]` would stop the value and be left behind.
                let mut e = v;
                while e < b.len() && !stop(b[e]) {
                    e += if b[e..].starts_with(REDACTED.as_bytes()) {
                        REDACTED.len()
                    } else {
                        1
                    };
                }
                (v, e)
            };
            let value = &text[vs..ve];
            if value.is_empty() || text[vs..].starts_with("[redacted") {
                continue;
            }
            // `Authorization: Bearer S`: the scheme is kept, its credential redacted.
            if AUTH_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(value)) {
                continue; // the scheme rule of `words_in_text` takes the next word
            }
            self.note(value);
            spans.push((vs, ve));
            i = ve.max(i);
        }
        replace_spans(text, &spans)
    }

    /// `text` with the word after a registered scheme (`Bearer S`) and after
    /// a credential-like flag (`--token S`) redacted.
    fn words_in_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        const WORDY: &[&str] = &["basic", "digest", "mutual", "negotiate"];
        let mut spans = Vec::new();
        // (start, end) of each white-space separated word.
        let mut list: Vec<(usize, usize)> = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices() {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    list.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            list.push((s, text.len()));
        }
        for w in list.windows(2) {
            let (a, b) = (&text[w[0].0..w[0].1], &text[w[1].0..w[1].1]);
            let next = b.trim_end_matches([',', ';', ')', '"', '\'']);
            if next.is_empty() || next.starts_with("[redacted") {
                continue;
            }
            let word = a.trim_start_matches(['"', '\'', '(']).trim_end_matches(':');
            let scheme = AUTH_SCHEMES.iter().find(|s| s.eq_ignore_ascii_case(word));
            let hit = match scheme {
                Some(s) if WORDY.contains(s) => next
                    .bytes()
                    .any(|c| c.is_ascii_digit() || b"+/=".contains(&c)),
                Some(_) => true,
                None => {
                    let flag = word.strip_prefix("--").filter(|f| !f.contains('='));
                    flag.is_some_and(|f| {
                        !f.to_ascii_lowercase().starts_with("no-")
                            && is_credential_name(f)
                            && !next.starts_with('-')
                    })
                }
            };
            if hit {
                self.note(next);
                spans.push((w[1].0, w[1].0 + next.len()));
            }
        }
        replace_spans(text, &spans)
    }

    /// The credential rules of [`Redactor::argv`] on `argv`, at nesting
    /// `depth`: (the words, 0-based positions that changed).
    fn argv_words(&self, argv: &[String], depth: usize) -> (Vec<String>, Vec<usize>) {
        let mut words = Vec::with_capacity(argv.len());
        let mut redacted = Vec::new();
        let mut value_next = false;
        let mut in_shell = false;
        let mut script_next = false;
        for (i, arg) in argv.iter().enumerate() {
            if script_next {
                script_next = false;
                if let Some(r) = self.shell_script(arg, depth + 1) {
                    words.push(r);
                    redacted.push(i);
                    continue;
                }
            }
            if value_next && !arg.starts_with('-') {
                value_next = false;
                if arg != REDACTED {
                    self.note(arg);
                    words.push(REDACTED.to_owned());
                    redacted.push(i);
                    continue;
                }
            }
            value_next = false;
            if is_shell(arg) {
                in_shell = true;
            } else if in_shell && is_shell_c_flag(arg) {
                script_next = true;
            }
            // `"--token S"` given as one argument: its words are an argv.
            if arg.starts_with('-')
                && let Some((first, _)) = arg.split_once(char::is_whitespace)
                && !first.contains(['=', ':'])
            {
                if let Some(r) = self.shell_script(arg, depth + 1) {
                    words.push(r);
                    redacted.push(i);
                    continue;
                }
                // `"-H Authorization: Bearer X"`: the free-text patterns.
                let r = chain(self.pairs_in_text(arg), |t| self.words_in_text(t));
                if let Cow::Owned(r) = r {
                    words.push(r);
                    redacted.push(i);
                    continue;
                }
                words.push(arg.clone());
                continue;
            }
            if let Some((r, takes_next)) = self.credential_arg(arg, depth) {
                value_next = takes_next;
                if let Some(r) = r {
                    words.push(r);
                    redacted.push(i);
                    continue;
                }
            }
            words.push(arg.clone());
        }
        (words, redacted)
    }

    /// A `sh -c` script with the argv rules applied to its words; `None`
    /// when nothing in it changed.
    fn shell_script(&self, script: &str, depth: usize) -> Option<String> {
        if depth > MAX_ARGV_NESTING {
            return (script != REDACTED).then(|| REDACTED.to_owned());
        }
        let spans = shell_words(script);
        let values: Vec<String> = spans.iter().map(|(_, _, w)| w.clone()).collect();
        let (words, redacted) = self.argv_words(&values, depth);
        if redacted.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(script.len());
        let mut at = 0;
        for i in redacted {
            let (start, end, _) = &spans[i];
            out.push_str(&script[at..*start]);
            out.push_str(&shell_quote(&words[i]));
            at = *end;
        }
        out.push_str(&script[at..]);
        Some(out)
    }

    /// For one argument: `Some((replacement if this argument itself holds a
    /// secret, whether the next argument is a flag's secret value))`, `None`
    /// when it is not credential-related.
    fn credential_arg(&self, arg: &str, depth: usize) -> Option<(Option<String>, bool)> {
        let Some(flag) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            return self.secret_in_value(arg, depth).map(|r| (Some(r), false));
        };
        let single = !flag.starts_with('-');
        let name_part = flag.trim_start_matches('-');
        let (name, value) = match name_part.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (name_part, None),
        };
        if name.is_empty() || name.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None; // `--`, `-1`, a negative number
        }
        let negated = name.to_ascii_lowercase().starts_with("no-");
        let credential = !negated
            && (is_credential_name(name) || (single && ARGV_PASSWORD_SHORT_FLAGS.contains(&name)));
        if single
            && name_part.len() > 1
            && let Some(letter) = name_part
                .get(..1)
                .filter(|l| l.as_bytes()[0].is_ascii_alphabetic())
        {
            let rest = &name_part[1..];
            // `-HAuthorization: Bearer X`, `-Dapi.key=X`: the value is attached.
            if (!credential || rest.contains(':'))
                && let Some(r) = self.secret_in_value(rest, depth)
            {
                return Some((Some(format!("-{letter}{r}")), false));
            }
            // `-pX`: a password short flag with its value attached.
            if ARGV_PASSWORD_SHORT_FLAGS.contains(&letter)
                && !rest.starts_with('=')
                && !rest.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
                && rest != REDACTED
            {
                self.note(rest);
                return Some((Some(format!("-{letter}{REDACTED}")), credential));
            }
        }
        if credential {
            return Some(match value {
                Some(v) if v != REDACTED => {
                    self.note(v);
                    let prefix = &arg[..arg.len() - v.len()];
                    (Some(format!("{prefix}{REDACTED}")), false)
                }
                Some(_) => (None, false),
                None => (None, true),
            });
        }
        let v = value?;
        let r = self.secret_in_value(v, depth)?;
        let prefix = &arg[..arg.len() - v.len()];
        Some((Some(format!("{prefix}{r}")), false))
    }

    /// The redacted form of a value that holds a secret by its shape — a
    /// URL, `KEY=value`, `Name: value`, JSON — or `None` when it holds none
    /// (see [`Redactor::argv`]).
    fn secret_in_value(&self, v: &str, depth: usize) -> Option<String> {
        if depth > MAX_ARGV_NESTING {
            return (v != REDACTED).then(|| REDACTED.to_owned());
        }
        if let Some(i) = v.find("://")
            && is_scheme(&v[..i])
        {
            return match self.url(v) {
                Cow::Owned(u) => Some(u),
                Cow::Borrowed(_) => None,
            };
        }
        if let Some(r) = self.connection_string(v) {
            return Some(r);
        }
        if let Some((k, val)) = v.split_once('=')
            && is_env_name(k)
        {
            if is_credential_name(k) {
                self.note(val);
                return (val != REDACTED).then(|| format!("{k}={REDACTED}"));
            }
            return self
                .secret_in_value(val, depth + 1)
                .map(|r| format!("{k}={r}"));
        }
        if let Some((k, val)) = v.split_once(':')
            && is_field_name(k)
        {
            let trimmed = val.trim_start();
            if trimmed.is_empty() {
                return None; // `Authorization:` alone: its value is in the next words
            }
            if is_credential_name(k) || self.header_treatment(k) != HeaderTreatment::Keep {
                let shown = self.header_value(k, trimmed);
                if shown != trimmed {
                    return Some(format!("{}{shown}", &v[..v.len() - trimmed.len()]));
                }
                return None;
            }
            return self
                .secret_in_value(trimmed, depth + 1)
                .map(|r| format!("{}{r}", &v[..v.len() - trimmed.len()]));
        }
        let t = v.trim_start();
        if (t.starts_with('{') || t.starts_with('['))
            && let Ok(mut j) = serde_json::from_str::<Value>(v)
            && self.json_secrets(&mut j, false, depth + 1)
        {
            return serde_json::to_string(&j).ok();
        }
        None
    }

    /// A connection string (`Server=x;Password=S;User Id=a`: `;`-separated
    /// `key=value` pairs, ADO.NET / ODBC / JDBC style) with the values of
    /// credential-like keys replaced by [`REDACTED`]; `None` when `v` is not
    /// one or nothing in it changed.
    fn connection_string(&self, v: &str) -> Option<String> {
        if !v.contains(';') || !v.contains('=') {
            return None;
        }
        let mut changed = false;
        let mut out = String::with_capacity(v.len());
        for (i, pair) in v.split(';').enumerate() {
            if i > 0 {
                out.push(';');
            }
            match pair.split_once('=') {
                Some((k, val))
                    if !k.trim().is_empty()
                        && k.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b" _.-".contains(&b))
                        && is_credential_name(k)
                        && !val.is_empty()
                        && val != REDACTED =>
                {
                    self.note(val);
                    out.push_str(k);
                    out.push('=');
                    out.push_str(REDACTED);
                    changed = true;
                }
                _ => out.push_str(pair),
            }
        }
        changed.then_some(out)
    }

    /// Redacts, in a JSON argument, scalar values under credential-like keys
    /// (`under`: inside such a key already), strings holding secrets, and
    /// arrays of strings as an argv; `true` if anything changed.
    fn json_secrets(&self, v: &mut Value, under: bool, depth: usize) -> bool {
        if depth > MAX_ARGV_NESTING {
            if v.as_str() == Some(REDACTED) {
                return false;
            }
            *v = Value::String(REDACTED.to_owned());
            return true;
        }
        match v {
            Value::Object(m) => {
                let mut changed = false;
                for (k, x) in m.iter_mut() {
                    changed |= self.json_secrets(x, under || is_credential_name(k), depth + 1);
                }
                changed
            }
            Value::Array(a) if !under && a.iter().all(Value::is_string) => {
                let strings: Vec<String> = a
                    .iter()
                    .map(|x| x.as_str().unwrap_or_default().to_owned())
                    .collect();
                let (words, redacted) = self.argv_words(&strings, depth);
                for i in &redacted {
                    a[*i] = Value::String(words[*i].clone());
                }
                !redacted.is_empty()
            }
            Value::Array(a) => {
                let mut changed = false;
                for x in a.iter_mut() {
                    changed |= self.json_secrets(x, under, depth + 1);
                }
                changed
            }
            Value::Null | Value::Bool(_) => false,
            Value::Number(_) if !under => false,
            Value::String(s) if s == REDACTED => false,
            Value::String(s) if !under => match self.secret_in_value(s, depth) {
                Some(r) => {
                    *s = r;
                    true
                }
                None => false,
            },
            other => {
                if let Value::String(v) = other {
                    self.note(v);
                }
                *other = Value::String(REDACTED.to_owned());
                true
            }
        }
    }

    /// The URL to record: userinfo (RFC 3986 §3.2.1), and the values of
    /// query parameters (§3.4), fragment parameters (§3.5: `#access_token=…`
    /// of an OAuth implicit grant) and path-segment parameters (§3.3:
    /// `;jsessionid=…`) whose percent-decoded names are credential-like
    /// ([`is_credential_name`]) replaced by [`REDACTED`]. Works on any
    /// string shaped like `scheme://[userinfo@]host/path?query#fragment`,
    /// or a bare path with a query; the rest is kept byte for byte.
    /// Userinfo with an unencoded `/` in its password (`https://u:pa/ss@h/`)
    /// is recognised when the `:` is not followed by a port.
    ///
    /// A known webhook URL ([`WEBHOOK_URLS`]) has the secret part of its
    /// path replaced too (`https://hooks.slack.com/services/[redacted]`).
    /// Every value replaced is remembered ([`Redactor::note`]).
    pub fn url<'a>(&self, url: &'a str) -> Cow<'a, str> {
        if !self.enabled {
            return Cow::Borrowed(url);
        }
        if let Some((start, end)) = webhook_span(url) {
            self.note(&url[start..end]);
            let s = format!("{}{REDACTED}{}", &url[..start], &url[end..]);
            return Cow::Owned(self.url(&s).into_owned());
        }
        let mut changed = false;
        let mut out = String::with_capacity(url.len());
        let mut rest = url;
        if let Some((start, at)) = userinfo_span(url) {
            let info = &url[start..at];
            self.note(info);
            if let Some((_, pass)) = info.split_once(':') {
                self.note(pass);
            }
            out.push_str(&url[..start]);
            out.push_str(REDACTED);
            rest = &url[at..];
            changed = true;
        }
        let (before_frag, frag) = match rest.find('#') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let (path, query) = match before_frag.find('?') {
            Some(i) => (&before_frag[..i], Some(&before_frag[i + 1..])),
            None => (before_frag, None),
        };
        for (i, seg) in path.split('/').enumerate() {
            if i > 0 {
                out.push('/');
            }
            changed |= redact_pairs(seg, ';', true, &mut out, &|v| self.note(v));
        }
        if let Some(q) = query {
            out.push('?');
            changed |= redact_pairs(q, '&', false, &mut out, &|v| self.note(v));
        }
        if let Some(f) = frag {
            out.push('#');
            changed |= redact_pairs(f, '&', false, &mut out, &|v| self.note(v));
        }
        if changed {
            Cow::Owned(out)
        } else {
            Cow::Borrowed(url)
        }
    }
}

/// Pushes `s` (parameters separated by `sep`) onto `out` with the values
/// of credential-like `name=value` parameters replaced by [`REDACTED`]
/// (`skip_first`: the first piece is a path segment, not a parameter);
/// `true` if one was.
fn redact_pairs(
    s: &str,
    sep: char,
    skip_first: bool,
    out: &mut String,
    note: &dyn Fn(&str),
) -> bool {
    let mut changed = false;
    for (i, pair) in s.split(sep).enumerate() {
        if i > 0 {
            out.push(sep);
        }
        match pair.split_once('=') {
            Some((k, v)) if !(skip_first && i == 0) && is_sensitive_param(k) && v != REDACTED => {
                note(&percent_decode_lossy(v));
                note(v);
                out.push_str(k);
                out.push('=');
                out.push_str(REDACTED);
                changed = true;
            }
            _ => out.push_str(pair),
        }
    }
    changed
}

/// The secret part of a known webhook URL ([`WEBHOOK_URLS`]): the byte
/// range of its path after the prefix (up to `?` or `#`); `None` for any
/// other URL, or when that part is empty or already [`REDACTED`].
fn webhook_span(url: &str) -> Option<(usize, usize)> {
    let s = url.find("://")?;
    if !is_scheme(&url[..s]) {
        return None;
    }
    let start = s + 3;
    let rest = &url[start..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let auth = &rest[..auth_end];
    let host_port = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let host = host_port
        .rsplit_once(':')
        .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host_port, |(h, _)| h)
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let path_end = rest[auth_end..]
        .find(['?', '#'])
        .map_or(rest.len(), |i| auth_end + i);
    let path = &rest[auth_end..path_end];
    WEBHOOK_URLS.iter().find_map(|(h, prefix)| {
        let host_ok = host == *h || host.strip_suffix(h).is_some_and(|sub| sub.ends_with('.'));
        let secret = path.get(prefix.len()..)?;
        (host_ok
            && path.len() > prefix.len()
            && path[..prefix.len()].eq_ignore_ascii_case(prefix)
            && secret != REDACTED)
            .then(|| (start + auth_end + prefix.len(), start + path_end))
    })
}

/// The userinfo of `url`: (its start, the index of the `@` ending it).
/// The authority ends at the first `/`, `?` or `#` after `://`; when it has
/// no `@` but its `:` is not followed by a port (digits) and an `@` comes
/// later followed by a host, the userinfo is taken to run to that `@` (a
/// password with an unencoded `/`, `?` or `#`).
fn userinfo_span(url: &str) -> Option<(usize, usize)> {
    let s = url.find("://")?;
    if !is_scheme(&url[..s]) {
        return None;
    }
    let start = s + 3;
    let rest = &url[start..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some(at) = rest[..auth_end].rfind('@') {
        return Some((start, start + at));
    }
    if rest.starts_with('[') {
        return None; // an IPv6 literal: its `:` are not a password separator
    }
    let colon = rest[..auth_end].find(':')?;
    let port = &rest[colon + 1..auth_end];
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut from = auth_end;
    while let Some(i) = rest[from..].find('@') {
        let at = from + i;
        let host = &rest[at + 1..];
        let host_end = host.find(['/', '?', '#']).unwrap_or(host.len());
        let h = &host[..host_end];
        if !h.is_empty()
            && h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
        {
            return Some((start, start + at));
        }
        from = at + 1;
    }
    None
}

/// `cur` through `f`, owned if either changed it.
fn chain<'a>(cur: Cow<'a, str>, f: impl for<'b> Fn(&'b str) -> Cow<'b, str>) -> Cow<'a, str> {
    match cur {
        Cow::Borrowed(t) => f(t),
        Cow::Owned(t) => Cow::Owned(f(&t).into_owned()),
    }
}

/// `text` with each byte range of `spans` (sorted, not overlapping) replaced
/// by [`REDACTED`].
fn replace_spans<'a>(text: &'a str, spans: &[(usize, usize)]) -> Cow<'a, str> {
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(s, e) in spans {
        if s < at {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(REDACTED);
        at = e;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The value of each `;`-separated `name=value` pair of `value` (a cookie string, RFC 6265
/// §4.2.1: `a=1; b="2"` gives `1`, `2`), surrounding white space and double quotes dropped; a
/// pair without `=` is a value (RFC 6265bis §5.6). Of a `Set-Cookie` value the first is the
/// cookie's, the rest its attributes (§4.1.1).
fn pair_values(value: &str) -> impl Iterator<Item = &str> {
    value.split(';').map(|p| {
        let v = p.split_once('=').map_or(p, |(_, v)| v).trim();
        v.strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .unwrap_or(v)
    })
}

/// A value starting with a registered auth scheme ([`AUTH_SCHEMES`]) and
/// a credential after white space: `(scheme as written, credential)`.
fn scheme_and_credential(value: &str) -> Option<(&str, &str)> {
    let v = value.trim_start();
    let (scheme, rest) = v.split_once([' ', '\t'])?;
    let cred = rest.trim();
    (AUTH_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme))
        && !cred.is_empty()
        && cred != REDACTED)
        .then_some((scheme, cred))
}

/// Whether `s` is a redaction marker: [`REDACTED`] or a pseudonym `[redacted:N]`.
pub fn is_redaction_marker(s: &str) -> bool {
    s == REDACTED
        || s.strip_prefix("[redacted:")
            .and_then(|r| r.strip_suffix(']'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// An RFC 3986 §3.1 scheme: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
fn is_scheme(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
}

/// Whether `arg` names a shell program ([`ARGV_SHELLS`], by file name).
fn is_shell(arg: &str) -> bool {
    let base = arg.rsplit('/').next().unwrap_or(arg);
    ARGV_SHELLS.contains(&base)
}

/// `-c`, or a cluster of single-letter shell options ending in `c` (`-ec`, `-lc`).
fn is_shell_c_flag(arg: &str) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|f| f.ends_with('c') && f.bytes().all(|b| b.is_ascii_lowercase()))
}

/// The words of a shell script as `(start byte, end byte, word after quote
/// removal)`: split at unquoted white space and `;` `&` `|` `(` `)` `<` `>`;
/// `'…'`, `"…"` (with `\"`, `\\`, `\$`, `` \` `` escapes) and `\x` quote.
fn shell_words(s: &str) -> Vec<(usize, usize, String)> {
    let b = s.as_bytes();
    let sep = |c: u8| c.is_ascii_whitespace() || b";&|()<>".contains(&c);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if sep(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut w = Vec::new();
        while i < b.len() && !sep(b[i]) {
            match b[i] {
                b'\'' => {
                    i += 1;
                    while i < b.len() && b[i] != b'\'' {
                        w.push(b[i]);
                        i += 1;
                    }
                    i += 1;
                }
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        if b[i] == b'\\' && i + 1 < b.len() && b"\"\\$`".contains(&b[i + 1]) {
                            i += 1;
                        }
                        w.push(b[i]);
                        i += 1;
                    }
                    i += 1;
                }
                b'\\' if i + 1 < b.len() => {
                    w.push(b[i + 1]);
                    i += 2;
                }
                c => {
                    w.push(c);
                    i += 1;
                }
            }
        }
        let end = i.min(b.len());
        out.push((start, end, String::from_utf8_lossy(&w).into_owned()));
    }
    out
}

/// `w` as one shell word: as is when it has no white space or quote,
/// otherwise in single quotes.
fn shell_quote(w: &str) -> String {
    if w.bytes()
        .any(|b| b.is_ascii_whitespace() || b"'\"\\;&|()<>".contains(&b))
    {
        format!("'{}'", w.replace('\'', r"'\''"))
    } else {
        w.to_owned()
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
    let bases = Bases::new(
        cwd.into_iter().map(str::to_owned).collect(),
        Vec::new(),
        home.into_iter().map(str::to_owned).collect(),
    );
    bases.fold_whole(path)
}

/// What a folded directory becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// The working directory: `.` (a whole argument: relative to it).
    Cwd,
    /// A temporary directory: [`TMPDIR_MARK`].
    Tmp,
    /// The home directory: `~`.
    Home,
}

impl Mark {
    fn as_str(self) -> &'static str {
        match self {
            Mark::Cwd => ".",
            Mark::Tmp => TMPDIR_MARK,
            Mark::Home => "~",
        }
    }
}

/// The machine directories to fold, longest first (the most specific wins:
/// a working directory inside `$TMPDIR` folds to `.`).
struct Bases(Vec<(String, Mark)>);

impl Bases {
    fn new(cwd: Vec<String>, tmp: Vec<String>, home: Vec<String>) -> Self {
        let mut v: Vec<(String, Mark)> = Vec::new();
        for (list, mark) in [(cwd, Mark::Cwd), (tmp, Mark::Tmp), (home, Mark::Home)] {
            for d in list {
                if let Some(b) = base_dir(Some(&d))
                    && !v.iter().any(|(x, _)| x == b)
                {
                    v.push((b.to_owned(), mark));
                }
            }
        }
        v.sort_by_key(|(d, _)| std::cmp::Reverse(d.len()));
        Bases(v)
    }

    /// A whole absolute path folded: relative to the working directory (`.`
    /// for itself), `$TMPDIR/…`, `~/…`; `None` when under none of them.
    fn fold_whole(&self, path: &str) -> Option<String> {
        if !path.starts_with('/') {
            return None;
        }
        for (base, mark) in &self.0 {
            let Some(rest) = path.strip_prefix(base.as_str()) else {
                continue;
            };
            let r = if rest.is_empty() {
                ""
            } else if let Some(r) = rest.strip_prefix('/') {
                r.trim_start_matches('/')
            } else {
                continue;
            };
            return Some(match (mark, r.is_empty()) {
                (Mark::Cwd, false) => r.to_owned(),
                (m, true) => m.as_str().to_owned(),
                (m, false) => format!("{}/{r}", m.as_str()),
            });
        }
        None
    }

    /// One argument folded: the whole argument, or the value after the
    /// first `=` of a `--flag=`/`KEY=` argument, else every directory
    /// inside it ([`Bases::fold_text`]: a `sh -c` script, `--x=a:/home/u/b`).
    fn fold_arg(&self, arg: &str) -> Option<String> {
        if let Some(f) = self.fold_whole(arg) {
            return Some(f);
        }
        if let Some((k, v)) = arg.split_once('=')
            && let Some(f) = self.fold_whole(v)
        {
            return Some(format!("{k}={f}"));
        }
        match self.fold_text(arg) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        }
    }

    /// `text` with every machine directory in it folded (`/home/u/x` →
    /// `~/x`, the working directory → `./x`, `/tmp/y` → `$TMPDIR/y`): a
    /// directory is matched where it starts a path (not preceded by a path
    /// character, or right after `://`: `file:///home/u/x` → `file://~/x`)
    /// and ends at `/` or a character that cannot continue a file name
    /// (`/tmpfile` is not `/tmp`).
    fn fold_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.0.is_empty() || !text.contains('/') {
            return Cow::Borrowed(text);
        }
        let b = text.as_bytes();
        let path_char = |c: u8| c.is_ascii_alphanumeric() || b"._-~$/".contains(&c);
        let mut out = String::new();
        let mut at = 0;
        let mut i = 0;
        while let Some(k) = memchr::memchr(b'/', &b[i..]) {
            let p = i + k;
            i = p + 1;
            // After a path character no path starts, except the `file://` of a URL.
            if p > 0 && path_char(b[p - 1]) && !text[..p].ends_with("://") {
                continue;
            }
            let found = self.0.iter().find(|(base, _)| {
                text[p..].starts_with(base.as_str())
                    && b.get(p + base.len())
                        .is_none_or(|&c| c == b'/' || !path_char(c))
            });
            if let Some((base, mark)) = found {
                out.push_str(&text[at..p]);
                out.push_str(mark.as_str());
                at = p + base.len();
                i = at;
            }
        }
        if at == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }
}

/// A query, fragment or path parameter name that is credential-like after
/// percent-decoding ([`is_credential_name`]).
fn is_sensitive_param(raw_name: &str) -> bool {
    is_credential_name(&percent_decode_lossy(raw_name))
}

/// `s` with `+` as a space and `%XX` decoded (`application/x-www-form-urlencoded`, as query
/// names are written), invalid UTF-8 replaced.
fn percent_decode_lossy(s: &str) -> String {
    percent_encoding::percent_decode_str(&s.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

/// `text` split into words at `delim` characters, each word written to the
/// output by `word` (which says whether it wrote anything else than the word),
/// the delimiters kept as they are; borrowed when no word changed.
fn map_words<'a>(
    text: &'a str,
    delim: impl Fn(char) -> bool,
    mut word: impl FnMut(&str, &mut String) -> bool,
) -> Cow<'a, str> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find(|c: char| !delim(c)).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(&delim).unwrap_or(rest.len());
        changed |= word(&rest[..end], &mut out);
        rest = &rest[end..];
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    fn argv(v: &[&str]) -> Vec<String> {
        Redactor::new().argv(&s(v), None, None).argv
    }

    #[test]
    fn credential_words_match_name_parts_not_substrings_of_other_words() {
        for name in [
            "X-Credential",
            "X-Passwd",
            "X-Jwt",
            "X-Pass",
            "X-Bearer",
            "X-Sig",
            "apiKey",
            "APIKey",
            "api_key",
            "GH_PAT",
            "jsessionid",
            "accesstoken",
            "x-apikey",
            "oauth2Token",
            "Proxy-Authorization",
            "WWW-Authenticate",
            "Mcp-Session-Id",
            "X-Amz-Security-Token",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in [
            "monkey",
            "keyboard",
            "keys",
            "Keep-Alive",
            "signal",
            "path",
            "pattern",
            "passthrough",
            "author",
            "Content-Type",
            "Last-Event-Id",
            "User-Agent",
            "GITHUB_TOOLSETS",
            "codec",
        ] {
            assert!(!is_credential_name(name), "{name}");
        }
    }

    #[test]
    fn percent_decode_lossy_decodes_plus_and_escapes_and_keeps_broken_ones() {
        assert_eq!(
            percent_decode_lossy("api%5Ftoken+x%2B%zz%4"),
            "api_token x+%zz%4"
        );
        assert_eq!(percent_decode_lossy("%FF"), "\u{FFFD}");
    }

    #[test]
    fn query_param_api_token_is_redacted() {
        assert_urls(
            &Redactor::new(),
            &[
                (
                    "http://127.0.0.1:9/mcp?api_token=A&access_token=B&x=1",
                    "http://127.0.0.1:9/mcp?api_token=[redacted]&access_token=[redacted]&x=1",
                ),
                (
                    "/mcp?access-token=Q3&x-api-key=Q4&auth_token=Q2&apiKey=Q5&monkey=ok",
                    "/mcp?access-token=[redacted]&x-api-key=[redacted]&auth_token=[redacted]&apiKey=[redacted]&monkey=ok",
                ),
                // Percent-encoded names are decoded before the test.
                ("/m?api%5Ftoken=Z", "/m?api%5Ftoken=[redacted]"),
            ],
        );
    }

    #[test]
    fn url_fragment_and_path_params_are_redacted() {
        assert_urls(
            &Redactor::new(),
            &[
                (
                    "https://h/cb#access_token=F1&token_type=bearer&state=s",
                    "https://h/cb#access_token=[redacted]&token_type=[redacted]&state=s",
                ),
                (
                    "http://h/app;jsessionid=J1/x;v=2?q=1",
                    "http://h/app;jsessionid=[redacted]/x;v=2?q=1",
                ),
                ("https://h/#section", "https://h/#section"),
            ],
        );
    }

    #[test]
    fn userinfo_with_slash_in_password_is_redacted() {
        assert_urls(
            &Redactor::new(),
            &[
                ("https://u:pa/ss@h/x", "https://[redacted]@h/x"),
                ("https://u:p@ss@h/", "https://[redacted]@h/"),
                // A port, then an `@` in the path: no userinfo.
                ("http://h:8080/@me", "http://h:8080/@me"),
                ("http://[::1]:9/@me", "http://[::1]:9/@me"),
            ],
        );
    }

    #[test]
    fn header_value_holding_a_url_has_its_query_redacted() {
        assert_header_values(
            &Redactor::new(),
            &[
                ("Referer", "http://x/?token=H", "http://x/?token=[redacted]"),
                (
                    "Link",
                    "<https://h/p?sig=S>; rel=\"next\"",
                    "<https://h/p?sig=[redacted]>; rel=\"next\"",
                ),
                ("Location", "/mcp?key=K", "/mcp?key=[redacted]"),
                (
                    "content-type",
                    "application/json; charset=utf-8",
                    "application/json; charset=utf-8",
                ),
            ],
        );
    }

    /// Each `(url, want)`: `r.url(url)` is `want`, in order (`r` learns the
    /// secrets it redacts).
    fn assert_urls(r: &Redactor, cases: &[(&str, &str)]) {
        for &(url, want) in cases {
            assert_eq!(r.url(url), want, "{url}");
        }
    }

    /// Asserts `header_value(name, value) == want` for each `(name, value, want)`.
    fn assert_header_values(r: &Redactor, cases: &[(&str, &str, &str)]) {
        for &(name, value, want) in cases {
            assert_eq!(r.header_value(name, value), want, "{name}: {value}");
        }
    }

    #[test]
    fn authorization_keeps_only_a_registered_scheme() {
        let r = Redactor::new();
        assert_eq!(r.header_value("Authorization", "H13 H13b"), REDACTED);
        assert_eq!(r.header_value("Authorization", "TOK"), REDACTED);
        for scheme in [
            "Bearer",
            "basic",
            "DPoP",
            "AWS4-HMAC-SHA256",
            "SCRAM-SHA-256",
            "vapid",
        ] {
            assert_eq!(
                r.header_value("Authorization", &format!("{scheme} abc")),
                format!("{scheme} {REDACTED}")
            );
        }
    }

    #[test]
    fn argv_attached_short_password_and_pass_flag_are_redacted() {
        assert_eq!(
            argv(&["db", "-pTOK", "-path", "/x"]),
            s(&["db", "-p[redacted]", "-path", "/x"])
        );
        assert_eq!(
            argv(&["db", "--pass", "TOK"]),
            s(&["db", "--pass", "[redacted]"])
        );
        assert_eq!(argv(&["db", "-p8080"]), s(&["db", "-p[redacted]"]));
    }

    #[test]
    fn argv_flag_equals_values_holding_secrets_are_redacted() {
        assert_eq!(
            argv(&[
                "x",
                "--url=https://u:PASS@h/",
                "--header=Authorization: Bearer TOK",
                "--env=SECRET=TOK",
                "--header=X-Trace: 1",
                "DATABASE_URL=postgres://u:PW@db/x",
            ]),
            s(&[
                "x",
                "--url=https://[redacted]@h/",
                "--header=Authorization: Bearer [redacted]",
                "--env=SECRET=[redacted]",
                "--header=X-Trace: 1",
                "DATABASE_URL=postgres://[redacted]@db/x",
            ])
        );
    }

    #[test]
    fn argv_attached_header_redacts_itself_not_the_next_argument() {
        let a = Redactor::new().argv(
            &s(&["curl", "-HAuthorization:TOK", "keep", "-Dapi.key=K"]),
            None,
            None,
        );
        assert_eq!(
            a.argv,
            s(&[
                "curl",
                "-HAuthorization:[redacted]",
                "keep",
                "-Dapi.key=[redacted]"
            ])
        );
        assert_eq!(a.redacted, vec![1, 3]);
    }

    #[test]
    fn argv_gh_pat_and_json_config_are_redacted() {
        assert_eq!(
            argv(&[
                "srv",
                "GH_PAT=TOK",
                "--config",
                r#"{"apiKey":"TOK","name":"n","nested":{"password":1},"args":["--token","T2"],"url":"https://h/?sig=S"}"#,
            ]),
            s(&[
                "srv",
                "GH_PAT=[redacted]",
                "--config",
                r#"{"apiKey":"[redacted]","name":"n","nested":{"password":"[redacted]"},"args":["--token","[redacted]"],"url":"https://h/?sig=[redacted]"}"#,
            ])
        );
        // JSON without secrets is kept byte for byte.
        assert_eq!(argv(&["--config", r#"{ "a": 1 }"#])[1], r#"{ "a": 1 }"#);
    }

    #[test]
    fn argv_sh_c_script_words_are_redacted() {
        let a = Redactor::new().argv(
            &s(&[
                "/bin/sh",
                "-c",
                "exec server --token SH1 --password=SH2; echo 'x y'",
            ]),
            None,
            None,
        );
        assert_eq!(
            a.argv[2],
            "exec server --token [redacted] --password=[redacted]; echo 'x y'"
        );
        assert_eq!(a.redacted, vec![2]);
        assert_eq!(
            argv(&[
                "bash",
                "-lc",
                "srv -H 'Authorization: Bearer Q' \"--api-key\" K"
            ])[2],
            "srv -H 'Authorization: Bearer [redacted]' \"--api-key\" [redacted]"
        );
        // A script in a script.
        assert_eq!(
            argv(&["sh", "-c", "sh -c 'srv --secret S3'"])[2],
            "sh -c 'srv --secret [redacted]'"
        );
        // Not a shell: `-c` is an ordinary flag.
        assert_eq!(argv(&["python", "-c", "f --token X"])[2], "f --token X");
        // A flag and its value given as one argument are redacted wherever.
        assert_eq!(
            argv(&["python", "-c", "--token X"])[2],
            "--token [redacted]"
        );
    }

    #[test]
    fn nesting_past_the_limit_is_redacted_whole() {
        let r = Redactor::new();
        let mut v = String::from("x");
        for _ in 0..=MAX_ARGV_NESTING + 1 {
            v = format!("A={v}");
        }
        let out = r.argv(&s(&[&v]), None, None);
        assert!(
            out.argv[0].ends_with(&format!("={REDACTED}")),
            "{}",
            out.argv[0]
        );
        let mut ok = String::from("x");
        for _ in 0..MAX_ARGV_NESTING - 1 {
            ok = format!("A={ok}");
        }
        assert_eq!(r.argv(&s(&[&ok]), None, None).argv[0], ok);
    }

    #[test]
    fn redact_json_body_that_is_not_json_is_withheld() {
        let r = Redactor::with_rules(&RedactRules {
            json_pointers: s(&["/params/password"]),
            ..RedactRules::default()
        })
        .unwrap();
        let bom = b"\xEF\xBB\xBF{\"params\":{\"password\":\"P\"}}";
        assert!(matches!(r.body(bom), BodyRedaction::NotJson { .. }));
        assert!(matches!(
            r.body(br#"{"params":{"password":"P"}}"#),
            BodyRedaction::Redacted { .. }
        ));
        assert_eq!(r.body(br#"{"params":{}}"#), BodyRedaction::Verbatim);
        // Without pointers nothing is withheld.
        assert_eq!(Redactor::new().body(bom), BodyRedaction::Verbatim);
        let line = withheld_body_line(3, bom.len(), "expected value");
        assert!(line.starts_with(REDACTED) && !line.contains('P'), "{line}");
    }

    /// The words' headers: `every_credential_word_redacts_a_header_in_any_case` (tests/redact.rs).
    #[test]
    fn new_credential_words_redact_flags_but_not_look_alikes() {
        for name in [
            "ping",
            "spin",
            "optional",
            "tokio",
            "certainly",
            "pwsh",
            "side",
        ] {
            assert!(!is_credential_name(name), "{name}");
        }
        assert_eq!(
            argv(&[
                "s",
                "--tok",
                "T1",
                "--passcode",
                "T2",
                "--pin",
                "T3",
                "--otp",
                "T4"
            ]),
            s(&[
                "s",
                "--tok",
                REDACTED,
                "--passcode",
                REDACTED,
                "--pin",
                REDACTED,
                "--otp",
                REDACTED
            ])
        );
    }

    #[test]
    fn any_header_value_with_a_registered_scheme_or_a_credential_pair_is_redacted() {
        let r = Redactor::new();
        assert_header_values(
            &r,
            &[
                ("X-Custom", "Bearer S1abcdef", "Bearer [redacted]"),
                ("X-Custom", "dpop S1abcdef", "dpop [redacted]"),
                (
                    "X-Debug-Info",
                    "token=S2abc; node=a",
                    "token=[redacted]; node=a",
                ),
                // A lone scheme word, and ordinary values, are kept.
                ("X-Note", "Basic", "Basic"),
                (
                    "content-type",
                    "text/plain; charset=utf-8",
                    "text/plain; charset=utf-8",
                ),
            ],
        );
        // The credential is then known elsewhere.
        assert_eq!(r.text("got S1abcdef back"), "got [redacted] back");
    }

    #[test]
    fn webhook_urls_have_their_secret_path_redacted() {
        let r = Redactor::new();
        assert_urls(
            &r,
            &[
                (
                    "https://hooks.slack.com/services/T0/B0/SLK1",
                    "https://hooks.slack.com/services/[redacted]",
                ),
                (
                    "https://discord.com/api/webhooks/123/DSC2?wait=true&token=Q",
                    "https://discord.com/api/webhooks/[redacted]?wait=true&token=[redacted]",
                ),
                (
                    "https://acme.webhook.office.com/webhookb2/X/IncomingWebhook/Y/Z",
                    "https://acme.webhook.office.com/webhookb2/[redacted]",
                ),
            ],
        );
        assert_eq!(
            r.header_value("X-Webhook", "https://hooks.slack.com/services/T0/B0/SLK3"),
            "https://hooks.slack.com/services/[redacted]"
        );
        // Another path of the same host, another host: kept.
        assert_urls(
            &r,
            &[
                ("https://hooks.slack.com/", "https://hooks.slack.com/"),
                (
                    "https://example.com/services/T0/B0/S",
                    "https://example.com/services/T0/B0/S",
                ),
            ],
        );
        assert!(r.known_secrets().contains(&"T0/B0/SLK1".to_owned()));
        assert_eq!(r.text("posting to T0/B0/SLK3"), "posting to [redacted]");
    }

    #[test]
    fn argv_flag_and_value_in_one_argument_and_connection_strings_are_redacted() {
        let a = Redactor::new().argv(
            &s(&[
                "srv",
                "--token CS1abc",
                "--conn",
                "Server=x;Password=CS2abc;User Id=a",
                "--dsn=Host=h;Pwd=CS3abc",
                "--verbose yes",
                "-H Authorization: Bearer CS4abc",
            ]),
            None,
            None,
        );
        assert_eq!(
            a.argv,
            s(&[
                "srv",
                "--token [redacted]",
                "--conn",
                "Server=x;Password=[redacted];User Id=a",
                "--dsn=Host=h;Pwd=[redacted]",
                "--verbose yes",
                "-H Authorization: Bearer [redacted]",
            ])
        );
        assert_eq!(a.redacted, vec![1, 3, 4, 6]);
    }

    /// Regression (fresh-user trial, 2026-12-05): a known secret inside a credential pair's
    /// value (`token=PASSWORD=SECRET`, `SECRET` known from the argv) was redacted first, and the
    /// pair's value then stopped at the marker's `]`: `token=[redacted]]`.
    #[test]
    fn known_secret_inside_a_pair_value_leaves_no_stray_bracket() {
        let r = Redactor::new();
        r.note("SECRET9xyz");
        for (line, want) in [
            ("token=PASSWORD=SECRET9xyz", "token=[redacted]"),
            ("token=PASSWORD=SECRET9xyz, next", "token=[redacted], next"),
            ("token=a[redacted]b c", "token=[redacted] c"),
            ("[token=SECRET9xyz]", "[token=[redacted]]"),
        ] {
            assert_eq!(r.text(line), want, "{line}");
        }
    }

    #[test]
    fn text_redacts_known_secrets_credential_patterns_and_folds_machine_dirs() {
        let r = Redactor::new().with_dirs(MachineDirs {
            cwd: s(&["/tmp/t1/work"]),
            tmp: s(&["/tmp"]),
            home: s(&["/home/alice"]),
        });
        let a = r.argv(&s(&["srv", "--api-key", "KNOWN1abc"]), None, None);
        assert_eq!(a.argv[2], REDACTED);
        for (line, want) in [
            ("args: --api-key KNOWN1abc", "args: --api-key [redacted]"),
            ("key is KNOWN1abc.", "key is [redacted]."),
            ("password=P1abcdef user=u", "password=[redacted] user=u"),
            (
                r#"cfg {"apiKey": "P2abcdef", "n": 1}"#,
                r#"cfg {"apiKey": "[redacted]", "n": 1}"#,
            ),
            (
                "Server=db;Password=P3abcdef;User=a",
                "Server=db;Password=[redacted];User=a",
            ),
            (
                "send Authorization: Bearer P4abcdef now",
                "send Authorization: Bearer [redacted] now",
            ),
            (
                "dial postgres://u:P5abcdef@db/x",
                "dial postgres://[redacted]@db/x",
            ),
            (
                "GET /cb?access_token=P6abcdef",
                "GET /cb?access_token=[redacted]",
            ),
            ("run --secret P7abcdef --v", "run --secret [redacted] --v"),
            ("basic setup done", "basic setup done"),
            (
                "allowed: /home/alice/p, /tmp/t1/work/x and /tmp/t1/work",
                "allowed: ~/p, ./x and .",
            ),
            (
                "sock /tmp/s.sock; not /tmpfile nor /x/tmp/y",
                "sock $TMPDIR/s.sock; not /tmpfile nor /x/tmp/y",
            ),
        ] {
            assert_eq!(r.text(line), want, "{line}");
        }
        // Values the patterns found are known from then on.
        assert_eq!(r.text("again P1abcdef"), "again [redacted]");
        // Disabled: directories are still folded, nothing else changes.
        let d = Redactor::disabled().with_dirs(MachineDirs {
            home: s(&["/home/alice"]),
            ..MachineDirs::default()
        });
        assert_eq!(d.text("password=P /home/alice/x"), "password=P ~/x");
    }

    #[test]
    fn text_never_panics_on_multibyte_neighbours_of_patterns() {
        let r = Redactor::new().with_dirs(MachineDirs {
            home: s(&["/home/é"]),
            ..MachineDirs::default()
        });
        r.note("sécrétvalue");
        for line in [
            "é://x «https://u:p@h/» €token=é€ «password»: «x»",
            "—Bearer é—/home/é/x «sécrétvalue»",
            "\"tokén\":\"v\" ü=ü: ü --tøken é",
        ] {
            let out = r.text(line);
            assert!(!out.contains("sécrétvalue"), "{out}");
        }
        assert_eq!(r.text("«/home/é/x»"), "«~/x»");
        assert_eq!(r.text("(https://u:pw@h/)"), "(https://[redacted]@h/)");
    }

    #[test]
    fn pair_values_splits_cookie_pairs() {
        for (value, want) in [
            ("a=1; b=\"2\"; c", &["1", "2", "c"][..]),
            ("s=x=y;;t= z ", &["x=y", "", "z"][..]),
            ("sid=v; Path=/; Domain=h", &["v", "/", "h"][..]),
            ("\"", &["\""][..]),
            ("é=€; =", &["€", ""][..]),
            ("", &[""][..]),
        ] {
            assert_eq!(pair_values(value).collect::<Vec<_>>(), want, "{value}");
        }
    }

    /// Regression (fresh-user trial, 2026-12-05): every cookie value of 6 bytes or more was
    /// hunted through the transcript, so `m=tools/call; v=2025-06-18` blanked the method and
    /// the protocol version in every message. Only values shaped like credentials are, from
    /// [`MIN_ECHO_PAIR_VALUE_BYTES`] on (at the limit and one below).
    #[test]
    fn pair_values_hunted_elsewhere_are_shaped_like_credentials() {
        let at = format!("a{}", "1".repeat(MIN_ECHO_PAIR_VALUE_BYTES - 1));
        let below = &at[1..];
        assert!(pair_value_is_credential_like(&at));
        assert!(!pair_value_is_credential_like(below));
        for yes in [
            "S3cr3tV4lue0123",
            "9c004f8f-87f5-4973-a34e-23ec3c10e446",
            "eyJhbGciOiJIUzI1NiJ9.e30.abc",
            "AbCdEfGhIjKlMnOp",
        ] {
            assert!(pair_value_is_credential_like(yes), "{yes}");
        }
        for no in [
            "dark",
            "english",
            "tools/call",
            "2025-06-18",
            "everything",
            "abcdefghijklmnop",
            "has space 12345",
        ] {
            assert!(!pair_value_is_credential_like(no), "{no}");
        }
        let r = Redactor::new();
        r.note("m=tools/call; v=2025-06-18; c=everything; sid=S3cr3tV4lue0123");
        assert_eq!(
            r.known_secrets(),
            vec![
                "m=tools/call; v=2025-06-18; c=everything; sid=S3cr3tV4lue0123".to_owned(),
                "S3cr3tV4lue0123".to_owned()
            ]
        );
        let r = Redactor::new();
        let _ = r.header_value(
            "Set-Cookie",
            "sid=S3tC00kieV4lue; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/",
        );
        assert_eq!(r.known_secrets()[1], "S3tC00kieV4lue");
        assert_eq!(r.known_secrets().len(), 2, "{:?}", r.known_secrets());
    }

    #[test]
    fn secrets_are_remembered_from_min_echo_bytes_up_to_max_echo_secrets() {
        let r = Redactor::new();
        let at = "a".repeat(MIN_ECHO_SECRET_BYTES);
        let below = "b".repeat(MIN_ECHO_SECRET_BYTES - 1);
        r.note(&at);
        r.note(&below);
        assert_eq!(r.known_secrets(), vec![at]);
        let r = Redactor::new();
        for i in 0..MAX_ECHO_SECRETS {
            r.note(&format!("secret-{i:06}"));
        }
        assert_eq!(r.known_secrets().len(), MAX_ECHO_SECRETS);
        assert_eq!(r.secrets_dropped(), 0);
        r.note("one-past-the-limit");
        assert_eq!(r.known_secrets().len(), MAX_ECHO_SECRETS);
        assert_eq!(r.secrets_dropped(), 1);
        // A disabled redactor remembers nothing.
        let d = Redactor::disabled();
        d.note("secret-value");
        assert!(d.known_secrets().is_empty());
    }

    #[test]
    fn credential_tool_arguments_get_pseudonyms_and_their_echoes_are_redacted() {
        let r = Redactor::new();
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"q":"ask A1secret","password":"A1secret","otp":"A2secret","maxTries":3}}}"#;
        let (text, pointers) = r.message_json_from(true, call).unwrap();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"q":"ask [redacted]","password":"[redacted:1]","otp":"[redacted:2]","maxTries":3}}}"#
        );
        assert_eq!(
            pointers,
            s(&[
                "/params/arguments/password",
                "/params/arguments/otp",
                "/params/arguments/q"
            ])
        );
        // The server's echo, and a server message with no secret (not parsed).
        let (text, pointers) = r
            .message_json_from(
                false,
                br#"{"jsonrpc":"2.0","id":1,"result":{"t":["A2secret"]}}"#,
            )
            .unwrap();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":1,"result":{"t":["[redacted]"]}}"#
        );
        assert_eq!(pointers, s(&["/result/t/0"]));
        assert_eq!(
            r.message_json_from(
                false,
                br#"{"jsonrpc":"2.0","id":1,"result":{"arguments":{"password":"x"}}}"#
            ),
            None
        );
        // The same secret again gets the same pseudonym; a disabled redactor changes nothing.
        let again = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"otp":"A2secret"}}}"#;
        assert!(
            r.message_json(again)
                .unwrap()
                .0
                .contains(r#""otp":"[redacted:2]""#)
        );
        assert_eq!(Redactor::disabled().message_json(call), None);
    }

    #[test]
    fn working_dir_inside_tmp_folds_to_dot_and_paths_in_scripts_fold() {
        let r = Redactor::new().with_dirs(MachineDirs {
            tmp: s(&["/tmp"]),
            ..MachineDirs::default()
        });
        let a = r.argv(
            &s(&[
                "/tmp/w/srv.sh",
                "/tmp/other/x",
                "sh",
                "-c",
                "exec /tmp/w/bin --cfg /root/c",
            ]),
            Some("/tmp/w"),
            Some("/root"),
        );
        assert_eq!(
            a.argv,
            s(&[
                "srv.sh",
                "$TMPDIR/other/x",
                "sh",
                "-c",
                "exec ./bin --cfg ~/c"
            ])
        );
        assert_eq!(a.paths, vec![0, 1, 4]);
    }
}
