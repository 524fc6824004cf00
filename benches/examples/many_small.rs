//! Many small messages (issue 22): generates a transcript of N ordinary
//! messages from a shipped corpus recording, and reads it line by line with
//! the parsers `mcptape check`/`inspect` are compared against.
//!
//! ```text
//! many_small gen OUT [--messages N] [--source FILE]
//! many_small serde|sonic|memchr FILE
//! many_small first-answer MCPTAPE FILE
//! ```
//!
//! `gen` (default N = 500,000, source `corpus/transcripts/everything-stdio.jsonl`):
//! the source's header and handshake (every record before its first
//! `resources/read` request, verbatim), then its read exchanges repeated with
//! fresh integer ids (16, 17, ...) and advancing timestamps until the file
//! holds N messages, then an `exit` record. One cycle is the five dynamic
//! reads (two blobs, two texts, one not-found error; 150–250 bytes a line)
//! and one of the seven document reads in turn (1.2–12.7 KB replies): about
//! 590 bytes a message, 295 MB for 500,000, the shape of a long agent session.
//!
//! `serde` / `sonic` / `memchr`: stream FILE through a 1 MiB `BufReader` and
//! parse every line after the header as a `serde_json::Value` /
//! `sonic_rs::Value` (the line must parse) or count the `\n` with `memchr`.
//! Prints `lines=N seconds=S vmhwm_kib=K` (K: this process's peak RSS from
//! `/proc/self/status`); `benches/many_small.sh` times the whole process.
//!
//! `first-answer`: starts `MCPTAPE serve FILE --latency fixed:0ms` (stdio),
//! writes the first client message recorded in FILE (its `initialize`) and
//! waits for the first line `serve` answers; prints `TIME S K U Y`: seconds
//! from the spawn to that line, `serve`'s peak RSS then (`VmHWM` of its
//! `/proc/PID/status`, KiB) and its user and system CPU seconds then
//! (`/proc/PID/stat` fields 14 and 15, in Linux's fixed 100 ticks a
//! second), the format `benches/many_small.sh` reads. `fixed:0ms`: the
//! row measures serve's start-up, not the recorded server's — with the
//! default `--latency recorded` serve waits as long as the recorded server
//! took to answer its `initialize` (1.88 s in the generated file: the
//! corpus server's own start-up) before it answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::time::Instant;

/// Messages `gen` writes by default (the issue's 500,000).
const DEFAULT_MESSAGES: usize = 500_000;
/// The shipped recording the transcript is made of (found from any working directory).
const DEFAULT_SOURCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../corpus/transcripts/everything-stdio.jsonl"
);
/// Read buffer of the parse modes (1 MiB).
const READ_BUF: usize = 1 << 20;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("gen") => generate(&args[1..]),
        Some(mode @ ("serde" | "sonic" | "memchr")) if args.len() == 2 => parse(mode, &args[1]),
        Some("first-answer") if args.len() == 3 => first_answer(&args[1], &args[2]),
        _ => Err("usage: many_small gen OUT [--messages N] [--source FILE] | many_small serde|sonic|memchr FILE | many_small first-answer MCPTAPE FILE".into()),
    };
    if let Err(e) = r {
        eprintln!("many_small: {e}");
        std::process::exit(2);
    }
}

type Res = Result<(), Box<dyn std::error::Error>>;

fn first_answer(mcptape: &str, file: &str) -> Res {
    let mut first = None;
    for line in BufReader::new(std::fs::File::open(file)?).lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if v["kind"] == "message" && v["dir"] == "c2s" {
            first = Some(v["msg"].to_string());
            break;
        }
    }
    let first = first.ok_or("no client message in the transcript")?;
    let start = Instant::now();
    let mut child = std::process::Command::new(mcptape)
        .args(["serve", file, "--latency", "fixed:0ms"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    stdin.write_all(first.as_bytes())?;
    stdin.write_all(b"\n")?;
    stdin.flush()?;
    let mut answer = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut answer)?;
    let seconds = start.elapsed().as_secs_f64();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))?;
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or("no VmHWM")?;
    let cpu = cpu_seconds(child.id())?;
    let _ = child.kill();
    let _ = child.wait();
    if answer.is_empty() {
        return Err("serve closed stdout without answering".into());
    }
    println!("TIME {seconds:.2} {hwm} {:.2} {:.2}", cpu.0, cpu.1);
    Ok(())
}

/// The user and system CPU seconds process `pid` has used so far: fields 14
/// and 15 of `/proc/PID/stat`, in clock ticks (`USER_HZ`, 100 a second on
/// Linux whatever the kernel's own tick).
fn cpu_seconds(pid: u32) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    const TICKS_PER_SECOND: f64 = 100.0;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let after_name = stat.rsplit_once(')').ok_or("no ')' in /proc/PID/stat")?.1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Field 3 (the state) is the first after the name: utime is field 14.
    let tick = |i: usize| -> Result<f64, Box<dyn std::error::Error>> {
        Ok(fields
            .get(i - 3)
            .ok_or("short /proc/PID/stat")?
            .parse::<f64>()?
            / TICKS_PER_SECOND)
    };
    Ok((tick(14)?, tick(15)?))
}

/// One message of a read exchange, split around its `id` value.
struct Template {
    dir: &'static str,
    before_id: String,
    after_id: String,
    /// Microseconds after the previous record (from the source).
    gap_us: u64,
}

