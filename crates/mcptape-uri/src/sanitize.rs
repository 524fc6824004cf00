//! The `resources/read` URI sanitizer: [`Root::resolve`] turns a client-built URI into a
//! [`ResolvedPath`] that is guaranteed to lie inside the root, or a [`SanitizeError`] naming the
//! rule that fired.
//!
//! Order of the rules (the first that fires wins), each with its own [`SanitizeErrorKind`]:
//! 1. length ≤ [`MAX_URI_BYTES`] ([`SanitizeErrorKind::TooLong`]), both the raw URI and, last of
//!    all, the canonical [`ResolvedPath::to_uri`] form, so every accepted path resolves again;
//! 2. raw characters: no control character, no backslash, no character outside RFC 3986 §2
//!    (`reserved` / `unreserved` / `%`) other than non-ASCII UTF-8 (RFC 3987 `ucschar`);
//! 3. scheme (RFC 3986 §3.1, compared case-insensitively) and authority (§3.2, compared
//!    case-insensitively; for `file` the empty authority, `localhost` and no authority are equal,
//!    RFC 8089 §2) must equal the root's; no query or fragment;
//! 4. the path is percent-decoded **exactly once** (RFC 3986 §2.1); malformed escapes, double
//!    encoding (a decoded `%` still followed by two hex digits, e.g. `%252e`), decoded control
//!    characters, encoded separators (`%2F` → `/`, `%5C` → `\`) and invalid UTF-8 (overlong
//!    `%c0%ae`) are rejected;
//! 5. at most [`MAX_SEGMENTS`] segments; no empty segment except one trailing `/`;
//! 6. dot segments are removed per RFC 3986 §5.2.4 *after* decoding;
//! 7. the result must start with the root's path **by whole segments**.
//!
//! [`PathStyle::Windows`] ([`Root::with_style`]) changes three rules for `file:` URIs of Windows
//! paths (RFC 8089 Appendix E.2): a raw `\` and an encoded `%5C` are separators like `/` (rule
//! 2 and 4; `%2F` stays [`SanitizeErrorKind::EncodedSeparator`]), so `..\` and `%5C..%5C`
//! are dot segments removed by rule 6 and contained by rule 7; a first segment that is a
//! drive letter (`C:`) is compared case-insensitively (stored upper-case) and the path has no
//! leading `/` (`file:///C:/Users/a.rs` → `C:/Users/a.rs`); a UNC path (a host authority
//! `file://server/share/`, or a path starting with two separators) is
//! [`SanitizeErrorKind::UncPath`]. Windows mode also refuses a `:` past the drive letter
//! ([`SanitizeErrorKind::AlternateDataStream`]: `a.rs::$DATA`, `sub/c:x`), a drive letter past
//! the first segment ([`SanitizeErrorKind::DriveNotFirst`]) and DOS device names
//! ([`SanitizeErrorKind::ReservedDeviceName`]: `CON`, `aux.txt`, `COM1`), each segment checked
//! before dot-segment removal.
//!
//! In every style, a decoded character that Unicode NFKC folds into a `.`, `/` or `\` (the
//! fullwidth `．／＼`, `‥`, `…`) is [`SanitizeErrorKind::CompatibilityDotOrSeparator`] (rule 4),
//! except the leaders `․` `‥` `…` inside a name in [`PathStyle::Posix`] (`Wait….md`; a segment
//! of only dots and leaders, like `‥`, is still refused).

use std::fmt;

/// Longest URI [`Root::resolve`] accepts, in bytes (the raw, still percent-encoded URI).
/// Linux `PATH_MAX` is 4096 bytes; a longer URI is rejected with [`SanitizeErrorKind::TooLong`].
pub const MAX_URI_BYTES: usize = 4096;

/// Most path segments [`Root::resolve`] accepts, counted on the decoded path *before* dot-segment
/// removal (so `/./././…` cannot make the work unbounded), root segments included. One more is
/// rejected with [`SanitizeErrorKind::TooManySegments`].
pub const MAX_SEGMENTS: usize = 128;

