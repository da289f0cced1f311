//! Lifecycle hooks at each point of a turn: a model request redacted before it leaves (the
//! compaction summary's too), a response edited, a tool call denied or its arguments
//! rewritten (and checked again), a result rewritten, the turn's end seen; hooks run in
//! order; a failing hook ends the turn with the `hook` error kind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, ErrorKind, HookError, Hooks, ModelRequest, ModelResponse, Outcome, OutcomeStatus, Role, ScriptStep,
    ScriptedProvider, ScriptedReply, SessionId, ToolCallDecision, ToolCallInfo, ToolContext, ToolError, ToolOutput,
    async_trait, tool_fn,
};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// `echo` returns its text, and remembers every text it ran with.
fn echo(ran: Arc<Mutex<Vec<String>>>) -> impl agent_core::Tool {
    tool_fn("echo", "Echoes a text.", move |a: EchoArgs, _cx: ToolContext| {
        let ran = ran.clone();
        async move {
            ran.lock().unwrap().push(a.text.clone());
            Ok::<_, ToolError>(ToolOutput::text(format!("echo: {}", a.text)))
        }
    })
}

/// Calls echo with `text` once, then answers with every tool result it saw.
fn provider(text: &str) -> Arc<ScriptedProvider> {
    let text = text.to_owned();
    Arc::new(
        ScriptedProvider::from_fn(move |req: &ModelRequest| {
            let results: Vec<String> = req
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.text())
                .collect();
            if results.is_empty() {
                ScriptStep::Reply(ScriptedReply::tool_call("echo", json!({ "text": text })))
            } else {
                ScriptStep::Reply(ScriptedReply::text(format!("results: {}", results.join(" | "))))
            }
        })
        .record_requests(),
    )
}

