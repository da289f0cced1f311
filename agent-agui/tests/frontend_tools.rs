//! The client's own tools (`RunAgentInput.tools`, frontend tools) over the endpoint: the model's
//! call of one streams as `TOOL_CALL_START` / `ARGS` / `END` and the run finishes (no result:
//! the client runs it); the client's next run ends with the `tool` message, whose result
//! continues the turn; a new user message instead dismisses the call.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, MemoryStore, ModelRequest, Role, ScriptStep, ScriptedProvider, ScriptedReply, ToolContext, ToolError,
    tool_fn,
};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

/// A model that calls the client's `confirm_dialog` for "confirm", reports a tool's result, and
/// echoes anything else; every request is kept.
fn agent(requests: Arc<Mutex<Vec<ModelRequest>>>) -> Agent {
    let note = tool_fn("note", "Notes.", |_: Value, _cx: ToolContext| async {
        Ok::<_, ToolError>("noted")
    });
    let provider = ScriptedProvider::from_fn(move |req| {
        requests.lock().unwrap().push(req.clone());
        let last = req.messages.last().unwrap();
        match last.role {
            Role::Tool => ScriptStep::Reply(ScriptedReply::text(format!("the client said: {}", last.text()))),
            _ if last.text().contains("confirm") => ScriptStep::Reply(
                ScriptedReply::text("Asking you.")
                    .with_call("note", json!({}))
                    .with_call("confirm_dialog", json!({"text": "Delete?"})),
            ),
            _ => ScriptStep::Reply(ScriptedReply::text(format!("echo: {}", last.text()))),
        }
    });
    Agent::builder()
        .provider(provider)
        .tool(note)
        .store(MemoryStore::new())
        .build()
        .unwrap()
}

/// Posts `body` and returns the status and the SSE events' JSON (or the refusal's text).
async fn post(app: &axum::Router, body: Value) -> (StatusCode, Vec<Value>, String) {
    let request = Request::post("/")
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let events = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    (status, events, text)
}

