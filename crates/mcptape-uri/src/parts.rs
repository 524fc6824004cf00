//! The parts of an absolute resource URI (RFC 3986 §3, IRIs per RFC 3987), parsed by
//! [`iri_string`]: the one place a resource URI is split into scheme, authority and path.
//!
//! ```
//! use mcptape_uri::parts::Parts;
//!
//! let p = Parts::parse("file:///project/img/b.png?x#y").unwrap();
//! assert_eq!((p.scheme, p.authority, p.path), ("file", Some(""), "/project/img/b.png"));
//! assert_eq!(Parts::parse("urn:isbn:0451450523").unwrap().authority, None);
//! assert!(Parts::parse("no scheme").is_none());
//! ```

use iri_string::types::IriStr;

/// Scheme, authority and path of an absolute URI; the query and fragment are left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts<'a> {
    /// The scheme, without the `:` (`file`, `demo`).
    pub scheme: &'a str,
    /// The authority after `//` (`Some("")` for `file:///…`); `None` when there is no `//`.
    pub authority: Option<&'a str>,
    /// The path, as written (not decoded; empty or starting with `/` after an authority).
    pub path: &'a str,
}

impl<'a> Parts<'a> {
    /// The parts of `uri`; `None` when it is not an absolute URI (or IRI): no scheme, a space,
    /// a bad percent-encoding.
    pub fn parse(uri: &'a str) -> Option<Parts<'a>> {
        let iri = IriStr::new(uri).ok()?;
        Some(Parts {
            scheme: iri.scheme_str(),
            authority: iri.authority_str(),
            path: iri.path_str(),
        })
    }
}
