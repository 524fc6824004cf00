//! DNS-rebinding guard for the loopback HTTP listeners (`serve --listen`,
//! `record --listen`), sans-IO: a pure check of a request's `Origin` and
//! `Host` headers against the bound address.
//!
//! MCP 2025-11-25 "Transports" §Streamable HTTP, Security Warning: servers
//! MUST validate the `Origin` header of every incoming connection to prevent
//! DNS rebinding attacks, and SHOULD bind only to localhost. A browser page on
//! `http://evil.example` that resolves its own name to 127.0.0.1 sends
//! `Host: evil.example` and `Origin: http://evil.example`; both are refused.
//!
//! Rules of [`LoopbackGuard::check`]:
//! * `Origin` absent (non-browser clients): allowed. Present: allowed when it
//!   is `http://` or `https://` + `127.0.0.1`, `localhost` or `[::1]` (any
//!   port, RFC 6454 §6.1 serialization), or equal (ASCII case-insensitive, a
//!   trailing `/` ignored) to an `--allow-origin` entry; anything else
//!   (including `null`) is [`Rejection::ForeignOrigin`].
//! * `Host` (RFC 9110 §7.2) must name the bound port and one of
//!   `127.0.0.1`, `localhost`, `[::1]` or the bound IP itself; otherwise, or
//!   when missing, [`Rejection::ForeignHost`]. Both answered HTTP 403.

use std::net::{IpAddr, SocketAddr};

/// Loopback host names accepted in `Host` and `Origin` (lowercase).
pub const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// Why a request was refused (answer HTTP 403).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// The `Origin` header names a site that is not loopback and not allowed.
    #[error("foreign Origin {0:?} (allow it with --allow-origin)")]
    ForeignOrigin(String),
    /// The `Host` header is missing, or names another host or port than the
    /// bound loopback address.
    #[error("Host {0:?} is not the bound loopback address")]
    ForeignHost(String),
}

/// The check for one bound listener.
#[derive(Debug, Clone)]
pub struct LoopbackGuard {
    bound: SocketAddr,
    allowed: Vec<String>,
}

/// `origin` lowercased, trailing `/` removed (for comparison).
fn norm_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Splits `host[:port]` (with `[v6]` brackets kept) into host and port.
fn split_host_port(s: &str) -> (&str, Option<&str>) {
    if s.starts_with('[') {
        match s.find(']') {
            Some(i) => {
                let (h, rest) = s.split_at(i + 1);
                (h, rest.strip_prefix(':'))
            }
            None => (s, None),
        }
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    }
}

impl LoopbackGuard {
    /// A guard for a listener bound to `bound`; `allowed`: extra origins
    /// (`--allow-origin`, e.g. `http://localhost:6274` is already loopback,
    /// `https://inspector.example` is not).
    pub fn new(bound: SocketAddr, allowed: &[String]) -> LoopbackGuard {
        LoopbackGuard {
            bound,
            allowed: allowed.iter().map(|o| norm_origin(o)).collect(),
        }
    }

    fn is_loopback_name(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        if LOOPBACK_NAMES.contains(&host.as_str()) {
            return true;
        }
        let bound = match self.bound.ip() {
            IpAddr::V4(a) => a.to_string(),
            IpAddr::V6(a) => format!("[{a}]"),
        };
        host == bound
    }

    /// Checks a request's `Origin` and `Host` header values (`None` when
    /// absent; non-UTF-8 values should be passed as `Some("")`).
    ///
    /// # Errors
    /// [`Rejection::ForeignOrigin`] or [`Rejection::ForeignHost`] (see the module docs).
    pub fn check(&self, origin: Option<&str>, host: Option<&str>) -> Result<(), Rejection> {
        if let Some(o) = origin {
            let n = norm_origin(o);
            let loopback = ["http://", "https://"].iter().any(|scheme| {
                n.strip_prefix(scheme).is_some_and(|rest| {
                    let (h, port) = split_host_port(rest);
                    LOOPBACK_NAMES.contains(&h)
                        && port
                            .is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                })
            });
            if !loopback && !self.allowed.contains(&n) {
                return Err(Rejection::ForeignOrigin(o.to_owned()));
            }
        }
        let h = host.unwrap_or("");
        let (name, port) = split_host_port(h.trim());
        let port_ok = match port {
            Some(p) => p.parse::<u16>().ok() == Some(self.bound.port()),
            None => self.bound.port() == 80,
        };
        if name.is_empty() || !port_ok || !self.is_loopback_name(name) {
            return Err(Rejection::ForeignHost(h.to_owned()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> LoopbackGuard {
        LoopbackGuard::new(
            "127.0.0.1:8931".parse().unwrap(),
            &["https://inspector.example/".to_owned()],
        )
    }

    #[test]
    fn loopback_origins_and_hosts_pass() {
        let g = guard();
        for o in [
            None,
            Some("http://127.0.0.1:8931"),
            Some("http://localhost:6274"),
            Some("https://LOCALHOST"),
            Some("http://[::1]:3000"),
            Some("https://inspector.example"),
        ] {
            for h in ["127.0.0.1:8931", "localhost:8931", "[::1]:8931"] {
                assert_eq!(g.check(o, Some(h)), Ok(()), "{o:?} {h}");
            }
        }
    }

    #[test]
    fn foreign_origin_is_rejected() {
        let g = guard();
        for o in [
            "http://evil.example.com",
            "null",
            "http://127.0.0.1.evil.example",
            "http://localhost.evil:80",
            "file://",
            "http://localhost:",
        ] {
            assert_eq!(
                g.check(Some(o), Some("127.0.0.1:8931")),
                Err(Rejection::ForeignOrigin(o.to_owned())),
                "{o}"
            );
        }
    }

    #[test]
    fn host_not_loopback_or_other_port_is_rejected() {
        let g = guard();
        for h in [
            Some("evil.example.com"),
            Some("evil.example.com:8931"),
            Some("127.0.0.1:8932"),
            Some("localhost"),
            Some(""),
            None,
        ] {
            assert!(
                matches!(g.check(None, h), Err(Rejection::ForeignHost(_))),
                "{h:?}"
            );
        }
        // The bound IP itself is accepted when it is another loopback address.
        let g2 = LoopbackGuard::new("127.0.0.2:9000".parse().unwrap(), &[]);
        assert_eq!(g2.check(None, Some("127.0.0.2:9000")), Ok(()));
    }
}
