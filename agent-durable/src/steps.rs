//! [`RestateSteps`]: agent-core's step seam over a Restate handler's journal.

use agent_core::steps::{DurableSteps, Interrupted, StepRequest};
use futures::future::BoxFuture;
use restate_sdk::context::{ContextSideEffects, ObjectContext, RunFuture};
use restate_sdk::errors::HandlerError;

/// The status Restate gives the first durable operation a cancelled invocation awaits.
const CANCELLED: u16 = 409;

/// Journals each step of a turn with `ctx.run`, named by the step's stable name.
///
/// On a replay, a step the journal holds returns its recorded bytes without running; the first
/// step past the journal runs live and is recorded before it returns. A step with the wrong name
/// at a recorded position is a journal mismatch, which Restate reports and retries (the replay
/// diverged: the agent's tools, configuration or history changed under a live turn).
pub struct RestateSteps<'a, 'ctx> {
    ctx: &'a ObjectContext<'ctx>,
}

impl<'a, 'ctx> RestateSteps<'a, 'ctx> {
    /// Steps journaled in this handler's context.
    pub fn new(ctx: &'a ObjectContext<'ctx>) -> Self {
        RestateSteps { ctx }
    }
}

impl std::fmt::Debug for RestateSteps<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestateSteps")
            .field("invocation", &self.ctx.invocation_id())
            .finish()
    }
}

impl DurableSteps for RestateSteps<'_, '_> {
    fn step<'s>(
        &'s self,
        request: StepRequest,
        effect: BoxFuture<'s, Vec<u8>>,
    ) -> BoxFuture<'s, Result<Vec<u8>, Interrupted>> {
        // The context is covariant in its lifetime: borrowed for 's, it journals effects of 's.
        let ctx: &'s ObjectContext<'s> = self.ctx;
        Box::pin(async move {
            let recorded = ctx
                .run(move || async move { Ok::<Vec<u8>, HandlerError>(effect.await) })
                .name(request.name)
                .await;
            match recorded {
                Ok(bytes) => Ok(bytes),
                Err(e) if e.code() == CANCELLED => Err(Interrupted::Cancelled),
                Err(e) => Err(Interrupted::Engine(format!("step failed in the journal: {e}"))),
            }
        })
    }
}