fn all_text(requests: &[ModelRequest]) -> String {
    requests
        .iter()
        .flat_map(|r| r.messages.iter().map(|m| m.text()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn turn(agent: &Agent, message: &str) -> Outcome {
    agent.create_session().await.unwrap().send(message).await
}

/// Replaces `secret` with `[redacted]` in everything the model is sent and every tool result.
struct Redact(&'static str);

#[async_trait]
impl Hooks for Redact {
    async fn before_model_call(&self, _s: &SessionId, request: &mut ModelRequest) -> Result<(), HookError> {
        for m in &mut request.messages {
            for part in &mut m.content {
                if let agent_core::ContentPart::Text { text } = part {
                    *text = text.replace(self.0, "[redacted]");
                }
            }
        }
        Ok(())
    }

    async fn after_tool_call(
        &self,
        _call: ToolCallInfo<'_>,
        result: &mut Result<ToolOutput, ToolError>,
    ) -> Result<(), HookError> {
        if let Ok(out) = result {
            *out = ToolOutput::text(out.text_content().replace(self.0, "[redacted]"));
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_redacting_hook_keeps_a_secret_from_the_model() {
    let ran = Arc::default();
    let p = provider("the key is sk-SECRET");
    let agent = Agent::builder()
        .provider_arc(p.clone())
        .tool(echo(ran))
        .hooks(Redact("sk-SECRET"))
        .build()
        .unwrap();
    let outcome = turn(&agent, "use sk-SECRET please").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    let sent = all_text(&p.requests());
    assert!(!sent.contains("sk-SECRET"), "{sent}");
    assert!(
        sent.contains("use [redacted] please") && sent.contains("echo: the key is [redacted]"),
        "{sent}"
    );
}

/// Decides each echo call by its text: "deny" is denied, "rewrite" becomes "rewritten", "bad"
/// becomes arguments the schema refuses; records the turn ends it sees.
#[derive(Default)]
struct Decide {
    ended: Mutex<Vec<OutcomeStatus>>,
}

#[async_trait]
impl Hooks for Decide {
    async fn before_tool_call(&self, call: ToolCallInfo<'_>) -> Result<ToolCallDecision, HookError> {
        assert_eq!(call.tool, "echo");
        Ok(match call.arguments["text"].as_str().unwrap_or("") {
            "deny" => ToolCallDecision::Deny {
                reason: "echo is not for that".into(),
            },
            "rewrite" => ToolCallDecision::Rewrite {
                arguments: json!({"text": "rewritten"}),
            },
            "bad" => ToolCallDecision::Rewrite {
                arguments: json!({"text": 7}),
            },
            "explode" => return Err(HookError::new("the policy server is down")),
            _ => ToolCallDecision::Allow,
        })
    }

    async fn turn_ended(&self, _s: &SessionId, outcome: &Outcome) -> Result<(), HookError> {
        self.ended.lock().unwrap().push(outcome.status);
        Ok(())
    }
}

#[tokio::test]
async fn before_tool_call_denies_rewrites_and_rewritten_arguments_are_checked_again() {
    for (text, ran_with, result) in [
        (
            "deny",
            None,
            "denied by the host: echo is not for that. echo did not run.",
        ),
        ("rewrite", Some("rewritten"), "echo: rewritten"),
        (
            "bad",
            None,
            "the host rewrote the arguments of echo into ones its schema refuses",
        ),
        ("fine", Some("fine"), "echo: fine"),
    ] {
        let ran: Arc<Mutex<Vec<String>>> = Arc::default();
        let hooks = Arc::new(Decide::default());
        let agent = Agent::builder()
            .provider_arc(provider(text))
            .tool(echo(ran.clone()))
            .hooks_arc(hooks.clone())
            .build()
            .unwrap();
        let outcome = turn(&agent, "go").await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{text}: {outcome:?}");
        assert!(
            outcome.final_text.as_deref().unwrap().contains(result),
            "{text}: {outcome:?}"
        );
        assert_eq!(ran.lock().unwrap().first().map(String::as_str), ran_with, "{text}");
        assert_eq!(*hooks.ended.lock().unwrap(), [OutcomeStatus::Done]);
    }
}

#[tokio::test]
async fn a_failing_hook_ends_the_turn_with_the_hook_kind() {
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let hooks = Arc::new(Decide::default());
    let agent = Agent::builder()
        .provider_arc(provider("explode"))
        .tool(echo(ran.clone()))
        .hooks_arc(hooks.clone())
        .build()
        .unwrap();
    let outcome = turn(&agent, "go").await;
    assert_eq!(outcome.status, OutcomeStatus::Error);
    assert_eq!(outcome.error_kind, Some(ErrorKind::Hook));
    assert_eq!(
        outcome.error.as_deref(),
        Some("the host's before_tool_call hook failed: the policy server is down")
    );
    assert!(ran.lock().unwrap().is_empty(), "the call did not run");
    assert_eq!(
        *hooks.ended.lock().unwrap(),
        [OutcomeStatus::Error],
        "turn_ended sees the failed turn"
    );
    assert_eq!(serde_json::to_value(ErrorKind::Hook).unwrap(), json!("hook"));
}

/// Appends its name to model answers and tool results, so the order shows.
struct Tag(&'static str);

#[async_trait]
impl Hooks for Tag {
    async fn after_model_call(&self, _s: &SessionId, response: &mut ModelResponse) -> Result<(), HookError> {
        if response.message.tool_calls.is_empty() {
            let text = format!("{} +{}", response.message.text(), self.0);
            response.message.content = vec![agent_core::ContentPart::text(text)];
        }
        Ok(())
    }

    async fn after_tool_call(
        &self,
        call: ToolCallInfo<'_>,
        result: &mut Result<ToolOutput, ToolError>,
    ) -> Result<(), HookError> {
        assert_eq!(call.arguments, &json!({"text": "x"}));
        if let Ok(out) = result {
            *out = ToolOutput::text(format!("{} +{}", out.text_content(), self.0));
        }
        Ok(())
    }

    async fn turn_ended(&self, _s: &SessionId, _o: &Outcome) -> Result<(), HookError> {
        if self.0 == "late" {
            return Err(HookError::new("audit log unavailable"));
        }
        Ok(())
    }
}

#[tokio::test]
async fn hooks_run_in_order_and_a_failing_turn_end_hook_fails_the_turn() {
    let agent = Agent::builder()
        .provider_arc(provider("x"))
        .tool(echo(Arc::default()))
        .hooks(Tag("first"))
        .hooks(Tag("second"))
        .build()
        .unwrap();
    let outcome = turn(&agent, "go").await;
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("results: echo: x +first +second +first +second")
    );

    let agent = Agent::builder()
        .provider_arc(provider("x"))
        .tool(echo(Arc::default()))
        .hooks(Tag("late"))
        .build()
        .unwrap();
    let outcome = turn(&agent, "go").await;
    assert_eq!(outcome.status, OutcomeStatus::Error);
    assert_eq!(outcome.error_kind, Some(ErrorKind::Hook));
    assert!(
        outcome
            .error
            .unwrap()
            .contains("turn_ended hook failed: audit log unavailable")
    );
}

/// A tool that fails fatally stays fatal through the after_tool_call hooks.
#[tokio::test]
async fn a_fatal_tool_error_stays_fatal_through_the_hooks() {
    let fatal = tool_fn("echo", "Fails.", |_: EchoArgs, _cx: ToolContext| async {
        Err::<ToolOutput, _>(ToolError::fatal("the disk is gone"))
    });
    let agent = Agent::builder()
        .provider_arc(provider("x"))
        .tool(fatal)
        .hooks(Redact("nothing"))
        .build()
        .unwrap();
    let outcome = turn(&agent, "go").await;
    assert_eq!(outcome.error_kind, Some(ErrorKind::ToolFatal), "{outcome:?}");
}
