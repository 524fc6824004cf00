//! Writes the seed's directory read as a transcript, for measuring `mcptape
//! check` / `mcptape inspect` at memory speed (benches/README.md, "check/inspect
//! on the 160 MB directory read").
//!
//! The seed (resources-read-response): "a directory of 40 design mockups at
//! 3 MB each is shipping 160 MB of base64 through a JSON parser to satisfy one
//! directory read". So: one `resources/read` request and one response holding
//! 40 `image/png` blob entries of 3,000,000 bytes each (a PNG signature, then
//! xorshift bytes), i.e. 40 × 4,000,000 = 160,000,000 base64 characters in one
//! record line.
//!
//! Usage: `cargo run --release -p mcptape-check --example directory_read -- OUT.jsonl [ENTRIES] [BYTES]`;
//! `... -- --session OUT.jsonl [ENTRIES] [BYTES]` writes the same read inside a whole session
//! (`initialize`, its result, `notifications/initialized`, then the read), which `mcptape
//! serve` and `mcptape bench` replay (benches/directory_read.sh);
//! `... -- --memcpy FILE` prints the memcpy baseline for FILE (GB/s, into a
//! pre-faulted buffer and into a fresh one), for the figures beside `cat`.

use std::io::Write as _;

use mcptape_wire::codec::base64::{Path, encode};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1).peekable();
    let session = args.next_if(|a| a == "--session").is_some();
    let out = args
        .next()
        .unwrap_or_else(|| "directory-read.jsonl".to_owned());
    if out == "--memcpy" {
        let src = std::fs::read(args.next().unwrap_or_default())?;
        let gbs = |n: usize, s: f64| n as f64 / s / 1e9;
        let mut warm = vec![1u8; src.len()];
        let t = std::time::Instant::now();
        warm.copy_from_slice(&src);
        let dt = t.elapsed().as_secs_f64();
        println!(
            "memcpy {} bytes, pre-faulted: {dt:.4} s = {:.2} GB/s",
            src.len(),
            gbs(src.len(), dt)
        );
        let t = std::time::Instant::now();
        let fresh = src.clone();
        let dt = t.elapsed().as_secs_f64();
        println!(
            "memcpy {} bytes, fresh (page faults): {dt:.4} s = {:.2} GB/s",
            fresh.len(),
            gbs(src.len(), dt)
        );
        std::hint::black_box((warm, fresh));
        return Ok(());
    }
    let entries: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(40);
    let bytes: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(3_000_000);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out)?);
    writeln!(
        f,
        r#"{{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{{}},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}}"#
    )?;
    // The read's id (and its records' times) follow the handshake when there is one.
    let (id, t) = if session {
        writeln!(
            f,
            r#"{{"tUs":1,"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"directory_read","version":"0"}}}}}}}}"#
        )?;
        writeln!(
            f,
            r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"resources":{{}}}},"serverInfo":{{"name":"mockups","version":"1"}}}}}}}}"#
        )?;
        writeln!(
            f,
            r#"{{"tUs":3,"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","method":"notifications/initialized"}}}}"#
        )?;
        (2, 4)
    } else {
        (1, 1)
    };
    writeln!(
        f,
        r#"{{"tUs":{t},"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///mockups/"}}}}}}"#
    )?;
    write!(
        f,
        r#"{{"tUs":{},"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":{id},"result":{{"contents":["#,
        t + 1
    )?;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut blob = vec![0u8; bytes];
    for i in 0..entries {
        let sig = b"\x89PNG\r\n\x1a\n";
        for b in blob.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        let n = sig.len().min(blob.len());
        blob[..n].copy_from_slice(&sig[..n]);
        if i > 0 {
            f.write_all(b",")?;
        }
        write!(
            f,
            r#"{{"uri":"file:///mockups/mockup-{i:02}.png","mimeType":"image/png","blob":""#
        )?;
        f.write_all(encode(Path::Simd, &blob).as_bytes())?;
        f.write_all(b"\"}")?;
    }
    writeln!(f, "]}}}}}}")?;
    f.flush()?;
    eprintln!("wrote {out}: {entries} entries x {bytes} bytes");
    Ok(())
}
