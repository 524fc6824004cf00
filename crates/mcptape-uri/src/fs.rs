//! Filesystem mode (cargo feature `fs`, off by default): the IO shell of the crate; the rest is
//! sans-IO.
//!
//! - [`ConfinedRoot::resolve_and_open`] opens a [`ResolvedPath`] below a real directory through
//!   `cap-std`, whose confined lookups (on Linux `openat2` with `RESOLVE_BENEATH` where available,
//!   otherwise a component-by-component walk) refuse any path — including a symlink target, and
//!   including a symlink swapped in between [`Root::resolve`](crate::Root::resolve) and the open —
//!   that leaves the directory.
//!
//! Only confinement lives here: the workspace's ordinary (unconfined) file opening is
//! `mcptape_transcript::file`. The open: on Unix the open carries `O_NONBLOCK | O_NOCTTY`, so opening a FIFO
//! with no writer does not block, and the file type is then checked on the opened descriptor
//! (`fstat`, no race with a rename): only a regular file or a directory is returned, anything
//! else is [`OpenErrorKind::NotRegularFile`]. `O_NONBLOCK` stays set on the returned file: it has
//! no effect on reads of a regular file or a directory (POSIX `open(2)`/`read(2)`).
//!
//! Errors are this module's own [`OpenError`] (the sans-IO [`SanitizeError`](crate::SanitizeError)
//! carries no I/O).

use std::fmt;
use std::io;
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions};

use crate::ResolvedPath;

/// Why an open in filesystem mode failed. `#[non_exhaustive]`: new kinds may be added.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpenErrorKind {
    /// A symlink on the path leads outside the root directory (or is absolute: `cap-std` treats
    /// every absolute target as an escape). Only from [`ConfinedRoot::resolve_and_open`].
    SymlinkEscape,
    /// The path does not exist (below the root directory, for a confined open).
    NotFound,
    /// The path names something that is neither a regular file nor a directory (a FIFO, a
    /// socket, a character or block device). It is opened with `O_NONBLOCK` and rejected after an
    /// `fstat`, so a FIFO cannot hang the open (and a later read) forever; a socket already fails
    /// the open with `ENXIO`, also reported so.
    NotRegularFile,
    /// A regular file with more than one hard link, from [`ConfinedRoot::resolve_and_open`]
    /// unless [`ConfinedRoot::allow_hardlinks`]: a hard link inside the root may name a file
    /// outside it (any user can link a file they can read into a directory they can write), and
    /// no path-based confinement can tell; the link count is read on the opened descriptor
    /// (`fstat`, no race).
    HardLink,
    /// Another I/O error while opening (see [`OpenError::io_error`]).
    Io,
}

impl OpenErrorKind {
    /// The kind's name, e.g. `"SymlinkEscape"` (stable; used in CLI output).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SymlinkEscape => "SymlinkEscape",
            Self::NotFound => "NotFound",
            Self::NotRegularFile => "NotRegularFile",
            Self::HardLink => "HardLink",
            Self::Io => "Io",
        }
    }

    /// One sentence for people saying what the kind means.
    pub fn explain(self) -> &'static str {
        match self {
            Self::SymlinkEscape => "a symlink on the path leads outside the root directory",
            Self::NotFound => "no such file below the root directory",
            Self::NotRegularFile => {
                "not a regular file or directory (a FIFO, socket or device), which could block a read forever"
            }
            Self::HardLink => {
                "a regular file with more than one hard link, which may be a file outside the root directory (allow with --allow-hardlinks)"
            }
            Self::Io => "an I/O error while opening the file below the root directory",
        }
    }
}

impl fmt::Display for OpenErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed open in filesystem mode: the [`kind`](Self::kind), where the path sits in the URI
/// ([`offset`](Self::offset), confined opens only) and the underlying [`io::Error`] when there is
/// one ([`io_error`](Self::io_error)).
#[derive(Debug, thiserror::Error)]
#[error("open failed: {kind}{}", .io.as_ref().map(|e| format!(" ({e})")).unwrap_or_default())]
pub struct OpenError {
    kind: OpenErrorKind,
    offset: Option<usize>,
    #[source]
    io: Option<io::Error>,
}

impl OpenError {
    fn new(kind: OpenErrorKind, offset: Option<usize>, io: Option<io::Error>) -> Self {
        Self { kind, offset, io }
    }

    /// Why the open failed.
    pub fn kind(&self) -> OpenErrorKind {
        self.kind
    }

