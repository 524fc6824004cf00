//! The integration tests of `mcptape-report`, one binary (as ripgrep does: `autotests = false`,
//! one module per file).

mod hdrh_python;

mod hlog_python;
