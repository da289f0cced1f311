//! The mock server speaks the OpenAI-compatible wire well enough for the real adapter and the
//! agent loop, in SSE and JSON, and counts tool results after the last user message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use agent_bench::{MockConfig, MockLlm};
use agent_core::{Agent, OutcomeStatus, ToolContext, ToolError, tool_fn};
use agent_providers::{OpenAiCompatible, ProviderConfig, ProviderKind};

async fn start(config: MockConfig) -> (String, std::sync::Arc<MockLlm>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = MockLlm::new(config);
    tokio::spawn(server.clone().serve(listener));
    (url, server)
}

#[tokio::test]
async fn the_agent_runs_the_scripted_steps_in_both_modes() {
    for streaming in [true, false] {
        let (url, server) = start(MockConfig {
            tool_steps: 3,
            calls_per_step: 2,
            arguments: r#"{"note":"olá \"quoted\""}"#.into(),
            ..MockConfig::default()
        })
        .await;
        let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, "mock", "")
            .with_base_url(url)
            .with_streaming(streaming);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let step = tool_fn("step", "One step.", move |args: serde_json::Value, _cx: ToolContext| {
            let mut seen = log.lock().unwrap();
            seen.push(args);
            // A result of its own for each call: the mock repeats one call, and the same
            // answer each time would (rightly) trip the loop guard.
            let n = seen.len();
            async move { Ok::<_, ToolError>(format!("ok {n}")) }
        });
        let agent = Agent::builder()
            .provider(OpenAiCompatible::new(&config).unwrap())
            .tool(step)
            .build()
            .unwrap();
        let session = agent.create_session().await.unwrap();
        let outcome = session.send("go").await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
        assert_eq!(outcome.tool_calls, 6);
        assert_eq!(outcome.iterations, 4);
        assert_eq!(outcome.final_text.as_deref(), Some("All steps are done."));
        assert_eq!(server.requests(), 4);
        {
            let seen = seen.lock().unwrap();
            assert_eq!(seen.len(), 6);
            assert!(seen.iter().all(|a| a["note"] == "olá \"quoted\""), "{seen:?}");
        }
        // A second user message starts the count again.
        let outcome = session.send("again").await;
        assert_eq!(outcome.tool_calls, 6);
    }
}

#[test]
fn answers_are_valid_wire_bodies() {
    let server = MockLlm::new(MockConfig {
        tool_steps: 1,
        ..MockConfig::default()
    });
    let (kind, body) = server
        .answer(br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t"}}]}"#)
        .unwrap();
    assert_eq!(kind, "application/json");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "t");
    let (_, body) = server
        .answer(br#"{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant"},{"role":"tool","content":"ok"}]}"#)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert!(server.answer(b"not json").is_err());
}
