//! Filesystem mode against a real directory (tempfile): a sibling-prefix directory
//! (`srv/allowed` vs `srv/allowed_evil`, `srv/allowed2`), symlinks escaping the root (relative,
//! absolute, into a sibling, through a directory link), a symlink staying inside, and a symlink
//! swapped in after `resolve` (check-then-open race), and entries that are not regular files (a
//! FIFO, a symlink to one, a socket) rejected without blocking.

use std::io::Read;
use std::path::Path;

use mcptape_uri::fs::{ConfinedRoot, OpenErrorKind};
use mcptape_uri::{Root, SanitizeErrorKind};

/// A rejection from either step: the lexical sanitizer or the confined open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rejected {
    Lexical(SanitizeErrorKind),
    Open(OpenErrorKind),
}

/// What `read` gives for a path the lexical sanitizer refuses as outside the root.
const ESCAPES_ROOT: Result<String, Rejected> =
    Err(Rejected::Lexical(SanitizeErrorKind::EscapesRoot));
/// What `read` gives for a path the confined open refuses as a symlink out of the root.
const SYMLINK_ESCAPE: Result<String, Rejected> = Err(Rejected::Open(OpenErrorKind::SymlinkEscape));
/// What `open_kind_bounded` gives for a FIFO or socket.
const NOT_REGULAR: Result<bool, OpenErrorKind> = Err(OpenErrorKind::NotRegularFile);

struct Fixture {
    _tmp: tempfile::TempDir,
    base: std::path::PathBuf,
    root: Root,
    confined: ConfinedRoot,
}

fn file_uri(path: &Path) -> String {
    let mut s = String::from("file://");
    for b in path.to_str().expect("utf-8 temp path").bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().to_path_buf();
    let w = |rel: &str, body: &str| {
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    };
    w("srv/allowed/a.txt", "inside");
    w("srv/allowed/sub/b.txt", "inside-sub");
    w("srv/allowed_evil/x", "evil");
    w("srv/allowed2/x", "evil2");
    w("outside/secret.txt", "secret");
    let link = |target: &Path, at: &str| std::os::unix::fs::symlink(target, base.join(at)).unwrap();
    link(
        Path::new("../../outside/secret.txt"),
        "srv/allowed/link_out",
    );
    link(&base.join("outside/secret.txt"), "srv/allowed/link_abs");
    link(Path::new("../allowed_evil/x"), "srv/allowed/link_sibling");
    link(Path::new("../../outside"), "srv/allowed/dir_out");
    link(Path::new("sub/b.txt"), "srv/allowed/link_in");
    let allowed = base.join("srv/allowed");
    let root = Root::new(&format!("{}/", file_uri(&allowed))).unwrap();
    let confined = ConfinedRoot::open(&allowed).unwrap();
    Fixture {
        _tmp: tmp,
        base,
        root,
        confined,
    }
}

impl Fixture {
    fn uri(&self, rel: &str) -> String {
        format!("{}/{rel}", file_uri(&self.base))
    }
    fn read(&self, rel: &str) -> Result<String, Rejected> {
        let p = self
            .root
            .resolve(&self.uri(rel))
            .map_err(|e| Rejected::Lexical(e.kind()))?;
        let mut f = self
            .confined
            .resolve_and_open(&p)
            .map_err(|e| Rejected::Open(e.kind()))?;
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        Ok(s)
    }
}

#[test]
fn plain_file_inside_is_read() {
    let f = fixture();
    assert_eq!(f.read("srv/allowed/a.txt"), Ok("inside".to_owned()));
    assert_eq!(f.read("srv/allowed/sub/../a.txt"), Ok("inside".to_owned()));
}

#[test]
fn sibling_prefix_directories_are_rejected_although_they_exist() {
    let f = fixture();
    assert!(f.base.join("srv/allowed_evil/x").exists());
    assert!(f.base.join("srv/allowed2/x").exists());
    assert_eq!(f.read("srv/allowed_evil/x"), ESCAPES_ROOT);
    assert_eq!(f.read("srv/allowed2/x"), ESCAPES_ROOT);
    assert_eq!(f.read("srv/allowed/../allowed_evil/x"), ESCAPES_ROOT);
}

/// One test per `name: path`: reading `path` is refused as a symlink escaping the root.
macro_rules! symlink_escape_tests {
    ($($name:ident: $rel:literal,)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(fixture().read($rel), SYMLINK_ESCAPE);
        }
    )*};
}

