//! [`AgentSession`]: the Restate virtual object, one per session id, that runs its turns.

use std::sync::Arc;

use agent_core::steps::Steps;
use agent_core::{Agent, Message, SessionId, SessionInfo, Store, StoreError, TurnOrigin};
use agent_core::{DriveError, DriveOptions, TurnStart};
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::DurableError;
use crate::notify::notify_cancel;
use crate::records::{cancel_key, invocation_key};
use crate::runs::RunRegistry;
use crate::steps::RestateSteps;
use crate::wire::{AnswerRequest, ApproveRequest, CancelReply, CancelRequest, RelayRequest, TurnReply, TurnRequest};

/// The Restate virtual object that runs a session's turns, keyed by session id.
///
/// Handlers (ingress paths `/AgentSession/{session}/{handler}`):
/// - `turn` (exclusive): runs one turn for a message ([`TurnRequest`]);
/// - `answer` (exclusive): runs the turn that continues from a clarification ([`AnswerRequest`]);
/// - `approve` (exclusive): runs the turn that continues from a gate approval ([`ApproveRequest`]);
/// - `cancel` (shared, so it runs while a turn holds the session): stops a run ([`CancelRequest`]);
/// - `relay` (shared): queues a message on another session's object ([`RelayRequest`]).
///
/// Every replica binds the same object over the same agent (same tools, configuration and store).
pub struct AgentSession {
    agent: Agent,
    store: Arc<dyn Store>,
    runs: RunRegistry,
    postgres_url: Option<String>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession").field("runs", &self.runs.len()).finish()
    }
}

impl AgentSession {
    /// The object over `agent`, whose store every replica shares; `runs` holds the tokens of the
    /// turns running here (give the same registry to [`spawn_cancel_listener`](crate::spawn_cancel_listener)).
    pub fn new(agent: Agent, runs: RunRegistry) -> Result<Self, DurableError> {
        let store = agent.store().cloned().ok_or(DurableError::NoStore)?;
        Ok(AgentSession {
            agent,
            store,
            runs,
            postgres_url: None,
        })
    }

    /// Announces cancels on this PostgreSQL database too (`NOTIFY`), so the replica running the
    /// turn stops its live model or tool call at once instead of at its next step.
    pub fn with_cancel_notify(mut self, postgres_url: impl Into<String>) -> Self {
        self.postgres_url = Some(postgres_url.into());
        self
    }
}

/// The first step of every turn: where the history stood when it began.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Begin {
    base_seq: u64,
    cancel_requested: bool,
}

pub use handlers::AgentSessionClient;

// The macro generates items (the client type's handler methods) without documentation of
// their own.
#[allow(missing_docs)]
mod handlers {
    use super::*;

    #[restate_sdk::object(
        name = "AgentSession",
        inactivity_timeout = "5m",
        abort_timeout = "15m",
        invocation_retry_policy(initial_interval = "200ms", factor = 2.0, max_interval = "5s")
    )]
    impl AgentSession {
        /// Runs one turn for a message.
        #[handler]
        async fn turn(&self, ctx: ObjectContext<'_>, request: Json<TurnRequest>) -> HandlerResult<Json<TurnReply>> {
            let request = request.into_inner();
            let run_id = run_id(&ctx, request.run_id);
            let origin = match request.from_session {
                Some(from) => TurnOrigin::Tab {
                    tab_id: Some(from.clone()),
                    handle: Some(from),
                },
                None => TurnOrigin::Person,
            };
            let start = TurnStart::Message {
                message: Message::user(request.text),
                origin,
            };
            self.run_turn(&ctx, run_id, start).await
        }

        /// Runs the turn that continues from the question the session is parked on.
        #[handler]
        async fn answer(&self, ctx: ObjectContext<'_>, request: Json<AnswerRequest>) -> HandlerResult<Json<TurnReply>> {
            let request = request.into_inner();
            let run_id = run_id(&ctx, request.run_id);
            let start = TurnStart::Answer {
                clarification_id: request.clarification_id,
                answer: request.answer,
            };
            self.run_turn(&ctx, run_id, start).await
        }

        /// Runs the turn that continues from the approval the session is parked on.
        #[handler]
        async fn approve(
            &self,
            ctx: ObjectContext<'_>,
            request: Json<ApproveRequest>,
        ) -> HandlerResult<Json<TurnReply>> {
            let request = request.into_inner();
            let run_id = run_id(&ctx, request.run_id);
            let start = TurnStart::Approval {
                approval_id: request.approval_id,
                decisions: request.decisions,
            };
            self.run_turn(&ctx, run_id, start).await
        }

        /// Stops a run of this session, wherever it runs.
        #[handler]
        async fn cancel(
            &self,
            ctx: SharedObjectContext<'_>,
            request: Json<CancelRequest>,
        ) -> HandlerResult<Json<CancelReply>> {
            let run_id = request.into_inner().run_id;
            let session = session_id(ctx.key())?;
            let store = &self.store;
            let postgres_url = self.postgres_url.as_deref();
            let invocation = ctx
                .run(|| async {
                    store.kv_set(&cancel_key(&session, &run_id), "1").await.map_err(retry)?;
                    if let Some(url) = postgres_url {
                        // Best effort: the durable cancel below stops the turn at its next step anyway.
                        if let Err(e) = notify_cancel(url, &run_id).await {
                            tracing::warn!(error = %e, run_id, "could not announce a cancel");
                        }
                    }
                    let invocation = store.kv_get(&invocation_key(&session, &run_id)).await.map_err(retry)?;
                    Ok(Json(invocation))
                })
                .name("cancel")
                .await?
                .into_inner();
            if let Some(id) = &invocation {
                ctx.invocation_handle(id.clone()).cancel();
            }
            Ok(Json(CancelReply {
                invocation_id: invocation,
            }))
        }

        /// Queues a message from this session on another session's object (exactly once).
        #[handler]
        async fn relay(&self, ctx: SharedObjectContext<'_>, request: Json<RelayRequest>) -> HandlerResult<()> {
            let request = request.into_inner();
            session_id(&request.to)?;
            let message = TurnRequest {
                text: request.text,
                run_id: Some(request.run_id.clone()),
                from_session: Some(ctx.key().to_owned()),
            };
            ctx.object_client::<AgentSessionClient>(request.to)
                .turn(Json(message))
                .idempotency_key(request.run_id)
                .send();
            Ok(())
        }
    }
}

