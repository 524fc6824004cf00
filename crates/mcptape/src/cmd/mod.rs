//! One module per subcommand: each has an `Args` (clap derive) and a `run`.

pub mod bench;
pub mod bench_codec;
pub mod check;
pub mod crawl;
pub mod explain;
pub mod inspect;
pub mod k6;
pub mod record;
pub mod serve;
pub mod uri;
pub mod verify;

/// The IO shell's tokio runtime, shared by `record`, `serve`, `bench` and `verify`:
/// multi-threaded with 2 workers (the machines mcptape is measured on have 2 cores), all
/// drivers (IO, time) enabled.
///
/// Errors: the OS refused the runtime's threads or its IO driver.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context as _;
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the tokio runtime")
}
