//! The question: what the model asked (`ask_clarification`'s arguments), what answers fit it,
//! and the tool the model is offered.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::gate::TurnOrigin;
use crate::store::StoreError;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// The name of the built-in clarification tool.
pub const CLARIFICATION_TOOL: &str = "ask_clarification";

/// What kind of answer a question expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClarificationKind {
    /// A yes/no confirmation.
    Confirm,
    /// One of the given options.
    Choice,
    /// Free text.
    Input,
}

/// Arguments of `ask_clarification`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct AskArgs {
    /// `confirm` (yes/no), `choice` (one of `options`) or `input` (free text).
    kind: ClarificationKind,
    /// A short title for the question card.
    title: Option<String>,
    /// The question for the person.
    question: String,
    /// The options, for `choice` (at least two).
    options: Option<Vec<String>>,
}

/// A question the model asked the person, waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clarification {
    /// The question's id (answer with it).
    pub id: String,
    /// The `ask_clarification` tool call this question answers.
    pub call_id: String,
    /// What kind of answer is expected.
    pub kind: ClarificationKind,
    /// A short title.
    pub title: Option<String>,
    /// The question.
    pub question: String,
    /// The options, for `choice`.
    pub options: Vec<String>,
    /// When it was asked (ms since the epoch).
    pub asked_at_ms: i64,
    /// When it expires (ms since the epoch).
    pub expires_at_ms: i64,
    /// Who started the turn that asked; the turn resumed by the answer acts for them too.
    #[serde(default)]
    pub origin: TurnOrigin,
}

impl Clarification {
    /// Builds the question from the model's (already schema-validated) arguments.
    pub(crate) fn from_call(
        call_id: &str,
        args: &serde_json::Value,
        now_ms: i64,
        ttl: Duration,
    ) -> Result<Self, String> {
        let args: AskArgs = serde_json::from_value(args.clone()).map_err(|e| format!("invalid clarification: {e}"))?;
        let options = args.options.unwrap_or_default();
        if args.question.trim().is_empty() {
            return Err("invalid clarification: the question is empty".into());
        }
        if args.kind == ClarificationKind::Choice && options.len() < 2 {
            return Err("invalid clarification: a choice question needs at least two options".into());
        }
        Ok(Clarification {
            id: uuid::Uuid::new_v4().to_string(),
            call_id: call_id.to_owned(),
            kind: args.kind,
            title: args.title,
            question: args.question,
            options,
            asked_at_ms: now_ms,
            expires_at_ms: now_ms.saturating_add(ttl.as_millis() as i64),
            origin: TurnOrigin::Person,
        })
    }

    /// Checks an answer against the question's kind; returns the normalised answer.
    pub fn check_answer(&self, answer: &str) -> Result<String, ClarificationError> {
        let trimmed = answer.trim();
        match self.kind {
            ClarificationKind::Confirm => match trimmed.to_ascii_lowercase().as_str() {
                "yes" | "y" | "true" | "confirm" | "ok" => Ok("yes".into()),
                "no" | "n" | "false" | "cancel" => Ok("no".into()),
                _ => Err(ClarificationError::InvalidAnswer(format!(
                    "this question needs a yes or no answer, got {answer:?}"
                ))),
            },
            ClarificationKind::Choice => {
                self.options
                    .iter()
                    .find(|o| o.as_str() == trimmed)
                    .cloned()
                    .ok_or_else(|| {
                        ClarificationError::InvalidAnswer(format!(
                            "{answer:?} is not one of the options: {}",
                            self.options.join(", ")
                        ))
                    })
            }
            ClarificationKind::Input if trimmed.is_empty() => Err(ClarificationError::InvalidAnswer(
                "the answer is empty; this question needs some text".into(),
            )),
            ClarificationKind::Input => Ok(trimmed.to_owned()),
        }
    }

    /// The question as JSON, for events.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// Why an answer was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClarificationError {
    /// No question with this id is pending in the session.
    #[error("no pending clarification {0} in this session (it was answered, dismissed or expired)")]
    NotPending(String),
    /// The answer does not fit the question; the question stays pending.
    #[error("invalid answer: {0}; the question is still pending")]
    InvalidAnswer(String),
    /// The question expired before the answer came.
    #[error("the clarification expired before it was answered")]
    Expired,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The tool the model calls. The loop intercepts its calls; calling it outside the loop (for
/// example through an MCP server) is refused.
pub(crate) struct AskClarificationTool {
    spec: ToolSpec,
}

impl AskClarificationTool {
    pub fn new() -> Self {
        AskClarificationTool {
            spec: ToolSpec::new(
                CLARIFICATION_TOOL,
                "Ask the person a question and wait for the answer. Use it when the request is ambiguous or before \
                 doing something they may not want. kind: confirm (yes/no), choice (one of options), input (free text).",
                crate::tool::schema_for::<AskArgs>(),
            ),
        }
    }
}

#[async_trait]
impl Tool for AskClarificationTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _args: serde_json::Value, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::model("ask_clarification only works inside an agent turn"))
    }
}
