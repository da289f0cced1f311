//! page_back and page_forward: the browser's history buttons in the agent's tab. Gated like
//! page_navigate (they load another page).

use std::sync::Arc;
use std::time::Duration;

use agent_core::untrusted::one_line;
use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::super::format::{TITLE_CHARS, shown_page_url};
use super::output::{output, page_source};
use super::shared::{Shared, bind, transient};
use super::tabs::NoArgs;

/// How long a history step may take to show when the page says there may be nothing there
/// (the Navigation API sees only same-origin entries, so it can say no wrongly).
const UNSURE_WAIT: Duration = Duration::from_millis(1_000);

/// page_back: one step back in the tab's history. Gated.
pub(crate) fn page_back(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_back",
            "Go back one page in your tab's history, like the browser's back button; returns the address it arrived at, or says there is no earlier page.",
            bind(sh, |s, _a: NoArgs| go(s, Step::Back)),
        )
        .gated(true),
    )
}

/// page_forward: one step forward in the tab's history. Gated.
pub(crate) fn page_forward(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_forward",
            "Go forward one page in your tab's history, like the browser's forward button; returns the address it arrived at, or says there is no later page.",
            bind(sh, |s, _a: NoArgs| go(s, Step::Forward)),
        )
        .gated(true),
    )
}

#[derive(Clone, Copy)]
enum Step {
    Back,
    Forward,
}

async fn go(s: Arc<Shared>, step: Step) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let tab = tab.as_deref();
    let (call, can, word, side) = match step {
        Step::Back => ("back", "canGoBack", "back", "earlier"),
        Step::Forward => ("forward", "canGoForward", "forward", "later"),
    };
    // A mark on the window tells a new document (or one restored from the back-forward cache)
    // from the same one at the same address.
    let mark = {
        use rand::Rng;
        format!("{:016x}", rand::rng().random::<u64>())
    };
    let probe = format!(
        "(() => {{ try {{ Object.defineProperty(window, '__agentToolsHistory', {{ value: {mark:?}, configurable: true }}); }} catch (_) {{}} const n = window.navigation; return {{ url: location.href, length: history.length, can: n && typeof n.{can} === 'boolean' ? n.{can} : null }}; }})()"
    );
    let v = s.checked(tab, s.host.evaluate(tab, &probe).await).await?;
    let from = v.get("url").and_then(Value::as_str).unwrap_or("").to_string();
    let nothing = |s_url: &str| {
        let shown = shown_page_url(s_url);
        Ok(output(
            format!("nothing moved: there is no {side} page in this tab's history (still at {shown})"),
            json!({"ok": false, "moved": false, "url": shown}),
            false,
            page_source(s_url),
        ))
    };
    if v.get("length").and_then(Value::as_u64).unwrap_or(0) <= 1 {
        return nothing(&from);
    }
    let sure = v.get("can").and_then(Value::as_bool) == Some(true);
    let stepped = s.host.evaluate(tab, &format!("(history.{call}(), true)")).await;
    s.checked(tab, stepped).await?;
    let wait = if sure { s.cfg.settle_timeout } else { UNSURE_WAIT };
    let deadline = Instant::now() + wait;
    let check = format!("[location.href, window.__agentToolsHistory === {mark:?}]");
    loop {
        match s.host.evaluate(tab, &check).await {
            Ok(v) => {
                let url = v.get(0).and_then(Value::as_str).unwrap_or("");
                let same_doc = v.get(1).and_then(Value::as_bool) == Some(true);
                if url != from || !same_doc {
                    break;
                }
            }
            // The old document is going away.
            Err(e) if transient(&e) => {
                if let Some(err) = s.dialog_error(tab).await {
                    return Err(err);
                }
            }
            Err(e) => return Err(s.failed(tab, e)),
        }
        if Instant::now() >= deadline {
            return nothing(&from);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.settle(tab).await?;
    let url = s.current_url(tab).await?;
    let title = s
        .host
        .evaluate(tab, "document.title")
        .await
        .ok()
        .and_then(|t| t.as_str().map(|t| one_line(t, TITLE_CHARS)))
        .unwrap_or_default();
    let shown = shown_page_url(&url);
    Ok(output(
        format!("went {word} to {shown} (title {})", json!(title)),
        json!({"ok": true, "moved": true, "url": shown, "title": title}),
        false,
        page_source(&url),
    ))
}
