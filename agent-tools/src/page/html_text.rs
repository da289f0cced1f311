//! A small HTML-to-text pass for page_scrape (no rendering, no scripts).

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
        // `>` is ASCII, so both ends are char boundaries even in an unterminated tag.
        let close_at = lower[i..].find('>').map(|e| i + e).unwrap_or(bytes.len());
        let end = (close_at + 1).min(bytes.len());
        let tag_text = &lower[i + 1..close_at];
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
        // Searched in bytes: a cut at byte 12 may fall inside a character.
        let Some(semi) = rest.bytes().take(12).position(|b| b == b';') else {
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
    fn multibyte_text_next_to_entities_and_tags_never_panics() {
        assert_eq!(html_to_text("<p>研究&amp;开发部门</p>"), "研究&开发部门\n");
        assert_eq!(html_to_text("&研究开发部门;"), "&研究开发部门;\n");
        assert_eq!(html_to_text("<p>a</p><b研"), "a\n");
        assert_eq!(html_to_text("x<研"), "x\n");
        assert_eq!(html_to_text("<"), "");
        assert_eq!(
            html_to_text("&#x1F600;&#xD800;&#99999999;é&"),
            "\u{1F600}&#xD800;&#99999999;é&\n"
        );
        let _ = html_to_text("<script>研究</scr研ipt>");
        let _ = html_to_text("<!--研");
        let _ = html_to_text("<p>&amp研究开发部门&amp;</p>");
    }

    #[test]
    fn extracts_text_without_scripts_styles_or_comments() {
        let html = "<html><head><title>T</title><style>b{}</style></head><body><script>var x='<p>no</p>';</script>\
            <h1>Hello &amp; welcome</h1><!-- hidden --><p>One&nbsp;two</p><ul><li>a</li><li>b &#x263A;</li></ul></body></html>";
        let text = html_to_text(html);
        assert_eq!(text, "Hello & welcome\nOne two\na\nb \u{263A}\n");
    }

    /// A cheap stand-in for the fuzz target where cargo-fuzz is not installed: random
    /// sequences of the fragments that matter to the parser (tags, comments, entities, cuts
    /// inside multi-byte characters) must never panic.
    #[test]
    fn random_fragment_soup_never_panics() {
        const PARTS: &[&str] = &[
            "<",
            ">",
            "&",
            ";",
            "#",
            "#x",
            "x",
            "amp",
            "lt",
            "9",
            "研究",
            "é",
            "\u{1F600}",
            "<!--",
            "-->",
            "<p>",
            "</p",
            "<script>",
            "</script",
            "<style",
            "<br/>",
            "<td>",
            " ",
            "\n",
            "/",
            "\"",
            "'",
            "=",
            "&#",
            "&#x",
            "<title>",
            "</",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 40) as usize;
            let html: String = (0..len)
                .map(|_| PARTS[(next() % PARTS.len() as u64) as usize])
                .collect();
            let _ = html_to_text(&html);
        }
    }
}
