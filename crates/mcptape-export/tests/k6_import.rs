//! `import`: k6 NDJSON parsing, limits, and exact merging of segments.

use std::io::Write as _;

use mcptape_export::ExportErrorKind;
use mcptape_export::k6::import::{K6Import, MAX_FILES, MAX_LINE_BYTES, rfc3339_us};

fn point(metric: &str, t_s: u32, value: f64, tags: &str) -> String {
    format!(
        r#"{{"type":"Point","data":{{"time":"2026-12-01T22:10:{:02}.5+00:00","value":{value},"tags":{{{tags}}}}},"metric":"{metric}"}}"#,
        t_s % 60
    )
}

/// A k6 output of one segment: Metric lines, `n` reads of `base`+i ms, `n/4` turns.
fn segment(n: u32, base: f64) -> String {
    let mut s = String::new();
    s.push_str(r#"{"type":"Metric","data":{"name":"mcp_read","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"mcp_read"}"#);
    s.push('\n');
    s.push_str(&point(
        "mcp_plan",
        0,
        1.0,
        r#""transcript":"everything-http.jsonl","parallel":"4","deadline_ms":"800","timeout_ms":"5000","load":"k6 test","recorded_reads":"10","recorded_read_errors":"1""#,
    ));
    s.push('\n');
    for i in 0..n {
        let v = base + f64::from(i) * 0.25;
        s.push_str(&point(
            "mcp_read",
            i,
            v,
            r#""class":"ok","method":"resources/read""#,
        ));
        s.push('\n');
        s.push_str(&point(
            "http_req_duration",
            i,
            v,
            r#""name":"resources/read""#,
        ));
        s.push('\n');
        if i % 4 == 0 {
            let cls = if i % 8 == 0 { "deadline" } else { "complete" };
            s.push_str(&point(
                "mcp_turn",
                i,
                v * 3.0,
                &format!(r#""parallel":"4","class":"{cls}""#),
            ));
            s.push('\n');
        }
    }
    s.push_str(&point("mcp_errors", 3, 1.0, r#""class":"rpc:-32602:uri""#));
    s.push('\n');
    s.push_str(&point("mcp_errors", 4, 2.0, r#""class":"timeout""#));
    s.push('\n');
    s.push_str(&point("dropped_iterations", 5, 3.0, ""));
    s.push('\n');
    s.push_str(&point("vus", 5, 7.0, ""));
    s.push('\n');
    s.push_str(&point("vus", 6, 5.0, ""));
    s.push('\n');
    s
}

#[test]
fn two_segments_merge_exactly_like_their_concatenation() {
    let (a, b) = (segment(40, 1.0), segment(60, 2.5));
    let mut two = K6Import::new();
    two.add_ndjson("a.json", a.as_bytes()).unwrap();
    two.add_ndjson("b.json", b.as_bytes()).unwrap();
    let mut one = K6Import::new();
    one.add_ndjson("ab.json", format!("{a}{b}").as_bytes())
        .unwrap();
    assert_eq!(two.single.len(), 100);
    assert_eq!(two.single, one.single);
    assert_eq!(two.turn, one.turn);
    let (r2, r1) = (two.report().unwrap(), one.report().unwrap());
    assert_eq!(r2.bench.single, r1.bench.single);
    assert_eq!(r2.bench.turn, r1.bench.turn);
    assert_eq!(r2.bench.turns, 25);
    assert_eq!(r2.bench.turns_hit_deadline, 13);
    assert_eq!(r2.bench.parallel, 4);
    assert_eq!(r2.bench.deadline_us, 800_000);
    assert_eq!(r2.bench.transcript, "everything-http.jsonl");
    assert_eq!(r2.bench.prediction.len(), 2);
    assert_eq!(r2.bench.errors["not-found (-32602 + data.uri)"], 2);
    assert_eq!(r2.bench.errors["timeout"], 4);
    // Per-file maxima summed: two machines at 7 VUs each.
    assert_eq!(r2.k6.vus_peak, 14);
    assert_eq!(r1.k6.vus_peak, 7);
    assert_eq!(r2.k6.dropped_iterations, 6);
    assert_eq!(r2.k6.files.len(), 2);
    // 1.0 ms is 1000 µs exactly; 1.25 ms 1250 µs.
    assert_eq!(two.single.min(), 1000);
}

#[test]
fn gzip_output_reads_like_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = segment(30, 1.0);
    let plain = dir.path().join("seg.json");
    std::fs::write(&plain, &text).unwrap();
    let gz = dir.path().join("seg.json.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text.as_bytes()).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let a = K6Import::from_files(&[&plain]).unwrap();
    let b = K6Import::from_files(&[&gz]).unwrap();
    assert_eq!(a.single, b.single);
    assert_eq!(b.single.len(), 30);
    let out = dir.path().join("out");
    let r = b.write_out(&out).unwrap();
    // All reads: the 30 answered and the 2 cut at the 5 s timeout (censored, as bench).
    assert_eq!(r.bench.single.count, 32);
    assert_eq!(r.bench.single_phase.sent, 32);
    for f in ["report.json", "latency.hlog", "latency.svg", "report.html"] {
        assert!(out.join(f).metadata().unwrap().len() > 100, "{f}");
    }
    let back = mcptape_report::render::merge_hlog_tagged(
        &std::fs::read(out.join("latency.hlog")).unwrap(),
        Some("single"),
    )
    .unwrap();
    let mut all = b.single.clone();
    all.record_n(5_000_000, 2).unwrap();
    assert_eq!(back, all);
}

/// Fresh-user report: `single reads: none sent` and `sent 0 ok 0` over 113 reads. The
/// counters come from the samples' class tags and add up to n in both phases.
#[test]
fn import_k6_counters_add_up_to_the_samples() {
    let mut s = segment(8, 1.0); // 8 reads class ok, 2 turns of 4, 2 timeouts
    for (m, tags) in [
        ("mcp_read", r#""class":"rpc:-32602:uri","scenario":"reads""#),
        ("mcp_read", r#""class":"http:500","scenario":"reads""#),
        ("mcp_turn_read", r#""class":"ok","scenario":"turns""#),
        ("mcp_turn_read", r#""class":"ok","scenario":"turns""#),
        (
            "mcp_turn_read",
            r#""class":"rpc:-32603","scenario":"turns""#,
        ),
        ("mcp_errors", r#""class":"transport","scenario":"turns""#),
        ("mcp_errors", r#""class":"transport","scenario":"reads""#),
    ] {
        // A Counter point's value is its increment (1 per read); a Trend's the latency, ms.
        let v = if m == "mcp_errors" { 1.0 } else { 3.0 };
        s.push_str(&point(m, 7, v, tags));
        s.push('\n');
    }
    let mut m = K6Import::new();
    m.add_ndjson("a.json", s.as_bytes()).unwrap();
    let r = m.report().unwrap();
    let c = &r.bench.single_phase;
    // 8 ok + 2 error answers + 2 timeouts + 1 without a response.
    assert_eq!(
        (
            c.sent,
            c.answered_ok,
            c.error_answers_total(),
            c.timed_out,
            c.closed
        ),
        (13, 8, 2, 2, 1)
    );
    assert_eq!(c.error_answers["not-found (-32602 + data.uri)"], 1);
    assert_eq!(c.error_answers["HTTP 500 without a JSON-RPC answer"], 1);
    assert_eq!(r.bench.single.count, c.sent - c.closed);
    assert_eq!(r.bench.single_ok.count, 8);
    let t = &r.bench.turn_phase;
    // 2 turns × 4: 2 ok, 1 error answer, 1 without a response, 4 cut at the deadline.
    assert_eq!(
        (
            t.sent,
            t.answered_ok,
            t.error_answers_total(),
            t.timed_out,
            t.closed
        ),
        (8, 2, 1, 4, 1)
    );
    assert_eq!(r.bench.turn_reads_all.count, t.sent - t.closed);
    let table = r.table();
    let first = table.lines().next().unwrap();
    assert_eq!(
        first,
        "mcptape import k6  a.json  (k6 run replaying everything-http.jsonl)"
    );
    assert!(
        table.contains("single reads (k6 test): 8 of 13 answered ok"),
        "{table}"
    );
    assert!(
        table.contains("sent 13  ok 8  error answers 2  timed out 2  closed 1"),
        "{table}"
    );
    assert!(
        table.contains("turn reads: sent 8  ok 2  error answers 1  timed out 4  closed 1"),
        "{table}"
    );
    assert!(table.contains("answered ok"), "{table}");
}

#[test]
fn line_length_limit_at_and_past() {
    let line = |len: usize| {
        let head = r#"{"type":"Point","metric":"other","data":{"time":"2026-12-01T22:10:00Z","value":1,"tags":{"pad":""#;
        let tail = r#""}}}"#;
        format!(
            "{head}{}{tail}\n",
            "x".repeat(len - head.len() - tail.len())
        )
    };
    let mut m = K6Import::new();
    m.add_ndjson("at", line(MAX_LINE_BYTES).as_bytes()).unwrap();
    let e = m
        .add_ndjson("past", format!("\n{}", line(MAX_LINE_BYTES + 1)).as_bytes())
        .unwrap_err();
    assert_eq!(
        e.kind,
        ExportErrorKind::LineTooLong {
            max: MAX_LINE_BYTES
        }
    );
    assert_eq!(e.line, 2);
}

#[test]
fn file_count_limit_at_and_past() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("seg.json");
    std::fs::write(&f, segment(1, 1.0)).unwrap();
    let at = vec![f.clone(); MAX_FILES];
    assert_eq!(
        K6Import::from_files(&at).unwrap().single.len(),
        MAX_FILES as u64
    );
    let past = vec![f; MAX_FILES + 1];
    assert_eq!(
        K6Import::from_files(&past).unwrap_err().kind,
        ExportErrorKind::TooManyFiles {
            count: MAX_FILES + 1,
            max: MAX_FILES
        }
    );
}

#[test]
fn malformed_lines_are_refused_with_their_line_number() {
    type Expect = fn(&ExportErrorKind) -> bool;
    let cases: [(&str, Expect); 4] = [
        (
            r#"{"type":"Summary","metric":"x","data":{}}"#,
            |k| matches!(k, ExportErrorKind::UnknownLineType(t) if t == "Summary"),
        ),
        (
            r#"{"type":"Point","metric":"mcp_read","data":{"time":"2026-12-01T22:10:00Z","value":-1}}"#,
            |k| matches!(k, ExportErrorKind::BadValue { .. }),
        ),
        (
            r#"{"type":"Point","metric":"mcp_read","data":{"time":"yesterday","value":1}}"#,
            |k| matches!(k, ExportErrorKind::BadTime(_)),
        ),
        ("not json", |k| matches!(k, ExportErrorKind::NotK6Json(_))),
    ];
    for (bad, ok) in cases {
        let text = format!("{}{bad}\n", segment(2, 1.0));
        let lines = text.lines().count();
        let e = K6Import::new()
            .add_ndjson("f", text.as_bytes())
            .unwrap_err();
        assert!(ok(&e.kind), "{bad}: {:?}", e.kind);
        assert_eq!(e.line, lines, "{bad}");
        assert_eq!(e.file.as_deref(), Some("f"));
    }
}

#[test]
fn an_output_without_mcptape_points_is_no_report() {
    let mut m = K6Import::new();
    m.add_ndjson("f", point("http_reqs", 1, 1.0, "").as_bytes())
        .unwrap();
    assert_eq!(m.report().unwrap_err().kind, ExportErrorKind::NoPoints);
}

#[test]
fn rfc3339_times_with_nanoseconds_and_offsets() {
    assert_eq!(
        rfc3339_us("2026-12-01T22:10:00.123456789Z").unwrap(),
        1_796_163_000_123_456
    );
    assert_eq!(
        rfc3339_us("1999-02-28T23:59:59-05:30").unwrap(),
        920_266_199_000_000
    );
    for bad in [
        "2026-12-01",
        "2026-13-01T00:00:00Z",
        "2026-12-01T22:10:00",
        "2026-12-01T22:10:00.Z",
    ] {
        assert!(rfc3339_us(bad).is_err(), "{bad}");
    }
}

/// Issue 25: the import's report.html is titled for k6, shows VUs, dropped iterations and
/// handshake failures, and its headline (bench's, the same function) counts an error answer
/// k6 marks as recorded (`mcp_unexpected` 0) as answered as recorded, not as an error.
#[test]
fn k6_page_is_titled_for_k6_with_vus_drops_handshakes_and_recorded_errors_apart() {
    let mut s = segment(8, 1.0);
    for (m, v, tags) in [
        (
            "mcp_read",
            3.0,
            r#""class":"rpc:-32602:uri","scenario":"reads""#,
        ),
        (
            "mcp_unexpected",
            0.0,
            r#""class":"rpc:-32602:uri","scenario":"reads""#,
        ),
        ("mcp_unexpected", 0.0, r#""class":"ok","scenario":"reads""#),
        ("mcp_handshake_failed", 2.0, r#""class":"http:503""#),
        ("vus_max", 10.0, ""),
    ] {
        s.push_str(&point(m, 7, v, tags));
        s.push('\n');
    }
    let mut m = K6Import::new();
    m.add_ndjson("a.json", s.as_bytes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let r = m.write_out(dir.path()).unwrap();
    assert_eq!(r.bench.single_phase.errors_as_recorded, 1);
    assert!(
        r.table()
            .contains("9 of 11 answered as recorded (81.8 %): 8 results, 1 recorded errors"),
        "{}",
        r.table()
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("<title>k6 run: everything-http.jsonl (imported by mcptape)</title>"),
        "{html}"
    );
    assert!(!html.contains("mcptape bench:"), "{html}");
    for row in [
        "<tr><th>VUs</th><td>peak 7 (max allocated 10)</td></tr>",
        "<tr><th>handshake failures</th><td>2</td></tr>",
        "<tr><th>dropped iterations</th><td>3 (arrivals k6 could not start: load asked for and not sent)</td></tr>",
    ] {
        assert!(html.contains(row), "{row} not in the page");
    }
    assert!(
        html.contains("<b>9 of 11 answered as recorded (81.8 %): 8 results, 1 recorded errors</b>"),
        "{html}"
    );
}
