//! Where page_scrape may connect: https only, public addresses only unless the host allows
//! loopback or private ones, checked on the first URL, on every redirect and on every address a
//! name resolves to, always before a connection is made.
//!
//! Why: page_scrape sends a URL the model chose, and a page can tell the model which URL. Without
//! these checks an instruction on a page could reach services on the person's machine or network
//! (a router, a local admin page, a cloud metadata address), directly, through a redirect, or
//! through a name that resolves to a private address (DNS rebinding).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Which addresses page_scrape may reach besides public https ones. The default allows only
/// public https addresses. As data: the flags and `extra_roots_pem` (a resolver is set in code).
#[derive(Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ScrapePolicy {
    /// Allow loopback addresses (127.0.0.0/8, ::1) over https.
    pub allow_loopback: bool,
    /// Allow `http://` to loopback addresses too (tests, local development). Implies
    /// `allow_loopback`.
    pub allow_loopback_http: bool,
    /// Allow private, link-local, CGNAT, unique-local, unspecified and multicast addresses (and
    /// loopback) over https: for hosts whose pages live on a private network.
    pub allow_private: bool,
    /// Extra trusted root certificates, PEM (a private CA, or a test server's certificate).
    pub extra_roots_pem: Vec<String>,
    /// Name resolution to use instead of the system resolver (its answers are filtered like
    /// the system's).
    #[serde(skip)]
    pub resolver: Option<Arc<dyn Resolve>>,
}

impl fmt::Debug for ScrapePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScrapePolicy")
            .field("allow_loopback", &self.allow_loopback)
            .field("allow_loopback_http", &self.allow_loopback_http)
            .field("allow_private", &self.allow_private)
            .field("extra_roots_pem", &self.extra_roots_pem.len())
            .field("resolver", &self.resolver.is_some())
            .finish()
    }
}

/// Why an address is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// A public address.
    Public,
    /// 127.0.0.0/8 or ::1.
    Loopback,
    /// Any other address that is not public (private, link-local, CGNAT, unique-local,
    /// unspecified, multicast, broadcast, reserved).
    Private,
}

