//! page_scrape: fetch an https page without rendering it, and extract its text.

use std::time::Duration;

use agent_core::ToolError;

/// Largest body page_scrape downloads.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// Fetches `url` (https only, unless `allow_loopback_http` and the host is loopback) and
/// returns `(final_url, content_type, text)`.
pub(crate) async fn scrape(
    client: &reqwest::Client,
    url: &str,
    allow_loopback_http: bool,
) -> Result<(String, String, String), ToolError> {
    let parsed = reqwest::Url::parse(url.trim()).map_err(|e| ToolError::model(format!("{url:?} is not a URL: {e}")))?;
    let loopback = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match parsed.scheme() {
        "https" => {}
        "http" if allow_loopback_http && loopback => {}
        other => {
            return Err(ToolError::model(format!(
                "refused: page_scrape fetches https addresses only, not {other}:"
            )));
        }
    }
    let mut resp = client
        .get(parsed)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| ToolError::retryable(format!("fetching {url} failed: {e}")))?;
    let final_url = resp.url().to_string();
    if !resp.status().is_success() {
        return Err(ToolError::model(format!("{url} answered HTTP {}", resp.status())));
    }
    let ctype = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ToolError::retryable(format!("reading {url} failed: {e}")))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY {
            body.truncate(MAX_BODY);
            break;
        }
    }
    let raw = String::from_utf8_lossy(&body);
    let text = if ctype.contains("html") || ctype.is_empty() && raw.trim_start().starts_with('<') {
        html_to_text(&raw)
    } else if ctype.starts_with("text/") || ctype.contains("json") || ctype.contains("xml") {
        raw.into_owned()
    } else {
        return Err(ToolError::model(format!(
            "{url} is {ctype}, not text; page_scrape returns text only"
        )));
    };
    Ok((final_url, ctype, text))
}

/// A small HTML-to-text pass: drops script, style, template and head content and comments,
/// turns block elements into line breaks, decodes common entities, collapses whitespace.
pub fn html_to_text(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len() / 3);
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            i += 1;
            continue;
        }
        out.push_str(&decode_entities(&html[last..i]));
        if lower[i..].starts_with("<!--") {
            i = lower[i..].find("-->").map(|e| i + e + 3).unwrap_or(bytes.len());
            last = i;
            continue;
        }
        let end = lower[i..].find('>').map(|e| i + e + 1).unwrap_or(bytes.len());
        let tag_text = &lower[i + 1..end.saturating_sub(1).max(i + 1)];
        let name: String = tag_text
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let closing = tag_text.starts_with('/');
        i = end;
        if !closing
            && matches!(
                name.as_str(),
                "script" | "style" | "template" | "head" | "noscript" | "svg"
            )
        {
            let close = format!("</{name}");
            i = lower[i..]
                .find(&close)
                .map(|e| {
                    let at = i + e;
                    lower[at..].find('>').map(|g| at + g + 1).unwrap_or(bytes.len())
                })
                .unwrap_or(bytes.len());
        } else if matches!(
            name.as_str(),
            "p" | "div"
                | "br"
                | "li"
                | "tr"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "section"
                | "article"
                | "header"
                | "footer"
                | "nav"
                | "ul"
                | "ol"
                | "table"
                | "pre"
                | "blockquote"
                | "hr"
                | "title"
        ) {
            out.push('\n');
        } else if matches!(name.as_str(), "td" | "th") {
            out.push(' ');
        }
        last = i;
    }
    if last < bytes.len() {
        out.push_str(&decode_entities(&html[last..]));
    }
    let mut text = String::with_capacity(out.len());
    for line in out.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if !line.is_empty() {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let ent = &rest[1..semi];
        let decoded = match ent {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" | "#39" => Some('\''),
            "nbsp" => Some(' '),
            _ if ent.starts_with("#x") || ent.starts_with("#X") => {
                u32::from_str_radix(&ent[2..], 16).ok().and_then(char::from_u32)
            }
            _ if ent.starts_with('#') => ent[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_text_without_scripts_styles_or_comments() {
        let html = "<html><head><title>T</title><style>b{}</style></head><body><script>var x='<p>no</p>';</script>\
            <h1>Hello &amp; welcome</h1><!-- hidden --><p>One&nbsp;two</p><ul><li>a</li><li>b &#x263A;</li></ul></body></html>";
        let text = html_to_text(html);
        assert_eq!(text, "Hello & welcome\nOne two\na\nb \u{263A}\n");
    }
}
