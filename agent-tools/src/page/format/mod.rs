//! How page text is shown to the model: the compact snapshot page_read returns (built in
//! `read`) or what changed since the last one (`changes`), one line per element, shortened addresses and caps. Page text is capped here; the
//! loop wraps the whole result in untrusted-content markers (the tools set its provenance).

mod changes;
mod read;

use agent_core::untrusted::one_line;
use serde_json::Value;

pub use changes::{Snapshot, format_changes};
pub use read::{ReadView, format_read};

/// Most characters of a page title shown in a line.
pub const TITLE_CHARS: usize = 200;
/// Most characters of an element's name shown in a line.
pub const NAME_CHARS: usize = 100;
/// Most characters of a field's value shown in a line.
pub const VALUE_CHARS: usize = 200;

/// Cuts `s` to at most `max` chars (on a char boundary), saying so.
pub fn cap_chars(s: &str, max: usize) -> (String, bool) {
    if s.chars().count() <= max {
        return (s.to_string(), false);
    }
    let cut: String = s.chars().take(max).collect();
    (format!("{cut}\n[truncated at {max} characters]"), true)
}

/// A page's address, parsed once for all the links of one read.
pub struct PageAddress {
    parsed: Option<reqwest::Url>,
    /// An http(s) page's address without its fragment, then `#`: what a link to a fragment of
    /// the page starts with.
    fragment_base: Option<String>,
}

impl PageAddress {
    /// `page` parsed (an address that does not parse shortens nothing against it).
    pub fn new(page: &str) -> PageAddress {
        let parsed = reqwest::Url::parse(page).ok();
        let fragment_base = parsed
            .as_ref()
            .filter(|p| matches!(p.scheme(), "http" | "https"))
            .map(|p| format!("{}#", p.as_str().split('#').next().unwrap_or("")));
        PageAddress { parsed, fragment_base }
    }

    /// The fragment of `href` when it is this page's address and a fragment the parser keeps
    /// as written (printable ASCII it does not encode): what parsing it would give, without
    /// parsing it.
    fn own_fragment<'h>(&self, href: &'h str) -> Option<&'h str> {
        let fragment = href.strip_prefix(self.fragment_base.as_deref()?)?;
        fragment
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && !matches!(b, b'"' | b'<' | b'>' | b'`'))
            .then_some(fragment)
    }
}

