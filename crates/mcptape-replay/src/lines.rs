//! Newline-delimited JSON-RPC over an async byte stream: re-exports the one
//! framed reader of the transport ([`mcptape_transport::framed`]), which
//! delivers an unterminated last line at end of stream and returns read
//! errors as errors.

pub use mcptape_transport::framed::{
    FramedReadError, FramedReader, MAX_LINE_BYTES, READ_CHUNK_BYTES,
};
