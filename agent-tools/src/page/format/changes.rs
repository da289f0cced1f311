//! What changed between two page_read results of the same document (page_read with
//! `since_last`): element lines added, removed and changed (by ref), headings and landmarks
//! added or removed, and the page text's change, one line each.

use std::collections::{HashMap, HashSet};

use agent_core::untrusted::one_line;
use serde_json::Value;

use super::{PageAddress, TITLE_CHARS, context_line, element_line_at, q, shown_page_url};

/// Most characters of changed page text quoted in a change list.
const TEXT_CHANGE_CHARS: usize = 600;
/// Most characters of an old line's differing part quoted after a changed line.
const WAS_CHARS: usize = 200;

/// What one page_read saw, kept to compare the next read of the same document with: the
/// formatted lines, not page.js's raw result.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The tab the read ran in (`None`: the active tab).
    pub tab: Option<String>,
    /// The document's identity (page.js keeps it on the document's window).
    pub doc: String,
    /// The page's address as read.
    pub url: String,
    title: String,
    preview: String,
    chars: u64,
    lines: Vec<Line>,
    /// Refs of listed-before elements that are past page.js's scan limit now: on the page,
    /// only not listed.
    beyond_limit: HashSet<String>,
}

#[derive(Debug, Clone)]
struct Line {
    /// The element's ref; `None` for a heading or landmark.
    key: Option<String>,
    text: String,
}

impl Snapshot {
    /// The lines of a page.js `read` result, in document order.
    pub fn of(v: &Value, tab: Option<String>) -> Snapshot {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
        let url = s("url").to_owned();
        let items = v
            .get("items")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let page = PageAddress::new(&url);
        let lines = items
            .iter()
            .filter_map(|item| match item.get("k").and_then(Value::as_str) {
                Some("e") => Some(Line {
                    key: Some(one_line(item.get("ref").and_then(Value::as_str).unwrap_or(""), 20)),
                    text: element_line_at(item, &page),
                }),
                _ => context_line(item).map(|text| Line { key: None, text }),
            })
            .collect();
        Snapshot {
            tab,
            doc: s("doc").to_owned(),
            title: s("title").to_owned(),
            preview: s("textPreview").to_owned(),
            chars: v
                .get("counts")
                .and_then(|c| c.get("chars"))
                .and_then(Value::as_u64)
                .unwrap_or(0),
            beyond_limit: v
                .get("beyondLimit")
                .and_then(Value::as_array)
                .map(|refs| refs.iter().filter_map(Value::as_str).map(|r| one_line(r, 20)).collect())
                .unwrap_or_default(),
            url,
            lines,
        }
    }

    /// Whether `next` was read from the same document in the same tab (a same-document
    /// address change, such as a new #fragment or pushState, keeps the origin).
    pub fn same_document(&self, next: &Snapshot) -> bool {
        !self.doc.is_empty() && self.doc == next.doc && self.tab == next.tab && origin(&self.url) == origin(&next.url)
    }

    /// Characters held, for the memory bound.
    pub fn size(&self) -> usize {
        self.lines.iter().map(|l| l.text.len() + 8).sum::<usize>()
            + self.beyond_limit.iter().map(|r| r.len() + 8).sum::<usize>()
            + self.preview.len()
            + self.url.len()
            + self.title.len()
    }

    fn element_count(&self) -> usize {
        self.lines.iter().filter(|l| l.key.is_some()).count()
    }
}

fn origin(url: &str) -> Option<String> {
    reqwest::Url::parse(url).ok().map(|u| u.origin().ascii_serialization())
}

/// How many lines of each kind a change list has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangeCounts {
    /// Lines in `next` only.
    pub added: usize,
    /// Lines in `prev` only.
    pub removed: usize,
    /// Elements in both whose line differs.
    pub changed: usize,
}