/// Which sanitizer rule rejected a URI. `#[non_exhaustive]`: new rules may be added.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SanitizeErrorKind {
    /// The URI is longer than [`MAX_URI_BYTES`] bytes; the offset is `MAX_URI_BYTES`.
    TooLong,
    /// The decoded path has more than [`MAX_SEGMENTS`] segments; the offset is the raw offset of
    /// the first segment past the limit.
    TooManySegments,
    /// A raw character that RFC 3986 §2 does not allow anywhere in a URI (space, `"`, `<`, `>`,
    /// `^`, `` ` ``, `{`, `|`, `}`).
    InvalidChar,
    /// A control character (C0, DEL or C1), raw or percent-encoded (`%00`, `%0a`, `%c2%85`).
    ControlChar,
    /// A raw backslash (`\`): a path separator on Windows. (Encoded, `%5c`, it is
    /// [`EncodedSeparator`](Self::EncodedSeparator).)
    Backslash,
    /// A percent-encoded path separator, `%2F` (`/`) or `%5C` (`\`). Decoded once, it is
    /// ambiguous: a server that treats it as data sees one segment `a/b`, one that decodes before
    /// splitting sees two segments `a`, `b` (and `..%2f..%2f` climbs). Either reading changes the
    /// segments the client wrote, so it is rejected rather than decoded into a separator
    /// (RFC 3986 §2.2: a reserved character percent-encoded is not equivalent to the raw one).
    EncodedSeparator,
    /// No `scheme:` at the start (a relative reference, RFC 3986 §4.2) or a malformed scheme.
    MissingScheme,
    /// The scheme differs from the root's (RFC 3986 §3.1, compared case-insensitively).
    SchemeMismatch,
    /// The authority differs from the root's (RFC 3986 §3.2; `file://localhost/` equals
    /// `file:///`, RFC 8089 §2).
    AuthorityMismatch,
    /// The URI has a query (`?`) or fragment (`#`): a resource path has neither.
    QueryOrFragment,
    /// The path is not absolute (`file:etc/passwd`, RFC 3986 `path-rootless`).
    RelativePath,
    /// A `%` not followed by two hex digits (`%ZZ`, `%2`, RFC 3986 §2.1).
    MalformedEscape,
    /// After decoding once, a `%` still followed by two hex digits (`%252e` → `%2e`): decoding a
    /// second time would change the path.
    DoubleEncoding,
    /// The decoded path is not UTF-8 (including overlong forms such as `%c0%ae`, RFC 3629 §3).
    InvalidUtf8,
    /// An empty path segment (`a//b`, or `%2f%2f`) other than one trailing `/`: `//x` would
    /// re-parse as an authority.
    EmptySegment,
    /// After RFC 3986 §5.2.4 remove_dot_segments the path is not inside the root by whole
    /// segments (`..` past the root, or a sibling such as `/srv/allowed_evil` of `/srv/allowed`).
    EscapesRoot,
    /// [`PathStyle::Windows`] only: a UNC path — a host authority (`file://server/share/x`) or
    /// a path starting with two separators (`file:////server/share`, `file:///%5C%5Cserver`) —
    /// which names another machine, never a file below the root. The offset is the authority or
    /// the second separator.
    UncPath,
    /// [`PathStyle::Windows`] only: a segment ending in a dot or a space other than `.` and `..`
    /// themselves (`..%20`, `...`, `secret.txt.`): Windows drops trailing dots and spaces, so
    /// `.. ` opens `..` and `a.` opens `a` — another file than the URI names.
    TrailingDotOrSpace,
    /// A decoded character whose Unicode NFKC compatibility form holds a `.`, `/` or `\`
    /// ([`folds_to_dot_or_separator`]): the fullwidth `．` (U+FF0E), `／` (U+FF0F), `＼` (U+FF3C),
    /// the small `﹒` (U+FE52) and `﹨` (U+FE68), the leaders `․` `‥` (U+2024, U+2025), `…`
    /// (U+2026) and their vertical forms, `⒈`-style numbers, `℀`-style `a/c`. Windows' best-fit
    /// mapping and normalizing filesystems and frameworks (NFKC, Unicode TR 15) fold them, so
    /// `%EF%BC%8E%EF%BC%8E%EF%BC%8F` (`．．／`) becomes `../`. Refused in every path style; the
    /// offset is the character's first byte. One exception: in
    /// [`PathStyle::Posix`] the leaders `․` `‥` `…` (U+2024–U+2026) are accepted inside a segment
    /// that has another character than dots and dot-folding characters (`Wait….md`, legal and
    /// common on Linux and macOS, whose filesystems do not apply NFKC: HFS+ and APFS use
    /// canonical forms, which leave U+2024–U+2026 alone); such a segment cannot become a dot
    /// segment whatever folds it. A segment made only of them and dots (`‥`, `….`) is refused,
    /// and so is every leader in [`PathStyle::Windows`] (best-fit mapping).
    CompatibilityDotOrSeparator,
    /// [`PathStyle::Windows`] only: a `:` in a segment other than the leading drive letter
    /// (`a.rs::$DATA`, `sub/c:x`): NTFS reads `name:stream` as an alternate data stream of
    /// `name`, another file than the URI names.
    AlternateDataStream,
    /// [`PathStyle::Windows`] only: a drive letter segment (`C:`) that is not the first segment
    /// (`sub/C:/Windows`): joined to a root, Windows APIs may read it as a path on that drive.
    DriveNotFirst,
    /// [`PathStyle::Windows`] only: a DOS device name (`CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`,
    /// `LPT0`–`LPT9`, also with a superscript digit `COM¹`, and `CONIN$`, `CONOUT$`) as a
    /// segment, case-insensitive, with any extension and spaces before it (`aux.txt`,
    /// `nul .tar.gz`): Windows opens the device in every directory, not a file.
    ReservedDeviceName,
}

