//! Measures the stdio recording proxy side by side with a plain pipe (figures for
//! the note; not a test).
//!
//! ```text
//! cargo build --release -p mcptape
//! cargo run --release -p mcptape-record --example proxy_overhead -- [MCPTAPE_BIN] [MESSAGES] [BIG_LINES] [BASELINE_BIN]
//! ```
//!
//! With `BASELINE_BIN` (another build of `mcptape`, e.g. a copy of the release binary
//! taken before a change), that binary is measured in the same rounds and runs, interleaved
//! with the others, and printed under the same headings as "baseline": before and after
//! side by side in one run, under the same load.
//!
//! * Per-message overhead: one JSON-RPC line (~120 bytes) at a time through `cat`
//!   (a plain pipe child), round trip measured directly and through
//!   `mcptape record -o TMP -- cat`, alternating rounds of 500 so load drifts hit
//!   both equally. Round trips go into HdrHistograms (µs, 3 significant digits);
//!   the overhead is reported as the difference of the p50s and of the p99s.
//! * Throughput: BIG_LINES lines of 16 MiB written by one thread and read back by
//!   another, through `cat` directly and through the proxy (which also writes
//!   every line to the transcript file), in MB/s (10^6 bytes/s). `ROUNDS` (env,
//!   default 7) rounds, each running the plain pipe and then every proxy back to
//!   back: the ratio to the pipe is taken within a round and its median quoted (the
//!   pipe alone moves 200–1,900 MB/s from one run to the next on this shared VM).
//!   Beside it, the CPU seconds (user + system, `getrusage(2)` of this process and its
//!   children) the whole pipeline spends per GB, which scheduling noise moves less.
//!   The transcript is in the temp dir (on this machine ext4, where a fresh file takes
//!   writes at ~430 MB/s: `dd bs=16M` of 128 MiB); with `/dev/shm` present, a third line has
//!   the transcript on tmpfs, which shows the proxy's own cost apart from the file system's.
//!   Through `cat` every byte is recorded twice (c2s and s2c).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use hdrhistogram::Histogram;

const ROUND: usize = 500;
const BIG_LINE_BYTES: usize = 16 * 1024 * 1024;

fn spawn(proxy: Option<&PathBuf>, transcript: &std::path::Path) -> Child {
    let mut cmd = match proxy {
        Some(bin) => {
            let mut c = Command::new(bin);
            c.arg("record")
                .arg("-o")
                .arg(transcript)
                .args(["--", "cat"]);
            c
        }
        None => Command::new("cat"),
    };
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn")
}

fn ping_pong(child: &mut Child, n: usize, start_id: usize, hist: &mut Histogram<u64>) {
    let stdin = child.stdin.as_mut().unwrap();
    let mut reader = BufReader::new(child.stdout.as_mut().unwrap());
    let mut line = String::new();
    for i in start_id..start_id + n {
        let msg = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"resources/read\",\"params\":{{\"uri\":\"mcptape://docs/readme.md\"}}}}\n"
        );
        let t0 = Instant::now();
        stdin.write_all(msg.as_bytes()).unwrap();
        stdin.flush().unwrap();
        line.clear();
        reader.read_line(&mut line).unwrap();
        let us = t0.elapsed().as_micros() as u64;
        assert_eq!(line, msg);
        hist.record(us.max(1)).unwrap();
    }
}

/// One pass-through run: MB/s, and the CPU seconds (user + system) the whole
/// pipeline spent on it: this process's threads (writer and reader) and the
/// child tree (`cat`, or mcptape and its `cat`), from `getrusage(2)`.
fn throughput(proxy: Option<&PathBuf>, transcript: &std::path::Path, lines: usize) -> (f64, f64) {
    let cpu0 = cpu_seconds();
    let mut child = spawn(proxy, transcript);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut line = vec![b'a'; BIG_LINE_BYTES];
    line[0] = b'"';
    line[BIG_LINE_BYTES - 2] = b'"';
    line[BIG_LINE_BYTES - 1] = b'\n';
    let t0 = Instant::now();
    let writer = std::thread::spawn(move || {
        for _ in 0..lines {
            stdin.write_all(&line).unwrap();
        }
    });
    let mut total = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    while total < lines * BIG_LINE_BYTES {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "early EOF");
        total += n;
    }
    let secs = t0.elapsed().as_secs_f64();
    writer.join().unwrap();
    let _ = child.wait();
    (total as f64 / secs / 1e6, cpu_seconds() - cpu0)
}