/// The change list from `prev` to `next` (the same document), and its counts.
pub fn format_changes(prev: &Snapshot, next: &Snapshot) -> (String, ChangeCounts) {
    let mut counts = ChangeCounts::default();
    let mut body = String::new();
    if prev.url != next.url {
        body.push_str(&format!("address is now {}\n", shown_page_url(&next.url)));
    }
    if prev.title != next.title {
        body.push_str(&format!("title is now {}\n", q(&one_line(&next.title, TITLE_CHARS))));
    }

    let old_by_ref: HashMap<&str, &str> = prev
        .lines
        .iter()
        .filter_map(|l| Some((l.key.as_deref()?, l.text.as_str())))
        .collect();
    let new_refs: HashMap<&str, ()> = next
        .lines
        .iter()
        .filter_map(|l| Some((l.key.as_deref()?, ())))
        .collect();
    // Headings and landmarks have no ref: they match by text, as many times as they occur.
    let mut old_context: HashMap<&str, usize> = HashMap::new();
    for l in prev.lines.iter().filter(|l| l.key.is_none()) {
        *old_context.entry(l.text.as_str()).or_default() += 1;
    }

    for line in &next.lines {
        match &line.key {
            Some(key) => match old_by_ref.get(key.as_str()) {
                None => {
                    counts.added += 1;
                    body.push_str(&format!("+ {}\n", line.text));
                }
                Some(old) if *old != line.text => {
                    counts.changed += 1;
                    body.push_str(&format!("~ {} (was: {})\n", line.text, was(old, &line.text)));
                }
                Some(_) => {}
            },
            None => match old_context.get_mut(line.text.as_str()) {
                Some(n) if *n > 0 => *n -= 1,
                _ => {
                    counts.added += 1;
                    body.push_str(&format!("+ {}\n", line.text));
                }
            },
        }
    }
    for line in &prev.lines {
        let gone = match &line.key {
            Some(key) => !new_refs.contains_key(key.as_str()) && !next.beyond_limit.contains(key),
            None => match old_context.get_mut(line.text.as_str()) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            },
        };
        if gone {
            counts.removed += 1;
            body.push_str(&format!("- {}\n", line.text));
        }
    }
    body.push_str(&text_change(prev, next));

    let elements = next.element_count();
    let shown = shown_page_url(&next.url);
    let head = if body.is_empty() {
        format!(
            "no changes since your last page_read of this page ({shown}): the same {elements} interactive elements and text preview\n"
        )
    } else {
        format!(
            "changes since your last page_read of this page ({shown}): {} added, {} removed, {} changed; {elements} interactive elements in all (+ added, - removed, ~ changed; refs not listed are unchanged)\n",
            counts.added, counts.removed, counts.changed
        )
    };
    (head + &body, counts)
}

/// The part of an old line that differs from the new one, from the first differing word on
/// (the ref, role and name usually stay).
fn was(old: &str, new: &str) -> String {
    let mut at = 0;
    for (a, b) in old.split_inclusive(' ').zip(new.split_inclusive(' ')) {
        if a != b {
            break;
        }
        at += a.len();
    }
    let rest = old.get(at..).unwrap_or(old).trim();
    one_line(if rest.is_empty() { old } else { rest }, WAS_CHARS)
}

/// One line on how the page's text changed: its length, and the new or changed stretch of the
/// preview (the part between what stayed at the start and at the end).
fn text_change(prev: &Snapshot, next: &Snapshot) -> String {
    if prev.preview == next.preview && prev.chars == next.chars {
        return String::new();
    }
    let old: Vec<char> = prev.preview.chars().collect();
    let new: Vec<char> = next.preview.chars().collect();
    let (added, removed) = changed_stretch(&old, &new);
    let (added, removed): (String, String) = (added.iter().collect(), removed.iter().collect());
    let mut line = format!("text: {} -> {} chars", prev.chars, next.chars);
    let quote = |s: &str| {
        let n = s.chars().count();
        let cut: String = s.chars().take(TEXT_CHANGE_CHARS).collect();
        let more = if n > TEXT_CHANGE_CHARS {
            format!(
                " [+{} chars; page_text reads an element's full text]",
                n - TEXT_CHANGE_CHARS
            )
        } else {
            String::new()
        };
        format!("{}{more}", q(&one_line(&cut, TEXT_CHANGE_CHARS)))
    };
    if !added.trim().is_empty() {
        line.push_str(&format!("; now reads {}", quote(added.trim())));
    }
    if !removed.trim().is_empty() {
        line.push_str(&format!("; no longer reads {}", quote(removed.trim())));
    }
    if added.trim().is_empty() && removed.trim().is_empty() {
        line.push_str(" (the change is past the text preview)");
    }
    line.push('\n');
    line
}

