//! Cancels heard through PostgreSQL: `NOTIFY agent_durable_cancel, '<run id>'` from any replica
//! trips the token of the turn with that run id on whichever replica runs it.

use std::time::Duration;

use futures::StreamExt;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Config, NoTls};

use crate::error::DurableError;
use crate::runs::RunRegistry;

/// The PostgreSQL channel cancels are announced on; the payload is the run id.
pub const CANCEL_CHANNEL: &str = "agent_durable_cancel";

fn parse(url: &str) -> Result<Config, DurableError> {
    url.parse::<Config>()
        .map_err(|e| DurableError::PostgresConfig(e.to_string()))
}

/// Announces a cancel of `run_id` to every replica listening (see [`spawn_cancel_listener`]).
pub async fn notify_cancel(postgres_url: &str, run_id: &str) -> Result<(), DurableError> {
    let (client, connection) = parse(postgres_url)?
        .connect(NoTls)
        .await
        .map_err(|e| DurableError::Postgres(e.to_string()))?;
    let driver = tokio::spawn(connection);
    let sent = client
        .execute("SELECT pg_notify($1, $2)", &[&CANCEL_CHANNEL, &run_id])
        .await
        .map_err(|e| DurableError::Postgres(e.to_string()));
    drop(client);
    let _ = driver.await;
    sent.map(|_| ())
}

/// Listens on [`CANCEL_CHANNEL`] and cancels the named runs registered in `runs`, reconnecting
/// (after a second) whenever the connection drops. Abort the handle to stop it.
///
/// The connection string is checked at once; connecting happens in the task.
pub fn spawn_cancel_listener(postgres_url: &str, runs: RunRegistry) -> Result<JoinHandle<()>, DurableError> {
    let config = parse(postgres_url)?;
    Ok(tokio::spawn(async move {
        loop {
            if let Err(e) = listen(&config, &runs).await {
                tracing::warn!(error = %e, "cancel listener lost its PostgreSQL connection; reconnecting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }))
}

async fn listen(config: &Config, runs: &RunRegistry) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    // Bounded: a burst of notices waits in the connection rather than in memory.
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
    let driver = tokio::spawn(async move {
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if tx.send(n.payload().to_owned()).await.is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    client.batch_execute(&format!("LISTEN {CANCEL_CHANNEL}")).await?;
    while let Some(run_id) = rx.recv().await {
        if runs.cancel(&run_id) {
            tracing::info!(run_id, "cancelled a running turn on notice from PostgreSQL");
        }
    }
    drop(client);
    match driver.await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}
