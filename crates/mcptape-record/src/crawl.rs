//! Crawl (being written).
