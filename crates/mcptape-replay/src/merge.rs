//! The file side of `mcptape merge` ([`mcptape_report::merge`] does the merging, in memory):
//! [`merge_files`] reads the `.hlog` logs through the shared non-blocking regular-file opener,
//! each within its size limit; [`write_merge_out`] writes `report.json` and `latency.hlog`, never over an input.

use std::path::{Path, PathBuf};

use mcptape_report::merge::{
    MAX_INPUTS, MAX_LOG_FILE_BYTES, MERGE_OUT_FILES, MergeError, MergeErrorKind, MergeInput,
    Merged, merge,
};

/// Reads `path`, at most `limit` bytes (checked on its size first, then on the bytes read, for
/// a file that grows); over it: [`MergeErrorKind::FileTooLarge`].
fn read_capped(name: &str, path: &Path, file: &str, limit: u64) -> Result<Vec<u8>, MergeError> {
    use std::io::Read as _;
    let e = |kind| MergeError::of(name, kind);
    let too_large = |bytes| {
        e(MergeErrorKind::FileTooLarge {
            file: file.to_owned(),
            bytes,
            limit,
        })
    };
    let (f, meta) =
        mcptape_transcript::file::open_regular(path).map_err(|x| match x.into_kind() {
            mcptape_transcript::file::FileErrorKind::Io(io) => {
                // Said as before the one opener moved: `open failed: NotFound (…)`.
                let what = match io.kind() {
                    std::io::ErrorKind::NotFound => "NotFound",
                    _ => "Io",
                };
                e(MergeErrorKind::Io(std::io::Error::other(format!(
                    "open failed: {what} ({io})"
                ))))
            }
            _ => e(MergeErrorKind::NotRegularFile),
        })?;
    let size = meta.len();
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|x| e(MergeErrorKind::Io(x)))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`merge`] of the `.hlog` files at `paths` (each at most [`MAX_LOG_FILE_BYTES`]).
///
/// # Errors
/// As [`merge`], and [`MergeErrorKind::Io`] / [`MergeErrorKind::FileTooLarge`] for a file.
pub fn merge_files(paths: &[PathBuf]) -> Result<Merged, MergeError> {
    if paths.len() > MAX_INPUTS {
        return Err(MergeError {
            input: None,
            kind: MergeErrorKind::TooManyInputs {
                n: paths.len(),
                limit: MAX_INPUTS,
            },
        });
    }
    let mut inputs = Vec::with_capacity(paths.len());
    let mut read_files: Vec<(PathBuf, String)> = Vec::new();
    let mut logs: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for p in paths {
        let name = p.display().to_string();
        let canon =
            std::fs::canonicalize(p).map_err(|x| MergeError::of(&name, MergeErrorKind::Io(x)))?;
        if let Some(at) = logs.iter().position(|l| *l == canon) {
            return Err(MergeError::of(
                &name,
                MergeErrorKind::SameFile {
                    first: at + 1,
                    first_input: inputs
                        .get(at)
                        .map_or_else(String::new, |i: &MergeInput| i.name.clone()),
                },
            ));
        }
        logs.push(canon.clone());
        read_files.push((canon, name.clone()));
        let log = read_capped(&name, p, "the log", MAX_LOG_FILE_BYTES)?;
        inputs.push(MergeInput { name, log });
    }
    let mut m = merge(&inputs)?;
    m.read_files = read_files;
    Ok(m)
}

