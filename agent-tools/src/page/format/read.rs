//! The whole page_read snapshot: the page's facts, then its element and context lines in
//! viewport-first order within the element and character caps, then what was left out and how
//! to page to it.

use agent_core::untrusted::one_line;
use serde_json::Value;

use super::{PageAddress, TITLE_CHARS, cap_chars, context_line, element_line_at, q, shown_page_url};

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
    /// Characters of the page's text shown on the first page of a read.
    pub preview_chars: usize,
}

/// Formats the JSON `read` result of page.js as the compact snapshot. Returns the text (not
/// yet wrapped) and whether anything was cut.
pub fn format_read(v: &Value, view: &ReadView) -> (String, bool) {
    let items = v
        .get("items")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let needle = view.find.as_ref().map(|f| f.to_lowercase());
    let ordered = viewport_first(items, needle.as_deref());
    let in_view = items.iter().filter(|it| in_viewport(it)).count();
    let mut out = facts(v, view);
    out.push_str(&elements_summary(&ordered, in_view, needle.as_deref()));
    // What the header took, plus room for the trailing notes, comes off the element budget.
    let budget = view.max_chars.saturating_sub(out.chars().count() + 400);
    let (body, next) = list_lines(&ordered, view, in_view, text_of(v, "url"), budget);
    out.push_str(&body);
    let cut = next < ordered.len();
    if cut {
        out.push_str(&format!(
            "[{} more lines not shown: call page_read with offset={next}, or find=\"text\" to search]\n",
            ordered.len() - next
        ));
    }
    out.push_str(&left_out_notes(v));
    let (capped, over) = cap_chars(&out, view.max_chars);
    (capped, cut || over)
}

/// A string field of a page.js result ("" when absent or not a string).
fn text_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// One of the page's counts (0 when absent).
fn count(v: &Value, key: &str) -> u64 {
    v.get("counts")
        .and_then(|c| c.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn in_viewport(item: &Value) -> bool {
    item.get("inView").and_then(Value::as_bool) == Some(true)
}

fn is_element(item: &Value) -> bool {
    item.get("k").and_then(Value::as_str) == Some("e")
}

/// The page's facts: address, title, state and counts, and the text preview on the first page
/// of an unfiltered read (paging or searching repeats no preview).
fn facts(v: &Value, view: &ReadView) -> String {
    let c = |k: &str| count(v, k);
    let mut out = format!(
        "url: {}\ntitle: {}\n",
        shown_page_url(text_of(v, "url")),
        q(&one_line(text_of(v, "title"), TITLE_CHARS))
    );
    out.push_str(&format!(
        "state: {}; {} links, {} images, {} headings, {} forms, {} fields, {} iframes, {} shadow roots; {} chars of text\n",
        one_line(text_of(v, "readyState"), 20),
        c("links"),
        c("images"),
        c("headings"),
        c("forms"),
        c("fields"),
        c("iframes"),
        c("shadowRoots"),
        c("chars")
    ));
    let whole = text_of(v, "textPreview");
    if view.offset == 0 && view.find.is_none() && !whole.is_empty() {
        let end = whole
            .char_indices()
            .nth(view.preview_chars)
            .map_or(whole.len(), |(i, _)| i);
        let preview = &whole[..end];
        let shown = preview.chars().count();
        let more = if c("chars") as usize > shown {
            format!(" [preview: first {shown} chars; page_text gives one element's full text]")
        } else {
            String::new()
        };
        out.push_str(&format!("text: {preview}{more}\n"));
    }
    out
}

/// Whether an item's name, value or link contains the (lowercased) needle; everything matches
/// when there is none.
fn matches(item: &Value, needle: Option<&str>) -> bool {
    let Some(n) = needle else { return true };
    ["name", "value", "href"].iter().any(|k| {
        item.get(*k)
            .and_then(Value::as_str)
            .is_some_and(|t| t.to_lowercase().contains(n))
    })
}

/// The items a page_read lists, in the order offsets count: the viewport first, each part in
/// document order, keeping only those that match.
fn viewport_first<'a>(items: &'a [Value], needle: Option<&str>) -> Vec<&'a Value> {
    items
        .iter()
        .filter(|it| in_viewport(it))
        .chain(items.iter().filter(|it| !in_viewport(it)))
        .filter(|it| matches(it, needle))
        .collect()
}

