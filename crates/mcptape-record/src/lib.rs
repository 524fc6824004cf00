//! Recording proxies and crawl (being written).