impl SanitizeErrorKind {
    /// The kind's name, e.g. `"EscapesRoot"` (stable; used in CLI output and `-32602` replies).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TooLong => "TooLong",
            Self::TooManySegments => "TooManySegments",
            Self::InvalidChar => "InvalidChar",
            Self::ControlChar => "ControlChar",
            Self::Backslash => "Backslash",
            Self::EncodedSeparator => "EncodedSeparator",
            Self::MissingScheme => "MissingScheme",
            Self::SchemeMismatch => "SchemeMismatch",
            Self::AuthorityMismatch => "AuthorityMismatch",
            Self::QueryOrFragment => "QueryOrFragment",
            Self::RelativePath => "RelativePath",
            Self::MalformedEscape => "MalformedEscape",
            Self::DoubleEncoding => "DoubleEncoding",
            Self::InvalidUtf8 => "InvalidUtf8",
            Self::EmptySegment => "EmptySegment",
            Self::EscapesRoot => "EscapesRoot",
            Self::UncPath => "UncPath",
            Self::TrailingDotOrSpace => "TrailingDotOrSpace",
            Self::CompatibilityDotOrSeparator => "CompatibilityDotOrSeparator",
            Self::AlternateDataStream => "AlternateDataStream",
            Self::DriveNotFirst => "DriveNotFirst",
            Self::ReservedDeviceName => "ReservedDeviceName",
        }
    }
}

impl SanitizeErrorKind {
    /// One sentence for people saying what the rule rejects, e.g. for
    /// [`EscapesRoot`](Self::EscapesRoot): "after removing dot segments (RFC 3986 §5.2.4) the
    /// path is not inside the root by whole segments (`..` past the root, or a sibling name)".
    pub fn explain(self) -> &'static str {
        match self {
            Self::TooLong => "the URI is longer than the limit of 4096 bytes (MAX_URI_BYTES)",
            Self::TooManySegments => {
                "the path has more than 128 segments (MAX_SEGMENTS), counted before dot-segment removal"
            }
            Self::InvalidChar => {
                "a character RFC 3986 does not allow in a URI (space, \", <, >, ^, `, {, |, })"
            }
            Self::ControlChar => "a control character, raw or percent-encoded (%00, %0a, %c2%85)",
            Self::Backslash => "a backslash, which is a path separator on Windows",
            Self::EncodedSeparator => {
                "an encoded path separator (%2F or %5C): decoded, it would split or join segments"
            }
            Self::MissingScheme => "no scheme: a relative reference is not a resource URI",
            Self::SchemeMismatch => "the scheme differs from the root's",
            Self::AuthorityMismatch => "the authority (host) differs from the root's",
            Self::QueryOrFragment => "a query (?) or fragment (#): a resource path has neither",
            Self::RelativePath => "the path is not absolute",
            Self::MalformedEscape => "a % not followed by two hex digits",
            Self::DoubleEncoding => {
                "double encoding: after decoding once, a % still encodes a byte (e.g. %252e)"
            }
            Self::InvalidUtf8 => "the decoded path is not UTF-8 (e.g. the overlong %c0%ae)",
            Self::EmptySegment => {
                "an empty path segment (//), which could re-parse as an authority"
            }
            Self::EscapesRoot => {
                "after removing dot segments (RFC 3986 §5.2.4) the path is not inside the root by whole segments (`..` past the root, or a sibling name)"
            }
            Self::UncPath => {
                "a UNC path (\\\\server\\share: a host, or two leading separators), refused in Windows path mode"
            }
            Self::TrailingDotOrSpace => {
                "a segment ending in a dot or space (Windows path mode: Windows drops them, so `.. ` is `..`)"
            }
            Self::CompatibilityDotOrSeparator => {
                "a character that Unicode NFKC folds to hold a dot or separator (fullwidth ．／＼, ‥, …): normalizing filesystems and Windows read `．．／` as `../`"
            }
            Self::AlternateDataStream => {
                "a `:` in a segment other than the leading drive letter (Windows path mode: `a.rs::$DATA` names an alternate data stream)"
            }
            Self::DriveNotFirst => {
                "a drive letter (`C:`) that is not the first segment (Windows path mode: it would name another drive)"
            }
            Self::ReservedDeviceName => {
                "a DOS device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, CONIN$, CONOUT$; any case and extension) as a segment (Windows path mode: it opens the device)"
            }
        }
    }
}

impl fmt::Display for SanitizeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A URI rejected by [`Root::new`] or [`Root::resolve`]: the rule that fired ([`kind`](Self::kind)) and the byte offset in the input URI where it applies
/// ([`offset`](Self::offset)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("URI rejected: {kind} at byte {offset}")]
pub struct SanitizeError {
    kind: SanitizeErrorKind,
    offset: usize,
}

