//! Who may talk to the MCP HTTP server: browser pages only from allowed origins (any page on
//! the web can make the person's browser send requests to a loopback port), and, when a token
//! is set, only clients that present it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode, header};
use subtle::ConstantTimeEq;

use crate::error::McpError;

/// The access rules checked before a request reaches MCP.
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpGuard {
    /// Origins allowed besides same-port loopback ones, normalised.
    pub allowed_origins: Vec<Origin>,
    /// The bearer token clients must send, when set.
    pub token: Option<String>,
}

/// A parsed `scheme://host:port` (port filled in from the scheme when absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Parses an origin such as `https://app.example.com` or `http://127.0.0.1:8931`.
    pub(crate) fn parse(text: &str) -> Option<Origin> {
        let (scheme, rest) = text.trim().trim_end_matches('/').split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let (host, port) = split_authority(rest, default_port)?;
        Some(Origin { scheme, host, port })
    }

    fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

/// Splits `host[:port]` (IPv6 in brackets), lowercasing the host.
fn split_authority(authority: &str, default_port: u16) -> Option<(String, u16)> {
    if authority.is_empty() || authority.contains(['/', '@', '?', '#']) {
        return None;
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, rest) = v6.split_once(']')?;
            (format!("[{host}]"), rest.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (authority.to_owned(), None),
        },
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default_port,
    };
    Some((host.to_ascii_lowercase(), port))
}

fn is_loopback_host(host: &str) -> bool {
    matches!(host, "localhost" | "[::1]") || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

impl HttpGuard {
    /// Whether a request with these headers may come from where it says: no `Origin` (not a
    /// browser), an allowed origin, or a loopback page on the very port being asked (the
    /// server's own origin, under any of the loopback names).
    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true;
        };
        let Some(origin) = origin.to_str().ok().and_then(Origin::parse) else {
            return false;
        };
        if self.allowed_origins.contains(&origin) {
            return true;
        }
        let target = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| split_authority(h, 80));
        origin.scheme == "http"
            && origin.is_loopback()
            && target.is_some_and(|(host, port)| is_loopback_host(&host) && port == origin.port)
    }

    fn token_ok(&self, headers: &HeaderMap) -> bool {
        let Some(expected) = &self.token else {
            return true;
        };
        if expected.is_empty() {
            return false; // an empty token must not match an empty header
        }
        let Some(given) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token)
        else {
            return false;
        };
        // Constant time, so response timing does not reveal how much of a guess was right.
        bool::from(given.trim().as_bytes().ct_eq(expected.as_bytes()))
    }
}

/// The axum middleware: 403 for a foreign origin, 401 without the right token.
pub(crate) async fn check(State(guard): State<Arc<HttpGuard>>, request: Request, next: Next) -> Response {
    if !guard.origin_allowed(request.headers()) {
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: this Origin may not use this MCP server",
        )
            .into_response();
    }
    if !guard.token_ok(request.headers()) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "Unauthorized: send Authorization: Bearer <token>",
        )
            .into_response();
    }
    next.run(request).await
}

/// A fresh random bearer token for [`crate::ToolServerBuilder::bearer_token`]: 256 bits from
/// the operating system's generator, as 64 hex digits.
pub fn new_bearer_token() -> Result<String, McpError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| McpError::Io(std::io::Error::other(e.to_string())))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), value.parse().unwrap());
        }
        map
    }

    #[test]
    fn origins_parse_with_default_ports() {
        let o = Origin::parse("HTTPS://App.Example.com").unwrap();
        assert_eq!(
            (o.scheme.as_str(), o.host.as_str(), o.port),
            ("https", "app.example.com", 443)
        );
        assert_eq!(Origin::parse("http://[::1]:8931").unwrap().host, "[::1]");
        assert!(Origin::parse("null").is_none());
        assert!(Origin::parse("file://x").is_none());
        assert!(Origin::parse("http://a:notaport").is_none());
    }

    #[test]
    fn same_port_loopback_origins_pass_and_others_do_not() {
        let guard = HttpGuard::default();
        let host = (header::HOST, "127.0.0.1:8931");
        assert!(
            guard.origin_allowed(&headers(std::slice::from_ref(&host))),
            "no Origin: not a browser"
        );
        for ok in ["http://127.0.0.1:8931", "http://localhost:8931", "http://[::1]:8931"] {
            assert!(
                guard.origin_allowed(&headers(&[host.clone(), (header::ORIGIN, ok)])),
                "{ok}"
            );
        }
        for bad in [
            "http://localhost:3000",
            "https://evil.example",
            "http://evil.example:8931",
            "https://127.0.0.1:8931",
            "null",
        ] {
            assert!(
                !guard.origin_allowed(&headers(&[host.clone(), (header::ORIGIN, bad)])),
                "{bad}"
            );
        }
        // A rebinding page names its own host in both headers: not loopback, refused.
        let rebound = [
            (header::HOST, "evil.example:8931"),
            (header::ORIGIN, "http://evil.example:8931"),
        ];
        assert!(!guard.origin_allowed(&headers(&rebound)));
    }

    #[test]
    fn tokens_are_random_hex() {
        let a = new_bearer_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, new_bearer_token().unwrap());
    }
}
