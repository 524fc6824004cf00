//! MCP transports (being written).
