//! page_wait_for: waits, as a person watching the page, for a text to appear (or go), an
//! element to show (or go), the address to change, or the page to settle. Free.

use std::sync::Arc;
use std::time::Duration;

use agent_core::untrusted::one_line;
use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::super::format::shown_page_url;
use super::output::{output, page_source};
use super::shared::{Shared, bind, refused, transient};
use super::target::{TargetArgs, target_desc};

/// How long page_wait_for waits when the model does not say.
const DEFAULT_WAIT_MS: u64 = 5_000;
/// The longest page_wait_for waits.
const MAX_WAIT_MS: u64 = 30_000;
/// How often a condition is checked.
const POLL: Duration = Duration::from_millis(100);

/// Arguments of page_wait_for: exactly one condition (text, ref or selector, url_contains,
/// url_changes, settled).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct WaitArgs {
    /// Wait until the page shows this text (case-insensitive).
    #[serde(default)]
    pub text: Option<String>,
    /// Wait until this element is on the page and visible (a selector: any element it matches).
    #[serde(flatten)]
    pub target: TargetArgs,
    /// Wait until the page's address contains this text.
    #[serde(default)]
    pub url_contains: Option<String>,
    /// Wait until the page's address differs from what it is now.
    #[serde(default)]
    pub url_changes: Option<bool>,
    /// Wait until the page has loaded and stopped changing (network and DOM quiet).
    #[serde(default)]
    pub settled: Option<bool>,
    /// With text, ref or selector: wait until it is gone (hidden or removed) instead.
    #[serde(default)]
    pub gone: Option<bool>,
    /// How long to wait at most, in milliseconds (default 5000, at most 30000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// page_wait_for: waits for one condition and says what happened, or that it timed out.
pub(crate) fn page_wait_for(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "page_wait_for",
        "Wait in your tab for one thing: a text to appear (text), an element to be visible (ref or selector), the address to contain a text (url_contains) or to change (url_changes=true), or the page to finish loading and stop changing (settled=true). gone=true waits for a text or element to disappear instead. timeout_ms defaults to 5000 (at most 30000); says what happened and after how long, or that it timed out.",
        bind(sh, wait_for),
    ))
}

enum Cond {
    Text(String),
    Target,
    UrlContains(String),
    UrlChanges,
    Settled,
}

