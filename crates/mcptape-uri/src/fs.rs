//! Filesystem mode (cargo feature `fs`, off by default): the IO shell of the crate; the rest is
//! sans-IO.
//!
//! - [`ConfinedRoot::resolve_and_open`] opens a [`ResolvedPath`] below a real directory through
//!   `cap-std`, whose confined lookups (on Linux `openat2` with `RESOLVE_BENEATH` where available,
//!   otherwise a component-by-component walk) refuse any path — including a symlink target, and
//!   including a symlink swapped in between [`Root::resolve`](crate::Root::resolve) and the open —
//!   that leaves the directory.
//! - [`open_nonblocking`] opens an ordinary (unconfined) path the same way; `mcptape check` reads
//!   transcripts through it.
//!
//! Both go through one opener: on Unix the open carries `O_NONBLOCK | O_NOCTTY`, so opening a FIFO
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

    /// For [`ConfinedRoot::resolve_and_open`], the byte offset of the path in
    /// [`ResolvedPath::to_uri`]; `None` for [`open_nonblocking`] (no URI).
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
}

impl ConfinedRoot {
    /// Opens `dir` (the directory the sanitizing [`Root`](crate::Root)'s path names) as the
    /// confinement root.
    ///
    /// # Errors
    /// The `io::Error` from opening the directory (not found, not a directory, permission).
    pub fn open(dir: impl AsRef<Path>) -> io::Result<ConfinedRoot> {
        Ok(ConfinedRoot {
            dir: Dir::open_ambient_dir(dir, ambient_authority())?,
        })
    }

    /// Wraps an already opened `cap_std` directory.
    pub fn from_dir(dir: Dir) -> ConfinedRoot {
        ConfinedRoot { dir }
    }

    /// Opens `path.relative()` (the root itself for `""`) read-only below this directory,
    /// following symlinks that stay inside it, with the shared non-blocking opener (module docs).
    /// Only a regular file or a directory is returned.
    ///
    /// # Errors
    /// [`OpenErrorKind::SymlinkEscape`] if a symlink on the way leads outside the directory;
    /// [`OpenErrorKind::NotFound`]; [`OpenErrorKind::NotRegularFile`] for a FIFO, socket or
    /// device; [`OpenErrorKind::Io`] for other I/O errors. The offset is that of the path in
    /// [`ResolvedPath::to_uri`].
    pub fn resolve_and_open(&self, path: &ResolvedPath) -> Result<File, OpenError> {
        let rel = path.relative();
        let rel = if rel.is_empty() { "." } else { rel };
        open_checked(
            |opts| self.dir.open_with(rel, opts),
            Some(path.prefix_len()),
        )
    }
}

/// Whether writing `output` would write over `input`: the same file (same device and inode,
/// a hard link or symlink included) when both exist, else the same canonical parent
/// directory and the same file name. A directory `input` is the same only as itself: a file
/// inside it is not (`check DIR -o DIR/report.json` is fine); pass a directory's files to
/// compare them. The one test of every writer that refuses to write over its input
/// (`mcptape`'s `cmd::refuse_overwrite`, `mcptape_replay::merge::write_merge_out`).
pub fn same_file(output: &std::path::Path, input: &std::path::Path) -> bool {
    if let (Ok(o), Ok(i)) = (std::fs::metadata(output), std::fs::metadata(input)) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            return o.dev() == i.dev() && o.ino() == i.ino();
        }
        #[cfg(not(unix))]
        {
            let _ = (o, i);
            return matches!(
                (std::fs::canonicalize(output), std::fs::canonicalize(input)),
                (Ok(a), Ok(b)) if a == b
            );
        }
    }
    // One of them does not exist (yet): compare where it would be.
    fn place(p: &std::path::Path) -> Option<(std::path::PathBuf, std::ffi::OsString)> {
        let name = p.file_name()?.to_owned();
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        Some((std::fs::canonicalize(parent).ok()?, name))
    }
    matches!((place(output), place(input)), (Some(a), Some(b)) if a == b)
}

/// Opens `path` read-only (ambient authority, no confinement) with the shared non-blocking
/// opener (module docs): a FIFO with no writer neither blocks the open nor gets returned.
/// Returns a regular file or a directory; the caller that wants only regular files checks
/// `metadata().is_file()` on the result (no race: it is the opened descriptor).
///
/// # Errors
/// [`OpenErrorKind::NotFound`]; [`OpenErrorKind::NotRegularFile`] for a FIFO, socket or device;
/// [`OpenErrorKind::Io`] for other I/O errors (permission, …). The offset is `None`.
pub fn open_nonblocking(path: impl AsRef<Path>) -> Result<std::fs::File, OpenError> {
    let path = path.as_ref();
    open_checked(
        |opts| File::open_ambient_with(path, opts, ambient_authority()),
        None,
    )
    .map(File::into_std)
}

/// The one opener: read-only, `O_NONBLOCK | O_NOCTTY` on Unix, then `fstat` on the descriptor.
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
