//! Peak heap while decoding the seeds' 160 MB directory read (40 × 3 MB
//! blobs), measured with a counting global allocator: every byte requested
//! from the system allocator is added to a live counter and the high-water
//! mark is kept. Goal (issue 7): input + decoded output + 5% at most, i.e. no
//! intermediate `String` per blob and no doubling of the output arena.
//!
//! Run: `cargo bench -p mcptape-benches --bench peak_memory`. Exits non-zero
//! when the fused path misses the goal.
#![allow(unsafe_code)]

use mcptape_wire::codec::{CodecPath, Decoder, payload};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's own arguments,
// so `System`'s guarantees hold unchanged; the counters are plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: same contract as `GlobalAlloc::alloc`, forwarded.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: same contract as `GlobalAlloc::alloc_zeroed`, forwarded.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` was allocated by `System` with layout `l` (we forward all).
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: same contract as `GlobalAlloc::realloc`, forwarded.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
            grow(new);
        }
        q
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn mb(n: usize) -> f64 {
    n as f64 / 1e6
}

fn main() {
    let input = payload::directory_response();
    let mut fused_ok = true;
    println!(
        "peak heap decoding the directory read: input {:.1} MB ({} bytes)",
        mb(input.len()),
        input.len()
    );
    println!(
        "| path | decoded output MB | peak heap MB (input + arenas + temporaries) | budget MB (input+output+5%) | ratio to input+output | 2nd decode, same Decoder: extra MB |"
    );
    println!("|---|---|---|---|---|---|");
    for path in [CodecPath::Fused, CodecPath::Simd, CodecPath::Scalar] {
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let mut dec = Decoder::new(path);
        let out = dec
            .decode(&input)
            .expect("directory read decodes")
            .blob_bytes();
        let peak = PEAK.load(Ordering::Relaxed) - base + input.len();
        let live_after_first = LIVE.load(Ordering::Relaxed);
        PEAK.store(live_after_first, Ordering::Relaxed);
        dec.decode(&input).expect("directory read decodes");
        let extra = PEAK.load(Ordering::Relaxed) - live_after_first;
        let budget = (input.len() + out) as f64 * 1.05;
        let ratio = peak as f64 / (input.len() + out) as f64;
        println!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.3} | {:.3} |",
            path.name(),
            mb(out),
            mb(peak),
            budget / 1e6,
            ratio,
            mb(extra)
        );
        if path == CodecPath::Fused && peak as f64 > budget {
            fused_ok = false;
        }
        drop(dec);
    }
    if !fused_ok {
        eprintln!("fused path exceeded input + output + 5%");
        std::process::exit(1);
    }
}
