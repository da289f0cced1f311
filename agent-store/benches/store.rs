//! SqliteStore benchmarks:
//! - append throughput: one message per call, each waiting for its own commit
//!   (`write_behind: false`) or queued and group-committed (the default, flushed at the end);
//!   batches of 100 and of 1 000;
//! - loading the history of a 10 000-message session;
//! - the loop overhead of agent-core's `loop_overhead` bench (a turn of 10 no-op tool calls
//!   and 11 model calls) with no store, MemoryStore, and SqliteStore write-through (queued,
//!   the default, and waiting for every write);
//! - a turn that parks for the person's approval and is answered through another agent that
//!   opens the session from the same SQLite file (as after a restart), then completes.
//!
//! Run: `cargo bench -p agent-store --bench store`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use agent_core::{MemoryStore, Message, SessionId, SessionInfo, Store, ToolCall};
use agent_store::{SqliteOptions, SqliteStore};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use loop_turn::{TOOL_STEPS, loop_agent};

#[path = "shared/loop_turn.rs"]
mod loop_turn;

#[path = "shared/approval_turn.rs"]
mod approval_turn;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A realistic mix: user text, an assistant tool call, a ~500-character tool result, an answer.
fn message(i: usize) -> Message {
    match i % 4 {
        0 => Message::user(format!("Please look at item {i} and tell me what it says.")),
        1 => Message::assistant_with_tools(
            "",
            vec![ToolCall::new(
                format!("call_{i}"),
                "page_read",
                &serde_json::json!({"item": i}),
            )],
        ),
        2 => {
            let mut m = Message::tool_result(format!("call_{}", i - 1), "page_read", "lorem ipsum ".repeat(40), false);
            m.compressed = Some("lorem ipsum ...[+400 chars]...".into());
            m
        }
        _ => Message::assistant(format!("Item {i} says lorem ipsum, forty times over.")),
    }
}

async fn new_session(store: &SqliteStore) -> SessionId {
    let id = SessionId::new_random();
    store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
    id
}

fn appends(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let store = rt.block_on(SqliteStore::open(dir.path().join("bench.db"))).unwrap();
    let waiting = rt
        .block_on(SqliteStore::open_with(
            dir.path().join("waiting.db"),
            wait_for_each_write(),
        ))
        .unwrap();
    let messages: Vec<Message> = (0..1_000).map(message).collect();

    let mut group = c.benchmark_group("sqlite_append");
    group.throughput(Throughput::Elements(messages.len() as u64));
    group.sample_size(10);
    for (name, store) in [
        ("one_message_per_call_each_committed", &waiting),
        ("one_message_per_call_group_committed", &store),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter_batched(
                || (),
                |()| async {
                    let id = new_session(store).await;
                    for (i, m) in messages.iter().enumerate() {
                        store
                            .append_messages(&id, i as u64 + 1, std::slice::from_ref(m))
                            .await
                            .unwrap();
                    }
                    store.flush(&id).await.unwrap();
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.bench_function("batches_of_100", |b| {
        b.to_async(&rt).iter(|| async {
            let id = new_session(&store).await;
            for (n, chunk) in messages.chunks(100).enumerate() {
                store.append_messages(&id, n as u64 * 100 + 1, chunk).await.unwrap();
            }
            store.flush(&id).await.unwrap();
        })
    });
    group.bench_function("one_batch_of_1000", |b| {
        b.to_async(&rt).iter(|| async {
            let id = new_session(&store).await;
            store.append_messages(&id, 1, &messages).await.unwrap();
            store.flush(&id).await.unwrap();
        })
    });
    group.finish();
}

fn wait_for_each_write() -> SqliteOptions {
    SqliteOptions {
        write_behind: false,
        ..SqliteOptions::default()
    }
}

fn load(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let store = rt.block_on(SqliteStore::open(dir.path().join("bench.db"))).unwrap();
    let id = rt.block_on(async {
        let id = new_session(&store).await;
        let messages: Vec<Message> = (0..10_000).map(message).collect();
        for (n, chunk) in messages.chunks(1_000).enumerate() {
            store.append_messages(&id, n as u64 * 1_000 + 1, chunk).await.unwrap();
        }
        id
    });
    let mut group = c.benchmark_group("sqlite_load");
    group.throughput(Throughput::Elements(10_000));
    group.sample_size(20);
    group.bench_function("history_of_10000_messages", |b| {
        b.to_async(&rt).iter(|| async {
            let loaded = store.load_messages(&id, 0).await.unwrap();
            assert_eq!(loaded.len(), 10_000);
        })
    });
    group.finish();
}

fn loop_overhead(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = rt.block_on(SqliteStore::open(dir.path().join("loop.db"))).unwrap();
    let sqlite_waiting = rt
        .block_on(SqliteStore::open_with(
            dir.path().join("loop-waiting.db"),
            wait_for_each_write(),
        ))
        .unwrap();
    let mut group = c.benchmark_group("loop_turn_10_tools");
    group.throughput(Throughput::Elements(TOOL_STEPS as u64 + 1));
    for (name, store) in [
        ("no_store", None),
        ("memory_store", Some(Arc::new(MemoryStore::new()) as Arc<dyn Store>)),
        ("sqlite_store", Some(Arc::new(sqlite.clone()) as Arc<dyn Store>)),
        (
            "sqlite_store_waiting_for_each_write",
            Some(Arc::new(sqlite_waiting.clone()) as Arc<dyn Store>),
        ),
    ] {
        let agent = loop_agent(&rt, store).unwrap();
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let session = agent.create_session().await.unwrap();
                let outcome = session.send("go").await;
                assert_eq!(outcome.iterations as usize, TOOL_STEPS + 1);
            })
        });
    }
    group.finish();
}

fn approval_turn(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(rt.block_on(SqliteStore::open(dir.path().join("approvals.db"))).unwrap());
    // Two agents on one file: the second stands for the process after a restart.
    let parking = approval_turn::approval_agent(&rt, store.clone()).unwrap();
    let resuming = approval_turn::approval_agent(&rt, store).unwrap();
    let mut group = c.benchmark_group("approval_turn");
    group.bench_function("park_reopen_approve_complete", |b| {
        b.to_async(&rt)
            .iter(|| approval_turn::park_and_resume(&parking, &resuming))
    });
    group.finish();
}

criterion_group!(benches, appends, load, loop_overhead, approval_turn);
criterion_main!(benches);
