//! Issue 12: `latency.hlog` is a standard HdrHistogram log (V2 compressed, `#[StartTime: …]`,
//! `#[BaseTime: …]`, the legend): read back by Python's `hdrhistogram` (`hdrh.log`, installed in
//! `.tools/venv` by scripts/install-peers.sh) and by mcptape itself.

use mcptape_replay::render::hlog::{Tagged, merge_hlog, merge_hlog_tagged, write_hlog};
use mcptape_replay::stats::new_hist;

fn python() -> std::path::PathBuf {
    std::env::var_os("MCPTAPE_PYTHON").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python"),
        Into::into,
    )
}

#[test]
fn hlog_round_trips_through_python_hdrhistogram() {
    let mut single = new_hist();
    for v in 1..=1_000u64 {
        single.record(v * 10).unwrap(); // 10 µs .. 10 ms
    }
    let mut turn = new_hist();
    turn.record(800_000).unwrap();
    turn.record(12_000).unwrap();
    let log = write_hlog(
        &[
            Tagged {
                tag: "single",
                hist: &single,
                start_s: 0.0,
                duration_s: 2.0,
            },
            Tagged {
                tag: "turn",
                hist: &turn,
                start_s: 2.0,
                duration_s: 1.0,
            },
        ],
        "mcptape test (values in µs)",
    )
    .unwrap();
    let text = String::from_utf8(log.clone()).unwrap();
    assert!(text.contains("#[StartTime: "), "{text}");
    assert!(text.contains("#[BaseTime: "), "{text}");
    assert!(text.contains("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""), "{text}");
    assert!(text.contains(",HISTF"), "{text}");
    // mcptape reads it back.
    assert_eq!(merge_hlog(&log).unwrap().len(), 1_000);
    assert_eq!(
        merge_hlog_tagged(&log, Some("turn")).unwrap().max(),
        turn.max()
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latency.hlog");
    std::fs::write(&path, &log).unwrap();
    let script = r#"
import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
ref = HdrHistogram(1, 3600 * 1000 * 1000, 3)
r = HistogramLogReader(sys.argv[1], ref)
seen = []
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    seen.append((h.get_tag(), h.get_total_count(), h.get_value_at_percentile(50), h.get_max_value()))
for s in seen:
    print("%s %d %d %d" % s)
"#;
    let o = std::process::Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python (run scripts/install-peers.sh)");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!((lines[0][0], lines[0][1]), ("single", "1000"), "{out}");
    let p50: u64 = lines[0][2].parse().unwrap();
    assert!(
        single.equivalent(p50, single.value_at_quantile(0.5)),
        "{out}"
    );
    assert!(
        single.equivalent(lines[0][3].parse().unwrap(), 10_000),
        "{out}"
    );
    assert_eq!((lines[1][0], lines[1][1]), ("turn", "2"), "{out}");
    assert!(
        turn.equivalent(lines[1][3].parse().unwrap(), 800_000),
        "{out}"
    );
}
