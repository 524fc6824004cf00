//! Baselines (`mcptape check --baseline FILE`, `--write-baseline FILE`): a
//! checked-in file of expected findings, so only *new* findings fail, and
//! findings that no longer occur are reported as fixed so the file can shrink
//! (the way the MCP conformance suite's expected-failures file works).
//!
//! The file (JSON, camelCase, pretty-printed, entries sorted by file, rule,
//! pointer, so a rewrite of an unchanged baseline is byte-identical):
//!
//! ```json
//! {
//!   "mcptapeBaseline": 2,
//!   "findings": [
//!     { "file": "transcripts/a.jsonl", "rule": "error-id-null", "pointer": "/id", "count": 1 }
//!   ]
//! }
//! ```
//!
//! An entry is keyed by rule id, transcript path and RFC 6901 JSON pointer —
//! not by record or line, which shift when a transcript is re-recorded —
//! and `count` says how many findings with that key are expected (a server
//! that answers nine requests with `"id": null` has nine). Paths are
//! `/`-separated and relative to the directory of the baseline file itself
//! (format 2, [`BASELINE_FORMAT`]; `../` where a transcript lies outside it),
//! so the file matches whatever directory `check` runs in and however its
//! paths are spelled (absolute, `./x`, `x/`): both sides are compared after
//! [`relative_path`] resolves them. Only format 2 is read and written.
//!
//! Only findings that can fail the check are recorded: error severity and not
//! allowed by `--allow`. Applying a baseline ([`apply`]) marks the expected
//! findings `allowed` (reported, not failing) and lists the new and the fixed
//! ones ([`BaselineOutcome`]).
//!
//! Parsing ([`Baseline::parse`]) is pure; [`Baseline::read`] and
//! [`Baseline::write`] touch the filesystem.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use mcptape_transcript::file::{FileErrorKind, open_regular};
use serde::{Deserialize, Serialize};

use crate::report::{Finding, Report};
use crate::rules::{Severity, rule};
use crate::sarif::artifact_path;

/// The `mcptapeBaseline` format version this crate writes and reads: paths
/// relative to the baseline file's directory.
pub const BASELINE_FORMAT: u32 = 2;

/// Largest baseline file read (8 MiB = 8 388 608 bytes); a larger one is
/// refused with [`BaselineErrorKind::TooLarge`] before it is parsed.
pub const MAX_BASELINE_BYTES: usize = 8 * 1024 * 1024;

/// A baseline: the findings expected to fire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Baseline {
    /// Format version: [`BASELINE_FORMAT`].
    pub mcptape_baseline: u32,
    /// Expected findings, sorted by (file, rule, pointer), keys unique.
    pub findings: Vec<BaselineEntry>,
}

/// One expected finding key and how often it fires.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BaselineEntry {
    /// Transcript path, `/`-separated, relative to [`Baseline::dir_of`]
    /// (format 2: the baseline file's directory).
    pub file: String,
    /// Rule id ([`crate::rules::RULES`]).
    pub rule: String,
    /// RFC 6901 JSON pointer of the finding (empty for the whole message).
    pub pointer: String,
    /// How many findings with this key are expected (>= 1).
    pub count: usize,
}

/// Why a baseline could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("baseline {path}: {kind}")]
pub struct BaselineError {
    /// The baseline file.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: BaselineErrorKind,
}

/// The kind of a [`BaselineError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineErrorKind {
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file to read is a directory, FIFO, socket or device
    /// ([`FileErrorKind::IsDirectory`], [`FileErrorKind::NotRegularFile`]).
    #[error("{0}")]
    NotRegularFile(FileErrorKind),
    /// The file is larger than [`MAX_BASELINE_BYTES`].
    #[error("{len} bytes, more than the {MAX_BASELINE_BYTES}-byte limit")]
    TooLarge {
        /// The file's size in bytes.
        len: u64,
    },
    /// Not JSON of the baseline shape (unknown member, wrong type, syntax).
    #[error("line {line}, column {column}: {message}")]
    Json {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// `mcptapeBaseline` is not [`BASELINE_FORMAT`].
    #[error("mcptapeBaseline is {found}, this mcptape reads {BASELINE_FORMAT}")]
    Version {
        /// The version found.
        found: u32,
    },
    /// An entry names a rule id that does not exist.
    #[error("findings[{index}]: unknown rule id {rule:?} (see `mcptape explain --list`)")]
    UnknownRule {
        /// 0-based index of the entry in `findings`.
        index: usize,
        /// The rule id given.
        rule: String,
    },
    /// An entry has `count: 0`.
    #[error("findings[{index}]: count is 0 (remove the entry instead)")]
    ZeroCount {
        /// 0-based index of the entry in `findings`.
        index: usize,
    },
    /// Two entries have the same (file, rule, pointer) key.
    #[error("findings[{index}]: same file, rule and pointer as an earlier entry")]
    Duplicate {
        /// 0-based index of the second entry in `findings`.
        index: usize,
    },
}

