//! Tool-call records and their state machine.

use agent_core::{StoreError, ToolCallRecord, ToolCallState};

use crate::fixture::Fixture;
use crate::kinds::{session, upsert_durably};

/// pending → running → a final state (or pending → a final state); repeating a state or going
/// back to an earlier one is accepted and changes nothing; one final state to another is
/// refused with `InvalidTransition` and not written; records listed oldest first; the same
/// call id in another session is another call.
pub async fn tool_call_state_machine_is_enforced(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    let mut record = ToolCallRecord::pending(id.clone(), "call_1", "fs_read", r#"{"path":"a"}"#);
    upsert_durably(store, &record).await.unwrap();
    assert_eq!(store.tool_calls(&id).await.unwrap(), vec![record.clone()]);

    record.state = ToolCallState::Running;
    record.started_at_ms = Some(10);
    upsert_durably(store, &record).await.unwrap();
    // Repeating a write is allowed.
    upsert_durably(store, &record).await.unwrap();

    record.state = ToolCallState::Succeeded;
    record.raw_result = Some("raw ".repeat(100));
    record.compressed_result = Some("raw...".into());
    record.finished_at_ms = Some(20);
    upsert_durably(store, &record).await.unwrap();

    // Going back is a late or replayed write: accepted, ignored.
    let mut back = record.clone();
    back.state = ToolCallState::Running;
    back.raw_result = None;
    upsert_durably(store, &back).await.unwrap();
    let mut denied = ToolCallRecord::pending(id.clone(), "call_2", "fs_delete", "{}");
    upsert_durably(store, &denied).await.unwrap();
    denied.state = ToolCallState::Denied;
    denied.error = Some("the person said no".into());
    upsert_durably(store, &denied).await.unwrap();
    let mut resurrect = denied.clone();
    resurrect.state = ToolCallState::Pending;
    resurrect.error = None;
    upsert_durably(store, &resurrect).await.unwrap();
    let mut other_final = denied.clone();
    other_final.state = ToolCallState::Failed;
    assert!(matches!(
        upsert_durably(store, &other_final).await,
        Err(StoreError::InvalidTransition {
            from: "denied",
            to: "failed",
            ..
        })
    ));

    // Every path the machine allows.
    for (n, path) in [
        vec![ToolCallState::Running, ToolCallState::Failed],
        vec![ToolCallState::Running, ToolCallState::Cancelled],
        vec![ToolCallState::Running, ToolCallState::Denied],
        vec![ToolCallState::Cancelled],
        vec![ToolCallState::Failed],
        vec![ToolCallState::Succeeded],
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = ToolCallRecord::pending(id.clone(), format!("path_{n}"), "t", "{}");
        upsert_durably(store, &r).await.unwrap();
        for state in path {
            r.state = state;
            upsert_durably(store, &r).await.unwrap();
        }
        let final_state = r.state;
        let mut stuck = r.clone();
        stuck.state = if final_state == ToolCallState::Failed {
            ToolCallState::Succeeded
        } else {
            ToolCallState::Failed
        };
        assert!(
            matches!(
                upsert_durably(store, &stuck).await,
                Err(StoreError::InvalidTransition { .. })
            ),
            "{n}: a final state is final"
        );
        stuck.state = ToolCallState::Running;
        upsert_durably(store, &stuck).await.unwrap();
        let stored = store.tool_calls(&id).await.unwrap();
        let stored = stored.iter().find(|s| s.call_id == r.call_id).unwrap();
        assert_eq!(stored.state, final_state, "{n}: going back changes nothing");
    }

    // The same call id in another session is a different call.
    let other = session(store).await;
    upsert_durably(
        store,
        &ToolCallRecord::pending(other.clone(), "call_1", "fs_read", "{}"),
    )
    .await
    .unwrap();

    let records = store.tool_calls(&id).await.unwrap();
    assert_eq!(records.len(), 8);
    assert_eq!(records[0], record, "refused and ignored writes changed nothing");
    assert_eq!(records[1], denied);
    let order: Vec<&str> = records.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(
        order,
        [
            "call_1", "call_2", "path_0", "path_1", "path_2", "path_3", "path_4", "path_5"
        ],
        "oldest first"
    );
    assert_eq!(store.tool_calls(&other).await.unwrap().len(), 1);
}

/// A record handed over by value (`upsert_tool_call_owned`, how the loop writes its records)
/// is written exactly as one lent: stored as given, a repeated or earlier state ignored, a
/// second final state refused; one write at a time and in a burst.
pub async fn an_owned_record_is_written_like_a_lent_one(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    for burst in [false, true] {
        let call = format!("owned_{burst}");
        let mut running = ToolCallRecord::pending(id.clone(), &call, "fs_read", r#"{"path":"a"}"#);
        running.state = ToolCallState::Running;
        running.started_at_ms = Some(10);
        let mut done = running.clone();
        done.state = ToolCallState::Succeeded;
        done.raw_result = Some("out".into());
        done.finished_at_ms = Some(20);
        let mut late = running.clone();
        late.started_at_ms = Some(30);
        for record in [running, done.clone(), done.clone(), late] {
            store.upsert_tool_call_owned(record).await.unwrap();
            if !burst {
                store.flush(&id).await.unwrap();
            }
        }
        store.flush(&id).await.unwrap();
        let mut failed = done.clone();
        failed.state = ToolCallState::Failed;
        // A write-behind store may report the refusal at the flush.
        let refused = match store.upsert_tool_call_owned(failed).await {
            Ok(()) => store.flush(&id).await,
            Err(e) => Err(e),
        };
        assert!(
            matches!(
                refused,
                Err(StoreError::InvalidTransition {
                    from: "succeeded",
                    to: "failed",
                    ..
                })
            ),
            "burst {burst}: {refused:?}"
        );
        let stored = store.tool_calls(&id).await.unwrap();
        assert_eq!(stored.iter().find(|r| r.call_id == call), Some(&done), "burst {burst}");
    }
}
