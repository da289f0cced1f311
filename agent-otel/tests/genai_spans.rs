//! agent-core's spans as OpenTelemetry sees them (through the in-memory exporter): names,
//! nesting and the GenAI attributes of a turn with a tool call, a provider error, tool
//! failures, opted-in contents and a sub-agent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use agent_core::{
    Agent, AgentConfig, OutcomeStatus, ProviderError, ScriptStep, ScriptedProvider, ScriptedReply, ToolContext,
    ToolError, Usage, agent_tool, tool_fn,
};
use opentelemetry::trace::{SpanKind, Status};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::{all, attr, is_child_of, is_root, names, one, spans_of};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

fn echo() -> impl agent_core::Tool {
    tool_fn(
        "echo",
        "Repeats the text.",
        |a: EchoArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(a.text) },
    )
}

fn usage(input: u64, output: u64, cached: u64, written: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cached_input_tokens: cached,
        cache_write_tokens: written,
        ..Usage::default()
    }
}

fn named(name: &str) -> AgentConfig {
    AgentConfig {
        agent_name: Some(name.to_owned()),
        ..AgentConfig::default()
    }
}

#[tokio::test]
async fn a_turn_with_a_tool_call_is_one_invoke_agent_span_over_its_chat_and_execute_tool_spans() {
    let mut call = ScriptedReply::tool_call("echo", json!({"text": "hi"}));
    call.usage = Some(usage(120, 8, 100, 20));
    let mut answer = ScriptedReply::text("it said hi");
    answer.usage = Some(usage(140, 4, 0, 0));
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([call.into(), answer.into()]))
        .tool(echo())
        .config(named("helper"))
        .build()
        .unwrap();
    let ((outcome, session_id), spans) = spans_of(async {
        let session = agent.create_session().await.unwrap();
        (session.send("say hi").await, session.id().to_string())
    })
    .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(names(&spans).len(), 4, "{:?}", names(&spans));

    let turn = one(&spans, "invoke_agent helper");
    assert!(is_root(turn));
    assert_eq!(turn.span_kind, SpanKind::Internal);
    assert_eq!(attr(turn, "gen_ai.operation.name").as_deref(), Some("invoke_agent"));
    assert_eq!(attr(turn, "gen_ai.agent.name").as_deref(), Some("helper"));
    assert_eq!(attr(turn, "gen_ai.provider.name").as_deref(), Some("scripted"));
    assert_eq!(attr(turn, "gen_ai.conversation.id"), Some(session_id.clone()));
    assert_eq!(attr(turn, "gen_ai.usage.input_tokens").as_deref(), Some("260"));
    assert_eq!(attr(turn, "gen_ai.usage.output_tokens").as_deref(), Some("12"));
    assert_eq!(attr(turn, "agent_core.outcome.status").as_deref(), Some("done"));
    assert_eq!(attr(turn, "error.type"), None);
    assert_eq!(turn.status, Status::Unset);

    let chats = all(&spans, "chat scripted");
    assert_eq!(chats.len(), 2);
    for chat in &chats {
        assert!(is_child_of(chat, turn));
        assert_eq!(chat.span_kind, SpanKind::Client);
        assert_eq!(attr(chat, "gen_ai.operation.name").as_deref(), Some("chat"));
        assert_eq!(attr(chat, "gen_ai.provider.name").as_deref(), Some("scripted"));
        assert_eq!(attr(chat, "gen_ai.request.model").as_deref(), Some("scripted"));
        assert_eq!(attr(chat, "gen_ai.response.model").as_deref(), Some("scripted"));
        assert_eq!(attr(chat, "gen_ai.conversation.id"), Some(session_id.clone()));
        // No contents unless the host opts in.
        assert_eq!(attr(chat, "gen_ai.input.messages"), None);
        assert_eq!(attr(chat, "gen_ai.output.messages"), None);
    }
    let (first, second) = (chats[0], chats[1]);
    assert!(first.end_time <= second.start_time, "the calls ran one after the other");
    assert_eq!(
        attr(first, "gen_ai.response.finish_reasons").as_deref(),
        Some(r#"["tool_calls"]"#)
    );
    assert_eq!(attr(first, "gen_ai.usage.input_tokens").as_deref(), Some("120"));
    assert_eq!(attr(first, "gen_ai.usage.output_tokens").as_deref(), Some("8"));
    assert_eq!(
        attr(first, "gen_ai.usage.cache_read.input_tokens").as_deref(),
        Some("100")
    );
    assert_eq!(
        attr(first, "gen_ai.usage.cache_creation.input_tokens").as_deref(),
        Some("20")
    );
    assert_eq!(
        attr(second, "gen_ai.response.finish_reasons").as_deref(),
        Some(r#"["stop"]"#)
    );

    let tool = one(&spans, "execute_tool echo");
    assert!(is_child_of(tool, turn));
    assert_eq!(tool.span_kind, SpanKind::Internal);
    assert!(first.end_time <= tool.start_time && tool.end_time <= second.start_time);
    assert_eq!(attr(tool, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(attr(tool, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(attr(tool, "gen_ai.tool.call.id").as_deref(), Some("call_1"));
    assert_eq!(attr(tool, "gen_ai.tool.type").as_deref(), Some("function"));
    assert_eq!(
        attr(tool, "gen_ai.tool.description").as_deref(),
        Some("Repeats the text.")
    );
    assert_eq!(attr(tool, "gen_ai.tool.call.arguments"), None);
    assert_eq!(attr(tool, "error.type"), None);
}

#[tokio::test]
async fn a_provider_error_is_the_error_type_of_the_chat_span_and_of_the_turn() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptStep::Error(ProviderError::Timeout(
            "no answer".into(),
        ))]))
        .build()
        .unwrap();
    let (outcome, spans) = spans_of(async { agent.create_session().await.unwrap().send("hello").await }).await;
    assert_eq!(outcome.status, OutcomeStatus::Error);

    // Without an agent name the span is named after the operation alone.
    let turn = one(&spans, "invoke_agent");
    let chat = one(&spans, "chat scripted");
    assert!(is_child_of(chat, turn));
    for span in [chat, turn] {
        assert_eq!(attr(span, "error.type").as_deref(), Some("provider.timeout"));
        assert!(matches!(span.status, Status::Error { .. }), "{:?}", span.status);
    }
    assert_eq!(attr(chat, "gen_ai.response.model"), None);
    assert_eq!(attr(turn, "agent_core.outcome.status").as_deref(), Some("error"));
}

#[tokio::test]
async fn a_failed_tool_call_marks_its_span_and_a_fatal_one_the_turn() {
    let flaky = tool_fn("flaky", "Fails.", |_a: EchoArgs, _cx: ToolContext| async move {
        Err::<String, _>(ToolError::model("the disk is full"))
    });
    let broken = tool_fn(
        "broken",
        "Fails for good.",
        |_a: EchoArgs, _cx: ToolContext| async move { Err::<String, _>(ToolError::fatal("the host is gone")) },
    );
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("flaky", json!({"text": "a"})).into(),
            ScriptedReply::tool_call("broken", json!({"text": "b"})).into(),
        ]))
        .tool(flaky)
        .tool(broken)
        .build()
        .unwrap();
    let (outcome, spans) = spans_of(async { agent.create_session().await.unwrap().send("go").await }).await;
    assert_eq!(outcome.status, OutcomeStatus::Error, "{outcome:?}");

    let turn = one(&spans, "invoke_agent");
    let flaky = one(&spans, "execute_tool flaky");
    let broken = one(&spans, "execute_tool broken");
    assert!(is_child_of(flaky, turn) && is_child_of(broken, turn));
    assert_eq!(attr(flaky, "error.type").as_deref(), Some("tool.error"));
    assert!(matches!(flaky.status, Status::Error { .. }));
    assert_eq!(attr(broken, "error.type").as_deref(), Some("tool.fatal"));
    // A tool error the model reads does not fail the turn; a fatal one does.
    assert_eq!(attr(turn, "error.type").as_deref(), Some("tool.fatal"));
    for chat in all(&spans, "chat scripted") {
        assert_eq!(attr(chat, "error.type"), None);
    }
}

