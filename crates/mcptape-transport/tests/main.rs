//! The integration tests of `mcptape-transport`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

mod common;

mod child;
mod http_live;
mod parsers;
