#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Durable turns against a real restate-server and PostgreSQL: a turn's tools run once each, a
//! replica killed mid-turn is replaced and the turn finishes on the new one without repeating a
//! completed tool or writing a message twice, and a cancel stops a turn in the middle of a model
//! call, leaving a valid transcript; a question asked on one replica is answered on another, and so is a gate's approval; a message relayed between sessions runs
//! once as a turn of the receiver.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{Role, SessionId, Store, StoredMessage, Tool};
use agent_store_postgres::{PostgresOptions, PostgresStore};
use serde_json::{Value, json};

mod common;
use common::replica::{Effects, Replica};
use common::{ModelLog, admin, ingress, postgres};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn register(http: &reqwest::Client, port: u16) {
    let response = http
        .post(format!("{}/deployments", admin()))
        .json(&json!({"uri": format!("http://127.0.0.1:{port}"), "force": true}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    assert!(
        status.is_success(),
        "registration: {status} {}",
        response.text().await.unwrap()
    );
}

async fn turn(http: &reqwest::Client, session: &str, text: &str) -> Value {
    let response = http
        .post(format!("{}/AgentSession/{session}/turn", ingress()))
        .json(&json!({"text": text}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body = response.text().await.unwrap();
    assert!(status.is_success(), "turn: {status} {body}");
    serde_json::from_str(&body).unwrap()
}

async fn messages(schema: &str, session: &str) -> Vec<StoredMessage> {
    let options = PostgresOptions {
        schema: Some(schema.to_owned()),
        max_connections: 1,
        ..PostgresOptions::default()
    };
    let store = PostgresStore::connect_with(&postgres(), options).await.unwrap();
    store
        .load_messages(&SessionId::parse(session).unwrap(), 0)
        .await
        .unwrap()
}

/// The session's messages once it holds `count` of them (at most 30 s) and a moment more has
/// passed, so that a second turn that should not happen would have shown.
async fn settled_messages(schema: &str, session: &str, count: usize) -> Vec<StoredMessage> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while messages(schema, session).await.len() < count && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    messages(schema, session).await
}

/// Sequence numbers 1..n, every tool call answered once right after its assistant message.
fn assert_valid(transcript: &[StoredMessage]) {
    for (i, stored) in transcript.iter().enumerate() {
        assert_eq!(stored.seq, i as u64 + 1, "sequence numbers run 1..n");
    }
    let mut open: Vec<String> = Vec::new();
    for stored in transcript {
        let m = &stored.message;
        match m.role {
            Role::Assistant => {
                assert!(
                    open.is_empty(),
                    "calls {open:?} were not answered before the next message"
                );
                open = m.tool_calls.iter().map(|c| c.id.clone()).collect();
            }
            Role::Tool => {
                let id = m.tool_call_id.clone().unwrap();
                let at = open
                    .iter()
                    .position(|o| *o == id)
                    .expect("a result answers an open call");
                open.remove(at);
            }
            _ => assert!(open.is_empty(), "calls {open:?} were not answered"),
        }
    }
    assert!(open.is_empty(), "calls {open:?} were never answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Restate and PostgreSQL: scripts/test starts them (with_durable_servers)"]
async fn durable_turns_on_restate() {
    let schema = format!("agent_test_{}", SessionId::new_random().as_str().replace('-', ""));
    let log = Arc::new(ModelLog::default());
    let effects: Effects = Effects::default();
    let port = free_port();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let mut replica = Replica::start(port, &schema, log.clone(), effects.clone());
    register(&http, port).await;

    // A turn of three tool calls: each tool runs once, the transcript has every message once.
    let plain = SessionId::new_random().to_string();
    let reply = turn(&http, &plain, "tag=plain tools=3").await;
    assert_eq!(reply["outcome"]["status"], "done", "{reply}");
    assert_eq!(reply["outcome"]["final_text"], "done plain");
    let transcript = messages(&schema, &plain).await;
    assert_valid(&transcript);
    assert_eq!(transcript.len(), 8, "user, 3 x (call, result), answer");
    for k in 1..=3 {
        assert_eq!(effects.lock().unwrap().get(&format!("plain-{k}")), Some(&1));
    }

    // The replica dies at the turn's third model call (two tools done and journaled); a new
    // replica on the same address finishes the turn from the journal.
    let (crash_tx, mut crash_rx) = tokio::sync::mpsc::unbounded_channel();
    *log.crash.lock().unwrap() = Some(crash_tx);
    log.crash_at_third.lock().unwrap().push("crash".into());
    let crashed = SessionId::new_random().to_string();
    let pending = {
        let http = http.clone();
        let crashed = crashed.clone();
        tokio::spawn(async move { turn(&http, &crashed, "tag=crash tools=4").await })
    };
    tokio::time::timeout(Duration::from_secs(60), crash_rx.recv())
        .await
        .expect("the turn reaches its third model call")
        .unwrap();
    replica.kill();
    replica = Replica::start(port, &schema, log.clone(), effects.clone());
    let reply = tokio::time::timeout(Duration::from_secs(90), pending)
        .await
        .expect("the turn finishes on the new replica")
        .unwrap();
    assert_eq!(reply["outcome"]["status"], "done", "{reply}");
    let transcript = messages(&schema, &crashed).await;
    assert_valid(&transcript);
    assert_eq!(transcript.len(), 10, "user, 4 x (call, result), answer");
    for k in 1..=4 {
        assert_eq!(
            effects.lock().unwrap().get(&format!("crash-{k}")),
            Some(&1),
            "tool crash-{k} ran once"
        );
    }
    // Model calls: 3 on the dead replica (the third never answered), then the third and later ones again
    // on the new one; the two completed calls came from the journal.
    assert_eq!(log.calls.lock().unwrap().get("crash"), Some(&6));

    // A question asked on one replica, answered after that replica is gone: the `answer` turn
    // on the new replica picks the question up from the store and finishes.
    let asked = SessionId::new_random().to_string();
    let reply = turn(&http, &asked, "tag=ask ask").await;
    assert_eq!(reply["outcome"]["status"], "awaiting_user", "{reply}");
    let question = reply["outcome"]["clarification"]["id"].as_str().unwrap().to_owned();
    replica.kill();
    replica = Replica::start(port, &schema, log.clone(), effects.clone());
    let response = http
        .post(format!("{}/AgentSession/{asked}/answer", ingress()))
        .json(&json!({"clarification_id": question, "answer": "blue", "run_id": format!("answer-{asked}")}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let reply: Value = response.json().await.unwrap();
    assert!(status.is_success(), "answer: {status} {reply}");
    assert_eq!(reply["outcome"]["status"], "done", "{reply}");
    assert!(
        reply["outcome"]["final_text"].as_str().unwrap().contains("blue"),
        "{reply}"
    );
    let transcript = messages(&schema, &asked).await;
    assert_valid(&transcript);
    // An answer to a question no longer pending is refused (a terminal 400, not retried).
    let response = http
        .post(format!("{}/AgentSession/{asked}/answer", ingress()))
        .json(&json!({"clarification_id": question, "answer": "red", "run_id": format!("again-{asked}")}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400, "{}", response.text().await.unwrap());

    // A gated call parks the turn for approval on one replica; the approval, sent after that
    // replica is gone, runs the call on a new one and finishes the turn.
    let gated = SessionId::new_random().to_string();
    let reply = turn(&http, &gated, "tag=gate tools=1").await;
    assert_eq!(reply["outcome"]["status"], "awaiting_approval", "{reply}");
    let approval = reply["outcome"]["approval"]["id"].as_str().unwrap().to_owned();
    assert_eq!(reply["outcome"]["approval"]["calls"][0]["call_id"], "gate-1");
    assert_eq!(effects.lock().unwrap().get("gate-1"), None);
    replica.kill();
    replica = Replica::start(port, &schema, log.clone(), effects.clone());
    let response = http
        .post(format!("{}/AgentSession/{gated}/approve", ingress()))
        .json(&json!({
            "approval_id": approval,
            "decisions": [["gate-1", {"decision": "approve"}]],
            "run_id": format!("approve-{gated}"),
        }))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let reply: Value = response.json().await.unwrap();
    assert!(status.is_success(), "approve: {status} {reply}");
    assert_eq!(reply["outcome"]["status"], "done", "{reply}");
    assert_eq!(effects.lock().unwrap().get("gate-1"), Some(&1));
    assert_valid(&messages(&schema, &gated).await);

    // A message relayed from one session to another runs as a turn of the receiver, once, even
    // when the relay is sent twice with the same run id.
    let sender = SessionId::new_random().to_string();
    let receiver = SessionId::new_random().to_string();
    for _ in 0..2 {
        let response = http
            .post(format!("{}/AgentSession/{sender}/relay", ingress()))
            .json(&json!({"to": receiver, "text": "tag=relayed tools=1", "run_id": format!("relay-{receiver}")}))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "relay: {}", response.status());
    }
    let transcript = settled_messages(&schema, &receiver, 4).await;
    assert_valid(&transcript);
    assert_eq!(transcript.len(), 4, "user, call, result, answer: one turn");
    assert_eq!(effects.lock().unwrap().get("relayed-1"), Some(&1));

    // The durable send_to_tab: a turn's message to another session runs as a turn of that
    // session, from the sender; the same call run again (its replica died before the step was
    // journaled) queues nothing more.
    let sender = SessionId::new_random().to_string();
    let receiver = SessionId::new_random().to_string();
    let reply = turn(&http, &sender, &format!("tag=sent send={receiver}")).await;
    assert_eq!(reply["outcome"]["status"], "done", "{reply}");
    let tool = agent_durable::send_to_session_tool(ingress());
    let again = agent_core::ToolContext::detached(SessionId::parse(&sender).unwrap(), "sent-send");
    let output = tool
        .call(json!({"tab_id": receiver, "message": "tag=sentr tools=1"}), again)
        .await
        .unwrap();
    assert!(output.text_content().contains(&receiver), "{output:?}");
    let refused = tool
        .call(
            json!({"tab_id": "not a session", "message": "x"}),
            agent_core::ToolContext::detached(SessionId::parse(&sender).unwrap(), "bad"),
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not a session id"), "{refused}");
    let transcript = settled_messages(&schema, &receiver, 4).await;
    assert_valid(&transcript);
    assert_eq!(transcript.len(), 4, "user, call, result, answer: one turn");
    assert_eq!(effects.lock().unwrap().get("sentr-1"), Some(&1));

    // A cancel sent while the model call hangs stops the turn through Restate and PostgreSQL.
    let (hang_tx, mut hang_rx) = tokio::sync::mpsc::unbounded_channel();
    *log.hanging.lock().unwrap() = Some(hang_tx);
    let cancelled = SessionId::new_random().to_string();
    let run_id = format!("run-{cancelled}");
    let sent = http
        .post(format!("{}/AgentSession/{cancelled}/turn/send", ingress()))
        .header("idempotency-key", &run_id)
        .json(&json!({"text": "tag=hang hang", "run_id": run_id}))
        .send()
        .await
        .unwrap();
    assert!(sent.status().is_success(), "send: {}", sent.status());
    let invocation = sent.json::<Value>().await.unwrap()["invocationId"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::timeout(Duration::from_secs(60), hang_rx.recv())
        .await
        .expect("the model call starts")
        .unwrap();
    let response = http
        .post(format!("{}/AgentSession/{cancelled}/cancel", ingress()))
        .json(&json!({"run_id": run_id}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "cancel: {}", response.status());
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["invocation_id"], invocation.as_str(), "{reply}");
    let attached = http
        .get(format!("{}/restate/invocation/{invocation}/attach", ingress()))
        .send()
        .await
        .unwrap();
    let status = attached.status();
    let body = attached.text().await.unwrap();
    // The turn ended `cancelled`: its reply, or Restate's own 409 when the cancel reached the
    // handler at a step boundary after the reply was decided.
    assert!(
        (status.is_success() && body.contains("\"cancelled\"")) || status.as_u16() == 409,
        "attach: {status} {body}"
    );
    let transcript = messages(&schema, &cancelled).await;
    assert_valid(&transcript);
    assert_eq!(transcript[0].message.role, Role::User);
    drop(replica);
}
