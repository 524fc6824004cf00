//! Sans-IO RFC 6570 URI templates and the `resources/read` URI sanitizer.
//!
//! - [`template`]: expansion of all four RFC 6570 levels (via `iri-string`) and matching a
//!   concrete URI back to a template with percent-decoded values.
//! - [`Root::resolve`]: decode once (RFC 3986 §2.1), RFC 3986 §5.2.4 remove_dot_segments,
//!   component-wise containment; every rejection names its rule ([`SanitizeErrorKind`]) and byte
//!   offset. Limits: [`MAX_URI_BYTES`], [`MAX_SEGMENTS`].
//! - `fs` (cargo feature `fs`, off by default): the IO shell — opening a [`ResolvedPath`] below a
//!   real directory with `cap-std` (confinement only: ordinary file opening is
//!   `mcptape_transcript::file`).
//!   Its errors are its own (`fs::OpenError`); [`SanitizeError`] carries no I/O.
//!
//! ```
//! use mcptape_uri::{Root, SanitizeErrorKind};
//! let root = Root::new("file:///project/").unwrap();
//! assert_eq!(root.resolve("file://localhost/project/My%20File.txt").unwrap().relative(), "My File.txt");
//! let err = root.resolve("file:///project/%2e%2e/etc/passwd").unwrap_err();
//! assert_eq!(err.kind(), SanitizeErrorKind::EscapesRoot);
//! ```

#[cfg(feature = "fs")]
pub mod fs;
#[doc(hidden)]
pub mod fuzzing;
pub mod parts;
mod sanitize;
pub mod template;

pub use sanitize::{
    MAX_SEGMENTS, MAX_URI_BYTES, PathStyle, ResolvedPath, Root, SanitizeError, SanitizeErrorKind,
    encode_path, folds_to_dot_or_separator, is_reserved_device_name,
};
