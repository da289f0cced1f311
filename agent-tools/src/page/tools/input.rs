//! The tools that need real input from the host: page_hover (free) moves the mouse pointer onto
//! an element, page_press_key (gated: Enter can submit) presses a key or chord. page.js finds
//! and checks the element and reads the page back; the host sends the events.

use std::sync::Arc;

use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::keys::parse;
use super::click::page_changes;
use super::output::{output, source_of};
use super::shared::{Shared, bind};
use super::target::{TargetArgs, capped_target, shown_value, target_desc};

/// Arguments of page_press_key.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PressKeyArgs {
    /// One key or chord: "Enter", "Escape", "Tab", "ArrowDown", "Backspace", "Space", "a",
    /// "Control+A", "Shift+Tab".
    pub key: String,
    /// The element to focus first (a ref or selector); without one the key goes to the element
    /// that has focus.
    #[serde(flatten)]
    pub target: TargetArgs,
}

/// page_hover: points at one element and reports what changed.
pub(crate) fn page_hover(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "page_hover",
        "Move the mouse pointer onto the one element a ref or selector matches, as a person pointing at it (menus that open on hover, tooltips). Refuses hidden and covered targets; reports what changed on the page.",
        bind(sh, hover),
    ))
}

async fn hover(s: Arc<Shared>, a: TargetArgs) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let tab = tab.as_deref();
    let v = s.op(tab, "hoverpoint", a.to_json()).await?;
    let at = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    s.checked(tab, s.host.hover(tab, at("x"), at("y")).await).await?;
    s.settle(tab).await?;
    let after = snapshot_after(&s, tab).await?;
    let before = v.get("before").cloned().unwrap_or(Value::Null);
    let reasons = page_changes(&before, &after);
    let who = target_desc(&v);
    let text = if reasons.is_empty() {
        format!(
            "hovered {who}; nothing observable changed (address, title, fields, expansion, text); a style change or a tooltip drawn by the browser would not show here"
        )
    } else {
        format!("hovered {who}; changed: {}", reasons.join("; "))
    };
    Ok(output(
        text,
        json!({"ok": true, "changed": !reasons.is_empty(), "reasons": reasons, "target": capped_target(&v)}),
        false,
        source_of(&after),
    ))
}

/// The page's snapshot after an action; an action that navigated can replace the document
/// mid-snapshot, so it settles and retries once.
async fn snapshot_after(s: &Shared, tab: Option<&str>) -> Result<Value, ToolError> {
    match s.op(tab, "snapshot", json!({})).await {
        Ok(v) => Ok(v),
        Err(_) => {
            s.settle(tab).await?;
            s.op(tab, "snapshot", json!({})).await
        }
    }
}

/// page_press_key: presses one key or chord and reports what it did. Gated.
pub(crate) fn page_press_key(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_press_key",
            "Press one key or chord (\"Enter\", \"Escape\", \"Tab\", \"Shift+Tab\", \"ArrowDown\", \"Control+A\", \"Backspace\") as real keyboard input, to the element a ref or selector names (focused first) or else to the focused element. For typing text use page_fill. Refuses keys into password fields, Enter where it would submit a form, Enter or Space on commit-like controls, Control+Enter, and browser shortcuts; reports what changed (value, selection, focus, page), or NOT VERIFIED.",
            bind(sh, press_key),
        )
        // Enter and Space can submit, send or confirm.
        .gated(true),
    )
}

async fn press_key(s: Arc<Shared>, a: PressKeyArgs) -> Result<ToolOutput, ToolError> {
    let chord = parse(&a.key).map_err(ToolError::model)?;
    let shown = chord.shown();
    let tab = s.working()?;
    let tab = tab.as_deref();
    let mut args = a.target.to_json();
    args["key"] = json!(chord.key);
    args["chord"] = json!(shown);
    let v = s.op(tab, "keytarget", args).await?;
    let pressed = s.host.press_key(tab, &chord.key, &chord.modifiers).await;
    s.checked(tab, pressed).await?;
    s.settle(tab).await?;
    let target = v.get("target").filter(|t| !t.is_null());
    let target_ref = target.and_then(|t| t.get("ref")).cloned().unwrap_or(Value::Null);
    let after = match s.op(tab, "keyafter", json!({"ref": target_ref})).await {
        Ok(after) => after,
        Err(_) => {
            s.settle(tab).await?;
            s.op(tab, "keyafter", json!({"ref": target_ref})).await?
        }
    };
    let snap = after.get("after").cloned().unwrap_or(Value::Null);
    let before = v.get("before").cloned().unwrap_or(Value::Null);
    let mut reasons = Vec::new();
    let (was, now) = (field(&v), field(&after));
    let value_of = |f: &Value| f.get("value").cloned().unwrap_or(Value::Null);
    if !was.is_null() && !now.is_null() {
        if value_of(&was) != value_of(&now) {
            reasons.push(format!(
                "value {} -> {}",
                shown_value(&value_of(&was)),
                shown_value(&value_of(&now))
            ));
        } else if sel(&was) != sel(&now)
            && let Some((start, end)) = sel(&now)
        {
            let len = value_of(&now).as_str().map(|t| t.chars().count()).unwrap_or(0);
            reasons.push(if start == end {
                format!("cursor at {start} of {len} characters")
            } else {
                format!("selected {} of {len} characters", end - start)
            });
        }
    }
    let ref_of = |t: Option<&Value>| t.and_then(|t| t.get("ref")).and_then(Value::as_str).map(str::to_string);
    let focus = after.get("focus").filter(|f| !f.is_null());
    if ref_of(target) != ref_of(focus) {
        reasons.push(match focus {
            Some(_) => format!("focus moved to {}", target_desc(&json!({"target": focus}))),
            None => "focus left the element (nothing has focus now)".to_string(),
        });
    }
    let value_reported = reasons.iter().any(|r| r.starts_with("value "));
    reasons.extend(
        page_changes(&before, &snap)
            .into_iter()
            .filter(|r| !(value_reported && r == "field values changed")),
    );
    let who = match target {
        Some(_) => target_desc(&v),
        None => "the page (no element had focus)".to_string(),
    };
    let structured_target = target.map(|_| capped_target(&v)).unwrap_or(Value::Null);
    if reasons.is_empty() {
        Ok(output(
            format!(
                "NOT VERIFIED: pressed {shown} in {who}, but nothing observable changed (value, selection, focus, address, title, fields, text). Do not assume it worked."
            ),
            json!({"ok": false, "note": "NOT VERIFIED", "key": shown, "target": structured_target}),
            false,
            source_of(&after),
        ))
    } else {
        Ok(output(
            format!("pressed {shown} in {who}; {}", reasons.join("; ")),
            json!({"ok": true, "key": shown, "reasons": reasons, "target": structured_target}),
            false,
            source_of(&after),
        ))
    }
}

/// The field state page.js read (value and selection), or null.
fn field(v: &Value) -> Value {
    v.get("value").cloned().unwrap_or(Value::Null)
}

fn sel(f: &Value) -> Option<(u64, u64)> {
    Some((f.get("selStart")?.as_u64()?, f.get("selEnd")?.as_u64()?))
}
