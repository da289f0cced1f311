//! A page.js read asked for with `compact` (what page_read asks for) carries its items as
//! arrays and its link addresses shortened, half the characters to carry out of the page
//! (see `compactItems` in page.js, which also sends the two prefixes it took off). [`expand_read`] turns it back into the items every reader
//! of a read result takes: `{"k": "e", "ref", "role", "name", "value"?, "valueHidden"?,
//! "states"?, "href"?, "inView"?}`, `{"k": "h", "level", "name", "inView"?}` and
//! `{"k": "l", "role", "name", "inView"?}`.

use serde_json::{Map, Value, json};

/// A read result with its items expanded; any other value (a read without `compact`, or what
/// a host answered on its own) as it is.
pub(super) fn expand_read(mut v: Value) -> Value {
    if v.get("compact").and_then(Value::as_u64) != Some(1) {
        return v;
    }
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let (page, site) = (text("pagePrefix").unwrap_or_default(), text("sitePrefix"));
    if let Some(obj) = v.as_object_mut() {
        for k in ["compact", "pagePrefix", "sitePrefix"] {
            obj.remove(k);
        }
        if let Some(Value::Array(items)) = obj.get_mut("items") {
            for item in items.iter_mut() {
                *item = expand_item(std::mem::take(item), &page, site.as_deref());
            }
        }
    }
    v
}

fn expand_item(item: Value, page: &str, site: Option<&str>) -> Value {
    let Value::Array(parts) = item else { return item };
    let mut parts = parts.into_iter();
    let head = parts.next().unwrap_or(Value::Null);
    let mut out = Map::new();
    let in_view = |flag: &Value| flag.as_u64().is_some_and(|f| f & 1 == 1);
    match head.as_str() {
        Some(kind @ ("h" | "l")) => {
            let shown = parts.next().unwrap_or(Value::Null);
            let third = parts.next().unwrap_or(Value::Null);
            let name = parts.next().unwrap_or(Value::Null);
            out.insert("k".into(), json!(kind));
            out.insert(if kind == "h" { "level" } else { "role" }.into(), third);
            out.insert("name".into(), name);
            if in_view(&shown) {
                out.insert("inView".into(), Value::Bool(true));
            }
        }
        _ => {
            let flags = head.as_u64().unwrap_or(0);
            let number = parts.next().unwrap_or(Value::Null);
            let reference = match number.as_u64() {
                Some(n) => json!(format!("e{n}")),
                None => number,
            };
            out.insert("ref".into(), reference);
            out.insert("role".into(), parts.next().unwrap_or(Value::Null));
            out.insert("name".into(), parts.next().unwrap_or(Value::Null));
            if flags & 2 != 0 {
                out.insert("valueHidden".into(), Value::Bool(true));
            }
            if flags & 4 != 0 {
                out.insert("value".into(), parts.next().unwrap_or(Value::Null));
            }
            if flags & 8 != 0 {
                out.insert("states".into(), parts.next().unwrap_or(Value::Null));
            }
            if flags & 16 != 0 {
                let href = match parts.next().unwrap_or(Value::Null) {
                    Value::String(s) => Value::String(address(s, page, site)),
                    other => other,
                };
                out.insert("href".into(), href);
            }
            out.insert("k".into(), json!("e"));
            if flags & 1 != 0 {
                out.insert("inView".into(), Value::Bool(true));
            }
        }
    }
    Value::Object(out)
}

/// A link address as page.js shortened it, whole again.
fn address(s: String, page: &str, site: Option<&str>) -> String {
    match s.as_bytes().first() {
        Some(b'#') => format!("{page}{s}"),
        Some(b'/') => match site {
            Some(site) => format!("{site}{s}"),
            None => s,
        },
        Some(b'!') => s[1..].to_owned(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items page.js sends compact come back as the objects it sends otherwise.
    #[test]
    fn compact_items_expand_to_the_plain_ones() {
        let compact = json!({
            "url": "http://127.0.0.1:8/doc/a.html#top", "compact": 1,
            "pagePrefix": "http://127.0.0.1:8/doc/a.html", "sitePrefix": "http://127.0.0.1:8",
            "items": [
                [17, 12, "link", "push", "#method.push"],
                [16, 13, "link", "index", "/doc/index.html"],
                [16, 14, "link", "odd", "!#raw"],
                [16, 15, "link", "away", "https://example.org/x"],
                [16, 16, "link", "no href", null],
                [12, 17, "checkbox", "Agree", "yes", ["checked"]],
                [2, 18, "password", "Password"],
                ["h", 1, 2, "Methods"],
                ["l", 0, "navigation", "Main"],
            ],
        });
        let plain = json!({
            "url": "http://127.0.0.1:8/doc/a.html#top",
            "items": [
                {"k": "e", "ref": "e12", "role": "link", "name": "push", "href": "http://127.0.0.1:8/doc/a.html#method.push", "inView": true},
                {"k": "e", "ref": "e13", "role": "link", "name": "index", "href": "http://127.0.0.1:8/doc/index.html"},
                {"k": "e", "ref": "e14", "role": "link", "name": "odd", "href": "#raw"},
                {"k": "e", "ref": "e15", "role": "link", "name": "away", "href": "https://example.org/x"},
                {"k": "e", "ref": "e16", "role": "link", "name": "no href", "href": null},
                {"k": "e", "ref": "e17", "role": "checkbox", "name": "Agree", "value": "yes", "states": ["checked"]},
                {"k": "e", "ref": "e18", "role": "password", "name": "Password", "valueHidden": true},
                {"k": "h", "level": 2, "name": "Methods", "inView": true},
                {"k": "l", "role": "navigation", "name": "Main"},
            ],
        });
        assert_eq!(expand_read(compact), plain);
        // A read that was not asked compact is left as it is.
        assert_eq!(expand_read(plain.clone()), plain);
    }

    /// Whatever a hostile page makes page.js return, expanding never panics.
    #[test]
    fn odd_compact_reads_never_panic() {
        for v in [
            json!({"compact": 1}),
            json!({"compact": 1, "items": 3}),
            json!({"compact": 1, "items": [null, [], ["h"], ["l", "x"], [255], [31, "e", 1, 2, "!", null, 7]]}),
            json!({"compact": 1, "pagePrefix": 5, "sitePrefix": null, "items": [[16, 1, "link", "a", "/x"], [16, 2, "link", "b", "!"]]}),
        ] {
            let _ = expand_read(v);
        }
    }
}
