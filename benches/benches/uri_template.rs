//! Criterion benches of RFC 6570 matching and expansion (`mcptape_uri::template`) at 1 KiB,
//! 8 KiB and 64 KiB URIs, per template shape: every operator in one template, adjacent
//! ambiguous variables, adjacent `{+x}`/`{#x}`, exploded lists, 32 path variables. Each shape
//! is matched twice: against its own expansion (a match) and against the expansion with a
//! stray `%` at the end, which no value holds (no match, after every split was considered:
//! the backtracking worst case).
//!
//! After criterion, the bench prints the **growth ratio** of every shape and operation — the
//! median thread CPU time at 64 KiB ÷ the median at 1 KiB (CPU time, not wall time: on a
//! shared machine a 100 ms run is descheduled part of the time, a 1 ms run is not) (64× the bytes; linear is ~64, quadratic
//! ~4096) — and exits non-zero if one is over [`MAX_GROWTH`] (not under `--test`, where only
//! one iteration runs).
//!
//! Run: `cargo bench -p mcptape-benches --bench uri_template` (only the growth table:
//! `-- growth_only`, a filter no criterion bench matches); CI: `-- --test`.

#![allow(missing_docs)] // criterion_group! generates an undocumented fn

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use mcptape_uri::template::{MAX_MATCH_URI_BYTES, Template, Value, Vars};
use std::hint::black_box;
use std::time::Duration;

/// Largest accepted growth ratio (time at 64 KiB ÷ time at 1 KiB), issue 29.
const MAX_GROWTH: f64 = 80.0;

/// URI sizes benched, bytes (the largest leaves room for the stray `%` under
/// [`MAX_MATCH_URI_BYTES`]).
const SIZES: [(&str, usize); 3] = [
    ("1KiB", 1024),
    ("8KiB", 8 * 1024),
    ("64KiB", MAX_MATCH_URI_BYTES - 1),
];

/// A template shape: its text, and the variables that expand it to about `len` bytes.
struct Shape {
    name: &'static str,
    template: String,
    vars: fn(usize) -> Vars,
}

/// `len` bytes of an unreserved value (`abcdefgh…`).
fn plain(len: usize) -> String {
    (0..len).map(|i| char::from(b'a' + (i % 8) as u8)).collect()
}

/// `len` bytes of a `{+x}`/`{#x}` value with segments and triplets (`abcdefgh%20…/`), 40-byte
/// segments: a `{/seg*}` before it takes them as items, and every item is a matcher state
/// ([`mcptape_uri::template::MAX_MATCH_DEPTH`]).
fn reserved(len: usize) -> String {
    let unit = "abcdefgh%20abcdefghijklmnopqrstuvwxyz01/";
    let mut s = unit.repeat(len / unit.len() + 1);
    s.truncate(len);
    // never end inside a triplet or with a separator
    while s.ends_with('/') || s.ends_with('%') || s.len() >= 2 && s.as_bytes()[s.len() - 2] == b'%'
    {
        s.pop();
    }
    s
}

fn list(items: usize, item_len: usize) -> Value {
    Value::List((0..items).map(|_| plain(item_len)).collect())
}