impl SanitizeError {
    pub(crate) fn new(kind: SanitizeErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// The rule that fired.
    pub fn kind(&self) -> SanitizeErrorKind {
        self.kind
    }

    /// Byte offset in the input URI where the rule applies (the first offending byte, the segment
    /// that escaped, or the start of the scheme/authority).
    pub fn offset(&self) -> usize {
        self.offset
    }
}

/// Containment check: `path` is inside `root` by whole segments.
pub(crate) type Containment = fn(root: &[String], path: &[String]) -> bool;

/// The real containment check: component-wise prefix.
pub(crate) fn contains_by_segments(root: &[String], path: &[String]) -> bool {
    path.len() >= root.len() && path[..root.len()] == *root
}

/// How the path of a URI is read: POSIX (the default) or Windows (`\` and `%5C` are separators,
/// a drive letter `C:` leads the path and compares case-insensitively, UNC paths are refused).
/// See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PathStyle {
    /// `/` is the only separator; `\` is [`SanitizeErrorKind::Backslash`] and `%5C`
    /// [`SanitizeErrorKind::EncodedSeparator`].
    #[default]
    Posix,
    /// Windows paths in `file:` URIs (RFC 8089 Appendix E.2): `file:///C:/Users/a.rs` resolves
    /// to `C:/Users/a.rs`.
    Windows,
}

/// A sanitizing root, e.g. `Root::new("file:///project/")`: every URI given to
/// [`resolve`](Self::resolve) must have the same scheme and authority and a path inside this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    scheme: String,
    /// `None` = no `//authority` part. For `file`, always `Some("")` (localhost normalized away).
    authority: Option<String>,
    segments: Vec<String>,
    style: PathStyle,
}

/// A URI accepted by [`Root::resolve`]: decoded once, dot segments removed, inside the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// `scheme:` or `scheme://authority` (normalized from the root).
    prefix: String,
    /// Decoded absolute path, `/`-separated, no empty segment, no trailing `/` (except `/`).
    path: String,
    /// Byte index in `path` where the part relative to the root begins.
    relative_start: usize,
}

impl ResolvedPath {
    /// The normalized, **percent-decoded** absolute path (UTF-8), e.g. `/srv/allowed/My File.txt`.
    /// No `.`/`..` segment, no empty segment, no trailing `/` (the root `/` itself is `"/"`).
    /// In [`PathStyle::Windows`] a drive path has no leading `/` (`C:/Users/My File.txt`, the
    /// drive's root `C:/`); separators are always `/`.
    pub fn as_str(&self) -> &str {
        &self.path
    }

    /// The decoded path relative to the root, `/`-separated, no leading slash; `""` for the root
    /// itself. E.g. root `file:///srv/allowed/`, URI `file:///srv/allowed/a/b.txt` → `a/b.txt`.
    pub fn relative(&self) -> &str {
        &self.path[self.relative_start..]
    }

    /// The canonical URI (scheme and authority from the root, each segment percent-encoded with
    /// the RFC 3986 `pchar` set minus `%`). Resolving it again yields an equal `ResolvedPath`.
    pub fn to_uri(&self) -> String {
        let mut out = String::with_capacity(self.prefix.len() + self.path.len() + 8);
        out.push_str(&self.prefix);
        if !self.path.starts_with('/') {
            // A Windows drive path (`C:/a`) is `file:///C:/a` (RFC 8089 Appendix E.2).
            out.push('/');
        }
        out.push_str(&encode_path(&self.path));
        out
    }

    /// Byte length of the `scheme://authority` prefix of [`to_uri`](Self::to_uri) (a Windows
    /// drive path has one more `/` after it).
    pub(crate) fn prefix_len(&self) -> usize {
        self.prefix.len()
    }
}

impl fmt::Display for ResolvedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_uri())
    }
}

/// Percent-encodes a `/`-separated path for a URI path (RFC 3986 §2.1, §3.3):
/// ASCII letters and digits, the unreserved `-._~`, the sub-delims, `:`, `@`
/// and `/` stay; every other byte (UTF-8 of non-ASCII, `%`, `#`, `?`, space…)
/// is written `%XX` with upper-case hex. Infallible; the output is at least
/// `path.len()` bytes.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
            );
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A URI split into its parts (before any decoding), with byte offsets.
struct Parts<'a> {
    scheme: &'a str,
    authority: Option<(&'a str, usize)>,
    path: &'a str,
    path_offset: usize,
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn hex_val(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    }
}

