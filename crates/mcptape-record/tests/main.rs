//! The integration tests of `mcptape-record`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

mod redact_proxy;