fn shapes() -> Vec<Shape> {
    vec![
        Shape {
            name: "every_operator",
            template: "https://example.com{/seg*}{+path}/{name}{.ext}{;p,q}{?x,y}{&z}{#frag}"
                .into(),
            vars: |n| {
                let k = n / 10;
                let mut v = Vars::new();
                v.insert("seg", list(k / 64, 63));
                v.insert("path", reserved(2 * k));
                v.insert("name", plain(k));
                v.insert("ext", plain(k / 2));
                v.insert("p", plain(k / 2));
                v.insert("q", plain(k / 2));
                v.insert("x", plain(k));
                v.insert("y", plain(k));
                v.insert("z", plain(k / 2));
                v.insert("frag", reserved(2 * k));
                v
            },
        },
        Shape {
            name: "adjacent_simple",
            template: "x:{a}{b}{c}{d}{e}{f}{g}{h}".into(),
            vars: |n| {
                let mut v = Vars::new();
                for name in ["a", "b", "c", "d", "e", "f", "g", "h"] {
                    v.insert(name, plain(n / 8));
                }
                v
            },
        },
        Shape {
            name: "adjacent_reserved",
            template: "x:{+a}{#b}{+c}{#d}".into(),
            vars: |n| {
                let mut v = Vars::new();
                for name in ["a", "b", "c", "d"] {
                    v.insert(name, reserved(n / 4));
                }
                v
            },
        },
        Shape {
            name: "exploded",
            template: "x:{/l*}{?q*}{;m*}".into(),
            vars: |n| {
                let mut v = Vars::new();
                // items of 64-70 bytes: at most ~1000 items at 64 KiB (MAX_MATCH_DEPTH)
                // (rounded up, then trimmed by `instance`: rounded down, the "1 KiB" URI was 850
                // bytes, so its 64 KiB ÷ 1 KiB ratio was one of 74 times the bytes)
                v.insert("l", list(n.div_ceil(192), 63));
                v.insert("q", list(n.div_ceil(210), 63));
                v.insert("m", list(n.div_ceil(210), 63));
                v
            },
        },
        Shape {
            name: "32_path_vars",
            template: format!(
                "x:{}",
                (0..32).map(|i| format!("{{/v{i}}}")).collect::<String>()
            ),
            vars: |n| (0..32).map(|i| (format!("v{i}"), plain(n / 33))).collect(),
        },
    ]
}

/// A shape's template, variables and expansion at about `len` bytes (at most `len`).
fn instance(shape: &Shape, len: usize) -> (Template, Vars, String) {
    let t = Template::parse(&shape.template).expect("bench template parses");
    let mut target = len;
    loop {
        let vars = (shape.vars)(target);
        let uri = t.expand(&vars).expect("bench template expands");
        if uri.len() <= len {
            return (t, vars, uri);
        }
        // Small steps down: a whole overshoot at once can drop several list items.
        target -= ((uri.len() - len) / 8).max(1);
    }
}

fn tune(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, bytes: usize) {
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(200));
    g.measurement_time(Duration::from_millis(800));
    g.sampling_mode(SamplingMode::Flat);
}

fn benches(c: &mut Criterion) {
    for shape in shapes() {
        let mut g = c.benchmark_group(format!("uri_template/{}", shape.name));
        for (label, len) in SIZES {
            let (t, vars, uri) = instance(&shape, len);
            let miss = format!("{uri}%");
            tune(&mut g, uri.len());
            assert!(
                t.try_match_uri(&uri).unwrap().is_some(),
                "{} matches",
                shape.name
            );
            assert_eq!(
                t.try_match_uri(&miss).unwrap(),
                None,
                "{} misses",
                shape.name
            );
            g.bench_with_input(BenchmarkId::new("match", label), &uri, |b, u| {
                b.iter(|| black_box(t.try_match_uri(black_box(u))))
            });
            g.bench_with_input(BenchmarkId::new("no_match", label), &miss, |b, u| {
                b.iter(|| black_box(t.try_match_uri(black_box(u))))
            });
            g.bench_with_input(BenchmarkId::new("expand", label), &vars, |b, v| {
                b.iter(|| black_box(t.expand(black_box(v))))
            });
        }
        g.finish();
    }
}

/// CPU time this thread has run (`/proc/thread-self/schedstat`, ns): on a shared machine a
/// long run is descheduled for part of its wall time and a short one is not, which skews a
/// wall-clock ratio.
fn cpu_now() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("/proc/thread-self/schedstat (Linux)");
    let ns: u64 = text
        .split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .expect("schedstat starts with the on-CPU time in ns");
    Duration::from_nanos(ns)
}

