//! A transcript mapped into memory (64 MiB or more) that another process
//! truncates while `check` reads it: exit code 2 and a message on stderr, not
//! a silent death by SIGBUS (exit 135 from a shell, nothing said).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::record_support as support;

#[test]
fn mapped_transcript_truncated_while_checked_exits_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let recorded = std::fs::read_to_string(
        support::repo_root().join("corpus/transcripts/everything-stdio.jsonl"),
    )
    .unwrap();
    let (header, records) = recorded.split_once('\n').unwrap();
    // The header, then the recording's records again and again: 65 MiB, over
    // check's MMAP_MIN_BYTES (64 MiB), so the file is mapped, not read.
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(f, "{header}").unwrap();
    let mut bytes = header.len() + 1;
    while bytes < 65 << 20 {
        f.write_all(records.as_bytes()).unwrap();
        bytes += records.len();
    }
    f.into_inner().unwrap().sync_all().unwrap();

    let child = Command::new(support::mcptape())
        .arg("check")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let maps = format!("/proc/{}/maps", child.id());
    let mut g = support::Guard(child);
    let name = path.to_str().unwrap().to_owned();
    // Wait for the state (the file mapped), not for a time; a check that ended
    // first is reported by the assertions below.
    support::wait_until("check maps the transcript", Duration::from_secs(60), || {
        matches!(g.0.try_wait(), Ok(Some(_)))
            || std::fs::read_to_string(&maps).is_ok_and(|m| m.contains(&name))
    });
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1000)
        .unwrap();
    let out = g.output_within("check of a truncated transcript", Duration::from_secs(120));
    let stderr = support::stderr_of_exit(&out, 2);
    assert!(
        stderr.contains("truncated or replaced") && stderr.contains("SIGBUS"),
        "{stderr}"
    );
}