/// Rules 1–3: length, raw characters, scheme/authority split, query/fragment.
fn split(uri: &str, style: PathStyle) -> Result<Parts<'_>, SanitizeError> {
    use SanitizeErrorKind as K;
    if uri.len() > MAX_URI_BYTES {
        return Err(SanitizeError::new(K::TooLong, MAX_URI_BYTES));
    }
    for (i, c) in uri.char_indices() {
        if c.is_control() {
            return Err(SanitizeError::new(K::ControlChar, i));
        }
        if c == '\\' {
            if style == PathStyle::Windows {
                continue; // a separator, read as `/` by `decode_path`
            }
            return Err(SanitizeError::new(K::Backslash, i));
        }
        if c.is_ascii() && !(c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c)) {
            return Err(SanitizeError::new(K::InvalidChar, i));
        }
    }
    let bytes = uri.as_bytes();
    // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
    let colon = match uri.find(':') {
        Some(c) if c > 0 => c,
        _ => return Err(SanitizeError::new(K::MissingScheme, 0)),
    };
    let scheme = &uri[..colon];
    if !bytes[0].is_ascii_alphabetic()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return Err(SanitizeError::new(K::MissingScheme, 0));
    }
    let mut rest_start = colon + 1;
    let end = uri[rest_start..]
        .find(['?', '#'])
        .map_or(uri.len(), |i| rest_start + i);
    if end < uri.len() {
        return Err(SanitizeError::new(K::QueryOrFragment, end));
    }
    let mut authority = None;
    if uri[rest_start..].starts_with("//") {
        let auth_start = rest_start + 2;
        let auth_end = uri[auth_start..]
            .find(|c| c == '/' || (c == '\\' && style == PathStyle::Windows))
            .map_or(uri.len(), |i| auth_start + i);
        authority = Some((&uri[auth_start..auth_end], auth_start));
        rest_start = auth_end;
    }
    Ok(Parts {
        scheme,
        authority,
        path: &uri[rest_start..],
        path_offset: rest_start,
    })
}

/// Normalized authority for comparison: lowercase; for `file`, `localhost` and absent → `""`.
fn normalize_authority(scheme: &str, authority: Option<&str>) -> Option<String> {
    let lower = authority.map(str::to_ascii_lowercase);
    if scheme == "file" {
        match lower.as_deref() {
            None | Some("localhost") => Some(String::new()),
            _ => lower,
        }
    } else {
        lower
    }
}

/// One decoded segment and the raw byte offset in the URI where it begins.
struct Segment {
    text: String,
    offset: usize,
}

/// Rules 4–5: decode the path exactly once and split it into segments.
/// Returns the segments (without the leading empty one) and whether a trailing `/` was present.
fn decode_path(
    path: &str,
    path_offset: usize,
    style: PathStyle,
) -> Result<Vec<Segment>, SanitizeError> {
    use SanitizeErrorKind as K;
    let raw = path.as_bytes();
    // decoded bytes and, for each, the raw offset (in the whole URI) it came from
    let mut dec: Vec<u8> = Vec::with_capacity(raw.len());
    let mut map: Vec<usize> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == b'%' {
            if i + 2 < raw.len() && is_hex(raw[i + 1]) && is_hex(raw[i + 2]) {
                dec.push(hex_val(raw[i + 1]) << 4 | hex_val(raw[i + 2]));
                map.push(path_offset + i);
                i += 3;
                continue;
            }
            return Err(SanitizeError::new(K::MalformedEscape, path_offset + i));
        }
        dec.push(b);
        map.push(path_offset + i);
        i += 1;
    }
    if style == PathStyle::Windows {
        // raw `\` or `%5C`: a separator, like `/` (`%2F` stays an encoded separator)
        for b in dec.iter_mut().filter(|b| **b == b'\\') {
            *b = b'/';
        }
    }
    // byte-level rules on the decoded path
    for (j, &b) in dec.iter().enumerate() {
        if b < 0x20 || b == 0x7f {
            return Err(SanitizeError::new(K::ControlChar, map[j]));
        }
        if (b == b'/' || b == b'\\') && raw[map[j] - path_offset] == b'%' {
            if b == b'/' && raw[map[j] - path_offset + 2].eq_ignore_ascii_case(&b'c') {
                continue; // `%5C` in Windows mode, now `/`
            }
            return Err(SanitizeError::new(K::EncodedSeparator, map[j]));
        }
        if b == b'\\' {
            return Err(SanitizeError::new(K::Backslash, map[j]));
        }
        if b == b'%' && j + 2 < dec.len() && is_hex(dec[j + 1]) && is_hex(dec[j + 2]) {
            return Err(SanitizeError::new(K::DoubleEncoding, map[j]));
        }
    }
    let text = match std::str::from_utf8(&dec) {
        Ok(t) => t,
        Err(e) => return Err(SanitizeError::new(K::InvalidUtf8, map[e.valid_up_to()])),
    };
    if let Some((j, _)) = text.char_indices().find(|(_, c)| c.is_control()) {
        return Err(SanitizeError::new(K::ControlChar, map[j]));
    }
    if let Some((j, _)) = text.char_indices().find(|&(j, c)| {
        folds_to_dot_or_separator(c)
            && !(style == PathStyle::Posix && is_leader_dot(c) && segment_has_name_char(text, j))
    }) {
        return Err(SanitizeError::new(K::CompatibilityDotOrSeparator, map[j]));
    }
    if text.is_empty() {
        return Ok(Vec::new());
    }
    if !text.starts_with('/') {
        return Err(SanitizeError::new(K::RelativePath, path_offset));
    }
    if style == PathStyle::Windows && text.starts_with("//") {
        return Err(SanitizeError::new(K::UncPath, map[1]));
    }
    let mut segments = Vec::new();
    let mut start = 1;
    loop {
        let end = text[start..].find('/').map_or(text.len(), |k| start + k);
        let seg_offset = if start < map.len() {
            map[start]
        } else {
            path_offset + raw.len()
        };
        if segments.len() == MAX_SEGMENTS {
            return Err(SanitizeError::new(K::TooManySegments, seg_offset));
        }
        let is_last = end == text.len();
        if start == end && !is_last {
            return Err(SanitizeError::new(K::EmptySegment, seg_offset));
        }
        let mut seg = text[start..end].to_owned();
        if style == PathStyle::Windows
            && seg != "."
            && seg != ".."
            && (seg.ends_with('.') || seg.ends_with(' '))
        {
            return Err(SanitizeError::new(K::TrailingDotOrSpace, seg_offset));
        }
        if style == PathStyle::Windows {
            if let Some(kind) = windows_segment_error(&seg, segments.is_empty()) {
                return Err(SanitizeError::new(kind, seg_offset));
            }
            if is_drive(&seg) {
                seg.make_ascii_uppercase(); // `c:` and `C:` are one drive
            }
        }
        segments.push(Segment {
            text: seg,
            offset: seg_offset,
        });
        if is_last {
            break;
        }
        start = end + 1;
    }
    Ok(segments)
}