/// The stretch of `new` that replaced a stretch of `old`: after what both start with, up to
/// what both end with. A preview is the first characters of the page's text, so an insertion
/// shifts its end: then the stretch ends where `old`'s text resumes in `new` (or `new`'s in
/// `old`, for a deletion), looked for within a bounded window.
fn changed_stretch<'a>(old: &'a [char], new: &'a [char]) -> (&'a [char], &'a [char]) {
    const PROBE: usize = 32;
    const WINDOW: usize = 2_000;
    let mut start = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let mut end = old[start..]
        .iter()
        .rev()
        .zip(new[start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let shifted = |from: &'a [char], into: &'a [char]| -> Option<usize> {
        let probe = from.get(..PROBE)?;
        into.windows(PROBE).take(WINDOW).position(|w| w == probe)
    };
    if end < PROBE {
        if let Some(at) = shifted(&old[start..], &new[start..]) {
            return (&new[start..start + at], &[]);
        }
        if let Some(at) = shifted(&new[start..], &old[start..]) {
            return (&[], &old[start..start + at]);
        }
    }
    // Whole words: "idle" -> "clicked in frame", not "idl" -> "clicked in fram".
    let word = |c: Option<&char>| c.is_some_and(|c| !c.is_whitespace());
    fn before(text: &[char], i: usize) -> Option<&char> {
        i.checked_sub(1).and_then(|i| text.get(i))
    }
    if word(before(old, start)) && (word(old.get(start)) || word(new.get(start))) {
        while word(before(old, start)) {
            start -= 1;
        }
    }
    let (o, n) = (old.len(), new.len());
    if word(old.get(o - end)) && (word(before(old, o - end)) || word(before(new, n - end))) {
        while end > 0 && word(old.get(o - end)) {
            end -= 1;
        }
    }
    (&new[start..new.len() - end], &old[start..old.len() - end])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(doc: &str, url: &str, items: Value, preview: &str) -> Snapshot {
        let v = json!({"doc": doc, "url": url, "title": "T", "textPreview": preview,
                       "counts": {"chars": preview.chars().count()}, "items": items});
        Snapshot::of(&v, None)
    }

    #[test]
    fn lists_added_removed_and_changed_lines() {
        let url = "http://127.0.0.1:1/a.html";
        let prev = read(
            "d1",
            url,
            json!([
                {"k": "h", "level": 1, "name": "Form"},
                {"k": "e", "ref": "e1", "role": "button", "name": "Show details", "states": ["collapsed"]},
                {"k": "e", "ref": "e2", "role": "textbox", "name": "Name", "value": ""},
                {"k": "e", "ref": "e3", "role": "button", "name": "Item"},
            ]),
            "Form Show details",
        );
        let next = read(
            "d1",
            url,
            json!([
                {"k": "h", "level": 1, "name": "Form"},
                {"k": "e", "ref": "e1", "role": "button", "name": "Show details", "states": ["expanded"]},
                {"k": "e", "ref": "e2", "role": "textbox", "name": "Name", "value": ""},
                {"k": "h", "level": 2, "name": "Details"},
                {"k": "e", "ref": "e9", "role": "button", "name": "Item"},
            ]),
            "Form Show details Details More details here.",
        );
        assert!(prev.same_document(&next));
        let (text, counts) = format_changes(&prev, &next);
        assert_eq!(
            counts,
            ChangeCounts {
                added: 2,
                removed: 1,
                changed: 1
            }
        );
        assert!(
            text.contains("~ e1 button \"Show details\" expanded (was: collapsed)"),
            "{text}"
        );
        assert!(text.contains("+ ## Details\n"), "{text}");
        assert!(text.contains("+ e9 button \"Item\"\n"), "{text}");
        assert!(text.contains("- e3 button \"Item\"\n"), "{text}");
        assert!(!text.contains("e2 "), "unchanged lines are not listed: {text}");
        assert!(text.contains("now reads \"Details More details here.\""), "{text}");
    }

    #[test]
    fn same_lines_are_no_changes_and_other_documents_are_not_compared() {
        let url = "http://127.0.0.1:1/a.html";
        let items = json!([{"k": "e", "ref": "e1", "role": "link", "name": "Home", "href": url}]);
        let prev = read("d1", url, items.clone(), "Home");
        let next = read("d1", url, items.clone(), "Home");
        let (text, counts) = format_changes(&prev, &next);
        assert_eq!(counts, ChangeCounts::default());
        assert!(text.starts_with("no changes since your last page_read"), "{text}");
        assert!(!prev.same_document(&read("d2", url, items.clone(), "Home")));
        assert!(!prev.same_document(&read("d1", "http://127.0.0.2:1/a.html", items.clone(), "Home")));
        assert!(!read("", url, items.clone(), "").same_document(&read("", url, items, "")));
    }

    #[test]
    fn elements_pushed_past_the_scan_limit_are_not_removed() {
        let url = "http://127.0.0.1:1/a.html";
        let e = |r: &str| json!({"k": "e", "ref": r, "role": "button", "name": "More"});
        let prev = read("d", url, json!([e("e1"), e("e2"), e("e3")]), "");
        let mut v = json!({"doc": "d", "url": url, "items": [e("e1"), e("e9"), e("e2")], "beyondLimit": ["e3"]});
        let next = Snapshot::of(&v, None);
        let (text, counts) = format_changes(&prev, &next);
        assert_eq!((counts.added, counts.removed), (1, 0), "{text}");
        v["beyondLimit"] = json!([]);
        let (_, counts) = format_changes(&prev, &Snapshot::of(&v, None));
        assert_eq!(counts.removed, 1);
    }

    #[test]
    fn text_inserted_into_a_cut_preview_is_found() {
        let c = |s: &str| s.chars().collect::<Vec<_>>();
        let body: String = (0..200).map(|i| format!("row {i} ")).collect();
        let old = c(&body[..1000]);
        let with = format!("{}View history {}", &body[..300], &body[300..]);
        let new = c(&with[..1000]);
        let (added, removed) = changed_stretch(&old, &new);
        assert_eq!(added.iter().collect::<String>(), "View history ");
        assert!(removed.is_empty());
        let (added, removed) = changed_stretch(&new, &old);
        assert!(added.is_empty());
        assert_eq!(removed.iter().collect::<String>(), "View history ");
        let (idle, clicked) = (c("idle"), c("clicked in frame"));
        let (added, removed) = changed_stretch(&idle, &clicked);
        assert_eq!((added.len(), removed.len()), (16, 4));
    }

    #[test]
    fn repeated_headings_match_by_count() {
        let url = "http://127.0.0.1:1/a.html";
        let card = json!({"k": "h", "level": 2, "name": "Card"});
        let prev = read("d", url, json!([card, card, card]), "");
        let next = read("d", url, json!([card, card]), "");
        let (text, counts) = format_changes(&prev, &next);
        assert_eq!(counts.removed, 1);
        assert_eq!(text.matches("- ## Card").count(), 1, "{text}");
    }

    #[test]
    fn hostile_results_never_panic() {
        let odd = [
            json!(null),
            json!({"items": [null, 1, {"k": "e"}, {"k": "e", "ref": "e1"}, {"k": "e", "ref": "e1"}]}),
            json!({"doc": 5, "url": "研", "textPreview": "研究".repeat(3000), "counts": {"chars": u64::MAX},
                   "items": [{"k": "e", "ref": "研", "name": "研".repeat(500)}]}),
        ];
        for a in &odd {
            for b in &odd {
                let _ = format_changes(&Snapshot::of(a, None), &Snapshot::of(b, Some("t".into())));
            }
        }
        assert_eq!(was("e1 button \"A\" x", "e1 button \"A\" x"), "e1 button \"A\" x");
        assert_eq!(was("研 a", "b"), "研 a");
    }
}
