//! The model call of one iteration: fit the request, stream the answer, retry once after a
//! context overflow.

use futures::StreamExt;

use super::Turn;
use crate::agent::context;
use crate::agent::cost;
use crate::agent::error_kind::ErrorKind;
use crate::agent::genai_spans;
use crate::agent::history::History;
use crate::agent::hook_points;
use crate::event::EventKind;
use crate::provider::{ModelRequest, ModelResponse, OutputSchema, ProviderError, ResponseAssembler, StreamEvent};
use crate::steps::{ModelStep, StepKind, StepRequest};
use crate::tool::ToolSet;

/// Why a model call did not produce a response.
pub(super) enum CallFailed {
    Cancelled,
    Provider(ProviderError),
    /// A host hook failed (its message).
    Hook(String),
    /// The call could pass a cost budget: not made (the message the turn ends with).
    OverBudget(String),
    /// A durable executor stopped the attempt (its message).
    Engine(String),
}

impl Turn<'_> {
    /// One streamed model call, raced against cancellation and bounded by the model timeout;
    /// `output` is the schema of a typed turn's answer.
    pub(super) async fn call_model(
        &self,
        history: &mut History,
        tools: &ToolSet,
        output: Option<&OutputSchema>,
        meter: &mut cost::Meter<'_>,
    ) -> Result<ModelResponse, CallFailed> {
        match self.call_model_once(history, tools, output, meter).await {
            Err(CallFailed::Provider(ProviderError::ContextOverflow(message))) => {
                // The provider says the request does not fit: shrink it once and retry.
                if context::after_overflow(self.agent, self.session, history, self.emitter).await {
                    self.call_model_once(history, tools, output, meter).await
                } else {
                    Err(CallFailed::Provider(ProviderError::ContextOverflow(message)))
                }
            }
            other => other,
        }
    }

    async fn call_model_once(
        &self,
        history: &mut History,
        tools: &ToolSet,
        output: Option<&OutputSchema>,
        meter: &mut cost::Meter<'_>,
    ) -> Result<ModelResponse, CallFailed> {
        let config = &self.agent.config;
        let (messages, reuse) = history.take_model_view();
        let mut request = ModelRequest {
            system: self.agent.system_prompt.clone(),
            messages,
            tools: tools.schemas(),
            max_output_tokens: config.max_output_tokens,
            temperature: config.temperature,
            output_schema: output.cloned(),
            reuse,
        };
        let images = if self.agent.takes_images {
            config.max_images as usize
        } else {
            0
        };
        if let Some(edited) = crate::agent::images::keep_newest_images(&mut request.messages, images) {
            request.reuse.changed_from(edited);
        }
        // Compaction may call the model to summarise: it is cancellable like any model call.
        let fitted = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(CallFailed::Cancelled),
            fitted = context::fit_request(self.agent, self.session, history, &mut request, self.emitter, meter, self.steps) => fitted.map_err(super::interrupted)?,
        };
        if cost::has_budget(config) {
            // The request as fitted, estimated the way compaction counts it.
            let input_tokens = history
                .last_raw_estimate
                .map_or(0, |raw| history.estimator.calibrated(raw));
            if let Some(message) = cost::over_budget(config, &self.agent.pricing, input_tokens, meter.spent()) {
                if fitted == context::Fitted::AsIs {
                    history.keep_model_view(request.messages, request.reuse);
                }
                return Err(CallFailed::OverBudget(message));
            }
        }
        let hooks = &self.agent.hooks;
        if hooks.is_empty() {
            let result = self.send_step(&request).await;
            if fitted == context::Fitted::AsIs {
                history.keep_model_view(request.messages, request.reuse);
            }
            return result;
        }
        // A hook may edit the request: it is not kept as the next call's starting point, and
        // its messages are encoded afresh.
        request.reuse.changed_from(0);
        hook_points::before_model_call(hooks, self.session, &mut request)
            .await
            .map_err(CallFailed::Hook)?;
        let mut response = self.send_step(&request).await?;
        hook_points::after_model_call(hooks, self.session, &mut response)
            .await
            .map_err(CallFailed::Hook)?;
        Ok(response)
    }

    /// [`Self::send_request`] as one step of the turn: journaled when the turn is durable.
    async fn send_step(&self, request: &ModelRequest) -> Result<ModelResponse, CallFailed> {
        if self.steps.is_durable() {
            // Boxed: the in-process turn's future does not carry the durable path's state.
            Box::pin(self.send_journaled(request)).await
        } else {
            self.send_request(request).await
        }
    }

    async fn send_journaled(&self, request: &ModelRequest) -> Result<ModelResponse, CallFailed> {
        let call = async {
            match self.send_request(request).await {
                Ok(response) => ModelStep::Answered(Box::new(response)),
                Err(CallFailed::Provider(e)) => ModelStep::Failed(e),
                // send_request fails only with a provider error or a cancel.
                Err(_) => ModelStep::Cancelled,
            }
        };
        let request = || StepRequest {
            kind: StepKind::Model,
            name: self.next_model_step(),
            input: serde_json::Value::Null,
        };
        match self.steps.run(request, call).await.map_err(super::interrupted)? {
            ModelStep::Answered(response) => Ok(*response),
            ModelStep::Failed(e) => Err(CallFailed::Provider(e)),
            // The loop's call bounds its own time: a timeout is a provider error.
            ModelStep::Cancelled | ModelStep::TimedOut => Err(CallFailed::Cancelled),
        }
    }

    /// Sends one request and assembles the streamed answer, emitting tokens as they come. Its
    /// `chat` span times it without being entered: nothing of the agent's nests under a model
    /// call, and wrapping the call's future would copy it once more per call even when nobody
    /// collects spans.
    async fn send_request(&self, request: &ModelRequest) -> Result<ModelResponse, CallFailed> {
        let span = genai_spans::chat(self.agent, self.session, request);
        let config = &self.agent.config;
        let call = async {
            let mut stream = self.agent.provider.stream(request, self.cancel.child_token()).await?;
            let mut assembler = ResponseAssembler::new();
            let mut streaming_text = false;
            // Names of the calls forming, kept only when their argument deltas are events.
            let mut forming: Vec<(String, String)> = Vec::new();
            while let Some(event) = stream.next().await {
                let event = event?;
                match &event {
                    StreamEvent::ToolCallStart { id, name, .. } if config.stream_tool_arguments => {
                        forming.push((id.clone(), name.clone()));
                    }
                    StreamEvent::ToolArgsDelta { id, json } if config.stream_tool_arguments => {
                        let name = forming.iter().find(|(i, _)| i == id).map(|(_, n)| n.clone());
                        self.emitter.emit(EventKind::ToolCallArgumentsDelta {
                            call_id: id.clone(),
                            name: name.unwrap_or_default(),
                            delta: json.clone(),
                        })
                    }
                    StreamEvent::TextDelta { text } => {
                        self.follow_text(text, std::mem::replace(&mut streaming_text, true));
                        self.emitter.emit(EventKind::ContentToken { text: text.clone() })
                    }
                    StreamEvent::ReasoningDelta { text } => {
                        self.emitter.emit(EventKind::ReasoningToken { text: text.clone() })
                    }
                    StreamEvent::Served { provider, model } => self.emitter.emit(EventKind::ModelRouted {
                        provider: provider.clone(),
                        model: model.clone(),
                    }),
                    _ => {}
                }
                assembler.push(event)?;
            }
            if !assembler.is_done() {
                return Err(ProviderError::Malformed(
                    "the response stream ended before the model finished".into(),
                ));
            }
            Ok(assembler.finish())
        };
        let result = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(CallFailed::Cancelled),
            result = tokio::time::timeout(config.model_timeout, call) => match result {
                Err(_) => Err(CallFailed::Provider(ProviderError::Timeout(format!(
                    "no complete answer within {} s (the model-call timeout)",
                    config.model_timeout.as_secs_f64()
                )))),
                Ok(Err(ProviderError::Cancelled)) => Err(CallFailed::Cancelled),
                Ok(Err(e)) => Err(CallFailed::Provider(e)),
                Ok(Ok(response)) => Ok(response),
            },
        };
        match &result {
            Ok(response) => genai_spans::record_response(&span, self.agent, response),
            Err(CallFailed::Provider(e)) => {
                genai_spans::record_error(&span, ErrorKind::Provider(e.error_kind()).as_str())
            }
            Err(CallFailed::Cancelled | CallFailed::Hook(_) | CallFailed::OverBudget(_) | CallFailed::Engine(_)) => {}
        }
        result
    }

    /// Keeps the status's `last_message` on the text being streamed, so a host that polls
    /// shows the answer as it grows: the first delta of a call replaces the previous message,
    /// later ones are appended in place (no copy of the whole text per delta).
    fn follow_text(&self, delta: &str, continuing: bool) {
        self.emitter.update(|s| match (&mut s.last_message, continuing) {
            (Some(text), true) => text.push_str(delta),
            (last, _) => *last = Some(delta.to_owned()),
        });
    }
}