/// User + system CPU seconds of this process and of its waited-for children.
fn cpu_seconds() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    let secs = |who| {
        let u = getrusage(who).expect("getrusage");
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
        t(u.user_time()) + t(u.system_time())
    };
    secs(UsageWho::RUSAGE_SELF) + secs(UsageWho::RUSAGE_CHILDREN)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bin = PathBuf::from(args.get(1).cloned().unwrap_or_else(|| {
        let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        format!("{dir}/release/mcptape")
    }));
    let messages: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(5000);
    let big: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(8);
    let baseline = args.get(4).map(PathBuf::from);
    for b in std::iter::once(&bin).chain(baseline.as_ref()) {
        assert!(
            b.exists(),
            "{} not found: cargo build --release -p mcptape",
            b.display()
        );
    }
    let dir = std::env::temp_dir().join(format!("mcptape-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join("t.jsonl");

    // Proxies measured: this build, then the baseline build if given.
    let proxies: Vec<(&str, &PathBuf)> = std::iter::once(("mcptape record -- cat", &bin))
        .chain(baseline.as_ref().map(|b| ("baseline record -- cat", b)))
        .collect();
    let mut direct = Histogram::<u64>::new(3).unwrap();
    let mut proxied: Vec<Histogram<u64>> = proxies
        .iter()
        .map(|_| Histogram::<u64>::new(3).unwrap())
        .collect();
    let mut d = spawn(None, &transcript);
    let mut ps: Vec<Child> = proxies
        .iter()
        .enumerate()
        .map(|(i, (_, b))| spawn(Some(b), &dir.join(format!("rt-{i}.jsonl"))))
        .collect();
    // Warm up all.
    ping_pong(&mut d, 200, 0, &mut Histogram::new(3).unwrap());
    for p in &mut ps {
        ping_pong(p, 200, 0, &mut Histogram::new(3).unwrap());
    }
    let mut id = 1000;
    // The proxies take turns going first (the slot right after the plain pipe measured
    // ~50 µs slower at p50 whichever build sat in it).
    let mut round = 0;
    while (direct.len() as usize) < messages {
        ping_pong(&mut d, ROUND, id, &mut direct);
        let n = ps.len();
        for k in 0..n {
            let i = (k + round) % n;
            ping_pong(&mut ps[i], ROUND, id, &mut proxied[i]);
        }
        id += ROUND;
        round += 1;
    }
    for c in std::iter::once(&mut d).chain(ps.iter_mut()) {
        drop(c.stdin.take());
        let _ = c.wait();
    }
    let q = |h: &Histogram<u64>, x: f64| h.value_at_quantile(x);
    println!(
        "round trip of one ~120-byte message, {} messages each, µs:",
        direct.len()
    );
    println!(
        "  plain pipe (cat)        p50 {:>6}  p99 {:>6}  max {:>6}",
        q(&direct, 0.5),
        q(&direct, 0.99),
        direct.max()
    );
    for ((name, _), h) in proxies.iter().zip(&proxied) {
        println!(
            "  {name:<22}  p50 {:>6}  p99 {:>6}  max {:>6}",
            q(h, 0.5),
            q(h, 0.99),
            h.max()
        );
    }
    for ((name, _), h) in proxies.iter().zip(&proxied) {
        println!(
            "  {name}: overhead per message (both directions): p50 {} µs, p99 {} µs",
            q(h, 0.5) as i64 - q(&direct, 0.5) as i64,
            q(h, 0.99) as i64 - q(&direct, 0.99) as i64
        );
    }

    let shm = std::path::Path::new("/dev/shm");
    let shm_transcript = shm
        .is_dir()
        .then(|| shm.join(format!("mcptape-overhead-{}.jsonl", std::process::id())));
    // Each round: the plain pipe, then every proxy (ext4, then tmpfs; the proxies take
    // turns going first), back to back, so a ratio compares runs a second apart; the
    // median over rounds is quoted.
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7)
        .max(1);
    let mut pipe_runs: Vec<(f64, f64)> = Vec::new();
    // Per proxy: (MB/s, CPU s) per round with the transcript in the temp dir, and on tmpfs.
    type Runs = Vec<(f64, f64)>;
    let mut p_runs: Vec<(Runs, Runs)> = proxies.iter().map(|_| Default::default()).collect();
    for round in 0..rounds {
        pipe_runs.push(throughput(None, &transcript, big));
        let n = proxies.len();
        for k in 0..n {
            let i = (k + round) % n;
            let (b, (on_disk, on_shm)) = (proxies[i].1, &mut p_runs[i]);
            on_disk.push(throughput(Some(b), &transcript, big));
            let _ = std::fs::remove_file(&transcript);
            if let Some(t) = &shm_transcript {
                on_shm.push(throughput(Some(b), t, big));
                let _ = std::fs::remove_file(t);
            }
        }
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let all = |v: &[f64], digits: usize| {
        v.iter()
            .map(|x| format!("{x:.digits$}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // CPU seconds per GB (10^9 bytes) written by the example and read back.
    let gb = (big * BIG_LINE_BYTES) as f64 / 1e9;
    let pipe_mbs: Vec<f64> = pipe_runs.iter().map(|r| r.0).collect();
    let pipe_cpu = med(pipe_runs.iter().map(|r| r.1 / gb).collect());
    println!(
        "pass-through of {big} lines of 16 MiB, {rounds} rounds (each: the pipe, then each proxy, back to back), MB/s:"
    );
    println!(
        "  plain pipe (cat)        median {:>5.0}  [{}]; CPU {pipe_cpu:.2} s per GB",
        med(pipe_mbs.clone()),
        all(&pipe_mbs, 0)
    );
    for ((name, _), (on_disk, on_shm)) in proxies.iter().zip(&p_runs) {
        for (runs, place) in [
            (on_disk, dir.display().to_string()),
            (on_shm, "/dev/shm".into()),
        ] {
            if runs.is_empty() {
                continue;
            }
            let mbs: Vec<f64> = runs.iter().map(|r| r.0).collect();
            let ratios: Vec<f64> = mbs.iter().zip(&pipe_mbs).map(|(p, d)| p / d).collect();
            let cpu = med(runs.iter().map(|r| r.1 / gb).collect());
            println!(
                "  {name:<22}  median {:>5.0}  [{}], transcript in {place}",
                med(mbs.clone()),
                all(&mbs, 0)
            );
            println!(
                "    ratio to the pipe of the same round: median {:.2}x [{}]; CPU {cpu:.2} s per GB = {:.2}x the pipe's",
                med(ratios.clone()),
                all(&ratios, 2),
                cpu / pipe_cpu
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
