//! The one file-opening policy of the workspace (cargo feature `fs`, off by default: the rest of
//! the crate is sans-IO). Every input file mcptape reads (a transcript, a `.hlog`, a HAR, a k6
//! output, a baseline) is opened by [`open_regular`]:
//!
//! - on Unix the open carries `O_NONBLOCK | O_NOCTTY`, so opening a FIFO with no writer does not
//!   block (and a terminal device never becomes the controlling terminal);
//! - the file type is then checked on the opened descriptor (`fstat`, no race with a rename):
//!   only a regular file is returned; a directory is [`FileErrorKind::IsDirectory`], a FIFO,
//!   socket or device [`FileErrorKind::NotRegularFile`] (a socket already fails the open with
//!   `ENXIO`, reported so).
//!
//! `O_NONBLOCK` stays set on the returned file: it has no effect on reads of a regular file
//! (POSIX `open(2)`/`read(2)`). [`same_file`] is the one test of every writer that refuses to
//! write over its input.
//!
//! Confined opening below a root directory (`mcptape uri --open`) is not here: it is
//! `mcptape_uri::fs` (cap-std), which only that needs.
//!
//! ```no_run
//! use mcptape_transcript::file::{FileErrorKind, read_regular};
//!
//! match read_regular("t.jsonl".as_ref()) {
//!     Ok(bytes) => println!("{} bytes", bytes.len()),
//!     Err(e) if e.kind() == &FileErrorKind::NotRegularFile => eprintln!("{e}"), // a FIFO…
//!     Err(e) => eprintln!("{e}"), // reading t.jsonl: No such file or directory (os error 2)
//! }
//! ```

use std::fmt;
use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

/// Why a file could not be opened or read as a regular file. `#[non_exhaustive]`: new kinds
/// may be added.
#[derive(Debug)]
#[non_exhaustive]
pub enum FileErrorKind {
    /// A FIFO, socket or device (refused at once, never waited on).
    NotRegularFile,
    /// A directory.
    IsDirectory,
    /// The open or the read failed (not found, permission, …).
    Io(io::Error),
}

impl PartialEq for FileErrorKind {
    /// Same kind; two [`FileErrorKind::Io`] are equal when their [`io::ErrorKind`]s are.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Io(a), Self::Io(b)) => a.kind() == b.kind(),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

impl fmt::Display for FileErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotRegularFile => f.write_str("not a regular file (FIFO, socket or device)"),
            Self::IsDirectory => f.write_str("is a directory, not a transcript file"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

/// A file that could not be opened or read as a regular file: the path as given and the
/// [`kind`](Self::kind). Display: `reading PATH: not a regular file (FIFO, socket or device)`,
/// `reading PATH: is a directory, not a transcript file`, `reading PATH: <the I/O error>`.
#[derive(Debug)]
pub struct FileError {
    path: PathBuf,
    kind: FileErrorKind,
}

impl FileError {
    fn new(path: &Path, kind: FileErrorKind) -> Self {
        Self {
            path: path.to_owned(),
            kind,
        }
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What went wrong.
    pub fn kind(&self) -> &FileErrorKind {
        &self.kind
    }

    /// The kind, owned (for a caller that keeps the [`io::Error`]).
    pub fn into_kind(self) -> FileErrorKind {
        self.kind
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reading {}: {}", self.path.display(), self.kind)
    }
}

/// The I/O error's message is in this one's: no `source`, so a chain printed whole says it
/// once.
impl std::error::Error for FileError {}

/// Opens `path` read-only by the module's policy and returns the regular file with its
/// metadata (read on the opened descriptor), unread.
///
/// # Errors
/// [`FileErrorKind::NotRegularFile`] for a FIFO, socket or device; [`FileErrorKind::IsDirectory`];
/// [`FileErrorKind::Io`] when the open or the `fstat` fails.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), FileError> {
    let err = |kind| FileError::new(path, kind);
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = opts.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ENXIO) {
            // open(2) of a socket.
            return err(FileErrorKind::NotRegularFile);
        }
        err(FileErrorKind::Io(e))
    })?;
    let meta = file.metadata().map_err(|e| err(FileErrorKind::Io(e)))?;
    if meta.is_dir() {
        return Err(err(FileErrorKind::IsDirectory));
    }
    if !meta.is_file() {
        return Err(err(FileErrorKind::NotRegularFile));
    }
    Ok((file, meta))
}

