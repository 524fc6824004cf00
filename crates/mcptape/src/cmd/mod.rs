//! One module per subcommand: each has an `Args` (clap derive) and a `run`.

pub mod bench;
pub mod bench_codec;
pub mod check;
pub mod crawl;
pub mod explain;
pub mod inspect;
pub mod record;
pub mod serve;
pub mod uri;
pub mod verify;