#[tokio::test]
async fn contents_are_in_the_spans_only_when_the_host_opts_in() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("echo", json!({"text": "secret"})).into(),
            ScriptedReply::text("done").into(),
        ]))
        .tool(echo())
        .system_prompt("Be brief.")
        .config(AgentConfig {
            trace_content: true,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let (_, spans) = spans_of(async { agent.create_session().await.unwrap().send("repeat it").await }).await;
    let chats = all(&spans, "chat scripted");
    let input: serde_json::Value = serde_json::from_str(&attr(chats[0], "gen_ai.input.messages").unwrap()).unwrap();
    assert_eq!(
        input,
        json!([{"role": "user", "parts": [{"type": "text", "content": "repeat it"}]}])
    );
    let system: serde_json::Value =
        serde_json::from_str(&attr(chats[0], "gen_ai.system_instructions").unwrap()).unwrap();
    assert_eq!(system, json!([{"type": "text", "content": "Be brief."}]));
    let output: serde_json::Value = serde_json::from_str(&attr(chats[0], "gen_ai.output.messages").unwrap()).unwrap();
    assert_eq!(output[0]["role"], "assistant");
    assert_eq!(output[0]["finish_reason"], "tool_calls");
    assert_eq!(
        output[0]["parts"][0],
        json!({"type": "tool_call", "id": "call_1", "name": "echo", "arguments": {"text": "secret"}})
    );
    let second: serde_json::Value = serde_json::from_str(&attr(chats[1], "gen_ai.input.messages").unwrap()).unwrap();
    assert_eq!(
        second[2],
        json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "result": "secret"}]})
    );
    let tool = one(&spans, "execute_tool echo");
    assert_eq!(
        attr(tool, "gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"text":"secret"}"#)
    );
    assert_eq!(attr(tool, "gen_ai.tool.call.result").as_deref(), Some("secret"));
}