async fn wait_for(s: Arc<Shared>, a: WaitArgs) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let tab = tab.as_deref();
    let has_target = a.target.reference.as_deref().is_some_and(|r| !r.trim().is_empty())
        || a.target.selector.as_deref().is_some_and(|r| !r.trim().is_empty());
    let mut conds = Vec::new();
    if let Some(t) = &a.text {
        conds.push(Cond::Text(t.clone()));
    }
    if has_target {
        conds.push(Cond::Target);
    }
    if let Some(u) = &a.url_contains {
        conds.push(Cond::UrlContains(u.clone()));
    }
    if a.url_changes == Some(true) {
        conds.push(Cond::UrlChanges);
    }
    if a.settled == Some(true) {
        conds.push(Cond::Settled);
    }
    let cond = match (conds.pop(), conds.is_empty()) {
        (Some(c), true) => c,
        _ => {
            return Err(ToolError::model(
                "refused (bad_wait): give exactly one condition: text, ref or selector, url_contains, url_changes=true or settled=true",
            ));
        }
    };
    let gone = a.gone == Some(true);
    if gone && !matches!(cond, Cond::Text(_) | Cond::Target) {
        return Err(ToolError::model(
            "refused (bad_wait): gone=true goes with text, ref or selector only",
        ));
    }
    let timeout = Duration::from_millis(a.timeout_ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS));
    let start = Instant::now();
    let deadline = start + timeout;
    let secs = |d: Duration| format!("{:.1} s", d.as_secs_f64());

    if let Cond::Settled = cond {
        s.checked(tab, s.host.wait_settled(tab, timeout).await).await?;
        let took = start.elapsed();
        // A host's settle returns at its deadline too: a wait that used it all did not settle.
        if took + Duration::from_millis(50) >= timeout {
            return Err(timed_out(
                &secs(timeout),
                "the page did not settle (it kept loading or changing)",
            ));
        }
        let url = s.current_url(tab).await?;
        return Ok(output(
            format!("the page settled after {}", secs(took)),
            json!({"ok": true, "waited_ms": took.as_millis() as u64, "url": shown_page_url(&url)}),
            false,
            page_source(&url),
        ));
    }

    let mut first_url: Option<String> = None;
    loop {
        let checked = match &cond {
            Cond::Text(t) => check_op(&s, tab, json!({"text": t, "gone": gone})).await?,
            Cond::Target => {
                let mut args = a.target.to_json();
                args["gone"] = json!(gone);
                check_op(&s, tab, args).await?
            }
            Cond::UrlContains(_) | Cond::UrlChanges => match s.host.evaluate(tab, "location.href").await {
                Ok(v) => {
                    let url = v.as_str().unwrap_or("").to_string();
                    let from = first_url.get_or_insert_with(|| url.clone()).clone();
                    let met = match &cond {
                        Cond::UrlContains(part) => url.to_lowercase().contains(&part.to_lowercase()),
                        _ => url != from,
                    };
                    Some(json!({"met": met, "at": url}))
                }
                Err(e) if transient(&e) => match s.dialog_error(tab).await {
                    Some(err) => return Err(err),
                    None => None,
                },
                Err(e) => return Err(s.failed(tab, e)),
            },
            Cond::Settled => None,
        };
        let took = start.elapsed();
        if let Some(v) = checked.filter(|v| v.get("met").and_then(Value::as_bool) == Some(true)) {
            let url = v.get("at").and_then(Value::as_str).unwrap_or("").to_string();
            let when = if took < POLL {
                "already".to_string()
            } else {
                format!("after {}", secs(took))
            };
            let what = match &cond {
                Cond::Text(t) if gone => format!("{} is gone from the page ({when})", quoted(t)),
                Cond::Text(t) => format!("{} is on the page ({when})", quoted(t)),
                Cond::Target => target_met(&a.target, &v, gone, &when),
                _ => format!("the address is {} ({when})", shown_page_url(&url)),
            };
            return Ok(output(
                what,
                json!({"ok": true, "waited_ms": took.as_millis() as u64, "url": shown_page_url(&url)}),
                false,
                page_source(&url),
            ));
        }
        let now = Instant::now();
        if now >= deadline {
            let what = match &cond {
                Cond::Text(t) if gone => format!("{} is still on the page", quoted(t)),
                Cond::Text(t) => format!("{} did not appear", quoted(t)),
                Cond::Target if gone => format!("{} is still visible", given_target(&a.target)),
                Cond::Target => format!("{} did not become visible", given_target(&a.target)),
                Cond::UrlContains(part) => format!("the address never contained {}", quoted(part)),
                _ => "the address did not change".to_string(),
            };
            return Err(timed_out(&secs(timeout), &what));
        }
        tokio::time::sleep(POLL.min(deadline - now)).await;
    }
}

/// One check in the page; `None` while the page is between documents.
async fn check_op(s: &Shared, tab: Option<&str>, args: Value) -> Result<Option<Value>, ToolError> {
    match s.raw_op(tab, "check", args).await {
        Ok(v) => refused(v).map(Some),
        Err(e) if transient(&e) => match s.dialog_error(tab).await {
            Some(err) => Err(err),
            None => Ok(None),
        },
        Err(e) => Err(s.failed(tab, e)),
    }
}

fn timed_out(after: &str, what: &str) -> ToolError {
    ToolError::model(format!(
        "timed out after {after}: {what}. Call page_read to see what the page shows now, or wait again with a longer timeout_ms (at most {MAX_WAIT_MS})."
    ))
}

fn quoted(t: &str) -> String {
    json!(one_line(t, 200)).to_string()
}

/// The target as the model gave it.
fn given_target(t: &TargetArgs) -> String {
    match (&t.reference, &t.selector) {
        (Some(r), _) if !r.trim().is_empty() => one_line(r, 20),
        (_, Some(sel)) => format!("an element matching {}", quoted(sel)),
        _ => "the element".into(),
    }
}

fn target_met(t: &TargetArgs, v: &Value, gone: bool, when: &str) -> String {
    if gone {
        let how = if v.get("removed").and_then(Value::as_bool) == Some(true) {
            "was removed from the page"
        } else {
            "is gone (hidden or removed)"
        };
        return format!("{} {how} ({when})", given_target(t));
    }
    let count = v.get("count").and_then(Value::as_u64).unwrap_or(1);
    let more = if count > 1 {
        format!(" (and {} more visible matches)", count - 1)
    } else {
        String::new()
    };
    format!("{}{more} is visible ({when})", target_desc(v))
}
