//! Filesystem mode: open a [`ResolvedPath`] below a real directory through `cap-std`, whose
//! confined lookups (on Linux `openat2` with `RESOLVE_BENEATH` where available, otherwise a
//! component-by-component walk) refuse any path — including a symlink target, and including a
//! symlink swapped in between [`Root::resolve`](crate::Root::resolve) and the open — that leaves
//! the directory. This is the IO shell of the crate; the rest is sans-IO.

use std::io;
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions};

use crate::{ResolvedPath, SanitizeError, SanitizeErrorKind};

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
    /// following symlinks that stay inside it. Only a regular file or a directory is returned.
    ///
    /// On Unix the open carries `O_NONBLOCK` (and `O_NOCTTY`), so opening a FIFO with no writer
    /// does not block; the file type is then checked on the opened descriptor (`fstat`, no
    /// race with a rename). `O_NONBLOCK` stays set on the returned file: it has no effect on
    /// reads of a regular file or a directory (POSIX `open(2)`/`read(2)`).
    ///
    /// # Errors
    /// [`SanitizeErrorKind::SymlinkEscape`] if a symlink on the way leads outside the directory
    /// (or is absolute: `cap-std` treats every absolute target as an escape);
    /// [`SanitizeErrorKind::NotFound`]; [`SanitizeErrorKind::NotRegularFile`] for a FIFO, socket
    /// or device (a socket already fails the open with `ENXIO`, also reported so);
    /// [`SanitizeErrorKind::Io`] for other I/O errors (see [`SanitizeError::io_kind`]). The
    /// offset is that of the path in [`ResolvedPath::to_uri`].
    pub fn resolve_and_open(&self, path: &ResolvedPath) -> Result<File, SanitizeError> {
        let rel = path.relative();
        let rel = if rel.is_empty() { "." } else { rel };
        let offset = path.prefix_len();
        let mut opts = OpenOptions::new();
        opts.read(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = self.dir.open_with(rel, &opts).map_err(|e| {
            #[cfg(unix)]
            if e.raw_os_error() == Some(libc::ENXIO) {
                // open(2) of a socket (or of a FIFO write side with no reader).
                return SanitizeError::io(
                    SanitizeErrorKind::NotRegularFile,
                    offset,
                    io::ErrorKind::Other,
                );
            }
            classify(&e, offset)
        })?;
        let file_type = file
            .metadata()
            .map_err(|e| classify(&e, offset))?
            .file_type();
        if file_type.is_file() || file_type.is_dir() {
            Ok(file)
        } else {
            Err(SanitizeError::io(
                SanitizeErrorKind::NotRegularFile,
                offset,
                io::ErrorKind::InvalidInput,
            ))
        }
    }
}

/// `cap-std` reports an escape as `PermissionDenied` built without an OS error code
/// (`cap_primitives::fs::errors::escape_attempt`, also for `EXDEV` from `RESOLVE_BENEATH`); a real
/// `EACCES` carries its errno.
fn classify(e: &io::Error, offset: usize) -> SanitizeError {
    let kind = match e.kind() {
        io::ErrorKind::PermissionDenied if e.raw_os_error().is_none() => {
            SanitizeErrorKind::SymlinkEscape
        }
        io::ErrorKind::NotFound => SanitizeErrorKind::NotFound,
        _ => SanitizeErrorKind::Io,
    };
    SanitizeError::io(kind, offset, e.kind())
}
