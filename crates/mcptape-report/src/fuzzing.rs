//! Entry points for the fuzz targets in `fuzz/` (not a stable API).

/// Fuzz target `hlog_read`: [`crate::render::hlog::read_hlog`] on arbitrary bytes (an untrusted
/// `.hlog` handed to `mcptape merge` or `--latency empirical:FILE`) never panics and stays
/// within its named limits; a log it accepts round-trips: written back with
/// [`crate::render::hlog::write_hlog_at`] and read again, every tag keeps its count, min and
/// max (HdrHistogram log format V2).
///
/// # Panics
/// When the round trip changes a tag (that is the finding).
pub fn hlog_read(data: &[u8]) {
    use crate::render::hlog::{Tagged, read_hlog, write_hlog_at};
    let Ok(read) = read_hlog(data) else {
        return;
    };
    let entries: Vec<Tagged<'_>> = read
        .tags
        .iter()
        .map(|t| Tagged {
            tag: &t.tag,
            hist: &t.hist,
            start_s: 0.0,
            duration_s: 1.0,
        })
        .collect();
    // A tag the writer refuses (`,`, ` `, `=`) or an empty one is not a round-trip case.
    if entries.iter().any(|e| e.tag.is_empty()) {
        return;
    }
    let Ok(bytes) = write_hlog_at(&entries, &["fuzz"], std::time::SystemTime::UNIX_EPOCH) else {
        return;
    };
    let again = read_hlog(&bytes).expect("a log mcptape wrote reads back");
    assert_eq!(again.tags.len(), read.tags.len());
    for (a, b) in read.tags.iter().zip(&again.tags) {
        assert_eq!(a.tag, b.tag);
        assert_eq!(a.hist.len(), b.hist.len(), "{}", a.tag);
        if !a.hist.is_empty() {
            assert_eq!(a.hist.min(), b.hist.min(), "{}", a.tag);
            assert_eq!(a.hist.max(), b.hist.max(), "{}", a.tag);
        }
    }
}

#[cfg(test)]
mod hlog_tests {
    /// The property on a real bench log (written by the bench writer) and its every prefix.
    #[test]
    fn hlog_read_property_holds_on_a_written_log_and_its_prefixes() {
        use crate::render::hlog::{Tagged, write_hlog_at};
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in [900u64, 1_200, 5_000_000] {
            h.record(v).unwrap();
        }
        let log = write_hlog_at(
            &[Tagged {
                tag: "single",
                hist: &h,
                start_s: 0.0,
                duration_s: 2.0,
            }],
            &["test"],
            std::time::SystemTime::UNIX_EPOCH,
        )
        .unwrap();
        let read = crate::render::hlog::read_hlog(&log).unwrap();
        assert_eq!(read.tags[0].hist.len(), 3);
        for n in 0..=log.len() {
            super::hlog_read(&log[..n]);
        }
    }
}
