//! The integration tests of `mcptape-replay`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

mod common;

mod bench_large_reply;
mod bench_tail;
mod scheduler_heap;
mod scheduler_paused;
mod serve_http_guard;
mod serve_http_session_never_opened;
mod serve_strict;
mod serve_unrecorded;
mod session_http;
