//! Streamable HTTP recording proxy (being written).
