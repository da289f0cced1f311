//! A typed turn's answer: taken from the answer tool when the model used it, parsed as JSON,
//! checked against the turn's schema, with one corrective retry before the turn fails.

use crate::message::{ContentPart, Message, Visibility};
use crate::provider::{ANSWER_TOOL, OutputSchema};
use crate::tool::{SchemaCheck, ToolSet};

/// How many schema violations the correction and the error name at most.
const MAX_LISTED: usize = 3;

/// The answer check of one typed turn.
pub(crate) struct AnswerCheck {
    schema: OutputSchema,
    check: SchemaCheck,
    corrected: bool,
}

/// What to do with a final answer.
pub(crate) enum Verdict {
    /// It is valid: the parsed value.
    Accepted(serde_json::Value),
    /// It is not: add this note for the model and call it again.
    Retry(Message),
    /// It is not, after the correction too: what was wrong.
    Failed(String),
}

impl AnswerCheck {
    /// The check of `schema`; the error says why it is not a usable JSON Schema.
    pub fn new(schema: OutputSchema) -> Result<Self, String> {
        let check = SchemaCheck::new(&schema.schema)
            .map_err(|e| format!("the output schema \"{}\" is not a valid JSON Schema: {e}", schema.name))?;
        Ok(AnswerCheck {
            schema,
            check,
            corrected: false,
        })
    }

    /// The schema, for the model request.
    pub fn schema(&self) -> &OutputSchema {
        &self.schema
    }

    /// Turns a call of the answer tool into the answer: when it is the message's only call,
    /// the message becomes the answer's JSON text; beside other calls it is dropped (the model
    /// answers again once their results are in). Nothing happens when a real tool of the
    /// agent has that name.
    pub fn take_answer_call(&self, tools: &ToolSet, message: &mut Message) {
        if tools.has(ANSWER_TOOL) || !message.tool_calls.iter().any(|c| c.name == ANSWER_TOOL) {
            return;
        }
        if let [call] = message.tool_calls.as_slice() {
            let answer = self.schema.answer_from_arguments(&call.arguments);
            message.content = vec![ContentPart::text(answer)];
            message.tool_calls.clear();
        } else {
            message.tool_calls.retain(|c| c.name != ANSWER_TOOL);
        }
    }

    /// Judges a final answer's text; `may_retry` is false when the turn has no model call
    /// left for a correction (`max_iterations`).
    pub fn judge(&mut self, text: &str, may_retry: bool) -> Verdict {
        let problem = match self.problem(text) {
            Ok(value) => return Verdict::Accepted(value),
            Err(problem) => problem,
        };
        if !may_retry && !self.corrected {
            return Verdict::Failed(format!(
                "the final answer {problem} (schema \"{}\"; no model call was left for a correction: max_iterations)",
                self.schema.name
            ));
        }
        if self.corrected {
            return Verdict::Failed(format!(
                "the final answer {problem} (schema \"{}\"; also after one correction)",
                self.schema.name
            ));
        }
        self.corrected = true;
        let mut note = Message::user(format!(
            "[note from the runtime: your final answer {problem}. Answer again with only a JSON value that matches \
             the schema \"{}\" (through the {ANSWER_TOOL} tool if it is offered).]",
            self.schema.name
        ));
        note.visibility = Visibility::MODEL_ONLY;
        Verdict::Retry(note)
    }

    /// The parsed answer, or what is wrong with it.
    fn problem(&self, text: &str) -> Result<serde_json::Value, String> {
        let json = strip_fence(text);
        if json.is_empty() {
            return Err("was empty, not JSON".to_owned());
        }
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("is not valid JSON ({e})"))?;
        if self.check.accepts_quickly(&value) {
            return Ok(value);
        }
        let validator = self
            .check
            .full()
            .map_err(|e| format!("could not be checked: the schema did not compile ({e})"))?;
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .take(MAX_LISTED)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() { "/".to_owned() } else { path };
                format!("at {at}: {e}")
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(format!("does not match the schema: {}", errors.join("; ")))
        }
    }
}

/// The text inside a Markdown code fence (```json ... ```), or the trimmed text.
fn strip_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // The info string (`json`) runs to the end of the first line.
    match body.split_once('\n') {
        Some((_, inner)) => inner.trim(),
        None => body.trim(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    fn check() -> AnswerCheck {
        AnswerCheck::new(OutputSchema::new(
            "city",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        ))
        .unwrap()
    }

    #[test]
    fn fenced_json_is_accepted() {
        let Verdict::Accepted(value) = check().judge("```json\n{\"name\": \"Oslo\"}\n```", true) else {
            panic!("not accepted");
        };
        assert_eq!(value, json!({"name": "Oslo"}));
    }

    #[test]
    fn a_plain_schema_accepts_without_compiling_and_refuses_in_the_validators_words() {
        let mut check = check();
        assert!(matches!(check.judge(r#"{"name": "Oslo"}"#, true), Verdict::Accepted(_)));
        assert!(check.check.compiled().is_none());
        let Verdict::Retry(note) = check.judge(r#"{"name": 7}"#, true) else {
            panic!("no retry");
        };
        assert!(
            note.text().contains("at /name: 7 is not of type \"string\""),
            "{}",
            note.text()
        );
        assert!(check.check.compiled().is_some());
    }

    #[test]
    fn one_correction_then_failure_naming_the_problem() {
        let mut check = check();
        let Verdict::Retry(note) = check.judge("{\"nom\": 1}", true) else {
            panic!("no retry");
        };
        assert_eq!(note.visibility, Visibility::MODEL_ONLY);
        assert!(
            note.text().contains("\"name\" is a required property"),
            "{}",
            note.text()
        );
        let Verdict::Failed(error) = check.judge("Oslo", true) else {
            panic!("no failure");
        };
        assert!(error.starts_with("the final answer is not valid JSON"), "{error}");
    }

    #[test]
    fn no_correction_past_the_iteration_cap() {
        let Verdict::Failed(error) = check().judge("", false) else {
            panic!("no failure");
        };
        assert!(error.starts_with("the final answer was empty"), "{error}");
        assert!(error.contains("max_iterations"), "{error}");
    }

    #[test]
    fn an_invalid_schema_is_refused() {
        let error = AnswerCheck::new(OutputSchema::new("bad", json!({"type": 12})))
            .err()
            .unwrap();
        assert!(error.contains("not a valid JSON Schema"), "{error}");
    }
}
