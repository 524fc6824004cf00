//! Streamable HTTP client (being written).
