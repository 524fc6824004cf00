//! Shared helpers of the check integration tests.

use std::path::{Path, PathBuf};

/// The repository's root (`crates/mcptape-check/../..`, canonical): `corpus/` and `.tools/`
/// are under it. Panics when it cannot be resolved.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}
