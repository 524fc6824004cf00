//! The integration tests of `mcptape-uri`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

mod confined_fs;
mod fuzz_regressions;
mod issue15_review;
mod limits;
mod match_round_trip;
mod match_traversal;
mod properties;
mod sanitize_table;
mod template;
mod windows_paths;