type Key = (String, String, String);

fn key_of(f: &Finding, base_dir: Option<&Path>) -> Key {
    (
        match base_dir {
            Some(b) => relative_path(Path::new(&f.file), b),
            None => artifact_path(&f.file, None),
        },
        f.rule.to_owned(),
        f.pointer.clone(),
    )
}

/// `p` made absolute (against the working directory) and resolved: symlinks,
/// `.` and `..` by the filesystem ([`std::fs::canonicalize`]) when it exists,
/// else its longest existing ancestor resolved and the rest normalized
/// lexically (`a/../b` → `b`).
fn resolve(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let mut anc: &Path = &abs;
    let mut base = loop {
        if let Ok(c) = std::fs::canonicalize(anc) {
            break c;
        }
        match (anc.parent(), anc.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last.as_os_str());
                anc = parent;
            }
            _ => break PathBuf::new(),
        }
    };
    for c in rest.into_iter().rev() {
        match Path::new(c).components().next() {
            Some(Component::ParentDir) => {
                base.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => base.push(c),
        }
    }
    base
}

/// The transcript path `file` (as a finding or a baseline entry names it:
/// relative to the working directory, or absolute) as a `/`-separated path
/// relative to `base_dir`, both resolved first (symlinks, `.`, `..`; see
/// above): `/repo/corpus/transcripts/a.jsonl`, `./corpus/transcripts/a.jsonl`
/// and `corpus//transcripts/a.jsonl` all give `transcripts/a.jsonl` with
/// `base_dir` `/repo/corpus`; a file outside `base_dir` gets `../` components
/// (`../v/a.jsonl`). Reads the filesystem (canonicalization), never fails.
pub fn relative_path(file: &Path, base_dir: &Path) -> String {
    let file = resolve(file);
    let base = resolve(base_dir);
    let f: Vec<Component<'_>> = file.components().collect();
    let b: Vec<Component<'_>> = base.components().collect();
    let common = f.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = Vec::new();
    if common == 0 {
        // Nothing shared (another drive): absolute, as named.
        return artifact_path(&file.to_string_lossy(), None);
    }
    parts.extend(b[common..].iter().map(|_| "..".to_owned()));
    parts.extend(
        f[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// Whether a finding belongs in a baseline: it would fail the check.
fn is_baselinable(f: &Finding) -> bool {
    f.severity == Severity::Error && !f.allowed
}

impl Baseline {
    /// The baseline of `report`'s current findings (those that fail it), in
    /// format [`BASELINE_FORMAT`]: paths relative to `base_dir`
    /// ([`relative_path`]), which should be the directory the baseline file
    /// is written to ([`Baseline::dir_of`]). `None`: paths as the findings
    /// name them, normalized ([`artifact_path`]).
    pub fn from_report(report: &Report, base_dir: Option<&Path>) -> Baseline {
        let mut counts: BTreeMap<Key, usize> = BTreeMap::new();
        for f in report.files.iter().flat_map(|r| &r.findings) {
            if is_baselinable(f) {
                *counts.entry(key_of(f, base_dir)).or_default() += 1;
            }
        }
        Baseline {
            mcptape_baseline: BASELINE_FORMAT,
            findings: counts
                .into_iter()
                .map(|((file, rule, pointer), count)| BaselineEntry {
                    file,
                    rule,
                    pointer,
                    count,
                })
                .collect(),
        }
    }

    /// Parses a baseline file's bytes (`path` only names it in errors).
    /// Entries need not be sorted; they are sorted on return.
    ///
    /// # Errors
    /// [`BaselineErrorKind::TooLarge`] past [`MAX_BASELINE_BYTES`],
    /// [`BaselineErrorKind::Json`], [`BaselineErrorKind::Version`],
    /// [`BaselineErrorKind::UnknownRule`], [`BaselineErrorKind::ZeroCount`],
    /// [`BaselineErrorKind::Duplicate`].
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Baseline, BaselineError> {
        let err = |kind| BaselineError {
            path: path.to_owned(),
            kind,
        };
        if bytes.len() > MAX_BASELINE_BYTES {
            return Err(err(BaselineErrorKind::TooLarge {
                len: bytes.len() as u64,
            }));
        }
        let mut b: Baseline = serde_json::from_slice(bytes).map_err(|e| {
            err(BaselineErrorKind::Json {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })
        })?;
        if b.mcptape_baseline != BASELINE_FORMAT {
            return Err(err(BaselineErrorKind::Version {
                found: b.mcptape_baseline,
            }));
        }
        let mut seen = BTreeSet::new();
        for (index, e) in b.findings.iter().enumerate() {
            if rule(&e.rule).is_none() {
                return Err(err(BaselineErrorKind::UnknownRule {
                    index,
                    rule: e.rule.clone(),
                }));
            }
            if e.count == 0 {
                return Err(err(BaselineErrorKind::ZeroCount { index }));
            }
            if !seen.insert((&e.file, &e.rule, &e.pointer)) {
                return Err(err(BaselineErrorKind::Duplicate { index }));
            }
        }
        b.findings.sort();
        Ok(b)
    }

    /// Reads and parses a baseline file ([`Baseline::parse`]), opened by the workspace's one
    /// file policy ([`mcptape_transcript::file::open_regular`]: a FIFO is refused at once, never
    /// waited on).
    ///
    /// # Errors
    /// [`BaselineErrorKind::NotRegularFile`] for a directory, FIFO, socket or device,
    /// [`BaselineErrorKind::Io`] when it cannot be read, TooLarge (checked on the file's size
    /// before reading), and the errors of [`Baseline::parse`].
    pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
        use std::io::Read as _;
        let err = |kind| BaselineError {
            path: path.to_owned(),
            kind,
        };
        let (file, meta) = open_regular(path).map_err(|e| {
            err(match e.into_kind() {
                FileErrorKind::Io(e) => BaselineErrorKind::Io(e),
                kind => BaselineErrorKind::NotRegularFile(kind),
            })
        })?;
        let len = meta.len();
        if len > MAX_BASELINE_BYTES as u64 {
            return Err(err(BaselineErrorKind::TooLarge { len }));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        // One byte past the limit: a file that grew after the fstat is still refused.
        file.take(MAX_BASELINE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| err(BaselineErrorKind::Io(e)))?;
        Baseline::parse(path, &bytes)
    }

    /// The file's text: pretty JSON, entries sorted, trailing newline.
    pub fn to_json(&self) -> String {
        let mut sorted = self.clone();
        sorted.findings.sort();
        // Strings and integers always serialize.
        let mut s = serde_json::to_string_pretty(&sorted).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Writes [`Baseline::to_json`] to `path`, creating parent directories.
    ///
    /// # Errors
    /// [`BaselineErrorKind::Io`].
    pub fn write(&self, path: &Path) -> Result<(), BaselineError> {
        let io = |e: std::io::Error| BaselineError {
            path: path.to_owned(),
            kind: e.into(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(path, self.to_json()).map_err(io)
    }

    /// The directory a baseline file at `path` has its paths relative to in
    /// format [`BASELINE_FORMAT`]: the file's parent directory (`.` for a bare
    /// name), made absolute against `cwd`.
    pub fn dir_of(path: &Path, cwd: &Path) -> PathBuf {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        cwd.join(dir)
    }

    /// Total expected findings (sum of `count`).
    pub fn total(&self) -> usize {
        self.findings.iter().map(|e| e.count).sum()
    }
}

/// What applying a baseline found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineOutcome {
    /// `(file index, finding index)` in the report of every finding the
    /// baseline expected (now marked allowed), sorted.
    pub baselined: BTreeSet<(usize, usize)>,
    /// `(file index, finding index)` of every failing finding the baseline
    /// does not hold (they fail the check), in report order.
    pub new: Vec<(usize, usize)>,
    /// Baseline entries that fired fewer times than expected, with `count`
    /// the number that no longer occur ("fixed": remove or lower them).
    pub fixed: Vec<BaselineEntry>,
}

impl BaselineOutcome {
    /// Whether finding `finding` of file `file` was expected by the baseline.
    pub fn is_baselined(&self, file: usize, finding: usize) -> bool {
        self.baselined.contains(&(file, finding))
    }

    /// The new findings of `report` (the ones that fail).
    pub fn new_findings<'r>(&self, report: &'r Report) -> Vec<&'r Finding> {
        self.new
            .iter()
            .map(|&(i, j)| &report.files[i].findings[j])
            .collect()
    }
}

/// Applies `baseline` to `report`: the first `count` failing findings of
/// each key (in report order) are expected — marked `allowed` and the
/// summary recomputed, so [`Report::passed`] is true when every failing
/// finding was expected — the rest are new; entries that fired fewer than
/// `count` times are fixed (listed with their paths as the file has them).
/// With `base_dir` ([`Baseline::dir_of`]) both the findings' and the
/// entries' paths are compared after [`relative_path`] to it (an entry's
/// path taken relative to `base_dir`), so the spelling of the paths on the
/// command line and the working directory do not matter; `None`: compared
/// as normalized by [`artifact_path`].
pub fn apply(report: &mut Report, baseline: &Baseline, base_dir: Option<&Path>) -> BaselineOutcome {
    // key → (the entry's path as written, expected findings left)
    let mut left: BTreeMap<Key, (String, usize)> = BTreeMap::new();
    for e in &baseline.findings {
        let file = match base_dir {
            Some(b) => relative_path(&b.join(&e.file), b),
            None => artifact_path(&e.file, None),
        };
        left.entry((file, e.rule.clone(), e.pointer.clone()))
            .or_insert_with(|| (e.file.clone(), 0))
            .1 += e.count;
    }
    let mut out = BaselineOutcome::default();
    for (i, fr) in report.files.iter_mut().enumerate() {
        for (j, f) in fr.findings.iter_mut().enumerate() {
            if !is_baselinable(f) {
                continue;
            }
            match left.get_mut(&key_of(f, base_dir)) {
                Some((_, n)) if *n > 0 => {
                    *n -= 1;
                    f.allowed = true;
                    out.baselined.insert((i, j));
                }
                _ => out.new.push((i, j)),
            }
        }
    }
    out.fixed = left
        .into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|((_, rule, pointer), (file, count))| BaselineEntry {
            file,
            rule,
            pointer,
            count,
        })
        .collect();
    let files = std::mem::take(&mut report.files);
    let allowed = std::mem::take(&mut report.allowed_rules);
    *report = Report::new(files, allowed);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read` opens through the one file policy: a FIFO with no writer is refused at once
    /// (not waited on), a directory is named so, a missing file is an I/O error.
    #[test]
    fn read_refuses_a_fifo_and_a_directory_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("b.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo");
        let e = Baseline::read(&fifo).unwrap_err();
        assert!(
            matches!(
                &e.kind,
                BaselineErrorKind::NotRegularFile(FileErrorKind::NotRegularFile)
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "baseline {}: not a regular file (FIFO, socket or device)",
                fifo.display()
            )
        );
        let e = Baseline::read(tmp.path()).unwrap_err();
        assert!(
            matches!(
                &e.kind,
                BaselineErrorKind::NotRegularFile(FileErrorKind::IsDirectory)
            ),
            "{e:?}"
        );
        let e = Baseline::read(&tmp.path().join("missing.json")).unwrap_err();
        assert!(
            matches!(&e.kind, BaselineErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
    }

    #[test]
    fn relative_path_is_the_same_whatever_the_spelling() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("corpus/transcripts")).unwrap();
        std::fs::write(root.join("corpus/transcripts/a.jsonl"), b"").unwrap();
        let base = root.join("corpus");
        for spelled in [
            root.join("corpus/transcripts/a.jsonl"),
            root.join("corpus/./transcripts//a.jsonl"),
            root.join("corpus/transcripts/../transcripts/a.jsonl"),
        ] {
            assert_eq!(relative_path(&spelled, &base), "transcripts/a.jsonl");
        }
        // The base spelled with a trailing `/.` and `..` too.
        assert_eq!(
            relative_path(
                &root.join("corpus/transcripts/a.jsonl"),
                &root.join("corpus/transcripts/../.")
            ),
            "transcripts/a.jsonl"
        );
        // Outside the base: `..`; the base itself: `.`.
        assert_eq!(
            relative_path(&root.join("corpus/transcripts/a.jsonl"), &root.join("ci")),
            "../corpus/transcripts/a.jsonl"
        );
        assert_eq!(relative_path(&base, &base), ".");
        // A file that does not exist (a fixed entry): normalized lexically below the
        // resolved existing ancestor.
        assert_eq!(
            relative_path(&root.join("corpus/gone/../transcripts/b.jsonl"), &base),
            "transcripts/b.jsonl"
        );
    }

    #[test]
    fn dir_of_is_the_files_directory_and_format_1_is_refused() {
        let cwd = Path::new("/work/repo");
        assert_eq!(
            Baseline::dir_of(Path::new("corpus/check-baseline.json"), cwd),
            Path::new("/work/repo/corpus")
        );
        assert_eq!(
            Baseline::dir_of(Path::new("/elsewhere/b.json"), cwd),
            Path::new("/elsewhere")
        );
        assert_eq!(
            Baseline::dir_of(Path::new("b.json"), cwd),
            Path::new("/work/repo/.")
        );
        let e = Baseline::parse(
            Path::new("b.json"),
            br#"{"mcptapeBaseline":1,"findings":[]}"#,
        )
        .unwrap_err();
        assert!(
            matches!(e.kind, BaselineErrorKind::Version { found: 1 }),
            "{e}"
        );
    }
}