/// Shortens a URL for display relative to the page's URL; withholds data: and blob: URLs.
pub fn short_url_at(href: &str, page: &PageAddress) -> String {
    let lower = href.trim_start().to_ascii_lowercase();
    if lower.starts_with("data:") || lower.starts_with("blob:") {
        return "[data/blob URL withheld]".into();
    }
    if lower.starts_with("javascript:") {
        return "javascript:…".into();
    }
    // Most links of a documentation page go to a fragment of the page itself.
    if let Some(fragment) = page.own_fragment(href) {
        return one_line(&format!("#{fragment}"), 79);
    }
    let shown = match (reqwest::Url::parse(href), page.parsed.as_ref()) {
        (Ok(u), Some(p)) if u.origin() == p.origin() => {
            if u.path() == p.path() && u.query() == p.query() && u.fragment().is_some() {
                format!("#{}", u.fragment().unwrap_or(""))
            } else {
                let mut s = u.path().to_string();
                if let Some(q) = u.query() {
                    s.push('?');
                    s.push_str(q);
                }
                if let Some(f) = u.fragment() {
                    s.push('#');
                    s.push_str(f);
                }
                s
            }
        }
        (Ok(u), _) if u.scheme() == "https" || u.scheme() == "http" => {
            let mut s = format!("{}{}", u.host_str().unwrap_or(""), u.path());
            if let Some(port) = u.port() {
                s = format!("{}:{port}{}", u.host_str().unwrap_or(""), u.path());
            }
            if let Some(q) = u.query() {
                s.push('?');
                s.push_str(q);
            }
            if u.scheme() == "http" {
                s = format!("http://{s}");
            }
            s
        }
        _ => href.to_string(),
    };
    one_line(&shown, 79)
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// One element line: `e12 button "Remove"`, `e20 textbox "Promo code" =""`.
pub fn element_line(item: &Value, page_url: &str) -> String {
    element_line_at(item, &PageAddress::new(page_url))
}

/// [`element_line`] against a page address parsed before (a read's lines share one).
pub fn element_line_at(item: &Value, page: &PageAddress) -> String {
    let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
    let mut line = format!(
        "{} {} {}",
        one_line(s("ref"), 20),
        one_line(s("role"), 40),
        q(&one_line(s("name"), NAME_CHARS))
    );
    if item.get("valueHidden").and_then(Value::as_bool) == Some(true) {
        line.push_str(" (value hidden)");
    } else if let Some(v) = item.get("value").and_then(Value::as_str) {
        line.push_str(&format!(" ={}", q(&one_line(v, VALUE_CHARS))));
    }
    if let Some(states) = item.get("states").and_then(Value::as_array) {
        for st in states.iter().filter_map(Value::as_str) {
            line.push(' ');
            line.push_str(&one_line(st, 40));
        }
    }
    if let Some(href) = item.get("href").and_then(Value::as_str) {
        line.push_str(" -> ");
        line.push_str(&short_url_at(href, page));
    }
    line
}

fn context_line(item: &Value) -> Option<String> {
    let name = &one_line(item.get("name").and_then(Value::as_str).unwrap_or(""), NAME_CHARS);
    match item.get("k").and_then(Value::as_str) {
        Some("h") => {
            let level = item.get("level").and_then(Value::as_u64).unwrap_or(2).clamp(1, 6) as usize;
            Some(format!("{} {}", "#".repeat(level), name))
        }
        Some("l") => {
            let role = &one_line(item.get("role").and_then(Value::as_str).unwrap_or("region"), 40);
            Some(if name.is_empty() {
                format!("[{role}]")
            } else {
                format!("[{role} {}]", q(name))
            })
        }
        _ => None,
    }
}

/// A page's address for display: data: and blob: URLs are withheld (their content is the page),
/// others are kept to one line of at most 300 characters.
pub fn shown_page_url(url: &str) -> String {
    let l = url.trim_start().to_ascii_lowercase();
    if l.starts_with("data:") || l.starts_with("blob:") {
        "[data/blob URL withheld]".to_string()
    } else {
        one_line(url, 300)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short_url(href: &str, page: &str) -> String {
        short_url_at(href, &PageAddress::new(page))
    }

    #[test]
    fn urls_are_shortened_and_data_urls_withheld() {
        let page = "http://127.0.0.1:8080/docs/index.html";
        assert_eq!(short_url("http://127.0.0.1:8080/docs/a?x=1", page), "/docs/a?x=1");
        assert_eq!(short_url("http://127.0.0.1:8080/docs/index.html#s2", page), "#s2");
        // The same with a fragment on the page's own address, or one the parser would encode.
        assert_eq!(
            short_url("http://127.0.0.1:8080/docs/index.html#s2", &format!("{page}#top")),
            "#s2"
        );
        assert_eq!(short_url("http://127.0.0.1:8080/docs/index.html#a b", page), "#a%20b");
        assert_eq!(short_url("http://127.0.0.1:8080/docs/index.html#", page), "#");
        assert_eq!(
            short_url("https://www.rust-lang.org/learn", page),
            "www.rust-lang.org/learn"
        );
        assert_eq!(short_url("data:text/html,<b>hi</b>", page), "[data/blob URL withheld]");
        assert_eq!(short_url("blob:http://127.0.0.1/abc", page), "[data/blob URL withheld]");
        assert!(
            short_url(&format!("https://x.org/{}", "a".repeat(200)), page)
                .chars()
                .count()
                <= 80
        );
    }

    /// Whatever a hostile page makes page.js return, formatting never panics.
    #[test]
    fn odd_read_results_never_panic() {
        use serde_json::json;
        let odd = [
            json!(null),
            json!([]),
            json!({"items": 3, "counts": "x", "title": 5}),
            json!({"items": [null, 1, "e", {"k": "h", "level": u64::MAX}, {"k": "l"}, {"k": "e", "states": [1, null], "href": 3}]}),
            json!({"url": "data:x", "textPreview": "研究".repeat(3000), "counts": {"chars": u64::MAX},
                   "items": [{"k": "e", "inView": true, "name": "研".repeat(500), "value": "\u{0}\n", "href": "javascript:研"}],
                   "hiddenInteractive": u64::MAX, "omittedItems": -1}),
        ];
        for v in &odd {
            for (offset, max_elements, max_chars) in [(0, 0, 0), (usize::MAX, 200, 20_000), (1, 1, 50), (0, 200, 1)] {
                let find = (max_chars == 50).then(|| "研".to_string());
                let _ = format_read(
                    v,
                    &ReadView {
                        offset,
                        find,
                        max_elements,
                        max_chars,
                        preview_chars: max_chars,
                    },
                );
            }
        }
    }
}