/// The line announcing the element list: how many interactive elements (matching), how many
/// lines are in the viewport, and what refs are for.
fn elements_summary(ordered: &[&Value], in_view: usize, needle: Option<&str>) -> String {
    let elements_total = ordered.iter().filter(|it| is_element(it)).count();
    format!(
        "elements: {elements_total} interactive{} ({in_view} lines in the viewport listed first; refs like e12 go to page_click/page_fill/page_select/page_text)\n",
        needle.map(|n| format!(" matching {}", q(n))).unwrap_or_default()
    )
}

/// Lists element and context lines from `view.offset` until the items, the element cap or the
/// character budget run out. Returns the lines and the offset of the first item not listed.
fn list_lines(ordered: &[&Value], view: &ReadView, in_view: usize, page_url: &str, budget: usize) -> (String, usize) {
    let total = ordered.len();
    let page = PageAddress::new(page_url);
    let mut lines = Lines {
        text: String::new(),
        chars: 0,
        budget,
        held: None,
    };
    let mut shown_elements = 0usize;
    let mut idx = view.offset.min(total);
    let mut crossed_fold = false;
    while idx < total {
        let it = ordered[idx];
        // The fold is marked only when this page started inside the viewport.
        if !in_viewport(it) && !crossed_fold && idx > 0 && view.offset < in_view {
            lines.flush();
            lines.append("-- below/outside the viewport --\n");
            crossed_fold = true;
        }
        if is_element(it) {
            if shown_elements >= view.max_elements {
                break;
            }
            lines.flush();
            if !lines.push(element_line_at(it, &page)) {
                break;
            }
            shown_elements += 1;
        } else if let Some(line) = context_line(it)
            && !lines.push_context(line)
        {
            break;
        }
        idx += 1;
    }
    lines.flush();
    (lines.text, idx)
}

/// The listed lines so far, within a character budget.
struct Lines {
    text: String,
    /// Characters in `text`, kept as lines are added: counting them again for every line made
    /// a large page's listing quadratic.
    chars: usize,
    budget: usize,
    /// The last context line and how many times it repeated, held back until a different line
    /// comes (the same heading in every card collapses into one line).
    held: Option<(String, usize)>,
}

impl Lines {
    /// Whether `line` and its newline fit in what is left of the budget.
    fn fits(&self, line: &str) -> bool {
        self.chars + line.chars().count() < self.budget
    }

    /// Appends text as it is.
    fn append(&mut self, text: &str) {
        self.chars += text.chars().count();
        self.text.push_str(text);
    }

    /// Appends a line if it fits; false when the budget is spent.
    fn push(&mut self, line: String) -> bool {
        if !self.fits(&line) {
            return false;
        }
        self.append(&line);
        self.append("\n");
        true
    }

    /// Holds a context line, or counts it when it repeats the held one; false when the budget
    /// is spent.
    fn push_context(&mut self, line: String) -> bool {
        match &mut self.held {
            Some((prev, n)) if *prev == line => *n += 1,
            _ => {
                self.flush();
                if !self.fits(&line) {
                    return false;
                }
                self.held = Some((line, 1));
            }
        }
        true
    }

    /// Writes the held context line, with its repeat count.
    fn flush(&mut self) {
        if let Some((line, n)) = self.held.take() {
            if n > 1 {
                self.append(&format!("{line} (×{n})\n"));
            } else {
                self.append(&line);
                self.append("\n");
            }
        }
    }
}

/// Counts of what page.js left out altogether: hidden elements and those past its scan limit.
fn left_out_notes(v: &Value) -> String {
    let mut out = String::new();
    let hidden = count(v, "hiddenInteractive");
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
    out
}