fn generate(args: &[String]) -> Res {
    let out = args.first().ok_or("gen: OUT missing")?;
    let mut messages = DEFAULT_MESSAGES;
    let mut source = DEFAULT_SOURCE.to_owned();
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--messages" => messages = it.next().ok_or("--messages N")?.parse()?,
            "--source" => source.clone_from(it.next().ok_or("--source FILE")?),
            other => return Err(format!("gen: unknown argument {other}").into()),
        }
    }
    let text = std::fs::read_to_string(&source).map_err(|e| format!("--source {source}: {e}"))?;
    let lines: Vec<&str> = text.lines().collect();
    let records: Vec<serde_json::Value> = lines
        .get(1..)
        .ok_or_else(|| format!("--source {source}: no header line"))?
        .iter()
        .map(|l| serde_json::from_str(l))
        .collect::<Result<_, _>>()?;
    let is_read_request = |r: &serde_json::Value| {
        r["kind"] == "message" && r["dir"] == "c2s" && r["msg"]["method"] == "resources/read"
    };
    let first_read = records
        .iter()
        .position(is_read_request)
        .ok_or("the source has no resources/read request")?;
    // The read exchanges: (request, reply) pairs of message records.
    let mut exchanges: Vec<(Template, Template)> = Vec::new();
    let mut prev_t = records[first_read]["tUs"].as_u64().unwrap_or(0);
    let mut pending: Option<Template> = None;
    for r in &records[first_read..] {
        if r["kind"] != "message" {
            continue;
        }
        let t = r["tUs"].as_u64().ok_or("record without tUs")?;
        let gap_us = t.saturating_sub(prev_t).max(1);
        prev_t = t;
        let tpl = template(r, gap_us)?;
        match pending.take() {
            None if is_read_request(r) => pending = Some(tpl),
            None => {}
            Some(req) => exchanges.push((req, tpl)),
        }
    }
    let (docs, dynamic): (Vec<_>, Vec<_>) = exchanges
        .into_iter()
        .partition(|(_, reply)| reply.before_id.len() + reply.after_id.len() > 1000);
    if docs.is_empty() || dynamic.is_empty() {
        return Err("the source needs both small and document read exchanges".into());
    }
    let mut w = std::io::BufWriter::with_capacity(READ_BUF, std::fs::File::create(out)?);
    // Header and handshake, verbatim.
    for l in &lines[..=first_read] {
        writeln!(w, "{l}")?;
    }
    let mut written = records[..first_read]
        .iter()
        .filter(|r| r["kind"] == "message")
        .count();
    let mut t_us = records[first_read]["tUs"].as_u64().unwrap_or(0);
    let mut id = 16u64;
    let mut cycle = 0usize;
    'outer: loop {
        let doc = &docs[cycle % docs.len()];
        for (req, reply) in dynamic.iter().chain(std::iter::once(doc)) {
            if written + 2 > messages {
                break 'outer;
            }
            for m in [req, reply] {
                t_us += m.gap_us;
                writeln!(
                    w,
                    "{{\"tUs\":{t_us},\"kind\":\"message\",\"dir\":\"{}\",\"msg\":{}{id}{}}}",
                    m.dir, m.before_id, m.after_id
                )?;
            }
            written += 2;
            id += 1;
        }
        cycle += 1;
    }
    writeln!(
        w,
        "{{\"tUs\":{},\"kind\":\"exit\",\"code\":0}}",
        t_us + 1000
    )?;
    w.flush()?;
    eprintln!(
        "many_small: wrote {out}: {written} messages ({} read exchanges)",
        id - 16
    );
    Ok(())
}

/// The record's `msg` serialized (member order kept) with its id cut out.
fn template(r: &serde_json::Value, gap_us: u64) -> Result<Template, Box<dyn std::error::Error>> {
    const MARK: &str = "\u{1}ID\u{1}";
    let mut msg = r["msg"].clone();
    let obj = msg.as_object_mut().ok_or("msg is not an object")?;
    obj.insert("id".into(), MARK.into());
    let text = serde_json::to_string(&msg)?;
    let quoted = serde_json::to_string(MARK)?;
    let (before, after) = text.split_once(&quoted).ok_or("id mark not found")?;
    Ok(Template {
        dir: if r["dir"] == "c2s" { "c2s" } else { "s2c" },
        before_id: before.to_owned(),
        after_id: after.to_owned(),
        gap_us,
    })
}

fn parse(mode: &str, path: &str) -> Res {
    let start = Instant::now();
    let file = std::fs::File::open(path)?;
    let mut lines = 0usize;
    if mode == "memchr" {
        let mut r = file;
        let mut buf = vec![0u8; READ_BUF];
        loop {
            let n = r.read(&mut buf)?;
            if n == 0 {
                break;
            }
            lines += memchr::memchr_iter(b'\n', &buf[..n]).count();
        }
    } else {
        let mut r = BufReader::with_capacity(READ_BUF, file);
        let mut line = Vec::new();
        let mut header = true;
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            lines += 1;
            if std::mem::take(&mut header) {
                continue;
            }
            if mode == "serde" {
                let v: serde_json::Value = serde_json::from_slice(&line)?;
                std::hint::black_box(&v);
            } else {
                let v: sonic_rs::Value = sonic_rs::from_slice(&line)?;
                std::hint::black_box(&v);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    println!("lines={lines} seconds={seconds:.3} vmhwm_kib={hwm}");
    Ok(())
}
