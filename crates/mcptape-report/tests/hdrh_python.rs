//! An HdrHistogram log read back by Python's `hdrhistogram` (`hdrh.log`, installed in
//! `.tools/venv` by scripts/install-peers.sh). Shared by the report tests (as
//! `hdrh_python`) and by the binary's `merge` and `bench_e2e` tests, which include this file by path.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The venv's Python: `$MCPTAPE_PYTHON`, else `.tools/venv/bin/python` at the repository root.
pub fn python() -> PathBuf {
    std::env::var_os("MCPTAPE_PYTHON").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python"),
        Into::into,
    )
}

/// One interval histogram of a log as Python read it (values in the log's unit, µs for ours).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyInterval {
    /// `get_tag()`.
    pub tag: String,
    /// `get_total_count()`.
    pub count: u64,
    /// `get_min_value()`.
    pub min: u64,
    /// `get_value_at_percentile(50)`.
    pub p50: u64,
    /// `get_max_value()`.
    pub max: u64,
}

const READ_LOG: &str = r#"
import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
ref = HdrHistogram(1, 3600 * 1000 * 1000, 3)
r = HistogramLogReader(sys.argv[1], ref)
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    print("%s %d %d %d %d" % (h.get_tag(), h.get_total_count(), h.get_min_value(),
                              h.get_value_at_percentile(50), h.get_max_value()))
"#;

/// Every interval histogram of the log at `path`, in order, as Python's `HistogramLogReader`
/// reads it, and Python's whole stdout (for failure messages). Fails the test when Python or
/// `hdrh` is missing, the script fails, or a line is not `TAG COUNT MIN P50 MAX`.
pub fn read_log(path: &Path) -> (Vec<PyInterval>, String) {
    let o = std::process::Command::new(python())
        .arg("-c")
        .arg(READ_LOG)
        .arg(path)
        .output()
        .expect("python (run scripts/install-peers.sh)");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let intervals = out
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 5, "not TAG COUNT MIN P50 MAX: {l:?}\n{out}");
            let n = |i: usize| -> u64 {
                f[i].parse()
                    .unwrap_or_else(|e| panic!("{l:?}: field {i}: {e}\n{out}"))
            };
            PyInterval {
                tag: f[0].to_owned(),
                count: n(1),
                min: n(2),
                p50: n(3),
                max: n(4),
            }
        })
        .collect();
    (intervals, out)
}