symlink_escape_tests! {
    symlink_escape_relative_is_rejected: "srv/allowed/link_out",
    symlink_escape_absolute_is_rejected: "srv/allowed/link_abs",
    symlink_into_sibling_prefix_is_rejected: "srv/allowed/link_sibling",
    symlinked_directory_escape_is_rejected: "srv/allowed/dir_out/secret.txt",
}

#[test]
fn symlink_staying_inside_is_followed() {
    let f = fixture();
    assert_eq!(f.read("srv/allowed/link_in"), Ok("inside-sub".to_owned()));
}

#[test]
fn missing_file_is_not_found() {
    let f = fixture();
    assert_eq!(
        f.read("srv/allowed/nope.txt"),
        Err(Rejected::Open(OpenErrorKind::NotFound))
    );
}

#[test]
fn root_itself_opens_the_directory() {
    let f = fixture();
    let p = f.root.resolve(&f.uri("srv/allowed")).unwrap();
    assert_eq!(p.relative(), "");
    let dir = f.confined.resolve_and_open(&p).unwrap();
    assert!(dir.metadata().unwrap().is_dir());
}

#[test]
fn symlink_swapped_in_after_resolve_cannot_escape() {
    let f = fixture();
    // resolve while `late` does not exist: lexically fine
    let p = f
        .root
        .resolve(&f.uri("srv/allowed/late/secret.txt"))
        .unwrap();
    assert_eq!(p.relative(), "late/secret.txt");
    // the attacker now plants a directory symlink pointing outside
    std::os::unix::fs::symlink("../../outside", f.base.join("srv/allowed/late")).unwrap();
    let e = f.confined.resolve_and_open(&p).unwrap_err();
    assert_eq!(e.kind(), OpenErrorKind::SymlinkEscape);
    // the path starts right after `file://` in the canonical URI
    assert_eq!(e.offset(), Some("file://".len()));
    assert_eq!(e.io_kind(), Some(std::io::ErrorKind::PermissionDenied));
    // whereas the plain std API would have followed it
    let escaped = std::fs::read_to_string(f.base.join("srv/allowed/late/secret.txt")).unwrap();
    assert_eq!(escaped, "secret");
}

/// Runs `resolve_and_open` on `rel` in a thread and waits at most 5 s, so the old blocking open
/// of a FIFO fails this test by timeout instead of hanging the test binary.
fn open_kind_bounded(f: Fixture, rel: &str) -> Result<bool, OpenErrorKind> {
    let (tx, rx) = std::sync::mpsc::channel();
    let uri = f.uri(rel);
    std::thread::spawn(move || {
        let p = f.root.resolve(&uri).unwrap();
        let r = f
            .confined
            .resolve_and_open(&p)
            .map(|file| file.metadata().unwrap().is_dir())
            .map_err(|e| e.kind());
        // Keep the tempdir alive until the open returned.
        drop(f);
        let _ = tx.send(r);
    });
    rx.recv_timeout(std::time::Duration::from_secs(5))
        .expect("resolve_and_open blocked for 5 s (opened a FIFO without O_NONBLOCK?)")
}

/// Makes a FIFO at `path` with the `mkfifo` command, showing its stderr if it fails.
fn mkfifo(path: &Path) {
    let mut cmd = std::process::Command::new("mkfifo");
    let out = cmd.arg(path).output().expect("run mkfifo");
    let why = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mkfifo {}: {why}", path.display());
}

#[test]
fn fifo_inside_root_is_not_regular_file_and_does_not_hang() {
    let f = fixture();
    mkfifo(&f.base.join("srv/allowed/pipe"));
    assert_eq!(open_kind_bounded(f, "srv/allowed/pipe"), NOT_REGULAR);
}

#[test]
fn symlink_to_fifo_inside_root_is_not_regular_file() {
    let f = fixture();
    mkfifo(&f.base.join("srv/allowed/sub/pipe"));
    std::os::unix::fs::symlink("sub/pipe", f.base.join("srv/allowed/link_pipe")).unwrap();
    assert_eq!(open_kind_bounded(f, "srv/allowed/link_pipe"), NOT_REGULAR);
}

#[test]
fn unix_socket_inside_root_is_not_regular_file() {
    let f = fixture();
    let _listener =
        std::os::unix::net::UnixListener::bind(f.base.join("srv/allowed/sock")).unwrap();
    assert_eq!(open_kind_bounded(f, "srv/allowed/sock"), NOT_REGULAR);
}

#[test]
fn regular_file_and_directory_still_open_with_nonblocking_flag() {
    let f = fixture();
    assert_eq!(f.read("srv/allowed/sub/b.txt"), Ok("inside-sub".to_owned()));
    assert_eq!(open_kind_bounded(f, "srv/allowed/sub"), Ok(true));
}