    /// The byte offset of the path in [`ResolvedPath::to_uri`].
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The I/O error behind the failure: always present for [`OpenErrorKind::Io`],
    /// [`OpenErrorKind::NotFound`] and [`OpenErrorKind::SymlinkEscape`]; for
    /// [`OpenErrorKind::NotRegularFile`] only when the open itself failed (`ENXIO`).
    pub fn io_error(&self) -> Option<&io::Error> {
        self.io.as_ref()
    }

    /// The kind of [`io_error`](Self::io_error), e.g. `PermissionDenied` for a symlink escape.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        self.io.as_ref().map(io::Error::kind)
    }

    /// This error as an [`io::Error`] (the underlying one when there is one, else one of kind
    /// `InvalidInput` carrying this error), for callers whose error type wraps `io::Error`.
    pub fn into_io_error(self) -> io::Error {
        match self.io {
            Some(e) => e,
            None => io::Error::new(io::ErrorKind::InvalidInput, self),
        }
    }
}

/// A directory handle that every open is confined to.
#[derive(Debug)]
pub struct ConfinedRoot {
    dir: Dir,
    /// Whether a regular file with more than one hard link may be opened.
    allow_hardlinks: bool,
}

impl ConfinedRoot {
    /// Opens `dir` (the directory the sanitizing [`Root`](crate::Root)'s path names) as the
    /// confinement root.
    ///
    /// # Errors
    /// The `io::Error` from opening the directory (not found, not a directory, permission).
    pub fn open(dir: impl AsRef<Path>) -> io::Result<ConfinedRoot> {
        Ok(ConfinedRoot::from_dir(Dir::open_ambient_dir(
            dir,
            ambient_authority(),
        )?))
    }

    /// Wraps an already opened `cap_std` directory.
    pub fn from_dir(dir: Dir) -> ConfinedRoot {
        ConfinedRoot {
            dir,
            allow_hardlinks: false,
        }
    }

    /// This root opening regular files with more than one hard link too (`uri resolve
    /// --allow-hardlinks`): only for a tree whose hard links you trust, since one may name a
    /// file outside the root ([`OpenErrorKind::HardLink`]).
    pub fn allow_hardlinks(mut self, allow: bool) -> ConfinedRoot {
        self.allow_hardlinks = allow;
        self
    }

    /// Opens `path.relative()` (the root itself for `""`) read-only below this directory,
    /// following symlinks that stay inside it, with the non-blocking opener (module docs).
    /// Only a regular file or a directory is returned.
    ///
    /// # Errors
    /// [`OpenErrorKind::SymlinkEscape`] if a symlink on the way leads outside the directory;
    /// [`OpenErrorKind::NotFound`]; [`OpenErrorKind::NotRegularFile`] for a FIFO, socket or
    /// device; [`OpenErrorKind::HardLink`] for a regular file with more than one hard link
    /// (unless [`ConfinedRoot::allow_hardlinks`]); [`OpenErrorKind::Io`] for other I/O errors.
    /// The offset is that of the path in [`ResolvedPath::to_uri`].
    pub fn resolve_and_open(&self, path: &ResolvedPath) -> Result<File, OpenError> {
        let rel = path.relative();
        let rel = if rel.is_empty() { "." } else { rel };
        let offset = Some(path.prefix_len());
        let file = open_checked(|opts| self.dir.open_with(rel, opts), offset)?;
        #[cfg(unix)]
        if !self.allow_hardlinks {
            use cap_std::fs::MetadataExt as _;
            let meta = file.metadata().map_err(|e| classify(e, offset))?;
            if meta.is_file() && meta.nlink() > 1 {
                return Err(OpenError::new(OpenErrorKind::HardLink, offset, None));
            }
        }
        Ok(file)
    }
}

/// The opener: read-only, `O_NONBLOCK | O_NOCTTY` on Unix, then `fstat` on the descriptor.
fn open_checked(
    open: impl FnOnce(&OpenOptions) -> io::Result<File>,
    offset: Option<usize>,
) -> Result<File, OpenError> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = open(&opts).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ENXIO) {
            // open(2) of a socket (or of a FIFO write side with no reader).
            return OpenError::new(OpenErrorKind::NotRegularFile, offset, Some(e));
        }
        classify(e, offset)
    })?;
    let file_type = file
        .metadata()
        .map_err(|e| classify(e, offset))?
        .file_type();
    if file_type.is_file() || file_type.is_dir() {
        Ok(file)
    } else {
        Err(OpenError::new(OpenErrorKind::NotRegularFile, offset, None))
    }
}

