//! `plan` and `script` on the shipped HTTP recordings of both eras.

use std::path::{Path, PathBuf};

use mcptape_export::ExportErrorKind;
use mcptape_export::k6::plan::{Era, plan, uri_class};
use mcptape_export::k6::script::{MAX_PARALLEL, ScriptOptions, script};
use mcptape_export::k6::{export_file, slo};

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/transcripts")
        .join(name)
}

fn read(name: &str) -> mcptape_transcript::Transcript {
    mcptape_transcript::read(&std::fs::read(corpus(name)).unwrap()).unwrap()
}

#[test]
fn session_era_recording_replays_initialize_and_its_reads() {
    let t = read("everything-http.jsonl");
    let p = plan(&t).unwrap();
    assert_eq!(p.era, Era::Session);
    assert_eq!(p.protocol_version, "2025-11-25");
    // The default target is the recorded server's URL.
    assert_eq!(Some(&p.url), t.header.server.url.as_ref());
    assert!(p.url.starts_with("http://127.0.0.1:"), "{}", p.url);
    let methods: Vec<&str> = p.handshake.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(methods, ["initialize", "notifications/initialized"]);
    assert!(p.handshake[1].notification);
    assert_eq!(p.reads.len(), 10);
    // The session era sends no recorded header: the live session's are set by the script.
    assert!(p.reads.iter().all(|r| r.headers.is_empty()));
    assert_eq!(p.reads[0].uri_class, "demo://resource/static");
    assert_eq!(p.reads[0].recorded_class, "ok");
    assert_eq!(p.reads[9].recorded_class, "rpc:-32602");
    assert_eq!(
        p.reads[0].params.as_ref().unwrap()["uri"],
        "demo://resource/static/document/architecture.md"
    );
}

#[test]
fn stateless_era_recording_keeps_meta_and_the_mcp_headers() {
    let p = plan(&read("py-http-2026-07-28.jsonl")).unwrap();
    assert_eq!(p.era, Era::Stateless);
    assert_eq!(p.protocol_version, "2026-07-28");
    assert_eq!(p.handshake.len(), 1);
    assert_eq!(p.handshake[0].method, "server/discover");
    assert_eq!(p.reads.len(), 9);
    let r = &p.reads[0];
    assert_eq!(
        r.params.as_ref().unwrap()["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    let h: Vec<(&str, &str)> = r
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        h,
        [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "resources/read"),
            ("mcp-name", "mcptape://docs/readme.md")
        ]
    );
    assert_eq!(p.reads[8].recorded_class, "rpc:-32602:uri");
}

#[test]
fn fallback_recording_from_discover_to_initialize_is_session_era() {
    let p = plan(&read("crawl-everything-http-2026-07-28-fallback.jsonl")).unwrap();
    assert_eq!(p.era, Era::Session);
    assert_eq!(p.handshake[0].method, "initialize");
}

#[test]
fn stdio_recording_is_refused_as_not_http() {
    let e = plan(&read("everything-stdio.jsonl")).unwrap_err();
    assert_eq!(
        e.kind,
        ExportErrorKind::NotHttp {
            transport: "stdio".into()
        }
    );
}

#[test]
fn uri_classes_keep_scheme_authority_and_first_segment() {
    assert_eq!(
        uri_class("demo://resource/dynamic/blob/1"),
        "demo://resource/dynamic"
    );
    assert_eq!(uri_class("mcptape://docs/readme.md"), "mcptape://docs");
    assert_eq!(uri_class("mcptape://items/42"), "mcptape://items");
    assert_eq!(uri_class("file:///etc/hosts"), "file:///etc");
    assert_eq!(uri_class("urn:isbn:1"), "urn:");
    assert_eq!(uri_class("nothing"), "other");
}

