//! Issue 12: `latency.hlog` is a standard HdrHistogram log (V2 compressed, `#[StartTime: …]`,
//! `#[BaseTime: …]`, the legend): read back by Python's `hdrhistogram` (`hdrh.log`, installed in
//! `.tools/venv` by scripts/install-peers.sh) and by mcptape itself.

use crate::hdrh_python;
use mcptape_report::render::hlog::{Tagged, merge_hlog, merge_hlog_tagged, write_hlog};
use mcptape_report::stats::new_hist;

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
    let (lines, out) = hdrh_python::read_log(&path);
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(
        (lines[0].tag.as_str(), lines[0].count),
        ("single", 1000),
        "{out}"
    );
    assert!(
        single.equivalent(lines[0].p50, single.value_at_quantile(0.5)),
        "{out}"
    );
    assert!(single.equivalent(lines[0].max, 10_000), "{out}");
    assert_eq!(
        (lines[1].tag.as_str(), lines[1].count),
        ("turn", 2),
        "{out}"
    );
    assert!(turn.equivalent(lines[1].max, 800_000), "{out}");
}