/// Classifies `ip`; IPv4 addresses embedded in IPv6 (mapped, compatible, NAT64, 6to4) count as
/// the IPv4 address they carry.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        return AddressClass::Loopback;
    }
    let private = ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || a == 0 // "this network": 0.0.0.0/8 reaches the local host on Linux
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64.0.0/10
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240; // reserved
    if private {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    if ip.is_loopback() {
        return AddressClass::Loopback;
    }
    let seg = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let o = ip.octets();
    let embedded = |i: usize| Ipv4Addr::new(o[i], o[i + 1], o[i + 2], o[i + 3]);
    // IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks).
    if seg[..6] == [0; 6] && !ip.is_unspecified() {
        return classify_v4(embedded(12));
    }
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address too.
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(embedded(12));
    }
    if seg[0] == 0x2002 {
        return classify_v4(embedded(2));
    }
    let private = ip.is_unspecified()
        || ip.is_multicast()
        || (seg[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (seg[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (seg[0] & 0xffc0) == 0xfec0; // site-local fec0::/10 (deprecated)
    if private {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

impl ScrapePolicy {
    /// Whether `ip` may be connected to; the refusal says why not.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), String> {
        match classify(ip) {
            AddressClass::Public => Ok(()),
            AddressClass::Loopback if self.allow_loopback || self.allow_loopback_http || self.allow_private => Ok(()),
            AddressClass::Private if self.allow_private => Ok(()),
            AddressClass::Loopback => Err(format!(
                "{ip} is a loopback address (this machine); page_scrape fetches public addresses only"
            )),
            AddressClass::Private => Err(format!(
                "{ip} is a private, link-local or reserved address; page_scrape fetches public addresses only"
            )),
        }
    }

    /// Checks a URL before it is requested (the first one and every redirect target): the
    /// scheme, and the address when the host is an IP literal (names are checked when resolved).
    pub fn check_url(&self, url: &Url) -> Result<(), String> {
        let host = url.host();
        let literal = match host {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        match url.scheme() {
            "https" => {}
            "http" if self.allow_loopback_http && literal.is_some_and(|ip| classify(ip) == AddressClass::Loopback) => {}
            "http" if self.allow_loopback_http && url.host_str() == Some("localhost") => {}
            other => return Err(format!("page_scrape fetches https addresses only, not {other}:")),
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err("the address has no host".into());
        }
        match literal {
            Some(ip) => self.check_ip(ip),
            None => Ok(()),
        }
    }
}

/// Resolves names with the host's resolver (or the system's) and drops every answer the policy
/// refuses, so a name cannot lead to a private address (DNS rebinding included: the addresses
/// checked are the ones connected to).
pub(crate) struct FilteringResolver {
    /// The policy the answers are checked against.
    pub policy: ScrapePolicy,
}

impl Resolve for FilteringResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> = match &policy.resolver {
                Some(inner) => inner.resolve(name).await?.collect(),
                None => tokio::net::lookup_host((host.as_str(), 0)).await?.collect(),
            };
            let mut refused = None;
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| match policy.check_ip(a.ip()) {
                    Ok(()) => true,
                    Err(why) => {
                        refused.get_or_insert(why);
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                let why = refused.unwrap_or_else(|| "it has no address".into());
                return Err(Box::new(Refused {
                    what: "name",
                    target: Some(host),
                    why,
                }) as Box<_>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// A connection the policy refused.
#[derive(Debug, thiserror::Error)]
#[error("refused {what}: {why}")]
pub(crate) struct Refused {
    /// What was refused ("redirect", "name").
    pub what: &'static str,
    /// The redirect target or the name, when the page chose it (untrusted).
    pub target: Option<String>,
    /// Why, in the policy's words (no page text).
    pub why: String,
}

/// The redirect policy: at most 5 hops, each checked like the first URL before it is followed.
pub(crate) fn redirect_policy(policy: ScrapePolicy) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > 5 {
            return attempt.error(Refused {
                what: "redirect",
                target: None,
                why: "more than 5 redirects".into(),
            });
        }
        match policy.check_url(attempt.url()) {
            Ok(()) => attempt.follow(),
            Err(why) => {
                let target = Some(attempt.url().to_string());
                attempt.error(Refused {
                    what: "redirect",
                    target,
                    why,
                })
            }
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn addresses_are_classified() {
        for s in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(classify(ip(s)), AddressClass::Loopback, "{s}");
        }
        for s in [
            "10.255.255.1",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "fd00::1",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::10.0.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
        ] {
            assert_eq!(classify(ip(s)), AddressClass::Private, "{s}");
        }
        for s in ["93.184.216.34", "100.128.0.1", "2606:4700::1111", "8.8.8.8"] {
            assert_eq!(classify(ip(s)), AddressClass::Public, "{s}");
        }
    }

    #[test]
    fn urls_are_checked_by_scheme_and_literal_address() {
        let p = ScrapePolicy::default();
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(p.check_url(&u("https://example.org/")).is_ok());
        assert!(p.check_url(&u("http://example.org/")).is_err());
        assert!(p.check_url(&u("https://127.0.0.1/")).is_err());
        // Other spellings of loopback normalise to the same address.
        assert!(p.check_url(&u("https://2130706433/")).is_err());
        assert!(p.check_url(&u("https://0x7f.1/")).is_err());
        assert!(p.check_url(&u("https://[::ffff:7f00:1]/")).is_err());
        assert!(p.check_url(&u("https://10.255.255.1/")).is_err());
        let lo = ScrapePolicy {
            allow_loopback: true,
            ..ScrapePolicy::default()
        };
        assert!(lo.check_url(&u("https://127.0.0.1/")).is_ok());
        assert!(lo.check_url(&u("http://127.0.0.1/")).is_err());
        assert!(lo.check_url(&u("https://10.255.255.1/")).is_err());
        let http = ScrapePolicy {
            allow_loopback_http: true,
            ..ScrapePolicy::default()
        };
        assert!(http.check_url(&u("http://127.0.0.1:8080/")).is_ok());
        assert!(http.check_url(&u("http://10.0.0.1/")).is_err());
        assert!(http.check_url(&u("http://example.org/")).is_err());
    }
}
