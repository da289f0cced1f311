//! A turn parked for the person's approval, over the endpoint: the run ends with one
//! `tool_approval` interrupt per waiting call, and a resume entry approves (the tool runs
//! once), edits (a schema the tool refuses is a 400 and the approval stays), or rejects.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, GateDecision, MemoryStore, ScriptStep, ScriptedProvider, ScriptedReply, ToolContext, ToolError, gate_fn,
    tool_fn,
};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PayArgs {
    /// Cents.
    amount: u32,
}

fn agent(paid: Arc<Mutex<Vec<u32>>>) -> Agent {
    let pay = tool_fn("pay", "Pays.", move |args: PayArgs, _cx: ToolContext| {
        let paid = paid.clone();
        async move {
            paid.lock().unwrap().push(args.amount);
            Ok::<_, ToolError>(format!("paid {}", args.amount))
        }
    })
    .gated(true);
    let provider = ScriptedProvider::from_fn(|req| {
        let last = req.messages.last().unwrap();
        match last.role {
            agent_core::Role::User => ScriptStep::Reply(ScriptedReply::tool_call("pay", json!({"amount": 500}))),
            _ => ScriptStep::Reply(ScriptedReply::text(format!("after: {}", last.text()))),
        }
    });
    Agent::builder()
        .provider(provider)
        .tool(pay)
        .store(MemoryStore::new())
        .gate(gate_fn(|_| async { GateDecision::ask("Pay 5 euros?") }))
        .build()
        .unwrap()
}

/// Posts `body` and returns the status and the SSE events' JSON.
async fn post(app: &axum::Router, body: Value) -> (StatusCode, Vec<Value>) {
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
    (status, events)
}

fn finished(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "RUN_FINISHED")
        .expect("RUN_FINISHED")
}

fn start(run: &str) -> Value {
    json!({"threadId": "t-approvals", "runId": run, "messages": [{"id": "m1", "role": "user", "content": "pay"}]})
}

fn resume(run: &str, call: &str, payload: Value) -> Value {
    json!({"threadId": "t-approvals", "runId": run, "messages": [],
           "resume": [{"interruptId": call, "status": "resolved", "payload": payload}]})
}

#[tokio::test]
async fn an_approval_interrupts_the_run_and_a_resume_entry_answers_it() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let app = agent_agui::router(agent(paid.clone()));

    let (status, events) = post(&app, start("r1")).await;
    assert_eq!(status, StatusCode::OK);
    let outcome = &finished(&events)["outcome"];
    assert_eq!(outcome["type"], "interrupt", "{events:#?}");
    let interrupt = &outcome["interrupts"][0];
    assert_eq!(interrupt["reason"], agent_agui::APPROVAL_REASON);
    assert_eq!(interrupt["message"], "Pay 5 euros?");
    assert_eq!(interrupt["metadata"]["tool"], "pay");
    assert_eq!(interrupt["metadata"]["arguments"], json!({"amount": 500}));
    let call = interrupt["id"].as_str().unwrap().to_owned();
    assert_eq!(interrupt["toolCallId"], json!(call));
    assert!(paid.lock().unwrap().is_empty());

    // Edited arguments the tool's schema refuses: 400, and the approval stays.
    let (status, _) = post(
        &app,
        resume("r2", &call, json!({"approved": true, "arguments": {"amount": "x"}})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = post(&app, resume("r3", &call, json!({"yes": 1}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, events) = post(
        &app,
        resume("r4", &call, json!({"approved": true, "arguments": {"amount": 200}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(finished(&events)["outcome"]["type"], "success", "{events:#?}");
    assert_eq!(finished(&events)["result"]["finalText"], "after: paid 200");
    assert_eq!(*paid.lock().unwrap(), vec![200]);

    // Answered: another answer finds nothing pending.
    let (status, _) = post(&app, resume("r5", &call, json!({"approved": true}))).await;
    assert_eq!(status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_rejection_reaches_the_model_and_a_cancelled_entry_dismisses() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let app = agent_agui::router(agent(paid.clone()));
    let (_, events) = post(&app, start("r1")).await;
    let call = finished(&events)["outcome"]["interrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, events) = post(
        &app,
        resume("r2", &call, json!({"approved": false, "reason": "not today"})),
    )
    .await;
    let text = finished(&events)["result"]["finalText"].as_str().unwrap().to_owned();
    assert!(text.contains("the person rejected it: not today"), "{text}");

    let (_, events) = post(&app, start("r3")).await;
    let call = finished(&events)["outcome"]["interrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let cancel = json!({"threadId": "t-approvals", "runId": "r4", "messages": [],
                        "resume": [{"interruptId": call, "status": "cancelled"}]});
    let (status, events) = post(&app, cancel).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "CUSTOM" && e["name"] == "approval_resolved")
    );
    assert!(paid.lock().unwrap().is_empty());
}
