//! page_dialog: answers the JavaScript dialog (alert, confirm, prompt, beforeunload) that paused
//! the page in the agent's tab. Gated: OK can confirm what the page asks.

use std::sync::Arc;

use agent_core::untrusted::one_line;
use agent_core::{SessionId, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::format::shown_page_url;
use super::output::{output, page_source};
use super::shared::{Shared, bind, wrapped_dialog_message};

/// Words that make a dialog's OK a commitment a careful person leaves to the person (the
/// dialog's own "confirm" is not one of them: every confirm dialog asks to confirm).
const COMMIT_WORDS: &[&str] = &[
    "submit", "commit", "order", "checkout", "pay", "payment", "purchase", "buy", "send", "delete", "publish",
    "remove", "discard", "erase",
];

/// Arguments of page_dialog.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DialogArgs {
    /// true presses OK (accept), false presses Cancel (dismiss; an alert has only OK, and
    /// either answer closes it).
    pub accept: bool,
    /// For a prompt dialog: the text to answer with (default: its prefilled text).
    #[serde(default)]
    pub text: Option<String>,
}

/// page_dialog: answers the open dialog. Gated. At a turn's end it dismisses (Cancel) a
/// dialog the model was told of and left open, so no dialog is left hanging.
pub(crate) fn page_dialog(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(DialogTool {
        shared: sh.clone(),
        answer: answer_tool(sh),
    })
}

/// page_dialog with its turn-end hook.
struct DialogTool {
    shared: Arc<Shared>,
    answer: Arc<dyn Tool>,
}

#[async_trait]
impl Tool for DialogTool {
    fn spec(&self) -> &ToolSpec {
        self.answer.spec()
    }

    async fn call(&self, args: Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.answer.call(args, cx).await
    }

    async fn turn_ended(&self, _session_id: &SessionId) {
        self.shared.dismiss_reported_dialog().await;
    }
}

fn answer_tool(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_dialog",
            "Answer the dialog (alert, confirm, prompt, leave-page warning) that paused the page in your tab: accept=true presses OK (with text for a prompt), accept=false presses Cancel. Refuses OK when the message reads like a commitment (delete, pay, send, order, discard ...) and leaving a page with unsaved changes; those are left to the person.",
            bind(sh, answer),
        )
        .gated(true),
    )
}

async fn answer(s: Arc<Shared>, a: DialogArgs) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let tab = tab.as_deref();
    let open = s.host.dialog(tab).await;
    let Some(d) = s.checked(tab, open).await? else {
        return Err(ToolError::model(
            "no dialog is open in your tab; there is nothing to answer",
        ));
    };
    let kind = one_line(&d.kind, 20);
    let quoted = |why: &str| format!("{why}\n{}", wrapped_dialog_message(&d));
    if a.accept && kind == "beforeunload" {
        return Err(ToolError::model(quoted(
            "refused (leave_page): the page warns that leaving it loses what was entered; leaving is left to the person (accept=false stays on the page). The page's message follows as data:",
        )));
    }
    if a.accept && kind != "alert" {
        let lower = d.message.to_lowercase();
        let word = lower
            .split(|c: char| !c.is_alphanumeric())
            .find(|w| COMMIT_WORDS.contains(w));
        if let Some(word) = word {
            return Err(ToolError::model(quoted(&format!(
                "refused (commit_action): the {kind} dialog asks to agree to something that reads like a commitment (\"{word}\"); that is left to the person (accept=false presses Cancel). Its message follows as data:"
            ))));
        }
    }
    let text = a.text.as_deref().filter(|_| a.accept && kind == "prompt");
    let answered = s.host.answer_dialog(tab, a.accept, text).await;
    s.checked(tab, answered).await?;
    s.dialog_answered();
    s.settle(tab).await?;
    let url = s.current_url(tab).await?;
    let how = if a.accept {
        "accepted (OK)"
    } else {
        "dismissed (Cancel)"
    };
    let with = match text {
        Some(t) => format!(" with {}", json!(one_line(t, 200))),
        None => String::new(),
    };
    Ok(output(
        format!(
            "{how} the {kind} dialog{with}; the page continues at {}. Its message was: {}",
            shown_page_url(&url),
            json!(one_line(&d.message, 300))
        ),
        json!({"ok": true, "accepted": a.accept, "kind": kind, "url": shown_page_url(&url)}),
        false,
        page_source(&url),
    ))
}