/// [`PathStyle::Windows`]: the rule a decoded segment breaks, if any (`first`: it is the
/// path's first segment, where a drive letter belongs): [`SanitizeErrorKind::DriveNotFirst`],
/// [`SanitizeErrorKind::AlternateDataStream`] (any other `:`),
/// [`SanitizeErrorKind::ReservedDeviceName`].
fn windows_segment_error(seg: &str, first: bool) -> Option<SanitizeErrorKind> {
    if is_drive(seg) {
        return (!first).then_some(SanitizeErrorKind::DriveNotFirst);
    }
    if seg.contains(':') {
        return Some(SanitizeErrorKind::AlternateDataStream);
    }
    is_reserved_device_name(seg).then_some(SanitizeErrorKind::ReservedDeviceName)
}

/// A DOS device name as a Windows path segment (Microsoft, "Naming Files, Paths, and
/// Namespaces"): the part before the first `.`, trailing spaces dropped, is `CON`, `PRN`,
/// `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9` (a superscript `¹²³` counts as a digit),
/// `CONIN$` or `CONOUT$`, compared case-insensitively: `aux.txt`, `Nul .tar.gz`, `com1`.
pub fn is_reserved_device_name(seg: &str) -> bool {
    let stem = seg.split('.').next().unwrap_or("").trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) {
        return true;
    }
    let mut chars = upper.chars();
    let head: String = chars.by_ref().take(3).collect();
    let digit = chars.next();
    (head == "COM" || head == "LPT")
        && chars.next().is_none()
        && digit.is_some_and(|d| d.is_ascii_digit() || matches!(d, '¹' | '²' | '³'))
}

/// `true` for a character whose Unicode NFKC form (Unicode 14, UAX #15) is not itself and
/// holds a `.`, `/` or `\` — every such character, listed from Python's `unicodedata`
/// (test `compat_table_is_every_nfkc_dot_or_separator` in `tests/issue15_review.rs` pins it):
/// U+2024–U+2026, U+2100, U+2101, U+2105, U+2106, U+2488–U+249B, U+33C2, U+33C7, U+33D8,
/// U+FE19, U+FE30, U+FE52, U+FE68, U+FF0E, U+FF0F, U+FF3C, U+1F100.
pub fn folds_to_dot_or_separator(c: char) -> bool {
    matches!(
        c,
        '\u{2024}'..='\u{2026}'
            | '\u{2100}'
            | '\u{2101}'
            | '\u{2105}'
            | '\u{2106}'
            | '\u{2488}'..='\u{249B}'
            | '\u{33C2}'
            | '\u{33C7}'
            | '\u{33D8}'
            | '\u{FE19}'
            | '\u{FE30}'
            | '\u{FE52}'
            | '\u{FE68}'
            | '\u{FF0E}'
            | '\u{FF0F}'
            | '\u{FF3C}'
            | '\u{1F100}'
    )
}

/// The one-, two- and three-dot leaders `․` `‥` `…` (U+2024–U+2026): accepted inside a name in
/// [`PathStyle::Posix`] (see [`SanitizeErrorKind::CompatibilityDotOrSeparator`]).
pub(crate) fn is_leader_dot(c: char) -> bool {
    matches!(c, '\u{2024}'..='\u{2026}')
}

