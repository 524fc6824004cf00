//! The integration tests of `mcptape`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

#[path = "../../mcptape-report/tests/hdrh_python.rs"]
mod hdrh_python;
mod http_support;
mod k6_support;
mod record_support;

mod action_scripts;
mod bench_e2e;
mod bench_http;
mod bench_no_reads;
mod bench_slo;
mod check_baseline_cli;
mod check_cli;
mod check_conformance;
mod cli_convention;
mod crawl_servers;
mod fifo_inputs;
mod har_cli;
mod inspect;
mod inspect_input;
mod inspector_serve;
mod k6_live;
mod k6_manifest;
mod k6_split;
mod loopback_only;
mod mapped_truncated;
mod merge;
mod record_corpus;
mod record_http;
mod record_http_transcript_fails;
mod record_killed_no_exit_record;
mod record_redact;
mod record_sigkill;
mod record_stdio;
mod record_transcript_write_fails;
mod refuse_overwrite;
mod report_html;
mod serve_conformance;
mod serve_http;
mod serve_python_client;
mod serve_time_beyond_limit;
mod serve_timer_priority;
mod uri_cli;
mod verify_e2e;
mod verify_http;
