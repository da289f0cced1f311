//! Host patterns of remembered decisions: `example.com` (that host) or `*.example.com` (its
//! subdomains, on a label boundary). Hosts and patterns are compared in their ASCII form
//! (an internationalised name as punycode, `xn--…`), lowercased, without a trailing dot.

/// A host as rules compare it: ASCII, lowercased, no trailing dot; `None` when `raw` is not
/// a host name or IP literal (a call with no usable host never matches a host rule).
pub(crate) fn normalize_host(raw: &str) -> Option<String> {
    let host = raw.trim();
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let ipv6 = host.starts_with('[') && host.ends_with(']') && host.len() > 2;
    let ok = !host.is_empty()
        && host.len() <= 253
        && (ipv6
            && host[1..host.len() - 1]
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
            || host.split('.').all(label_ok));
    ok.then_some(host)
}

/// Checks and normalises a pattern the person gave: `example.com` or `*.example.com`. A
/// wildcard needs at least two labels after it (`*.com` is refused: it would cover a whole
/// top-level domain) and never covers IP addresses.
pub(crate) fn parse_pattern(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim();
    if !trimmed.is_ascii() {
        return Err(format!(
            "host pattern {trimmed:?} is not ASCII: write an internationalised name in its punycode form (xn--…)"
        ));
    }
    let (wild, rest) = match trimmed.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    let Some(host) = normalize_host(rest) else {
        return Err(format!(
            "host pattern {trimmed:?} is not a host name: expected one like example.com or *.example.com"
        ));
    };
    if wild && (is_ip(&host) || host.split('.').count() < 2) {
        return Err(format!(
            "host pattern {trimmed:?} is too broad: a wildcard needs a domain of at least two labels after it (*.example.com)"
        ));
    }
    Ok(if wild { format!("*.{host}") } else { host })
}

/// Whether `host` (normalised) matches `pattern` (as [`parse_pattern`] leaves it): the same
/// host, or for `*.example.com` a host ending in `.example.com` (not `example.com` itself).
pub(crate) fn matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(domain) => {
            !is_ip(host)
                && host.len() > domain.len() + 1
                && host.ends_with(domain)
                && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
        }
        None => pattern == host,
    }
}

fn label_ok(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

fn is_ip(host: &str) -> bool {
    host.starts_with('[') || host.parse::<std::net::Ipv4Addr>().is_ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn exact_and_wildcard_patterns_match_on_label_boundaries() {
        let exact = parse_pattern("Example.COM.").unwrap();
        assert_eq!(exact, "example.com");
        assert!(matches(&exact, "example.com"));
        assert!(!matches(&exact, "www.example.com"));
        let wild = parse_pattern("*.example.com").unwrap();
        assert!(matches(&wild, "www.example.com"));
        assert!(matches(&wild, "a.b.example.com"));
        assert!(!matches(&wild, "example.com"));
        assert!(!matches(&wild, "evilexample.com"));
        assert!(!matches(&wild, "example.com.evil.net"));
    }

    #[test]
    fn hosts_are_compared_in_ascii_lowercase() {
        assert_eq!(normalize_host("WWW.Example.com.").as_deref(), Some("www.example.com"));
        assert_eq!(normalize_host("xn--bcher-kva.de").as_deref(), Some("xn--bcher-kva.de"));
        assert_eq!(normalize_host("bücher.de"), None);
        assert!(parse_pattern("*.bücher.de").unwrap_err().contains("punycode"));
        assert!(matches(
            &parse_pattern("*.XN--BCHER-KVA.de").unwrap(),
            "shop.xn--bcher-kva.de"
        ));
    }

    #[test]
    fn bad_and_too_broad_patterns_are_refused() {
        for bad in [
            "",
            "*",
            "*.",
            "*.com",
            "*.*.example.com",
            "exa mple.com",
            "a/b",
            "*.127.0.0.1",
            "-a.com",
        ] {
            assert!(parse_pattern(bad).is_err(), "{bad:?} was accepted");
        }
        assert_eq!(parse_pattern("127.0.0.1").unwrap(), "127.0.0.1");
        assert!(matches("127.0.0.1", "127.0.0.1"));
        assert_eq!(normalize_host("[::1]").as_deref(), Some("[::1]"));
        assert_eq!(normalize_host(""), None);
    }
}
