//! The bench client's hot path alone, for benches/directory_read.sh: reads stdin (a pipe) with
//! [`LineReader`] and scans each line's envelope
//! ([`mcptape_wire::envelope::scan_envelope_hinted`] with the line's prescan hints, no body
//! parse), as `mcptape bench` does for a reply; with `--validate`, then checks it with the fused strict decoder
//! ([`mcptape_wire::codec::scan_message`]), timed apart. Prints per line: bytes, ms from the
//! first byte to the line cut, ms of the envelope scan (and of the validation), the id; and at
//! the end the process's peak RSS (VmHWM).
//!
//! stdin must be a pipe. Usage: `cat REPLY | cargo run --release -p mcptape-transport --example read_lines [-- --validate]`.

use std::time::Instant;

use mcptape_transport::framed::{Line, LineReader};
use mcptape_transport::session::SESSION_MAX_LINE_BYTES;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let validate = std::env::args().any(|a| a == "--validate");
    // stdin as the bench client reads its child's stdout: a non-blocking pipe through epoll.
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    let pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?;
    let mut r = LineReader::new(pipe, SESSION_MAX_LINE_BYTES);
    let t0 = Instant::now();
    while let Some(line) = r.next().await? {
        let cut = t0.elapsed();
        let Line::Bytes(b) = line else {
            println!("line over the limit: {line:?}");
            continue;
        };
        let hints = r.take_hints();
        let t = Instant::now();
        let env = match &hints {
            Some(h) => mcptape_wire::envelope::scan_envelope_hinted(&b, h),
            None => mcptape_wire::envelope::scan_envelope(&b),
        };
        let scan = t.elapsed();
        let mut out = format!(
            "{} bytes: read+cut {:.1} ms, envelope scan {:.1} ms ({} hinted bytes), id {:?}",
            b.len(),
            cut.as_secs_f64() * 1e3,
            scan.as_secs_f64() * 1e3,
            hints.as_ref().map_or(0, |h| h.covered_bytes()),
            env.as_ref()
                .map(|e| e.id.clone())
                .map_err(ToString::to_string)
        );
        if validate {
            let t = Instant::now();
            let ok = mcptape_wire::codec::scan_message(&b).is_ok();
            out += &format!(
                ", validation {:.1} ms ({})",
                t.elapsed().as_secs_f64() * 1e3,
                if ok { "ok" } else { "rejected" }
            );
        }
        println!("{out}");
    }
    let status = std::fs::read_to_string("/proc/self/status")?;
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: ?");
    println!("peak RSS {}", hwm.trim_start_matches("VmHWM:").trim());
    Ok(())
}
