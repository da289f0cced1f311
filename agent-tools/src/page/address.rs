//! The built-in address-bar resolver and the scheme rules of page_navigate and tab_open.

/// What an address-bar input resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// An address to load.
    Url {
        /// The URL.
        url: String,
        /// `"url"` or `"search"`.
        kind: &'static str,
    },
    /// Refused, with the reason for the model.
    Refused(String),
}

/// Schemes that hand the input to another application.
const OTHER_APP: &[&str] = &[
    "mailto",
    "tel",
    "sms",
    "callto",
    "facetime",
    "skype",
    "irc",
    "ircs",
    "magnet",
    "steam",
    "spotify",
    "zoommtg",
    "slack",
    "msteams",
    "tg",
    "whatsapp",
    "market",
    "intent",
    "itms",
    "itms-apps",
    "webcal",
    "git",
    "ssh",
    "sftp",
    "vscode",
    "x-apple",
];

/// Schemes that run code or read local data.
const DANGEROUS: &[&str] = &[
    "javascript",
    "vbscript",
    "file",
    "data",
    "blob",
    "filesystem",
    "view-source",
    "chrome",
    "chrome-extension",
    "chrome-untrusted",
    "devtools",
    "about",
    "ftp",
    "ws",
    "wss",
];

/// Checks a URL's scheme: `http` and `https` load; everything else is refused with a reason.
pub fn check_scheme(url: &str) -> Result<(), String> {
    let Some(scheme) = scheme_of(url) else {
        return Err(format!("{url:?} has no scheme"));
    };
    match scheme.as_str() {
        "http" | "https" => Ok(()),
        s if s == "about" && url.eq_ignore_ascii_case("about:blank") => Ok(()),
        s if DANGEROUS.contains(&s) => Err(format!(
            "refused: {s}: addresses are not loaded by the agent (they run code or read local data)"
        )),
        s if OTHER_APP.contains(&s) => Err(format!(
            "refused: {s}: addresses open another application; that is left to the person"
        )),
        s => Err(format!(
            "refused: {s}: is not a web address; only http and https pages are loaded"
        )),
    }
}

fn scheme_of(input: &str) -> Option<String> {
    let colon = input.find(':')?;
    let scheme = &input[..colon];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    if !first.is_ascii_alphabetic() || !chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) {
        return None;
    }
    Some(scheme.to_ascii_lowercase())
}

fn looks_like_host_port(input: &str) -> bool {
    // "localhost:8080/x" or "example.com:443": a host, a colon and digits.
    let Some(colon) = input.find(':') else { return false };
    let rest = &input[colon + 1..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    !digits.is_empty()
        && rest[digits.len()..]
            .chars()
            .next()
            .is_none_or(|c| c == '/' || c == '?' || c == '#')
}

fn is_loopback_host(host: &str) -> bool {
    let h = host.split(':').next().unwrap_or(host);
    h == "localhost" || h.ends_with(".localhost") || h.starts_with("127.") || h == "[::1]"
}

/// Resolves what a person would type in an address bar: an address (with or without a
/// scheme) or a search phrase, which goes to `search_template` (`{}` is replaced by the
/// percent-encoded phrase).
pub fn resolve(input: &str, search_template: &str) -> Resolved {
    let input = input.trim();
    if input.is_empty() {
        return Resolved::Refused("the address is empty".into());
    }
    if input.chars().any(|c| c.is_control()) {
        return Resolved::Refused("the address contains a control character".into());
    }
    let known =
        |s: &String| s == "http" || s == "https" || DANGEROUS.contains(&s.as_str()) || OTHER_APP.contains(&s.as_str());
    if let Some(_scheme) = scheme_of(input).filter(|s| known(s) || !looks_like_host_port(input)) {
        return match check_scheme(input) {
            Ok(()) => Resolved::Url {
                url: input.to_string(),
                kind: "url",
            },
            Err(e) => Resolved::Refused(e),
        };
    }
    let has_space = input.contains(char::is_whitespace);
    let host = input.split(['/', '?', '#']).next().unwrap_or("");
    let hostish = !has_space
        && !host.is_empty()
        && (host.contains('.') || is_loopback_host(host) || looks_like_host_port(input))
        && !host.starts_with('.')
        && !host.ends_with('.');
    if hostish {
        let scheme = if is_loopback_host(host) { "http" } else { "https" };
        return Resolved::Url {
            url: format!("{scheme}://{input}"),
            kind: "url",
        };
    }
    Resolved::Url {
        url: search_template.replace("{}", &percent_encode(input)),
        kind: "search",
    }
}

fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    const T: &str = "https://search.example/?q={}";

    fn url(input: &str) -> String {
        match resolve(input, T) {
            Resolved::Url { url, .. } => url,
            Resolved::Refused(r) => panic!("{input}: refused {r}"),
        }
    }

    fn refused(input: &str) -> String {
        match resolve(input, T) {
            Resolved::Refused(r) => r,
            Resolved::Url { url, .. } => panic!("{input}: resolved to {url}"),
        }
    }

    #[test]
    fn addresses_and_searches() {
        assert_eq!(url("example.com"), "https://example.com");
        assert_eq!(url("https://example.com/a?b"), "https://example.com/a?b");
        assert_eq!(url("localhost:8080/x"), "http://localhost:8080/x");
        assert_eq!(url("127.0.0.1:3000"), "http://127.0.0.1:3000");
        assert_eq!(url("rust async traits"), "https://search.example/?q=rust+async+traits");
        assert_eq!(url("what is 1+1?"), "https://search.example/?q=what+is+1%2B1%3F");
        assert_eq!(url("about:blank"), "about:blank");
    }

    #[test]
    fn dangerous_and_other_app_schemes_are_refused() {
        for s in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,<b>x</b>",
            "blob:https://x/1",
            "view-source:https://x",
            "chrome://settings",
        ] {
            assert!(refused(s).contains("run code or read local data"), "{s}");
        }
        for s in ["mailto:a@b.c", "tel:+123", "tel:123", "sms:123", "magnet:?xt=1"] {
            assert!(refused(s).contains("another application"), "{s}");
        }
        assert!(refused("gopher://x").contains("not a web address"));
        assert!(refused("   ").contains("empty"));
    }
}