/// Calls of `f` per batch so that a batch runs at least `batch` of CPU time (the clock's tick,
/// 4 ms here, a few percent of it): doubled until it does. Found on CPU time, not on the wall
/// time of one call: a call descheduled on a loaded machine gave one-call batches that the tick
/// rounded to 0 ns or 4 ms (a ratio of `inf` on 2026-12-03 at load 11).
fn calibrate(batch: Duration, f: &mut dyn FnMut()) -> u32 {
    let mut calls: u32 = 1;
    loop {
        let t = cpu_now();
        for _ in 0..calls {
            f();
        }
        if cpu_now() - t >= batch || calls >= 1 << 24 {
            return calls;
        }
        calls *= 2;
    }
}

/// Thread CPU time per call of each of `fs`: the median over 7 rounds, each round one batch of
/// every `f` in turn (interleaved, so a change in the machine's load between the sizes lands
/// on all of them: measured one after the other, the same 64 KiB match gave ratios of 66, 79
/// and 97 at a load falling from 11 to 3).
fn medians(batch: Duration, fs: &mut [Box<dyn FnMut() + '_>]) -> Vec<Duration> {
    let calls: Vec<u32> = fs.iter_mut().map(|f| calibrate(batch, f)).collect();
    let mut per_call: Vec<Vec<Duration>> = vec![Vec::new(); fs.len()];
    for _ in 0..7 {
        for (i, f) in fs.iter_mut().enumerate() {
            let t = cpu_now();
            for _ in 0..calls[i] {
                f();
            }
            per_call[i].push((cpu_now() - t) / calls[i]);
        }
    }
    per_call
        .into_iter()
        .map(|mut v| {
            v.sort();
            v[3]
        })
        .collect()
}

/// Prints the growth table; `true` if every ratio is within [`MAX_GROWTH`].
fn growth(quick: bool) -> bool {
    let budget = Duration::from_millis(if quick { 20 } else { 120 });
    println!();
    println!(
        "growth ratio = median thread CPU time at 64 KiB / at 1 KiB, sizes interleaved (linear ~64, limit {MAX_GROWTH})"
    );
    println!("| shape | operation | URI bytes (1 KiB / 64 KiB) | 1 KiB | 8 KiB | 64 KiB | ratio |");
    println!("|---|---|---|---|---|---|---|");
    let mut ok = true;
    for shape in shapes() {
        let inst: Vec<_> = SIZES
            .iter()
            .map(|(_, len)| instance(&shape, *len))
            .collect();
        for op in ["match", "no_match", "expand"] {
            let misses: Vec<String> = inst.iter().map(|(_, _, uri)| format!("{uri}%")).collect();
            let mut fs: Vec<Box<dyn FnMut() + '_>> = inst
                .iter()
                .zip(&misses)
                .map(|((t, vars, uri), miss)| -> Box<dyn FnMut() + '_> {
                    match op {
                        "match" => Box::new(move || {
                            black_box(t.try_match_uri(black_box(uri)).ok());
                        }),
                        "no_match" => Box::new(move || {
                            black_box(t.try_match_uri(black_box(miss)).ok());
                        }),
                        _ => Box::new(move || {
                            black_box(t.expand(black_box(vars)).ok());
                        }),
                    }
                })
                .collect();
            let times = medians(budget, &mut fs);
            let ratio = times[2].as_secs_f64() / times[0].as_secs_f64();
            let verdict = if ratio <= MAX_GROWTH { "" } else { " OVER" };
            ok &= ratio <= MAX_GROWTH;
            println!(
                "| {} | {op} | {} / {} | {:.1?} | {:.1?} | {:.1?} | {ratio:.1}{verdict} |",
                shape.name,
                inst[0].2.len(),
                inst[2].2.len(),
                times[0],
                times[1],
                times[2]
            );
        }
    }
    ok
}

criterion_group!(uri_template, benches);

fn main() {
    uri_template();
    Criterion::default().configure_from_args().final_summary();
    let quick = std::env::args().any(|a| a == "--test" || a == "--list");
    if !growth(quick) && !quick {
        eprintln!("a growth ratio is over {MAX_GROWTH}: matching or expansion is not linear");
        std::process::exit(1);
    }
}
