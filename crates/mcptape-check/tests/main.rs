//! The integration tests of `mcptape-check`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

mod baseline;
mod bugs_fresh_user;
mod bugs_issue15;
mod check_stdin;
mod inspect_report;
mod non_regular_files;
mod output;
mod prescan;
mod recording_no_exit;
mod rules;
mod sarif;
mod scanned_contents;
mod support;
mod violations;