impl AgentSession {
    async fn run_turn(
        &self,
        ctx: &ObjectContext<'_>,
        run_id: String,
        start: TurnStart,
    ) -> HandlerResult<Json<TurnReply>> {
        let session = session_id(ctx.key())?;
        let guard = self.runs.register(&run_id);
        let store = &self.store;
        let begin = ctx
            .run(|| async {
                let base_seq = begin(store.as_ref(), &session).await.map_err(retry)?;
                let cancel_requested = store
                    .kv_get(&cancel_key(&session, &run_id))
                    .await
                    .map_err(retry)?
                    .is_some();
                Ok(Json(Begin {
                    base_seq,
                    cancel_requested,
                }))
            })
            .name("begin")
            .await?
            .into_inner();
        // Where a cancel from any replica finds this run's invocation (the same on every attempt;
        // written once the session exists, since creating one clears its key-value entries).
        self.store
            .kv_set(&invocation_key(&session, &run_id), ctx.invocation_id())
            .await
            .map_err(retry)?;
        if begin.cancel_requested {
            guard.token().cancel();
        }
        // A fresh handle as of the turn's start, on every attempt: rows a crashed attempt wrote
        // after it are the replay's to write again (they match), not history to start from.
        let handle = self
            .agent
            .session_at(&session, Some(begin.base_seq))
            .await
            .map_err(retry)?;
        let steps = RestateSteps::new(ctx);
        let options = DriveOptions {
            run_id: run_id.clone(),
            cancel: guard.token().clone(),
            steps: Steps::Durable(&steps),
        };
        match handle.drive(start, options).await {
            Ok(outcome) => {
                let outcome = serde_json::to_value(&outcome).map_err(retry)?;
                Ok(Json(TurnReply { run_id, outcome }))
            }
            Err(DriveError::Clarification(e)) => Err(TerminalError::new_with_code(400, e.to_string()).into()),
            Err(DriveError::Approval(e)) => Err(TerminalError::new_with_code(400, e.to_string()).into()),
            Err(DriveError::Engine(message)) => Err(HandlerError::from(message)),
        }
    }
}

/// The session's last sequence number, creating the session when it does not exist yet.
async fn begin(store: &dyn Store, session: &SessionId) -> Result<u64, StoreError> {
    if store.session(session).await?.is_none() {
        match store.create_session(&SessionInfo::new(session.clone())).await {
            Ok(()) | Err(StoreError::AlreadyExists(_)) => {}
            Err(e) => return Err(e),
        }
    }
    store.last_seq(session).await
}

fn run_id(ctx: &ObjectContext<'_>, asked: Option<String>) -> String {
    asked
        .or_else(|| ctx.idempotency_key().map(str::to_owned))
        .unwrap_or_else(|| ctx.invocation_id().to_owned())
}

fn session_id(key: &str) -> Result<SessionId, TerminalError> {
    SessionId::parse(key).map_err(|e| TerminalError::new_with_code(400, format!("invalid session id {key:?}: {e}")))
}

/// A failure worth another attempt (the store or the network).
fn retry(e: impl std::fmt::Display) -> HandlerError {
    HandlerError::from(e.to_string())
}
