//! `send_to_tab` for durable turns: a message from one session to another goes through
//! Restate's ingress as a `turn` of the target session's object, so it reaches that session
//! on whichever replica runs it, and is queued once however often the sending call runs.

use agent_core::{SessionId, Tool, ToolContext, ToolError, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::wire::TurnRequest;

/// Arguments of the durable `send_to_tab`.
#[derive(Deserialize, JsonSchema)]
struct SendArgs {
    /// The target session's id (a tab's agent session).
    tab_id: String,
    /// The message to deliver to that session's agent.
    message: String,
}

/// The `send_to_tab` tool of a durable agent: queues `message` as a turn of session `tab_id`'s
/// [`AgentSession`](crate::AgentSession) through the Restate ingress at `ingress_url`
/// (`POST {ingress}/AgentSession/{tab_id}/turn/send`), from the calling session (the turn
/// it starts has the sender as its origin, as `relay` does). Never waits for that turn.
///
/// Exactly once: the request's idempotency key and run id are the sending session and call
/// id, so a call that runs again (its replica died before the step was journaled) is the same
/// invocation, which Restate accepts once.
pub fn send_to_session_tool(ingress_url: impl Into<String>) -> impl Tool {
    let ingress = ingress_url.into().trim_end_matches('/').to_owned();
    let http = reqwest::Client::new();
    tool_fn(
        agent_core::tabs::SEND_TO_TAB,
        "Sends a message to another tab's agent. It starts a turn there and does not wait for its answer.",
        move |args: SendArgs, cx: ToolContext| {
            let (http, ingress) = (http.clone(), ingress.clone());
            async move {
                let target = SessionId::parse(&args.tab_id).map_err(|e| {
                    ToolError::model(format!("{:?} is not a session id ({e}); nothing was sent", args.tab_id))
                })?;
                let key = format!("{}:{}", cx.session_id, cx.call_id);
                let body = TurnRequest {
                    text: args.message,
                    run_id: Some(key.clone()),
                    from_session: Some(cx.session_id.to_string()),
                };
                let sent = http
                    .post(format!("{ingress}/AgentSession/{target}/turn/send"))
                    .header("idempotency-key", &key)
                    .json(&body)
                    .send()
                    .await
                    .map_err(|e| ToolError::model(format!("could not reach the message queue ({e}); try again")))?;
                let status = sent.status();
                if !status.is_success() {
                    let detail = sent.text().await.unwrap_or_default();
                    return Err(ToolError::model(format!(
                        "the message queue refused the message (HTTP {status}: {}); nothing was sent",
                        detail.chars().take(200).collect::<String>()
                    )));
                }
                Ok::<_, ToolError>(format!(
                    "sent to {target}; its agent answers in its own turn (run {key})"
                ))
            }
        },
    )
}