fn tools() -> Value {
    json!([{
        "name": "confirm_dialog",
        "description": "Asks the person to confirm in the page.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    }])
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn finished(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "RUN_FINISHED")
        .expect("RUN_FINISHED")
}

/// Runs "confirm it" on `thread` and returns the id of the client tool's call.
async fn ask_to_confirm(app: &axum::Router, thread: &str) -> (String, Vec<Value>) {
    let body = json!({
        "threadId": thread, "runId": "r1", "tools": tools(),
        "messages": [{"id": "u1", "role": "user", "content": "confirm it"}],
    });
    let (status, events, text) = post(app, body).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let start = events
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "confirm_dialog")
        .expect("the client tool's call starts");
    (start["toolCallId"].as_str().unwrap().to_owned(), events)
}

#[tokio::test]
async fn a_frontend_tool_call_ends_the_run_and_the_tool_message_continues_the_turn() {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let app = agent_agui::router(agent(requests.clone()));
    let (call_id, events) = ask_to_confirm(&app, "t-frontend").await;

    // The model was offered the agent's tools and the client's.
    let offered: Vec<String> = requests.lock().unwrap()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(offered, vec!["note", "confirm_dialog"]);
    // The call streams whole, with its arguments; the agent's own tool ran; no result for the
    // client's call; the run finishes (not an interrupt).
    let args: String = events
        .iter()
        .filter(|e| e["type"] == "TOOL_CALL_ARGS" && e["toolCallId"] == call_id.as_str())
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"text": "Delete?"})
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_END" && e["toolCallId"] == call_id.as_str())
    );
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "TOOL_CALL_RESULT").collect();
    assert_eq!(results.len(), 1, "only the agent's own tool has a result: {events:#?}");
    assert_eq!(results[0]["content"], "noted");
    let end = finished(&events);
    assert_eq!(end["outcome"]["type"], "success");
    assert_eq!(end["result"]["status"], "awaiting_tools");
    assert_eq!(*types(&events).last().unwrap(), "RUN_FINISHED");

    // The client ran it: its next run carries the whole history, ending with the tool message.
    let body = json!({
        "threadId": "t-frontend", "runId": "r2", "tools": tools(),
        "messages": [
            {"id": "u1", "role": "user", "content": "confirm it"},
            {"id": "a1", "role": "assistant", "content": "Asking you.", "toolCalls": [
                {"id": call_id, "type": "function", "function": {"name": "confirm_dialog", "arguments": "{\"text\":\"Delete?\"}"}}
            ]},
            {"id": "t1", "role": "tool", "toolCallId": call_id, "content": "confirmed"},
        ],
    });
    let (status, events, text) = post(&app, body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(types(&events)[0], "RUN_STARTED");
    assert!(
        !events.iter().any(|e| e["type"] == "TOOL_CALL_RESULT"),
        "the client has the result already: {events:#?}"
    );
    let end = finished(&events);
    assert_eq!(end["result"]["status"], "done");
    assert_eq!(end["result"]["finalText"], "the client said: confirmed");
    // The user message was not added again.
    let last = requests.lock().unwrap().last().unwrap().clone();
    let users = last.messages.iter().filter(|m| m.role == Role::User).count();
    assert_eq!(users, 1);

    // The same tool message again answers nothing pending.
    let (status, _, text) = post(
        &app,
        json!({"threadId": "t-frontend", "runId": "r3", "messages": body["messages"]}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{text}");
}

#[tokio::test]
async fn a_tool_message_for_a_stranger_call_is_refused_and_the_call_stays_pending() {
    let app = agent_agui::router(agent(Arc::default()));
    let (call_id, _) = ask_to_confirm(&app, "t-stranger").await;
    let stranger = json!({
        "threadId": "t-stranger", "runId": "r2",
        "messages": [{"id": "t1", "role": "tool", "toolCallId": "not-a-call", "content": "?"}],
    });
    let (status, _, _) = post(&app, stranger).await;
    assert_eq!(status, StatusCode::CONFLICT);
    // The client tool's failure, as the client reports it.
    let answered = json!({
        "threadId": "t-stranger", "runId": "r3",
        "messages": [{"id": "t1", "role": "tool", "toolCallId": call_id, "content": "", "error": "the page was closed"}],
    });
    let (status, events, text) = post(&app, answered).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        finished(&events)["result"]["finalText"],
        "the client said: the page was closed"
    );
}

#[tokio::test]
async fn a_new_user_message_dismisses_the_pending_call() {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let app = agent_agui::router(agent(requests.clone()));
    let (call_id, _) = ask_to_confirm(&app, "t-dismiss").await;
    let body = json!({
        "threadId": "t-dismiss", "runId": "r2",
        "messages": [{"id": "u2", "role": "user", "content": "never mind"}],
    });
    let (status, events, text) = post(&app, body).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_START" || e["type"] == "TOOL_CALL_RESULT")
    );
    assert!(events.iter().any(|e| e["type"] == "CUSTOM"
        && e["name"] == "tool_call_failed"
        && e["value"]["call_id"] == call_id.as_str()));
    assert_eq!(finished(&events)["result"]["finalText"], "echo: never mind");
    // The model read that the call was not run.
    let last = requests.lock().unwrap().last().unwrap().clone();
    let dismissed = last
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some(call_id.as_str()))
        .unwrap();
    assert!(dismissed.is_error && dismissed.text().contains("not run"));
}

#[tokio::test]
async fn a_client_tool_named_like_an_agent_tool_is_refused() {
    let app = agent_agui::router(agent(Arc::default()));
    let body = json!({
        "threadId": "t-clash", "runId": "r1",
        "tools": [{"name": "note", "description": "Mine.", "parameters": {"type": "object"}}],
        "messages": [{"id": "u1", "role": "user", "content": "hi"}],
    });
    let (status, _, text) = post(&app, body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("note"), "{text}");
}
