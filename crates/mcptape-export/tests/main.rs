//! The integration tests of `mcptape-export`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

mod har_import;
mod har_roundtrip;
mod k6_import;
mod k6_plan;
