//! SIGKILL of `mcptape record` (the stdio proxy) loses no line the client had
//! already received: the recorder writes each record into the transcript
//! file before it forwards the line (the page cache survives SIGKILL), so
//! every line the client read back is in the transcript, byte-exact, in
//! order.
//!
//! The test is the client, `cat` is the server (it echoes every line back),
//! the stream is paced small requests with 16 MiB lines mixed in, and the
//! recorder is SIGKILLed at 20 random moments (seed printed; set
//! `MCPTAPE_SIGKILL_SEED` to replay one).

use crate::record_support;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcptape_transcript::{Direction, Event};
use record_support::*;

/// Kills per test run (the "20 random moments").
const KILLS: usize = 20;
/// Lines 1, 1 + `BIG_EVERY`, … are 16 MiB lines (the second line is one, so that one goes
/// through early even in a debug build).
const BIG_EVERY: u64 = 7;
/// Size of a big line, `\n` included (16 MiB).
const BIG_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Pause between two lines of the paced stream.
const PACE: Duration = Duration::from_millis(2);
/// Latest kill moment after the start of a run, in ms (kills land in `[30, KILL_WINDOW_MS)`).
/// 1.5 s: the stream (a 16 MiB line every 7 lines, 2 ms apart) is in its steady state long
/// before; a longer window only streams (and the test re-reads) more of the same.
const KILL_WINDOW_MS: u64 = 1500;
/// Bound of one run (kill, then EOF on the client side).
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// xorshift64*: reproducible moments without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Line `i` of the stream, `\n` included: a small ping, or a 16 MiB one.
fn line(i: u64) -> Vec<u8> {
    let head =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\",\"params\":{{\"pad\":\"");
    let mut l = head.into_bytes();
    if i % BIG_EVERY == 1 {
        l.resize(BIG_LINE_BYTES - 4, b'a' + (i % 26) as u8);
    } else {
        l.extend_from_slice(format!("small-{i}").as_bytes());
    }
    l.extend_from_slice(b"\"}}\n");
    l
}

/// (length, CRC-32) of a line without its `\n`: lines are compared by digest
/// so that 16 MiB lines are not kept twice. flate2's CRC (crc32fast: many bytes a
/// step; a byte loop in this debug test took ~0.1 s per 16 MiB line).
fn digest(bytes: &[u8]) -> (usize, u64) {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    (bytes.len(), u64::from(crc.sum()))
}

/// Line digests `(length in bytes, CRC-32)` as produced by [`digest`].
type Digests = Vec<(usize, u64)>;

/// One run: start the proxy, stream, SIGKILL it `kill_after` after the start (or,
/// with `after_big_line`, `kill_after` after the client received its first 16 MiB
/// line, waited for within `RUN_LIMIT`: a loaded machine then still sends one big
/// line through, which a fixed moment does not promise); returns (lines the client
/// received whole, transcript records per direction).
fn run_once(
    dir: &std::path::Path,
    run: usize,
    kill_after: Duration,
    after_big_line: bool,
) -> (Digests, Digests, Digests) {
    let transcript = dir.join(format!("kill-{run}.jsonl"));
    let mut guard = spawn_record(&transcript, &[OsStr::new("cat")], Stdio::null());
    let child = &mut guard.0;
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        for i in 0.. {
            if stdin.write_all(&line(i)).is_err() || started.elapsed() > RUN_LIMIT {
                return;
            }
            std::thread::sleep(PACE);
        }
    });
    let (big_tx, big_rx) = std::sync::mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        let mut r = BufReader::with_capacity(1 << 20, stdout);
        let mut got = Vec::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return got,
                // Only a line whose `\n` arrived counts as received.
                Ok(_) if buf.last() == Some(&b'\n') => {
                    if buf.len() == BIG_LINE_BYTES {
                        let _ = big_tx.send(());
                    }
                    got.push(digest(&buf[..buf.len() - 1]))
                }
                Ok(_) => return got,
            }
        }
    });
    if after_big_line {
        big_rx
            .recv_timeout(RUN_LIMIT)
            .unwrap_or_else(|e| panic!("run {run}: no 16 MiB line reached the client: {e}"));
    }
    std::thread::sleep(kill_after);
    child.kill().expect("SIGKILL the recorder");
    let status = wait_bounded(child, RUN_LIMIT).expect("mcptape ends after SIGKILL");
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "run {run}: killed by SIGKILL");
    }
    // `cat` sees EOF on its stdin (the recorder held the only write end) and
    // exits; the client then sees EOF on the proxy's stdout.
    let received = reader.join().unwrap();
    writer.join().unwrap();

    let t = read_transcript(&transcript);
    let of = |want: Direction| -> Vec<(usize, u64)> {
        t.records
            .iter()
            .filter_map(|r| match &r.event {
                Event::Message { dir, msg, .. } if *dir == want => {
                    Some(digest(msg.get().as_bytes()))
                }
                _ => None,
            })
            .collect()
    };
    assert!(
        !t.records
            .iter()
            .any(|r| matches!(r.event, Event::Exit { .. })),
        "run {run}: a killed recorder wrote no exit record"
    );
    (received, of(Direction::C2s), of(Direction::S2c))
}

#[test]
fn sigkill_at_20_random_moments_loses_no_line_the_client_received() {
    let seed = std::env::var("MCPTAPE_SIGKILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("MCPTAPE_SIGKILL_SEED={seed}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut total_received = 0;
    let mut big_received = 0;
    for run in 0..KILLS {
        let kill_ms = 30 + rng.next() % (KILL_WINDOW_MS - 30);
        // Run 0 kills after a 16 MiB line went through (then at a random moment),
        // so that the big-line path is exercised whatever the machine's load.
        let after_big_line = run == 0;
        let (received, c2s, s2c) = run_once(
            dir.path(),
            run,
            Duration::from_millis(kill_ms),
            after_big_line,
        );
        // The transcript holds every line the client received, in order:
        // received is a prefix of the recorded s2c stream, and `cat` only
        // echoes what it was sent, so it is a prefix of the c2s stream too.
        let missing_s2c = received
            .iter()
            .enumerate()
            .filter(|(i, d)| s2c.get(*i) != Some(d))
            .count();
        let missing_c2s = received
            .iter()
            .enumerate()
            .filter(|(i, d)| c2s.get(*i) != Some(d))
            .count();
        assert_eq!(
            (missing_s2c, missing_c2s),
            (0, 0),
            "run {run} (kill at {kill_ms} ms, seed {seed}): {} lines received, {} s2c and {} c2s recorded",
            received.len(),
            s2c.len(),
            c2s.len()
        );
        total_received += received.len();
        big_received += received
            .iter()
            .filter(|d| d.0 == BIG_LINE_BYTES - 1)
            .count();
        std::fs::remove_file(dir.path().join(format!("kill-{run}.jsonl"))).unwrap();
    }
    eprintln!(
        "{KILLS} kills: {total_received} lines received, {big_received} of 16 MiB, 0 missing"
    );
    assert!(total_received > 0, "no line went through in {KILLS} runs");
    assert!(
        big_received > 0,
        "no 16 MiB line went through in {KILLS} runs"
    );
}