/// Whether the `/`-separated segment of `text` holding byte `at` has a character that is neither
/// a `.` nor one that NFKC folds to hold a dot or separator: it cannot read as a dot segment.
fn segment_has_name_char(text: &str, at: usize) -> bool {
    let start = text[..at].rfind('/').map_or(0, |i| i + 1);
    let end = text[at..].find('/').map_or(text.len(), |i| at + i);
    text[start..end]
        .chars()
        .any(|c| c != '.' && !folds_to_dot_or_separator(c))
}

/// A Windows drive letter segment: `C:` (RFC 8089 Appendix E.2 `drive-letter`).
fn is_drive(seg: &str) -> bool {
    let b = seg.as_bytes();
    b.len() == 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Rule 6: RFC 3986 §5.2.4 remove_dot_segments on an absolute path, by segments: `.` is dropped,
/// `..` drops the previous output segment (never above `/`), a trailing empty segment (a
/// trailing `/`) is dropped. Returns the output segments with their raw offsets, and the raw
/// offset of the last `..` that removed a segment (for error positions).
fn remove_dot_segments(segments: Vec<Segment>) -> (Vec<Segment>, Option<usize>) {
    let mut out: Vec<Segment> = Vec::with_capacity(segments.len());
    let mut last_pop = None;
    for seg in segments {
        match seg.text.as_str() {
            "" | "." => {}
            ".." => {
                if out.pop().is_some() {
                    last_pop = Some(seg.offset);
                } else {
                    last_pop.get_or_insert(seg.offset);
                }
            }
            _ => out.push(seg),
        }
    }
    (out, last_pop)
}

/// [`PathStyle::Windows`]: a `file:` URI with a host authority is a UNC path
/// ([`SanitizeErrorKind::UncPath`] at the authority).
fn check_unc(
    style: PathStyle,
    scheme: &str,
    parts: &Parts<'_>,
    authority: Option<&str>,
) -> Result<(), SanitizeError> {
    if style == PathStyle::Windows
        && scheme.eq_ignore_ascii_case("file")
        && let (Some((_, at)), Some(a)) = (parts.authority, authority)
        && !a.is_empty()
    {
        return Err(SanitizeError::new(SanitizeErrorKind::UncPath, at));
    }
    Ok(())
}

impl Root {
    /// Parses a root URI such as `file:///project/` (trailing `/` optional). The root itself must
    /// pass the same rules as [`resolve`](Self::resolve) (its dot segments are removed), and may
    /// use any scheme (`file:///srv/`, `docs://project/`).
    ///
    /// # Errors
    /// A [`SanitizeError`] with the kind of the rule the root URI breaks (offset into `root_uri`).
    pub fn new(root_uri: &str) -> Result<Root, SanitizeError> {
        Root::with_style(root_uri, PathStyle::Posix)
    }

    /// [`Root::new`] reading paths in `style` (the root's own and those it resolves):
    /// `Root::with_style("file:///C:/Users/dev/", PathStyle::Windows)`.
    ///
    /// # Errors
    /// As [`Root::new`]; in [`PathStyle::Windows`] also [`SanitizeErrorKind::UncPath`] for a
    /// UNC root.
    pub fn with_style(root_uri: &str, style: PathStyle) -> Result<Root, SanitizeError> {
        let parts = split(root_uri, style)?;
        let scheme = parts.scheme.to_ascii_lowercase();
        let authority = normalize_authority(&scheme, parts.authority.map(|(a, _)| a));
        check_unc(style, &scheme, &parts, authority.as_deref())?;
        let segments = decode_path(parts.path, parts.path_offset, style)?;
        let (segments, _) = remove_dot_segments(segments);
        Ok(Root {
            scheme,
            authority,
            segments: segments.into_iter().map(|s| s.text).collect(),
            style,
        })
    }

    /// How this root reads paths.
    pub fn style(&self) -> PathStyle {
        self.style
    }

    /// The root's decoded path segments, e.g. `["srv", "allowed"]` for `file:///srv/allowed/`.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The root as a canonical URI with a trailing `/`, e.g. `file:///srv/allowed/`.
    pub fn to_uri(&self) -> String {
        let mut s = self.prefix();
        for seg in &self.segments {
            s.push('/');
            s.push_str(&encode_path(seg));
        }
        s.push('/');
        s
    }

    fn prefix(&self) -> String {
        match &self.authority {
            Some(a) => format!("{}://{}", self.scheme, a),
            None => format!("{}:", self.scheme),
        }
    }

    /// Resolves a client-built URI (e.g. the `uri` of a `resources/read` request, MCP 2026-07-28
    /// `ReadResourceRequest`) against this root.
    ///
    /// # Errors
    /// A [`SanitizeError`] whose [`kind`](SanitizeError::kind) names the rule that fired (see the
    /// module docs for the order) and whose [`offset`](SanitizeError::offset) is the byte in `uri`.
    pub fn resolve(&self, uri: &str) -> Result<ResolvedPath, SanitizeError> {
        self.resolve_with(uri, contains_by_segments)
    }

    pub(crate) fn resolve_with(
        &self,
        uri: &str,
        contains: Containment,
    ) -> Result<ResolvedPath, SanitizeError> {
        use SanitizeErrorKind as K;
        let parts = split(uri, self.style)?;
        if !parts.scheme.eq_ignore_ascii_case(&self.scheme) {
            return Err(SanitizeError::new(K::SchemeMismatch, 0));
        }
        let authority = normalize_authority(&self.scheme, parts.authority.map(|(a, _)| a));
        check_unc(self.style, &self.scheme, &parts, authority.as_deref())?;
        if authority != self.authority {
            let at = parts
                .authority
                .map_or(self.scheme.len() + 1, |(_, offset)| offset);
            return Err(SanitizeError::new(K::AuthorityMismatch, at));
        }
        let segments = decode_path(parts.path, parts.path_offset, self.style)?;
        let end_offset = uri.len();
        let (segments, last_pop) = remove_dot_segments(segments);
        let names: Vec<String> = segments.iter().map(|s| s.text.clone()).collect();
        if !contains(&self.segments, &names) {
            // the last `..` that removed a segment, else the first diverging segment
            let at = last_pop
                .or_else(|| {
                    names
                        .iter()
                        .zip(&self.segments)
                        .position(|(a, b)| a != b)
                        .map(|k| segments[k].offset)
                })
                .unwrap_or(end_offset);
            return Err(SanitizeError::new(K::EscapesRoot, at));
        }
        let mut path = String::with_capacity(uri.len());
        let mut relative_start = None;
        for (k, name) in names.iter().enumerate() {
            // A Windows drive path has no leading `/` (`C:/Users`).
            if !(k == 0 && self.style == PathStyle::Windows && is_drive(name)) {
                path.push('/');
            }
            if k == self.segments.len() {
                relative_start = Some(path.len());
            }
            path.push_str(name);
        }
        if path.is_empty() || (names.len() == 1 && path == names[0] && is_drive(&path)) {
            path.push('/'); // `/`, or the drive's root `C:/`
        }
        let relative_start = relative_start.unwrap_or(path.len());
        let resolved = ResolvedPath {
            prefix: self.prefix(),
            path,
            relative_start,
        };
        // Raw characters accepted unencoded (`[`, non-ASCII) are percent-encoded by `to_uri`, up
        // to 3× longer: a path whose canonical URI is over the limit would not resolve again, so
        // it is not a path this sanitizer hands out (found by the `uri_sanitize` fuzz target).
        if resolved.to_uri().len() > MAX_URI_BYTES {
            return Err(SanitizeError::new(K::TooLong, end_offset));
        }
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[` is accepted raw and encoded as `%5B` by `to_uri`: the canonical form, not only the raw
    /// URI, is held to `MAX_URI_BYTES`, at the limit and one past.
    #[test]
    fn canonical_uri_at_max_uri_bytes_and_one_past() {
        let root = Root::new("file:///").unwrap();
        // canonical: "file:///" (8) + 3 bytes per `[` + pad of plain `a`s
        let brackets = 1000; // 3000 canonical bytes
        let at_limit = format!(
            "file:///{}{}",
            "[".repeat(brackets),
            "a".repeat(MAX_URI_BYTES - 8 - 3 * brackets)
        );
        let ok = root.resolve(&at_limit).unwrap();
        assert_eq!(ok.to_uri().len(), MAX_URI_BYTES);
        assert_eq!(root.resolve(&ok.to_uri()).unwrap(), ok);
        let one_past = format!("{at_limit}a");
        let err = root.resolve(&one_past).unwrap_err();
        assert_eq!(err.kind(), SanitizeErrorKind::TooLong);
        assert_eq!(err.offset(), one_past.len());
    }

    /// Each `(root, uri, path, relative, canonical uri)`: `uri` resolves under `root` to the
    /// decoded `path`, `relative` to the root, and back to the canonical uri.
    #[test]
    fn resolved_path_relative_part_and_canonical_uri() {
        for (root, uri, path, relative, canonical) in [
            // The root itself: an empty relative part.
            (
                "file:///srv/allowed/",
                "file:///srv/allowed",
                "/srv/allowed",
                "",
                "file:///srv/allowed",
            ),
            // Under the root `/`, a relative part has no leading slash.
            ("file:///", "file:///a/b", "/a/b", "a/b", "file:///a/b"),
            ("file:///", "file:///", "/", "", "file:///"),
            // A space, `%` and non-ASCII are decoded, and encoded again by `to_uri`.
            (
                "file:///p/",
                "file:///p/My%20File%25%C3%BC.txt",
                "/p/My File%ü.txt",
                "My File%ü.txt",
                "file:///p/My%20File%25%C3%BC.txt",
            ),
        ] {
            let r = Root::new(root).unwrap().resolve(uri).unwrap();
            assert_eq!(
                (r.as_str(), r.relative(), r.to_uri().as_str()),
                (path, relative, canonical),
                "{uri} under {root}"
            );
        }
    }
}
