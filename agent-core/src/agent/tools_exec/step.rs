//! What a tool call's journaled step records: its result in a form that survives
//! serialisation, so that a replay settles the call exactly as the attempt that ran it.

use std::time::Duration;

use super::Failure;
use crate::steps::Interrupted;
use crate::tool::{ToolError, ToolOutput};

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) enum ToolStep {
    Finished {
        result: Recorded,
        elapsed_ms: u64,
    },
    /// The turn was cancelled while the call ran.
    Cancelled,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) enum Recorded {
    Output(ToolOutput),
    ForModel {
        message: String,
        retryable: bool,
    },
    /// A fatal error's source is not recorded: a replay reports the message only.
    Fatal {
        message: String,
    },
    Timeout {
        limit_ms: u64,
    },
    Panic {
        message: String,
    },
}

impl ToolStep {
    pub fn finished(result: Result<ToolOutput, Failure>, elapsed: Duration) -> Self {
        let result = match result {
            Ok(output) => Recorded::Output(output),
            Err(Failure::Tool(ToolError::ForModel { message, retryable })) => Recorded::ForModel { message, retryable },
            Err(Failure::Tool(ToolError::Fatal { message, .. })) => Recorded::Fatal { message },
            Err(Failure::Timeout(limit)) => Recorded::Timeout {
                limit_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
            },
            Err(Failure::Panic(message)) => Recorded::Panic { message },
        };
        ToolStep::Finished {
            result,
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The call's result as the loop settles it; a cancel as the executor reports one.
    pub fn into_result(self) -> Result<(Result<ToolOutput, Failure>, Duration), Interrupted> {
        let ToolStep::Finished { result, elapsed_ms } = self else {
            return Err(Interrupted::Cancelled);
        };
        let result = match result {
            Recorded::Output(output) => Ok(output),
            Recorded::ForModel { message, retryable } => Err(Failure::Tool(ToolError::ForModel { message, retryable })),
            Recorded::Fatal { message } => Err(Failure::Tool(ToolError::Fatal { message, source: None })),
            Recorded::Timeout { limit_ms } => Err(Failure::Timeout(Duration::from_millis(limit_ms))),
            Recorded::Panic { message } => Err(Failure::Panic(message)),
        };
        Ok((result, Duration::from_millis(elapsed_ms)))
    }
}
