//! Credential redaction for recorded HTTP headers and URLs (on by default).
//!
//! Header values of [`SENSITIVE_HEADERS`] (RFC 9110 §11.6.2 `Authorization`,
//! §11.7.2 `Proxy-Authorization`; RFC 6265 `Cookie`, `Set-Cookie`; common API-key
//! headers) and the values of token-like query parameters ([`SENSITIVE_PARAMS`])
//! and URL userinfo (RFC 3986 §3.2.1) are replaced by [`REDACTED`]. The recorder's
//! `--no-redact` switch sets [`Redactor::enabled`] to `false`.

use std::borrow::Cow;

/// The marker that replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// Header names (compared ASCII case-insensitively) whose values are redacted.
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

/// Applies redaction when [`Redactor::enabled`]; a disabled redactor returns
/// everything unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redactor {
    /// Redact (default `true`); `false` for `--no-redact`.
    pub enabled: bool,
}

impl Default for Redactor {
    fn default() -> Self {
        Self { enabled: true }
    }
}

impl Redactor {
    /// A redactor that redacts (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// A redactor that changes nothing (`--no-redact`).
    pub fn disabled() -> Self {
        Self { enabled: false }
    }

    /// Whether `name` is a header whose value is redacted (case-insensitive).
    pub fn is_sensitive_header(name: &str) -> bool {
        SENSITIVE_HEADERS
            .iter()
            .any(|h| h.eq_ignore_ascii_case(name.trim()))
    }

    /// The value to record for header `name`: [`REDACTED`] for a sensitive
    /// header, the value itself otherwise. For `Authorization` the scheme is
    /// kept (`Bearer [redacted]`) so transcripts still show which scheme was used.
    pub fn header_value<'a>(&self, name: &str, value: &'a str) -> Cow<'a, str> {
        if !self.enabled || !Self::is_sensitive_header(name) {
            return Cow::Borrowed(value);
        }
        let lname = name.trim().to_ascii_lowercase();
        if lname == "authorization" || lname == "proxy-authorization" {
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

    /// Redacts the values of sensitive headers in place (`[name, value]` pairs).
    pub fn headers(&self, headers: &mut [(String, String)]) {
        for (name, value) in headers.iter_mut() {
            if let Cow::Owned(v) = self.header_value(name, value) {
                *value = v;
            } else if self.enabled && Self::is_sensitive_header(name) {
                *value = REDACTED.to_owned();
            }
        }
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
