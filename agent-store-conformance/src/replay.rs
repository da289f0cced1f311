//! Replayed writes: a durable executor that replays a turn after a crash repeats the appends
//! and tool-call records the crashed attempt may already have made. Every store accepts a
//! repeat of what it holds, writes only what is new, and still refuses what differs.

use agent_core::{Message, StoreError, ToolCallRecord, ToolCallState, Visibility};

use crate::fixture::Fixture;
use crate::kinds::{append_durably, session, texts, upsert_durably};

/// Appending messages that are already stored, as they are, succeeds and stores nothing
/// twice: the whole append again, a part of it, from this handle and from another one (a new
/// process); appending goes on at the next number afterwards.
pub async fn a_replayed_append_stores_nothing_twice(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    let batch = [Message::user("a"), Message::assistant("b"), Message::user("c")];
    append_durably(store, &id, 1, &batch).await.unwrap();
    let written = store.load_messages(&id, 0).await.unwrap();

    append_durably(store, &id, 1, &batch).await.unwrap();
    append_durably(store, &id, 2, &batch[1..2]).await.unwrap();
    assert_eq!(store.load_messages(&id, 0).await.unwrap(), written, "nothing rewritten");
    assert_eq!(store.last_seq(&id).await.unwrap(), 3);

    // Another handle, which has not written to the session yet.
    let again = f.reopen().await.store;
    append_durably(again.as_ref(), &id, 1, &batch[..2]).await.unwrap();
    assert_eq!(again.load_messages(&id, 0).await.unwrap(), written);
    append_durably(again.as_ref(), &id, 4, &[Message::assistant("d")])
        .await
        .unwrap();

    append_durably(store, &id, 5, &[Message::user("e")]).await.unwrap();
    assert_eq!(texts(store, &id).await, ["a", "b", "c", "d", "e"]);
    let seqs: Vec<u64> = store
        .load_messages(&id, 0)
        .await
        .unwrap()
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
}

/// An append that starts inside the history with the stored messages and goes on past it
/// writes only the new messages, numbered on from the last.
pub async fn an_overlapping_append_writes_only_its_new_messages(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    append_durably(store, &id, 1, &[Message::user("a"), Message::assistant("b")])
        .await
        .unwrap();
    append_durably(
        store,
        &id,
        2,
        &[Message::assistant("b"), Message::user("c"), Message::assistant("d")],
    )
    .await
    .unwrap();
    assert_eq!(texts(store, &id).await, ["a", "b", "c", "d"]);
    assert_eq!(store.last_seq(&id).await.unwrap(), 4);

    // The same from another handle, and the next append from the first one.
    let again = f.reopen().await.store;
    append_durably(again.as_ref(), &id, 4, &[Message::assistant("d"), Message::user("e")])
        .await
        .unwrap();
    append_durably(store, &id, 6, &[Message::assistant("f")]).await.unwrap();
    assert_eq!(texts(store, &id).await, ["a", "b", "c", "d", "e", "f"]);
    let seqs: Vec<u64> = store
        .load_messages(&id, 0)
        .await
        .unwrap()
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
}