/// [`open_regular`], then the whole file.
///
/// # Errors
/// As [`open_regular`]; [`FileErrorKind::Io`] when the read fails.
pub fn read_regular(path: &Path) -> Result<Vec<u8>, FileError> {
    use std::io::Read as _;
    let (mut file, meta) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| FileError::new(path, FileErrorKind::Io(e)))?;
    Ok(bytes)
}

/// Whether writing `output` would write over `input`: the same file (same device and inode,
/// a hard link or symlink included) when both exist, else the same canonical parent
/// directory and the same file name. A directory `input` is the same only as itself: a file
/// inside it is not (`check DIR -o DIR/report.json` is fine); pass a directory's files to
/// compare them. The one test of every writer that refuses to write over its input
/// (`mcptape`'s `cmd::refuse_overwrite`, `mcptape_replay::merge::write_merge_out`).
pub fn same_file(output: &Path, input: &Path) -> bool {
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
    fn place(p: &Path) -> Option<(PathBuf, std::ffi::OsString)> {
        let name = p.file_name()?.to_owned();
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some((std::fs::canonicalize(parent).ok()?, name))
    }
    matches!((place(output), place(input)), (Some(a), Some(b)) if a == b)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let out = std::process::Command::new("mkfifo")
            .arg(path)
            .output()
            .expect("run mkfifo");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A FIFO is `NotRegularFile` without blocking (the open runs on a thread, bounded); a file
    /// is read; a directory is `IsDirectory`; a missing path is `Io(NotFound)`, each naming the
    /// path.
    #[test]
    fn open_regular_refuses_a_fifo_without_blocking_a_directory_and_a_missing_path() {
        let tmp = tempfile::tempdir().unwrap();
        let pipe = tmp.path().join("pipe");
        mkfifo(&pipe);
        let (tx, rx) = std::sync::mpsc::channel();
        let p = pipe.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_regular(&p).map_err(|e| e.to_string()));
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("open_regular blocked for 5 s on a FIFO");
        assert_eq!(
            r,
            Err(format!(
                "reading {}: not a regular file (FIFO, socket or device)",
                pipe.display()
            ))
        );
        let file = tmp.path().join("t.jsonl");
        std::fs::write(&file, "inside").unwrap();
        assert_eq!(read_regular(&file).unwrap(), b"inside");
        let e = read_regular(tmp.path()).unwrap_err();
        assert_eq!(e.kind(), &FileErrorKind::IsDirectory);
        assert_eq!(e.path(), tmp.path());
        let e = read_regular(&tmp.path().join("nope")).unwrap_err();
        assert_eq!(
            e.kind(),
            &FileErrorKind::Io(io::Error::from(io::ErrorKind::NotFound))
        );
        assert!(e.to_string().starts_with("reading "), "{e}");
    }

    #[test]
    fn open_regular_refuses_a_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let sock = tmp.path().join("sock");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert_eq!(
            open_regular(&sock).unwrap_err().kind(),
            &FileErrorKind::NotRegularFile
        );
    }

    #[test]
    fn same_file_sees_a_hard_link_and_a_file_not_yet_written() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        std::fs::write(&a, "x").unwrap();
        let link = tmp.path().join("link");
        std::fs::hard_link(&a, &link).unwrap();
        assert!(same_file(&link, &a));
        std::fs::create_dir(tmp.path().join("sub")).unwrap();
        assert!(same_file(&tmp.path().join("sub/../a"), &a));
        // Not written yet: the same place and name.
        assert!(same_file(
            &tmp.path().join("sub/../new"),
            &tmp.path().join("new")
        ));
        assert!(!same_file(&tmp.path().join("b"), &a));
        // A directory is the same only as itself.
        assert!(!same_file(&tmp.path().join("a"), tmp.path()));
    }
}
