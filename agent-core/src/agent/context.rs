//! Keeping each request within the model's context budget (compaction).
//!
//! See [`crate::compaction`] for the rules. Here they meet the loop: the provider that
//! summarises, the store that records the cursor, and the events.

use tokio_util::sync::CancellationToken;

use super::AgentInner;
use super::cost::{self, Meter};
use super::emit::Emitter;
use super::error_kind::ErrorKind;
use super::genai_spans;
use super::history::History;
use crate::compaction::{choose_cut, render_transcript, summary_request, trim_to_fit};
use crate::event::EventKind;
use crate::provider::{ModelRequest, ProviderErrorKind, Usage};
use crate::session::SessionId;
use crate::steps::{Interrupted, ModelStep, StepKind, StepRequest, Steps};
use crate::store::{Compaction, now_millis};

/// Share of the budget that the kept (not summarised) messages may use, so that the summary
/// and the next answers have room.
const KEEP_SHARE: f64 = 0.6;

/// The input-token limit in force: the configured or provider-reported window, tightened by
/// what a `ContextOverflow` taught.
fn input_limit(agent: &AgentInner, history: &History) -> Option<u64> {
    let configured = agent
        .config
        .compaction
        .max_input_tokens
        .or_else(|| agent.provider.max_input_tokens());
    match (configured, history.overflow_limit) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Called before every model call with the request about to be sent. When the estimate
/// exceeds `ratio × max_input_tokens`, older turns are summarised (recording the cursor in
/// the store) and, if that fails or is not enough, the request is trimmed deterministically.
pub(crate) async fn fit_request(
    agent: &AgentInner,
    session: &SessionId,
    history: &mut History,
    request: &mut ModelRequest,
    emitter: &Emitter,
    meter: &mut Meter<'_>,
    steps: Steps<'_>,
) -> Result<Fitted, Interrupted> {
    let config = &agent.config.compaction;
    history.estimator.set_chars_per_token(config.chars_per_token);
    history.last_raw_estimate = Some(history.estimator.raw_request(request));
    if !config.enabled {
        return Ok(Fitted::AsIs);
    }
    let Some(limit) = input_limit(agent, history) else {
        return Ok(Fitted::AsIs);
    };
    let budget = ((limit as f64) * config.ratio.clamp(0.05, 1.0)) as u64;
    let estimated = history.estimator.request(request);
    if estimated <= budget {
        return Ok(Fitted::AsIs);
    }
    emitter.emit(EventKind::CompactionRunning {
        estimated_tokens: estimated,
        budget_tokens: budget,
    });
    // Whatever happens next edits the messages: none of the last request's encoding applies.
    request.reuse.changed_from(0);
    let mut method = "trim";
    if summarise(agent, session, history, request, budget, limit, meter, steps).await? {
        request.messages = history.model_view();
        method = "summary";
    }
    if history.estimator.request(request) > budget {
        let report = trim_to_fit(request, budget, &history.estimator);
        if !report.fits {
            tracing::warn!(
                estimated = report.estimated_tokens,
                budget,
                "the system prompt and tool schemas alone exceed the context budget"
            );
        }
        method = "trim";
    }
    history.last_raw_estimate = Some(history.estimator.raw_request(request));
    emitter.emit(EventKind::CompactionCompleted {
        estimated_tokens: history.estimator.request(request),
        method: method.to_owned(),
    });
    Ok(Fitted::Changed)
}

/// Whether [`fit_request`] left the request's messages as the history's model view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fitted {
    AsIs,
    Changed,
}

