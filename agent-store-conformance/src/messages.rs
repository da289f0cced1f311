//! Messages: round trips, sequence numbers, conflicts, concurrent writers.

use std::sync::Arc;

use agent_core::{Message, SessionId, SessionInfo, StoreError};

use crate::fixture::Fixture;
use crate::kinds::{append_durably, every_kind, session, texts};

/// An empty append writes nothing but is checked like any other: it succeeds only at the
/// next sequence number of an existing session.
pub async fn an_empty_append_is_checked_like_any_other(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    store.append_messages(&id, 1, &[]).await.unwrap();
    append_durably(store, &id, 1, &[Message::user("a")]).await.unwrap();
    store.append_messages(&id, 2, &[]).await.unwrap();
    for wrong in [1, 3] {
        assert_eq!(
            store.append_messages(&id, wrong, &[]).await.unwrap_err(),
            StoreError::Conflict {
                session: id.clone(),
                expected: wrong,
                actual: 2
            }
        );
    }
    let missing = SessionId::new_random();
    assert_eq!(
        store.append_messages(&missing, 1, &[]).await.unwrap_err(),
        StoreError::SessionNotFound(missing)
    );
    assert_eq!(store.last_seq(&id).await.unwrap(), 1);
}

/// Every kind of message comes back equal, numbered from 1, and `after_seq` skips the first ones.
pub async fn every_message_kind_round_trips(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    assert_eq!(
        store.last_seq(&id).await.unwrap(),
        0,
        "an empty session's last seq is 0"
    );
    assert!(store.load_messages(&id, 0).await.unwrap().is_empty());
    let messages = every_kind();
    store.append_messages(&id, 1, &messages).await.unwrap();
    let loaded = store.load_messages(&id, 0).await.unwrap();
    assert_eq!(loaded.len(), messages.len());
    for (i, (stored, original)) in loaded.iter().zip(&messages).enumerate() {
        assert_eq!(stored.seq, i as u64 + 1);
        assert_eq!(&stored.message, original, "message {i} changed in the round trip");
        assert!(stored.created_at_ms > 0);
    }
    let tail = store.load_messages(&id, 7).await.unwrap();
    assert_eq!(tail.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![8, 9, 10]);
    assert!(store.load_messages(&id, 10).await.unwrap().is_empty());
    assert_eq!(store.last_seq(&id).await.unwrap(), 10);
    // Appending goes on from there.
    store.append_messages(&id, 11, &[Message::user("more")]).await.unwrap();
    assert_eq!(store.last_seq(&id).await.unwrap(), 11);
}

/// Another handle on the same data (a new process, another replica) sees the history.
pub async fn history_survives_reopening(f: Fixture) {
    let id = session(f.store().as_ref()).await;
    append_durably(f.store().as_ref(), &id, 1, &every_kind()).await.unwrap();
    f.store().set_title(&id, "Cats").await.unwrap();
    let again = f.reopen().await;
    let loaded = again.store.load_messages(&id, 0).await.unwrap();
    let messages: Vec<Message> = loaded.into_iter().map(|m| m.message).collect();
    assert_eq!(messages, every_kind());
    assert_eq!(
        again.store.session(&id).await.unwrap().unwrap().title.as_deref(),
        Some("Cats")
    );
    assert_eq!(again.store.last_seq(&id).await.unwrap(), every_kind().len() as u64);
}

/// An append whose first number is not the session's next one is a conflict that writes
/// nothing: a stale number, a gap, and 0.
pub async fn stale_sequence_number_is_a_conflict_and_writes_nothing(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    append_durably(store, &id, 1, &[Message::user("a"), Message::assistant("b")])
        .await
        .unwrap();
    // A second writer that still believes the session is empty.
    let err = append_durably(store, &id, 1, &[Message::user("stale"), Message::assistant("stale")])
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StoreError::Conflict {
            session: id.clone(),
            expected: 1,
            actual: 3
        }
    );
    assert!(err.to_string().contains("another writer appended first"));
    let err = append_durably(store, &id, 5, &[Message::user("gap")])
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Conflict {
                expected: 5,
                actual: 3,
                ..
            }
        ),
        "{err:?}"
    );
    let err = append_durably(store, &id, 0, &[Message::user("zero")])
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Conflict {
                expected: 0,
                actual: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(texts(store, &id).await, vec!["a", "b"]);
    assert_eq!(store.last_seq(&id).await.unwrap(), 2);
    // The right number still works after the refusals.
    append_durably(store, &id, 3, &[Message::user("c")]).await.unwrap();
    assert_eq!(texts(store, &id).await, vec!["a", "b", "c"]);
}

/// Two handles race for the same next number, round after round: exactly one wins each
/// round, the other gets a conflict, and the history has no gap and no duplicate.
pub async fn concurrent_writers_never_interleave(f: Fixture) {
    let a = f.store().clone();
    let b = f.reopen().await.store;
    let id = session(a.as_ref()).await;
    for round in 0..20u64 {
        let next = round + 1;
        let (ma, mb) = (
            [Message::user(format!("a{round}"))],
            [Message::user(format!("b{round}"))],
        );
        let (ra, rb) = tokio::join!(
            append_durably(a.as_ref(), &id, next, &ma),
            append_durably(b.as_ref(), &id, next, &mb)
        );
        assert!(ra.is_ok() ^ rb.is_ok(), "round {round}: {ra:?} {rb:?}");
        let loser = if ra.is_err() { ra } else { rb };
        assert!(
            matches!(loser, Err(StoreError::Conflict { .. })),
            "round {round}: {loser:?}"
        );
    }
    let seqs: Vec<u64> = b.load_messages(&id, 0).await.unwrap().iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=20).collect::<Vec<_>>());
}

/// Sessions written from parallel tasks, batches of one and two, with reads in between: each
/// keeps its own messages, numbered without gaps.
pub async fn parallel_sessions_stay_apart(f: Fixture) {
    const SESSIONS: usize = 16;
    let store = f.store().clone();
    let mut tasks = Vec::new();
    for s in 0..SESSIONS {
        let store: Arc<dyn agent_core::Store> = store.clone();
        tasks.push(tokio::spawn(async move {
            let id = SessionId::new_random();
            store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
            let mut seq = 1;
            for i in 0..10 {
                let batch = if i % 2 == 0 {
                    vec![Message::user(format!("s{s} m{i}"))]
                } else {
                    vec![
                        Message::assistant(format!("s{s} m{i}a")),
                        Message::assistant(format!("s{s} m{i}b")),
                    ]
                };
                store.append_messages(&id, seq, &batch).await.unwrap();
                seq += batch.len() as u64;
                assert_eq!(store.last_seq(&id).await.unwrap(), seq - 1);
            }
            (s, id)
        }));
    }
    for task in tasks {
        let (s, id) = task.await.unwrap();
        let loaded = store.load_messages(&id, 0).await.unwrap();
        assert_eq!(loaded.len(), 15);
        for (i, m) in loaded.iter().enumerate() {
            assert_eq!(m.seq, i as u64 + 1);
            assert!(
                m.message.text().starts_with(&format!("s{s} ")),
                "foreign message in session {s}"
            );
        }
    }
    assert_eq!(store.list_sessions().await.unwrap().len(), SESSIONS);
}