/// An append whose messages differ from the stored ones at any taken number is a conflict
/// that writes nothing, not even its new messages: a different text, and the same text
/// with another flag.
pub async fn an_overlapping_append_that_differs_is_a_conflict_and_writes_nothing(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    append_durably(store, &id, 1, &[Message::user("a"), Message::assistant("b")])
        .await
        .unwrap();
    let conflict = StoreError::Conflict {
        session: id.clone(),
        expected: 1,
        actual: 3,
    };
    let differs_later = [Message::user("a"), Message::assistant("other"), Message::user("new")];
    assert_eq!(
        append_durably(store, &id, 1, &differs_later).await.unwrap_err(),
        conflict
    );
    let mut hidden = Message::assistant("b");
    hidden.visibility = Visibility::USER_ONLY;
    assert_eq!(
        append_durably(store, &id, 1, &[Message::user("a"), hidden, Message::user("new")])
            .await
            .unwrap_err(),
        conflict
    );
    let mut flagged = Message::assistant("b");
    flagged.is_error = true;
    let err = append_durably(store, &id, 2, &[flagged, Message::user("new")])
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Conflict {
                expected: 2,
                actual: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(texts(store, &id).await, ["a", "b"]);
    assert_eq!(store.last_seq(&id).await.unwrap(), 2);
    append_durably(store, &id, 3, &[Message::user("c")]).await.unwrap();
    assert_eq!(texts(store, &id).await, ["a", "b", "c"]);
}

/// A gap stays a conflict, even one whose messages repeat stored ones; an empty append is
/// still accepted only at the next number.
pub async fn a_gap_is_still_a_conflict(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    append_durably(store, &id, 1, &[Message::user("a"), Message::assistant("b")])
        .await
        .unwrap();
    for (first, messages) in [
        (4, vec![Message::user("c")]),
        (4, vec![Message::user("a"), Message::assistant("b")]),
        (0, vec![Message::user("a")]),
    ] {
        let err = append_durably(store, &id, first, &messages).await.unwrap_err();
        assert_eq!(
            err,
            StoreError::Conflict {
                session: id.clone(),
                expected: first,
                actual: 3
            }
        );
    }
    assert!(matches!(
        store.append_messages(&id, 1, &[]).await,
        Err(StoreError::Conflict {
            expected: 1,
            actual: 3,
            ..
        })
    ));
    assert_eq!(texts(store, &id).await, ["a", "b"]);
    assert_eq!(store.last_seq(&id).await.unwrap(), 2);
}

/// A tool-call write of the state the record has, or of one it has passed (running after
/// succeeded), is accepted and changes nothing: the first writer wins. Written one by one and
/// in a burst (which a write-behind store may take into one commit).
pub async fn a_replayed_tool_call_write_is_ignored(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    for burst in [false, true] {
        let call = format!("call_{burst}");
        let pending = ToolCallRecord::pending(id.clone(), &call, "fs_read", "{}");
        let mut running = pending.clone();
        running.state = ToolCallState::Running;
        running.started_at_ms = Some(10);
        let mut running_later = running.clone();
        running_later.started_at_ms = Some(20);
        let mut done = running.clone();
        done.state = ToolCallState::Succeeded;
        done.raw_result = Some("first".into());
        done.finished_at_ms = Some(30);
        let mut done_again = done.clone();
        done_again.raw_result = Some("second".into());
        done_again.finished_at_ms = Some(40);
        // Open states first, then final ones; each part ends with a check.
        let parts: [(&[&ToolCallRecord], &ToolCallRecord); 2] = [
            (&[&pending, &running, &running_later, &pending], &running),
            (&[&done, &running_later, &done_again, &pending], &done),
        ];
        for (writes, expected) in parts {
            for record in writes {
                if burst {
                    store.upsert_tool_call(record).await.unwrap();
                } else {
                    upsert_durably(store, record).await.unwrap();
                }
            }
            store.flush(&id).await.unwrap();
            let stored = store.tool_calls(&id).await.unwrap();
            let stored = stored.iter().find(|r| r.call_id == call).unwrap();
            assert_eq!(stored, expected, "burst {burst}");
        }
    }
    // Across handles, as a replica replaying the turn would write.
    let again = f.reopen().await.store;
    let mut late = ToolCallRecord::pending(id.clone(), "call_false", "fs_read", "{}");
    late.state = ToolCallState::Running;
    upsert_durably(again.as_ref(), &late).await.unwrap();
    let stored = again.tool_calls(&id).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert!(stored.iter().all(|r| r.state == ToolCallState::Succeeded));
    assert!(stored.iter().all(|r| r.raw_result.as_deref() == Some("first")));
}

/// Moving a call from one final state to another is refused with `InvalidTransition`, and
/// the record keeps its first final state.
pub async fn a_different_final_state_is_an_invalid_transition(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    let mut record = ToolCallRecord::pending(id.clone(), "call_1", "shell_exec", "{}");
    record.state = ToolCallState::Succeeded;
    record.raw_result = Some("ok".into());
    upsert_durably(store, &record).await.unwrap();
    let mut failed = record.clone();
    failed.state = ToolCallState::Failed;
    failed.error = Some("boom".into());
    assert_eq!(
        upsert_durably(store, &failed).await.unwrap_err(),
        StoreError::InvalidTransition {
            call_id: "call_1".into(),
            from: "succeeded",
            to: "failed"
        }
    );
    let again = f.reopen().await.store;
    let mut cancelled = record.clone();
    cancelled.state = ToolCallState::Cancelled;
    assert!(matches!(
        upsert_durably(again.as_ref(), &cancelled).await,
        Err(StoreError::InvalidTransition {
            from: "succeeded",
            to: "cancelled",
            ..
        })
    ));
    assert_eq!(store.tool_calls(&id).await.unwrap(), vec![record]);
}
