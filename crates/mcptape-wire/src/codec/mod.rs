//! Codec paths for `resources/read` results: `scalar`, `simd`, `fused`,
//! behind one dispatch point per operation.

pub mod base64;