#[tokio::test]
async fn a_sub_agents_turn_nests_under_the_execute_tool_span_that_started_it() {
    let researcher = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text("Paris").into()]))
        .config(named("researcher"))
        .build()
        .unwrap();
    let lead = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("ask_researcher", json!({"task": "capital of France?"})).into(),
            ScriptedReply::text("Paris it is").into(),
        ]))
        .tool(agent_tool("ask_researcher", "Ask the researcher.", researcher))
        .config(named("lead"))
        .build()
        .unwrap();
    let (outcome, spans) = spans_of(async { lead.create_session().await.unwrap().send("go").await }).await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");

    let lead_turn = one(&spans, "invoke_agent lead");
    let call = one(&spans, "execute_tool ask_researcher");
    let sub_turn = one(&spans, "invoke_agent researcher");
    assert!(is_root(lead_turn));
    assert!(is_child_of(call, lead_turn));
    assert!(is_child_of(sub_turn, call));
    let sub_chats: Vec<_> = all(&spans, "chat scripted")
        .into_iter()
        .filter(|c| is_child_of(c, sub_turn))
        .collect();
    assert_eq!(sub_chats.len(), 1);
    assert_ne!(
        attr(sub_turn, "gen_ai.conversation.id"),
        attr(lead_turn, "gen_ai.conversation.id"),
        "the sub-agent runs in a session of its own"
    );
}

#[tokio::test]
async fn a_compaction_summary_is_a_chat_span_of_the_turn_that_asked_for_it() {
    // Summary requests answer with 5 output tokens, every other call with 1: the summary's
    // span is the one chat span with 5.
    let provider = ScriptedProvider::from_fn(|request: &agent_core::ModelRequest| {
        let summary = request
            .system
            .as_deref()
            .is_some_and(|s| s.starts_with("You compact conversations"));
        let (text, tokens) = if summary {
            ("Earlier: long notes.", 5)
        } else {
            ("ok", 1)
        };
        ScriptedReply::text(text).with_usage(usage(0, tokens, 0, 0)).into()
    });
    let agent = Agent::builder()
        .provider(provider)
        .config(AgentConfig {
            compaction: agent_core::CompactionConfig {
                max_input_tokens: Some(1_000),
                summary_max_tokens: 100,
                ..agent_core::CompactionConfig::default()
            },
            ..named("notes")
        })
        .build()
        .unwrap();
    let (outcomes, spans) = spans_of(async {
        let session = agent.create_session().await.unwrap();
        let mut outcomes = Vec::new();
        for n in 0..6 {
            outcomes.push(
                session
                    .send(format!("note {n}: {}", "words to keep. ".repeat(40)))
                    .await,
            );
        }
        outcomes
    })
    .await;
    assert!(outcomes.iter().all(|o| o.status == OutcomeStatus::Done));

    let chats = all(&spans, "chat scripted");
    let summaries: Vec<_> = chats
        .iter()
        .filter(|c| attr(c, "gen_ai.usage.output_tokens").as_deref() == Some("5"))
        .collect();
    assert_eq!(summaries.len(), 1, "one summary in six turns");
    let summary = summaries[0];
    assert_eq!(attr(summary, "gen_ai.request.max_tokens").as_deref(), Some("100"));
    let turn = all(&spans, "invoke_agent notes")
        .into_iter()
        .find(|t| is_child_of(summary, t))
        .expect("the summary nests under a turn");
    // The turn counts the summary's tokens with its own call's.
    assert_eq!(attr(turn, "gen_ai.usage.output_tokens").as_deref(), Some("6"));
}
