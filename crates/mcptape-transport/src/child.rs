//! Child processes (being written).
