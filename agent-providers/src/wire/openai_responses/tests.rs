//! Hostile and unusual streams: what the decoder makes of events out of order, broken or
//! unknown, and of a body that never finishes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agent_core::{FinishReason, StreamEvent};

use super::*;
use crate::transport::decode_sse;

fn decode(body: &str) -> (Vec<StreamEvent>, Option<ProviderError>) {
    decode_sse(&mut ResponsesDecoder::new(), body.as_bytes())
}

fn sse(events: &[&str]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

const COMPLETED: &str = r#"{"type":"response.completed","response":{"status":"completed"}}"#;

#[test]
fn unknown_and_odd_events_are_skipped() {
    let body = sse(&[
        r#"{"type":"response.web_search_call.searching","output_index":0,"item_id":"ws_1"}"#,
        // A shape the decoder does not read, in an event it does not use.
        r#"{"type":"response.image_generation_call.partial_image","delta":{"x":1},"output_index":[]}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"hi"}"#,
        COMPLETED,
        // Anything after the end is ignored.
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"late"}"#,
    ]);
    let (events, err) = decode(&body);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta { text: "hi".into() },
            StreamEvent::Done {
                finish_reason: FinishReason::Stop
            }
        ]
    );
}

#[test]
fn broken_events_that_matter_are_malformed() {
    for body in [
        sse(&[r#"{"type":"response.output_text.delta","output_index":0,"delta":7}"#]),
        sse(&[r#"{"type":"response.completed","response":{"usage":{"input_tokens":-1}}}"#]),
        sse(&[
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c"}}"#,
        ]),
        sse(&[r#"{"type":"response.function_call_arguments.delta","output_index":3,"item_id":"fc_9","delta":"{}"}"#]),
        sse(&["not json at all"]),
        "event: response.completed\ndata: {\"response\":\n\n".to_owned(),
    ] {
        let (_, err) = decode(&body);
        let err = err.unwrap_or_else(|| panic!("no error for {body}"));
        assert_eq!(err.kind(), "malformed", "{body}: {err}");
    }
}

#[test]
fn a_stream_without_its_end_is_malformed() {
    let (_, err) = decode(&sse(&[
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"hi"}"#,
    ]));
    assert!(err.unwrap().to_string().contains("no response.completed"));
}

#[test]
fn a_call_cut_by_the_token_limit_is_not_run() {
    let body = sse(&[
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{\"a\":"}"#,
        r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}"#,
    ]);
    let (_, err) = decode(&body);
    assert!(
        err.unwrap()
            .to_string()
            .contains("output-token limit in the middle of tool call `f`")
    );
}

#[test]
fn a_call_id_twice_is_malformed_and_a_missing_one_is_made_up() {
    let item = |i: u32| {
        format!(
            r#"{{"type":"response.output_item.done","output_index":{i},"item":{{"type":"function_call","call_id":"same","name":"f","arguments":"{{}}"}}}}"#
        )
    };
    let (_, err) = decode(&sse(&[&item(0), &item(1)]));
    assert!(err.unwrap().to_string().contains("appears twice"));
    let body = sse(&[
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","name":"f"}}"#,
        COMPLETED,
    ]);
    let (events, err) = decode(&body);
    assert!(err.is_none(), "{err:?}");
    assert!(
        matches!(&events[0], StreamEvent::ToolCallStart { id, .. } if id.starts_with("call_")),
        "{events:?}"
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            finish_reason: FinishReason::ToolCalls
        })
    );
}

#[test]
fn errors_in_the_stream_keep_their_kind() {
    let failed = sse(&[
        r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"invalid_prompt","message":"no"}}}"#,
    ]);
    assert_eq!(decode(&failed).1.unwrap().kind(), "bad_request");
    let nested = sse(&[r#"{"type":"error","error":{"type":"server_error","code":"server_error","message":"x"}}"#]);
    assert_eq!(decode(&nested).1.unwrap().kind(), "server");
    // A failed response with no error object at all is still an error.
    let bare = sse(&[r#"{"type":"response.failed","response":{"status":"failed"}}"#]);
    assert_eq!(decode(&bare).1.unwrap().kind(), "server");
}

#[test]
fn text_and_reasoning_only_in_done_items_are_not_lost_nor_repeated() {
    // No deltas: the finished items carry it all.
    let body = sse(&[
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}],"encrypted_content":"e"}}"#,
        r#"{"type":"response.output_text.delta","output_index":1,"delta":"x"}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"x"}]}}"#,
        COMPLETED,
    ]);
    let (events, err) = decode(&body);
    assert!(err.is_none(), "{err:?}");
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!((text.as_str(), reasoning.as_str()), ("x", "a\n\nb"));
    let opaque: Vec<&serde_json::Value> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningOpaque { data } => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(opaque.len(), 2, "the reasoning item, then the marker of the message");
    assert_eq!(opaque[1], &serde_json::json!({"type": "message", "id": "msg_1"}));
}

#[test]
fn a_failed_or_empty_whole_body_is_an_error() {
    let failed = br#"{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}"#;
    assert_eq!(parse_response(failed).unwrap_err().kind(), "server");
    assert_eq!(
        parse_response(br#"{"status":"completed"}"#).unwrap_err().kind(),
        "malformed"
    );
    assert_eq!(parse_response(b"<html>").unwrap_err().kind(), "malformed");
}

#[test]
fn the_reasoning_summary_asked_of_reasoning_models_follows_the_config() {
    use agent_core::{Message, ModelRequest};

    use crate::config::{ProviderConfig, ProviderKind};
    use crate::wire::Wire;

    let request = ModelRequest {
        messages: vec![Message::user("hi")],
        ..ModelRequest::default()
    };
    let body = |summary: ReasoningSummary, model: &str| {
        let config = ProviderConfig::new(ProviderKind::OpenAiResponses, model, "").with_reasoning_summary(summary);
        let bytes = Responses::from_config(&config)
            .encode_request(model, &request, true)
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()
    };
    assert_eq!(body(ReasoningSummary::Auto, "gpt-5")["reasoning"]["summary"], "auto");
    assert_eq!(
        body(ReasoningSummary::Detailed, "gpt-5")["reasoning"]["summary"],
        "detailed"
    );
    assert_eq!(
        body(ReasoningSummary::Concise, "o4-mini")["reasoning"]["summary"],
        "concise"
    );
    // Off: no reasoning parameter, and the encrypted reasoning is still asked for and replayed.
    let off = body(ReasoningSummary::Off, "gpt-5");
    assert!(off.get("reasoning").is_none(), "{off}");
    assert_eq!(off["include"][0], "reasoning.encrypted_content");
    // A model that does not reason gets no reasoning parameter whatever the setting.
    assert!(body(ReasoningSummary::Detailed, "gpt-4.1").get("reasoning").is_none());
    // As data, the way hosts and the bindings give it.
    let config: ProviderConfig = serde_json::from_value(
        serde_json::json!({"kind": "openai-responses", "model": "gpt-5", "reasoning_summary": "off"}),
    )
    .unwrap();
    assert_eq!(config.reasoning_summary, ReasoningSummary::Off);
}
