//! page_scroll: moves the viewport as a person would (a page up or down, to the top or bottom,
//! to an element, or to a text) and reads back where it is and what came into view. Free.

use std::sync::Arc;

use agent_core::untrusted::one_line;
use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::format::{NAME_CHARS, element_line};
use super::output::{output, source_of};
use super::shared::{Shared, bind};
use super::target::{TargetArgs, target_desc};

/// Arguments of page_scroll: exactly one of `direction`, a target (`ref` or `selector`), or
/// `text`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ScrollArgs {
    /// "down" or "up" (about one screen), "top" or "bottom".
    #[serde(default)]
    pub direction: Option<String>,
    /// An element to bring into view.
    #[serde(flatten)]
    pub target: TargetArgs,
    /// Scroll to the first visible element containing this text (case-insensitive).
    #[serde(default)]
    pub text: Option<String>,
}

/// page_scroll: scrolls and reports the new position and what came into view.
pub(crate) fn page_scroll(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "page_scroll",
        "Scroll your tab like a person: direction \"down\"/\"up\" (about one screen) or \"top\"/\"bottom\", or to an element (ref or selector), or to the first visible element containing a text. Answers where the viewport is now (position, at top/bottom) and what came into view, with refs for the other page tools.",
        bind(sh, scroll),
    ))
}

async fn scroll(s: Arc<Shared>, a: ScrollArgs) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let tab = tab.as_deref();
    let mut args = a.target.to_json();
    args["direction"] = json!(a.direction);
    args["text"] = json!(a.text);
    let v = s.op(tab, "scroll", args).await?;
    s.settle(tab).await?;
    let after = s.op(tab, "scrolled", json!({})).await?;
    let before = v.get("before").cloned().unwrap_or(Value::Null);
    let state = after.get("state").cloned().unwrap_or(Value::Null);
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_i64).unwrap_or(0);
    let flag = |k: &str| state.get(k).and_then(Value::as_bool).unwrap_or(false);
    let (y, height, viewport) = (n(&state, "y"), n(&state, "height"), n(&state, "viewport"));
    let moved = y != n(&before, "y");

    let what = match (&a.direction, v.get("target").filter(|t| !t.is_null())) {
        (Some(d), _) => format!("scrolled {}", one_line(d.trim(), 10).to_lowercase()),
        (None, Some(_)) if a.text.is_some() => {
            let matches = n(&v, "matches");
            let of = if matches > 1 {
                format!(" (the first of {matches} visible matches)")
            } else {
                String::new()
            };
            format!("scrolled to {}{of}", target_desc(&v))
        }
        (None, _) => format!("scrolled to {}", target_desc(&v)),
    };
    let mut text = if moved { what } else { format!("{what}: nothing moved") };
    let area = state
        .get("area")
        .and_then(Value::as_str)
        .map(|a| format!(" of the scroll area {}", one_line(a, 80)))
        .unwrap_or_default();
    let edge = match (flag("atTop"), flag("atBottom")) {
        (true, true) => "; the whole page fits: at the top and the bottom",
        (true, false) => "; at the top",
        (false, true) => "; at the bottom",
        (false, false) => "",
    };
    text.push_str(&format!(
        "\nviewport{area}: {y}-{} of {height} px{edge}",
        (y + viewport).min(height)
    ));
    let page_url = after.get("at").and_then(Value::as_str).unwrap_or("");
    let elements = after
        .get("elements")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let more = n(&after, "moreElements");
    let headings: Vec<String> = after
        .get("headings")
        .and_then(Value::as_array)
        .map(|h| {
            h.iter()
                .filter_map(Value::as_str)
                .map(|t| json!(one_line(t, NAME_CHARS)).to_string())
                .collect()
        })
        .unwrap_or_default();
    let block_text = one_line(after.get("text").and_then(Value::as_str).unwrap_or(""), 600);
    if elements.is_empty() && headings.is_empty() && block_text.is_empty() {
        text.push_str("\nnothing new came into view");
    } else {
        text.push_str("\ncame into view:");
        for e in &elements {
            text.push('\n');
            text.push_str(&element_line(e, page_url));
        }
        if more > 0 {
            text.push_str(&format!("\n[{more} more elements: page_read lists them]"));
        }
        if !headings.is_empty() {
            text.push_str(&format!("\nheadings: {}", headings.join(", ")));
        }
        if !block_text.is_empty() {
            text.push_str(&format!("\ntext: {block_text}"));
        }
    }
    let structured = json!({
        "moved": moved, "y": y, "height": height, "viewport": viewport,
        "at_top": flag("atTop"), "at_bottom": flag("atBottom"),
        "came_into_view": elements.len() as i64 + more,
    });
    Ok(output(text, structured, false, source_of(&after)))
}