#[test]
fn script_carries_the_scenarios_thresholds_and_plan() {
    let opts = ScriptOptions {
        thresholds: slo::thresholds("read.p99<50ms,errors<1%").unwrap(),
        rate_per_s: 2.5,
        ..ScriptOptions::default()
    };
    let js = export_file(&corpus("everything-http.jsonl"), &opts).unwrap();
    assert!(
        js.contains("\"executor\": \"constant-arrival-rate\""),
        "{js}"
    );
    assert!(js.contains("\"rate\": 2500"));
    assert!(js.contains("\"timeUnit\": \"1000s\""));
    assert!(js.contains("\"p(99)<50\""));
    assert!(js.contains("\"rate<0.01\""));
    assert!(js.contains("\"transcript\": \"everything-http.jsonl\""));
    assert!(js.contains("__ENV.MCP_URL || PLAN.url"));
    assert!(js.contains("http.batch(reqs)"));
    assert!(!js.contains("PLAN_JSON") && !js.contains("SCENARIOS") && !js.contains("THRESHOLDS"));
}

#[test]
fn parallel_limit_at_and_past() {
    let p = plan(&read("py-http-2025-11-25.jsonl")).unwrap();
    let at = ScriptOptions {
        parallel: MAX_PARALLEL,
        ..ScriptOptions::default()
    };
    assert!(script(&p, &at).is_ok());
    let past = ScriptOptions {
        parallel: MAX_PARALLEL + 1,
        ..ScriptOptions::default()
    };
    match script(&p, &past).unwrap_err().kind {
        ExportErrorKind::BadFlag { flag, .. } => assert_eq!(flag, "--parallel"),
        k => panic!("{k:?}"),
    }
}

/// Issue 27: the plan holds every recorded request but the handshake, in order, each tool
/// call and prompt with its name; a recording with no read is exported, without turns.
#[test]
fn plan_holds_every_recorded_method_and_a_recording_without_reads_exports_without_turns() {
    let t = read("py-tools-http-2025-11-25.jsonl");
    let p = plan(&t).unwrap();
    let methods: Vec<(&str, &str)> = p
        .requests
        .iter()
        .map(|s| (s.method.as_str(), s.name.as_str()))
        .collect();
    assert_eq!(
        methods,
        [
            ("resources/list", ""),
            ("resources/templates/list", ""),
            ("resources/read", ""),
            ("resources/read", ""),
            ("resources/read", ""),
            ("tools/list", ""),
            ("prompts/list", ""),
            ("tools/call", "add"),
            ("tools/call", "add"),
            ("prompts/get", "review"),
        ]
    );
    assert_eq!(p.reads.len(), 3);
    let js = script(&p, &ScriptOptions::default()).unwrap();
    assert!(js.contains("\"mix\": \"prompts/get=1,prompts/list=1,resources/list=1,resources/read=3,resources/templates/list=1,tools/call=2,tools/list=1\""), "{js}");
    assert!(js.contains("\"turns\": true"));

    // The same recording without its reads (requests and replies): exported, no turn.
    let mut t = t;
    let read_ids: Vec<serde_json::Value> = t
        .records
        .iter()
        .filter_map(|r| match &r.event {
            mcptape_transcript::Event::Message { msg, .. } => {
                let v: serde_json::Value = serde_json::from_str(msg.get()).unwrap();
                (v["method"] == "resources/read").then(|| v["id"].clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(read_ids.len(), 3);
    t.records.retain(|r| match &r.event {
        mcptape_transcript::Event::Message { msg, .. } => {
            let v: serde_json::Value = serde_json::from_str(msg.get()).unwrap();
            !read_ids.contains(&v["id"])
        }
        _ => true,
    });
    let p = plan(&t).unwrap();
    assert!(p.reads.is_empty());
    assert_eq!(p.requests.len(), 7);
    let js = script(&p, &ScriptOptions::default()).unwrap();
    assert!(js.contains("\"turns\": false"), "{js}");
    assert!(!js.contains("\"exec\": \"turn\""), "{js}");
}