/// Writes `report.json` (the [`MergeReport`](mcptape_report::merge::MergeReport), pretty camelCase JSON) and `latency.hlog` (the
/// merged log) into `dir`, created if missing ([`MERGE_OUT_FILES`]), after checking that neither
/// is a file the merge read ([`Merged::read_files`], canonicalized paths compared).
///
/// # Errors
/// [`MergeErrorKind::OutIsFile`] when `dir` is an existing non-directory,
/// [`MergeErrorKind::OutOverwritesInput`] (naming the input) when an output file is one the
/// merge read, [`MergeErrorKind::Io`] when the directory or a file cannot be written.
pub fn write_merge_out(dir: &Path, m: &Merged) -> Result<(), MergeError> {
    let whole = |kind| MergeError { input: None, kind };
    let io = |x| whole(MergeErrorKind::Io(x));
    if dir.exists() && !dir.is_dir() {
        return Err(whole(MergeErrorKind::OutIsFile(dir.display().to_string())));
    }
    for file in MERGE_OUT_FILES {
        // The one same-file test of every writer: same device and inode (a symlink or a
        // hard link to an input, `runA/../runA`), else the same canonical place.
        let out = dir.join(file);
        if let Some((_, name)) = m
            .read_files
            .iter()
            .find(|(p, _)| mcptape_transcript::file::same_file(&out, p))
        {
            return Err(whole(MergeErrorKind::OutOverwritesInput {
                out: dir.display().to_string(),
                file,
                input: name.clone(),
            }));
        }
    }
    std::fs::create_dir_all(dir).map_err(io)?;
    let json = serde_json::to_vec_pretty(&m.report).map_err(|e| MergeError {
        input: None,
        kind: MergeErrorKind::Render(e.to_string()),
    })?;
    std::fs::write(dir.join(MERGE_OUT_FILES[0]), json).map_err(io)?;
    std::fs::write(dir.join(MERGE_OUT_FILES[1]), &m.hlog).map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcptape_report::run::{BenchResult, RunSettings};

    /// The `.hlog` of an empty bench run (the bench writer: its `#[mcptape: …]` header line and
    /// the `single`, `turn` and `turn-reads` tags, every counter 0).
    fn bench_log() -> Vec<u8> {
        let res = BenchResult::new();
        let r = res.report(RunSettings::default(), "t.jsonl", "embedded", None, 1, None);
        mcptape_report::render::bench_hlog(&r, &res).unwrap()
    }

    /// [`bench_log`] without its `#[mcptape: …]` header line.
    fn bare_log() -> Vec<u8> {
        let text = String::from_utf8(bench_log()).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("#[mcptape: "))
            .collect();
        (lines.join("\n") + "\n").into_bytes()
    }

    #[test]
    fn merge_file_limits_at_and_one_past() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("latency.hlog");
        // A sparse file of zeros: at the limit it is read (and is not a log: line 1 too long).
        let f = std::fs::File::create(&log).unwrap();
        f.set_len(MAX_LOG_FILE_BYTES).unwrap();
        let e = merge_files(std::slice::from_ref(&log)).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::Log(l) if l.line == 1),
            "{e}"
        );
        f.set_len(MAX_LOG_FILE_BYTES + 1).unwrap();
        let e = merge_files(std::slice::from_ref(&log)).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::FileTooLarge { bytes, limit, .. }
                if *bytes == MAX_LOG_FILE_BYTES + 1 && *limit == MAX_LOG_FILE_BYTES),
            "{e}"
        );
        // A log with no #[mcptape: …] header: refused, its counters unknown.
        std::fs::write(&log, bare_log()).unwrap();
        let e = merge_files(std::slice::from_ref(&log)).unwrap_err();
        assert!(matches!(e.kind, MergeErrorKind::NoCounters), "{e}");
    }

    #[test]
    fn merge_files_refuses_the_same_file_twice() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("latency.hlog");
        std::fs::write(&p, bench_log()).unwrap();
        let again = dir.path().join(".").join("latency.hlog");
        let e = merge_files(&[p.clone(), again.clone()]).unwrap_err();
        assert_eq!(e.input, Some(again.display().to_string()));
        assert!(
            matches!(&e.kind, MergeErrorKind::SameFile { first: 1, first_input } if *first_input == p.display().to_string()),
            "{e}"
        );
    }

    #[test]
    fn write_merge_out_refuses_to_write_over_an_input_or_into_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let run_a = dir.path().join("runA");
        std::fs::create_dir(&run_a).unwrap();
        let a = run_a.join("latency.hlog");
        let bytes = bench_log();
        std::fs::write(&a, &bytes).unwrap();
        let m = merge_files(std::slice::from_ref(&a)).unwrap();
        let e = write_merge_out(&run_a, &m).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::OutOverwritesInput { file: "latency.hlog", input, .. } if *input == a.display().to_string()),
            "{e}"
        );
        assert_eq!(std::fs::read(&a).unwrap(), bytes, "the input is untouched");
        assert!(!run_a.join("report.json").exists());
        // Through another spelling of the directory, too.
        let e = write_merge_out(&dir.path().join("runA/../runA"), &m).unwrap_err();
        assert!(
            matches!(e.kind, MergeErrorKind::OutOverwritesInput { .. }),
            "{e}"
        );
        // Any file the merge read (here one named like the report) is never written over.
        let bare_dir = dir.path().join("bare");
        std::fs::create_dir(&bare_dir).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let bare: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("#[mcptape: "))
            .collect();
        std::fs::write(bare_dir.join("old.hlog"), bare.join("\n") + "\n").unwrap();
        let rep = serde_json::json!({"transcript": "t"});
        std::fs::write(bare_dir.join("report.json"), rep.to_string()).unwrap();
        let m_bare = Merged {
            read_files: vec![(
                std::fs::canonicalize(bare_dir.join("report.json")).unwrap(),
                "bare/report.json".into(),
            )],
            ..m.clone()
        };
        let e = write_merge_out(&bare_dir, &m_bare).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::OutOverwritesInput { file: "report.json", input, .. } if input == "bare/report.json"),
            "{e}"
        );
        // --out an existing file.
        let f = dir.path().join("F");
        std::fs::write(&f, b"x").unwrap();
        let e = write_merge_out(&f, &m).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("--out {}: is a file, not a directory", f.display())
        );
        // Elsewhere: written.
        write_merge_out(&dir.path().join("M"), &m).unwrap();
        assert!(dir.path().join("M/latency.hlog").is_file());
    }

    #[test]
    fn merge_of_an_empty_file_says_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("empty.hlog");
        std::fs::write(&p, b"").unwrap();
        let e = merge_files(std::slice::from_ref(&p)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: empty file: not an HdrHistogram interval log",
                p.display()
            )
        );
        assert!(!e.to_string().contains("line 0"));
    }
}
