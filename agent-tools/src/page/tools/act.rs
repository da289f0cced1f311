//! The tools that change a page by loading or typing: page_navigate, page_fill and page_select.
//! All are gated. (page_click, with its change report, is in `click`.)

use std::sync::Arc;

use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::format::shown_page_url;
use super::output::{output, page_source, source_of};
use super::shared::{Shared, bind};
use super::target::{TargetArgs, capped_target, shown_value, target_desc};

/// Arguments of page_navigate.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NavigateArgs {
    /// An address or a search phrase, as typed in an address bar.
    pub url: String,
}

/// Arguments of page_fill.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FillArgs {
    /// The field.
    #[serde(flatten)]
    pub target: TargetArgs,
    /// The text to type.
    pub text: String,
}

/// Arguments of page_select.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SelectArgs {
    /// The `<select>`.
    #[serde(flatten)]
    pub target: TargetArgs,
    /// The option's value or visible label (case-insensitive).
    pub value: String,
}

/// page_navigate: loads an address or a search in the agent's tab.
pub(crate) fn page_navigate(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_navigate",
            "Load an address or a search phrase in your tab, as the address bar would; returns the final URL after redirects. javascript:, file:, data: and other-app schemes are refused.",
            bind(sh, navigate),
        )
        .gated(true),
    )
}

async fn navigate(s: Arc<Shared>, a: NavigateArgs) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let (url, kind) = s.resolve_address(&a.url).await?;
    s.navigate(tab.as_deref(), &url).await?;
    s.settle(tab.as_deref()).await?;
    let final_url = s.current_url(tab.as_deref()).await?;
    let shown = shown_page_url(&final_url);
    Ok(output(
        format!("loaded {shown}{}", if kind == "search" { " (search)" } else { "" }),
        json!({"ok": true, "kind": kind, "url": shown}),
        false,
        page_source(&final_url),
    ))
}

/// page_fill: types into one text field and reads it back.
pub(crate) fn page_fill(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_fill",
            "Type text into the one text field a ref or selector matches, then read it back. Refuses password, disabled, read-only, hidden and covered fields, non-text controls, and text longer than the field's maxlength; reports MISMATCH when the page changed the value.",
            bind(sh, fill),
        )
        .gated(true),
    )
}

async fn fill(s: Arc<Shared>, a: FillArgs) -> Result<ToolOutput, ToolError> {
    let mut args = a.target.to_json();
    args["text"] = json!(a.text);
    let v = s.op(s.working()?.as_deref(), "fill", args).await?;
    let who = target_desc(&v);
    let expected = shown_value(v.get("expected").unwrap_or(&Value::Null));
    let actual = shown_value(v.get("actual").unwrap_or(&Value::Null));
    if v.get("ok").and_then(Value::as_bool) == Some(true) {
        Ok(output(
            format!("filled {who} with {expected}; read back the same"),
            json!({"ok": true, "target": capped_target(&v), "value": actual}),
            false,
            source_of(&v),
        ))
    } else {
        Ok(output(
            format!(
                "MISMATCH: filled {who} with {expected}, but the field now holds {actual} (the page rewrote or dropped it)"
            ),
            json!({"ok": false, "note": "MISMATCH", "expected": expected, "actual": actual, "target": capped_target(&v)}),
            false,
            source_of(&v),
        ))
    }
}

/// page_select: chooses an option of one `<select>` and reads it back.
pub(crate) fn page_select(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_select",
            "Choose an option of the one <select> a ref or selector matches, by value or by label (case-insensitive), then read it back.",
            bind(sh, select),
        )
        .gated(true),
    )
}

async fn select(s: Arc<Shared>, a: SelectArgs) -> Result<ToolOutput, ToolError> {
    let mut args = a.target.to_json();
    args["value"] = json!(a.value);
    let v = s.op(s.working()?.as_deref(), "select", args).await?;
    let who = target_desc(&v);
    let expected = shown_value(v.get("expected").unwrap_or(&Value::Null));
    let actual = shown_value(v.get("actual").unwrap_or(&Value::Null));
    if v.get("ok").and_then(Value::as_bool) == Some(true) {
        Ok(output(
            format!("selected {expected} in {who}; read back the same"),
            json!({"ok": true, "target": capped_target(&v), "value": actual}),
            false,
            source_of(&v),
        ))
    } else {
        Ok(output(
            format!("MISMATCH: selected {expected} in {who}, but it now shows {actual}"),
            json!({"ok": false, "note": "MISMATCH", "expected": expected, "actual": actual}),
            false,
            source_of(&v),
        ))
    }
}