/// `cap-std` reports an escape as `PermissionDenied` built without an OS error code
/// (`cap_primitives::fs::errors::escape_attempt`, also for `EXDEV` from `RESOLVE_BENEATH`); a real
/// `EACCES` carries its errno.
fn classify(e: io::Error, offset: Option<usize>) -> OpenError {
    let kind = match e.kind() {
        io::ErrorKind::PermissionDenied if e.raw_os_error().is_none() => {
            OpenErrorKind::SymlinkEscape
        }
        io::ErrorKind::NotFound => OpenErrorKind::NotFound,
        _ => OpenErrorKind::Io,
    };
    OpenError::new(kind, offset, Some(e))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::{PathStyle, Root, SanitizeErrorKind};

    /// A temp directory `root/` holding `inside.txt`, and `outside.txt` next to it.
    fn tree() -> (tempfile::TempDir, std::path::PathBuf, Root) {
        let tmp = tempfile::tempdir().unwrap();
        let root_dir = tmp.path().join("root");
        std::fs::create_dir(&root_dir).unwrap();
        std::fs::write(root_dir.join("inside.txt"), "inside").unwrap();
        std::fs::write(tmp.path().join("outside.txt"), "outside secret").unwrap();
        let root = Root::new("file:///srv/").unwrap();
        (tmp, root_dir, root)
    }

    fn open(root_dir: &Path, root: &Root, uri: &str, allow: bool) -> Result<u64, OpenErrorKind> {
        let path = root.resolve(uri).unwrap();
        let confined = ConfinedRoot::open(root_dir).unwrap().allow_hardlinks(allow);
        confined
            .resolve_and_open(&path)
            .map(|f| f.metadata().unwrap().len())
            .map_err(|e| e.kind())
    }

    #[test]
    fn hard_link_to_a_file_outside_the_root_is_refused_unless_allowed() {
        let (tmp, root_dir, root) = tree();
        std::fs::hard_link(tmp.path().join("outside.txt"), root_dir.join("link.txt")).unwrap();
        assert_eq!(
            open(&root_dir, &root, "file:///srv/link.txt", false),
            Err(OpenErrorKind::HardLink)
        );
        assert_eq!(open(&root_dir, &root, "file:///srv/link.txt", true), Ok(14));
        // A file with one link, and a directory (always several links), open as before.
        assert_eq!(
            open(&root_dir, &root, "file:///srv/inside.txt", false),
            Ok(6)
        );
        assert!(open(&root_dir, &root, "file:///srv/", false).is_ok());
    }

    #[test]
    fn leader_dots_inside_a_name_open_and_alone_are_refused() {
        let (_tmp, root_dir, root) = tree();
        std::fs::write(root_dir.join("Wait….md"), "wait").unwrap();
        std::fs::write(root_dir.join("a‥b"), "ab").unwrap();
        assert_eq!(open(&root_dir, &root, "file:///srv/Wait….md", false), Ok(4));
        assert_eq!(
            open(&root_dir, &root, "file:///srv/Wait%E2%80%A6.md", false),
            Ok(4)
        );
        assert_eq!(open(&root_dir, &root, "file:///srv/a‥b", false), Ok(2));
        // A segment of only dots and leaders would read as `..` once folded: refused.
        for uri in [
            "file:///srv/‥/inside.txt",
            "file:///srv/…",
            "file:///srv/.‥",
            "file:///srv/%E2%80%A5",
        ] {
            assert_eq!(
                root.resolve(uri).unwrap_err().kind(),
                SanitizeErrorKind::CompatibilityDotOrSeparator,
                "{uri}"
            );
        }
        // Fullwidth dots and separators stay refused inside a name.
        assert_eq!(root.resolve("file:///srv/a％b．md").map(|_| ()).ok(), None);
        assert_eq!(
            root.resolve("file:///srv/a\u{FF0F}b").unwrap_err().kind(),
            SanitizeErrorKind::CompatibilityDotOrSeparator
        );
        // Windows paths: every leader is refused (best-fit mapping).
        let win = Root::with_style("file:///C:/srv/", PathStyle::Windows).unwrap();
        assert_eq!(
            win.resolve("file:///C:/srv/Wait….md").unwrap_err().kind(),
            SanitizeErrorKind::CompatibilityDotOrSeparator
        );
    }
}