/// Summarises older messages with the model, at most `max_attempts` times. Returns whether a
/// summary was recorded (in the store, when there is one, and in `history`). Each summary
/// call counts in the turn's usage and spend, and one that could pass a cost budget is not
/// made (the request is trimmed instead). Each summary call is a step of the turn
/// (`summary:{seq}.{attempt}`, the sequence number of the last message it summarises).
#[allow(clippy::too_many_arguments)] // the request, its limits, and what the call counts into
async fn summarise(
    agent: &AgentInner,
    session: &SessionId,
    history: &mut History,
    request: &ModelRequest,
    budget: u64,
    limit: u64,
    meter: &mut Meter<'_>,
    steps: Steps<'_>,
) -> Result<bool, Interrupted> {
    let config = &agent.config.compaction;
    if history.summary_failed_turn == Some(history.turn_start) {
        return Ok(false);
    }
    let fixed = history.estimator.calibrated(history.estimator.raw_fixed(request));
    let keep_budget = ((budget.saturating_sub(fixed)) as f64 * KEEP_SHARE) as u64;
    let Some(cut) = choose_cut(
        &history.messages,
        history.compacted,
        history.turn_start,
        keep_budget,
        &history.estimator,
    ) else {
        return Ok(false);
    };
    let transcript = render_transcript(history.summary.as_deref(), &history.messages[history.compacted..cut]);
    let mut summary_req = summary_request(transcript, config.summary_max_tokens);
    // The summary request carries the conversation too: the same hooks see it (a redacting
    // hook must not be bypassed); a hook that fails leaves the history to the trim.
    if !agent.hooks.is_empty()
        && let Err(e) = super::hook_points::before_model_call(&agent.hooks, session, &mut summary_req).await
    {
        tracing::warn!(error = %e, "not summarising for compaction");
        history.summary_failed_turn = Some(history.turn_start);
        return Ok(false);
    }
    let raw = history.estimator.raw_request(&summary_req);
    if history.estimator.calibrated(raw) + u64::from(config.summary_max_tokens) > limit {
        tracing::info!("the summary request would not fit the context window; trimming instead");
        history.summary_failed_turn = Some(history.turn_start);
        return Ok(false);
    }
    let mut summary = None;
    for attempt in 1..=config.max_attempts.max(1) {
        if let Some(reason) = cost::over_budget_for(
            "summarising older turns",
            &agent.config,
            &agent.pricing,
            history.estimator.calibrated(raw),
            u64::from(config.summary_max_tokens),
            meter.spent(),
        ) {
            tracing::info!(%reason, "not summarising for compaction; trimming instead");
            break;
        }
        // A model call like the loop's own: a `chat` span of its own under the turn's.
        let span = genai_spans::chat(agent, session, &summary_req);
        let cut_seq = history.seq_of(cut - 1);
        let call = async {
            let call = agent.provider.complete(&summary_req, CancellationToken::new());
            match tokio::time::timeout(agent.config.model_timeout, call).await {
                Ok(Ok(response)) => ModelStep::Answered(Box::new(response)),
                Ok(Err(e)) => ModelStep::Failed(e),
                Err(_) => ModelStep::TimedOut,
            }
        };
        let step = steps.run(
            || StepRequest {
                kind: StepKind::Summary,
                name: format!("summary:{cut_seq}.{attempt}"),
                input: serde_json::Value::Null,
            },
            call,
        );
        match step.await? {
            ModelStep::Answered(response) => {
                genai_spans::record_response(&span, agent, &response);
                if let Some(usage) = &response.usage {
                    history.estimator.observe(raw, usage.input_tokens);
                }
                let served = response.served_by.as_ref().map(|(_, model)| model.as_str());
                meter.count(&agent.pricing, served, response.usage.as_ref());
                let text = response.message.text();
                if !text.trim().is_empty() {
                    summary = Some(text.trim().to_owned());
                    break;
                }
                tracing::warn!(attempt, "the summary came back empty");
            }
            ModelStep::Failed(e) => {
                genai_spans::record_error(&span, ErrorKind::Provider(e.error_kind()).as_str());
                tracing::warn!(attempt, error = %e, "summarising for compaction failed");
            }
            // A summary call is not raced against the turn's cancel: never recorded as one.
            ModelStep::TimedOut | ModelStep::Cancelled => {
                genai_spans::record_error(&span, ErrorKind::Provider(ProviderErrorKind::Timeout).as_str());
                tracing::warn!(attempt, "summarising for compaction timed out");
            }
        }
    }
    let Some(summary) = summary else {
        history.summary_failed_turn = Some(history.turn_start);
        return Ok(false);
    };
    if let Some(store) = &agent.store {
        let record = Compaction {
            session_id: session.clone(),
            cursor: history.seq_of(cut - 1),
            summary: summary.clone(),
            created_at_ms: now_millis(),
        };
        if let Err(e) = store.add_compaction(&record).await {
            // The summary still applies in this process; a reload sends the full history
            // again and compacts anew.
            tracing::warn!(error = %e, "could not record the compaction");
        }
    }
    history.summary = Some(summary);
    history.compacted = cut;
    history.forget_model_view();
    Ok(true)
}

/// Called once when the provider answers `ContextOverflow`. Learns that the window is
/// smaller than believed (the next requests aim at 70% of the refused request's size) and
/// returns true, so the call is retried; [`fit_request`] then compacts or trims to the new
/// limit. Returns false when compaction is disabled or there is nothing left to shrink.
pub(crate) async fn after_overflow(
    agent: &AgentInner,
    _session: &SessionId,
    history: &mut History,
    emitter: &Emitter,
) -> bool {
    let _ = emitter;
    if !agent.config.compaction.enabled {
        return false;
    }
    let Some(raw) = history.last_raw_estimate else {
        return false;
    };
    let refused = history.estimator.calibrated(raw);
    if refused < 64 {
        return false;
    }
    history.estimator.underestimated();
    let ratio = agent.config.compaction.ratio.clamp(0.05, 1.0);
    // With budget = ratio × limit, the next request aims at 70% of the refused one.
    let limit = ((refused as f64) * 0.7 / ratio) as u64;
    history.overflow_limit = Some(history.overflow_limit.map_or(limit, |l| l.min(limit)));
    // Let summarising be tried again under the new limit.
    history.summary_failed_turn = None;
    true
}

/// Calibrates the token estimate from a model call's reported usage. The loop calls it after
/// every model call that reported usage.
pub(crate) fn observe_usage(history: &mut History, usage: Option<&Usage>) {
    if let (Some(raw), Some(usage)) = (history.last_raw_estimate, usage) {
        history.estimator.observe(raw, usage.input_tokens);
    }
}
