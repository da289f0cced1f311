#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! What only PostgresStore has: its migrations table, replicas opening at once, a newer schema
//! refused, schemas kept apart, and the errors for a server it cannot use.

use agent_core::{Message, SessionId, SessionInfo, Store, StoreError};
use agent_store_postgres::{PostgresOptions, PostgresStore};
use tokio_postgres::NoTls;

mod common;
use common::{fresh_schema, fresh_store, options, url};

/// A plain connection for looking at the database behind the store's back.
async fn raw(schema: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&url(), NoTls).await.unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(&format!("SET search_path = {schema}"))
        .await
        .unwrap();
    client
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
async fn migrations_are_recorded_in_a_table() {
    let (store, schema) = fresh_store().await;
    assert_eq!(
        store.schema_version().await.unwrap(),
        PostgresStore::latest_schema_version()
    );
    assert_eq!(store.schema(), Some(schema.as_str()));
    let client = raw(&schema).await;
    let rows = client
        .query("SELECT version, name FROM schema_migrations ORDER BY version", &[])
        .await
        .unwrap();
    assert_eq!(rows.len() as i64, PostgresStore::latest_schema_version());
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
            &[&schema],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        tables,
        [
            "compactions",
            "key_value",
            "messages",
            "runs",
            "schema_migrations",
            "sessions",
            "tabs",
            "tool_calls"
        ]
    );
    // Opening again migrates nothing.
    PostgresStore::connect_with(&url(), options(&schema)).await.unwrap();
    let count: i64 = client
        .query_one("SELECT count(*) FROM schema_migrations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, PostgresStore::latest_schema_version());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
async fn replicas_opening_at_once_migrate_once() {
    let schema = fresh_schema();
    let url = url();
    let opens = (0..6).map(|_| PostgresStore::connect_with(&url, options(&schema)));
    let stores = futures::future::join_all(opens).await;
    let stores: Vec<PostgresStore> = stores.into_iter().map(Result::unwrap).collect();
    let id = SessionId::new_random();
    stores[0].create_session(&SessionInfo::new(id.clone())).await.unwrap();
    stores[5].append_messages(&id, 1, &[Message::user("hi")]).await.unwrap();
    assert_eq!(stores[3].last_seq(&id).await.unwrap(), 1);
    let count: i64 = raw(&schema)
        .await
        .query_one("SELECT count(*) FROM schema_migrations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, PostgresStore::latest_schema_version());
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
async fn a_newer_schema_is_refused_and_left_alone() {
    let (store, schema) = fresh_store().await;
    store.close();
    let future = PostgresStore::latest_schema_version() + 1;
    let client = raw(&schema).await;
    client
        .execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'from the future', 0)",
            &[&future],
        )
        .await
        .unwrap();
    let err = PostgresStore::connect_with(&url(), options(&schema)).await.unwrap_err();
    assert_eq!(
        err,
        StoreError::SchemaTooNew {
            found: future,
            supported: PostgresStore::latest_schema_version()
        }
    );
    let max: i64 = client
        .query_one("SELECT max(version) FROM schema_migrations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(max, future, "the version must not be touched");
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
async fn schemas_keep_stores_apart() {
    let (a, _) = fresh_store().await;
    let (b, _) = fresh_store().await;
    let id = SessionId::new_random();
    a.create_session(&SessionInfo::new(id.clone())).await.unwrap();
    a.kv_set("k", "a").await.unwrap();
    assert!(b.session(&id).await.unwrap().is_none());
    assert_eq!(b.kv_get("k").await.unwrap(), None);
    // The same id can exist in both.
    b.create_session(&SessionInfo::new(id.clone())).await.unwrap();
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
async fn an_unknown_database_is_reported_with_what_to_check() {
    let mut config: tokio_postgres::Config = url().parse().unwrap();
    config.dbname("no_such_database_here");
    let tokio_postgres::config::Host::Tcp(host) = &config.get_hosts()[0] else {
        panic!("the test server is reached over TCP");
    };
    let port = config.get_ports()[0];
    let user = config.get_user().unwrap_or("postgres");
    let bad = format!("postgres://{user}@{host}:{port}/no_such_database_here");
    let err = PostgresStore::connect(&bad).await.unwrap_err().to_string();
    assert!(err.contains("refused the connection"), "{err}");
    assert!(err.contains("no_such_database_here"), "{err}");
    assert!(err.contains("check the user, password and database"), "{err}");
}

#[tokio::test]
async fn a_server_that_is_not_there_is_reported_without_the_password() {
    // A port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://agent:s3cret-pw@127.0.0.1:{port}/agents");
    let err = PostgresStore::connect(&url).await.unwrap_err().to_string();
    assert!(
        err.contains(&format!("could not connect to PostgreSQL at 127.0.0.1:{port}")),
        "{err}"
    );
    assert!(err.contains("is the server running"), "{err}");
    assert!(
        err.contains("\"agents\"") && err.contains("\"agent\""),
        "names the database and user: {err}"
    );
    assert!(!err.contains("s3cret-pw"), "the password leaked into: {err}");
}

#[tokio::test]
async fn bad_urls_and_options_are_refused_before_connecting() {
    let err = PostgresStore::connect("postgres://u:hunter2@host:notaport/db")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid PostgreSQL URL"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let err = PostgresStore::connect_with(
        "postgres://u@127.0.0.1/db",
        PostgresOptions {
            schema: Some("Robert'); DROP TABLE students;--".into()),
            ..PostgresOptions::default()
        },
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("not a plain schema name"), "{err}");
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
async fn without_a_schema_the_tables_go_to_the_search_path() {
    // The only test that uses the database's default schema (public), so it cannot collide.
    let store = PostgresStore::connect(&url()).await.unwrap();
    assert_eq!(store.schema(), None);
    assert_eq!(
        store.schema_version().await.unwrap(),
        PostgresStore::latest_schema_version()
    );
    let id = SessionId::new_random();
    store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
    store.append_messages(&id, 1, &[Message::user("hi")]).await.unwrap();
    let (client, connection) = tokio_postgres::connect(&url(), NoTls).await.unwrap();
    tokio::spawn(connection);
    let n: i64 = client
        .query_one("SELECT count(*) FROM public.sessions WHERE id = $1", &[&id.as_str()])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    store.delete_session(&id).await.unwrap();
    assert!(format!("{store:?}").contains("PostgresStore"));
}

/// An append that inserted rows notifies `agent_core_messages` with `<session id> <last
/// inserted seq>`, once, at commit; a replayed append (nothing inserted) and a refused one
/// notify nothing. Notifications arrive in commit order, so the last append here closes the
/// list: whatever the replay or the refusal had sent would come before it.
#[tokio::test]
#[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
async fn an_append_notifies_listeners_once_and_its_replay_not_at_all() {
    use futures::StreamExt;
    use tokio_postgres::AsyncMessage;

    let (store, _schema) = fresh_store().await;
    let (listener, mut connection) = tokio_postgres::connect(&url(), NoTls).await.unwrap();
    let (notes, mut received) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(n) = message {
                let _ = notes.send((n.channel().to_owned(), n.payload().to_owned()));
            }
        }
    });
    listener.batch_execute("LISTEN agent_core_messages").await.unwrap();

    let id = SessionId::new_random();
    store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
    let batch = [Message::user("a"), Message::assistant("b")];
    store.append_messages(&id, 1, &batch).await.unwrap();
    store.append_messages(&id, 1, &batch).await.unwrap();
    assert!(matches!(
        store.append_messages(&id, 2, &[Message::user("other")]).await,
        Err(StoreError::Conflict { .. })
    ));
    store
        .append_messages(&id, 2, &[Message::assistant("b"), Message::user("c")])
        .await
        .unwrap();

    // Other tests append to the same database at the same time: keep this session's.
    let mut mine = Vec::new();
    while mine.len() < 2 {
        let (channel, payload) = tokio::time::timeout(std::time::Duration::from_secs(10), received.recv())
            .await
            .expect("no notification within 10 s")
            .unwrap();
        assert_eq!(channel, "agent_core_messages");
        if payload.starts_with(id.as_str()) {
            mine.push(payload);
        }
    }
    assert_eq!(mine, [format!("{id} 2"), format!("{id} 3")]);
}
