//! RFC 6570 URI templates and the `resources/read` URI sanitizer (being written).
