//! The compact text snapshot page_read shows the model. Page text in it is capped here; the
//! loop wraps the whole result in untrusted-content markers (the tools set its provenance).

use agent_core::untrusted::one_line;
use serde_json::Value;

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

/// Shortens a URL for display relative to the page's URL; withholds data: and blob: URLs.
pub fn short_url(href: &str, page: &str) -> String {
    let lower = href.trim_start().to_ascii_lowercase();
    if lower.starts_with("data:") || lower.starts_with("blob:") {
        return "[data/blob URL withheld]".into();
    }
    if lower.starts_with("javascript:") {
        return "javascript:…".into();
    }
    let shown = match (reqwest::Url::parse(href), reqwest::Url::parse(page)) {
        (Ok(u), Ok(p)) if u.origin() == p.origin() => {
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
        line.push_str(&short_url(href, page_url));
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

/// Options of one page_read call.
#[derive(Debug, Clone, Default)]
pub struct ReadView {
    /// Skip this many items of the viewport-first order.
    pub offset: usize,
    /// Only items whose name, value or link contains this text (case-insensitive).
    pub find: Option<String>,
    /// At most this many element lines.
    pub max_elements: usize,
    /// Whole-result cap in characters.
    pub max_chars: usize,
}

/// Formats the JSON `read` result of page.js as the compact snapshot. Returns the text (not
/// yet wrapped) and whether anything was cut.
pub fn format_read(v: &Value, view: &ReadView) -> (String, bool) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    let url = s("url");
    let shown_url = shown_page_url(url);
    let c = |k: &str| v.pointer(&format!("/counts/{k}")).and_then(Value::as_u64).unwrap_or(0);
    let mut out = String::new();
    out.push_str(&format!(
        "url: {shown_url}\ntitle: {}\n",
        q(&one_line(s("title"), TITLE_CHARS))
    ));
    out.push_str(&format!(
        "state: {}; {} links, {} images, {} headings, {} forms, {} fields, {} iframes, {} shadow roots; {} chars of text\n",
        one_line(s("readyState"), 20),
        c("links"),
        c("images"),
        c("headings"),
        c("forms"),
        c("fields"),
        c("iframes"),
        c("shadowRoots"),
        c("chars")
    ));
    let preview = s("textPreview");
    if view.offset == 0 && view.find.is_none() && !preview.is_empty() {
        let more = if c("chars") as usize > preview.chars().count() {
            " [preview: first 4000 chars; page_text gives one element's full text]"
        } else {
            ""
        };
        out.push_str(&format!("text: {preview}{more}\n"));
    }

    let empty = Vec::new();
    let items = v.get("items").and_then(Value::as_array).unwrap_or(&empty);
    let needle = view.find.as_ref().map(|f| f.to_lowercase());
    let matches = |it: &Value| -> bool {
        let Some(n) = &needle else { return true };
        ["name", "value", "href"].iter().any(|k| {
            it.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|t| t.to_lowercase().contains(n))
        })
    };
    // Viewport first, each part in document order.
    let ordered: Vec<&Value> = items
        .iter()
        .filter(|it| it.get("inView").and_then(Value::as_bool) == Some(true))
        .chain(
            items
                .iter()
                .filter(|it| it.get("inView").and_then(Value::as_bool) != Some(true)),
        )
        .filter(|it| matches(it))
        .collect();
    let total = ordered.len();
    let in_view = items
        .iter()
        .filter(|it| it.get("inView").and_then(Value::as_bool) == Some(true))
        .count();
    let elements_total = ordered
        .iter()
        .filter(|it| it.get("k").and_then(Value::as_str) == Some("e"))
        .count();
    out.push_str(&format!(
        "elements: {elements_total} interactive{} ({in_view} lines in the viewport listed first; refs like e12 go to page_click/page_fill/page_select/page_text)\n",
        needle.as_ref().map(|n| format!(" matching {}", q(n))).unwrap_or_default()
    ));
    let budget = view.max_chars.saturating_sub(out.chars().count() + 400);
    let mut body = String::new();
    let mut shown_elements = 0usize;
    let mut idx = view.offset.min(total);
    let mut last_context: Option<(String, usize)> = None;
    let flush = |body: &mut String, last: &mut Option<(String, usize)>| {
        if let Some((line, n)) = last.take() {
            if n > 1 {
                body.push_str(&format!("{line} (×{n})\n"));
            } else {
                body.push_str(&line);
                body.push('\n');
            }
        }
    };
    let mut crossed_fold = false;
    while idx < total {
        let it = ordered[idx];
        let inview = it.get("inView").and_then(Value::as_bool) == Some(true);
        if !inview && !crossed_fold && idx > 0 && view.offset < in_view {
            flush(&mut body, &mut last_context);
            body.push_str("-- below/outside the viewport --\n");
            crossed_fold = true;
        }
        if it.get("k").and_then(Value::as_str) == Some("e") {
            if shown_elements >= view.max_elements {
                break;
            }
            flush(&mut body, &mut last_context);
            let line = element_line(it, url);
            if body.chars().count() + line.chars().count() + 1 > budget {
                break;
            }
            body.push_str(&line);
            body.push('\n');
            shown_elements += 1;
        } else if let Some(line) = context_line(it) {
            // Repeated context lines (same heading in every card) collapse into one.
            match &mut last_context {
                Some((prev, n)) if *prev == line => *n += 1,
                _ => {
                    flush(&mut body, &mut last_context);
                    if body.chars().count() + line.chars().count() + 1 > budget {
                        break;
                    }
                    last_context = Some((line, 1));
                }
            }
        }
        idx += 1;
    }
    flush(&mut body, &mut last_context);
    out.push_str(&body);
    let mut cut = false;
    if idx < total {
        cut = true;
        out.push_str(&format!(
            "[{} more lines not shown: call page_read with offset={idx}, or find=\"text\" to search]\n",
            total - idx
        ));
    }
    let hidden = c("hiddenInteractive");
    if hidden > 0 {
        out.push_str(&format!(
            "[{hidden} hidden or zero-size interactive elements not listed]\n"
        ));
    }
    let omitted = v.get("omittedItems").and_then(Value::as_u64).unwrap_or(0);
    if omitted > 0 {
        out.push_str(&format!(
            "[{omitted} further elements beyond the scan limit not listed]\n"
        ));
    }
    let (capped, over) = cap_chars(&out, view.max_chars);
    (capped, cut || over)
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

    #[test]
    fn urls_are_shortened_and_data_urls_withheld() {
        let page = "http://127.0.0.1:8080/docs/index.html";
        assert_eq!(short_url("http://127.0.0.1:8080/docs/a?x=1", page), "/docs/a?x=1");
        assert_eq!(short_url("http://127.0.0.1:8080/docs/index.html#s2", page), "#s2");
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
                    },
                );
            }
        }
    }
}
