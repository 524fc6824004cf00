//! The integration tests of `mcptape-wire`, one binary (as ripgrep does: `autotests = false`,
//! one module per file) so the workspace links a few test executables, not dozens.

mod b64;
mod classify;
mod envelope;
mod fuzzing;
mod limits;
mod media;
mod protocol;
mod reply;
mod resources;
