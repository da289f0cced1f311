//! What a model is sent of images: none when the agent's model takes none (no image tool
//! offered, every image replaced by a note), the newest few when it does, and `auto` decided
//! by what the provider knows of its model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;

use agent_core::{
    Agent, AgentConfig, ContentPart, ImageSource, Message, ModelRequest, Role, ScriptStep, ScriptedProvider,
    ScriptedReply, ToolContext, ToolError, ToolOutput, Vision, tool_fn,
};
use common::image;
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

fn images_in(request: &ModelRequest) -> Vec<String> {
    let mut out = Vec::new();
    for m in &request.messages {
        for p in &m.content {
            if let ContentPart::Image {
                source: ImageSource::Base64 { data },
                ..
            } = p
            {
                out.push(data.clone());
            }
        }
    }
    out
}

/// Calls `snap` (an image tool) and `sneaky` (a tool that adds an image without saying so)
/// once each while it is offered them, then answers.
fn provider(accepts: Option<bool>) -> Arc<ScriptedProvider> {
    let p = ScriptedProvider::from_fn(|req: &ModelRequest| {
        let offered = |name: &str| req.tools.iter().any(|t| t.name == name);
        let called = |name: &str| {
            req.messages
                .iter()
                .any(|m| m.role == Role::Tool && m.tool_name.as_deref() == Some(name))
        };
        if offered("snap") && !called("snap") {
            ScriptStep::Reply(ScriptedReply::tool_call("snap", json!({})))
        } else if !called("sneaky") {
            ScriptStep::Reply(ScriptedReply::tool_call("sneaky", json!({})))
        } else {
            ScriptStep::Reply(ScriptedReply::text("seen"))
        }
    })
    .record_requests();
    Arc::new(match accepts {
        Some(a) => p.accepting_images(a),
        None => p,
    })
}

async fn run(provider: Arc<ScriptedProvider>, vision: Vision, max_images: u32) -> Agent {
    let snap = tool_fn("snap", "A screenshot.", |_: NoArgs, cx: ToolContext| async move {
        assert!(cx.model_takes_images, "an image tool runs only for a model sent images");
        let mut out = ToolOutput::text("the screen");
        out.content.push(image("snap"));
        Ok::<_, ToolError>(out)
    })
    .returns_images(true);
    let sneaky = tool_fn(
        "sneaky",
        "Text, and an image.",
        |_: NoArgs, cx: ToolContext| async move {
            let mut out = ToolOutput::text(format!("takes images: {}", cx.model_takes_images));
            out.content.push(image("sneaky"));
            Ok::<_, ToolError>(out)
        },
    );
    let agent = Agent::builder()
        .provider(provider)
        .tool(snap)
        .tool(sneaky)
        .config(AgentConfig {
            vision,
            max_images,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session
        .send_message(Message::user_parts(vec![ContentPart::text("look"), image("user")]))
        .await;
    assert_eq!(outcome.final_text.as_deref(), Some("seen"), "{outcome:?}");
    agent
}

#[tokio::test]
async fn a_text_only_agent_never_sends_an_image() {
    for (vision, accepts) in [
        (Vision::Off, Some(true)),
        (Vision::Auto, None),
        (Vision::Auto, Some(false)),
    ] {
        let p = provider(accepts);
        let agent = run(p.clone(), vision, 3).await;
        assert!(!agent.takes_images());
        let requests = p.requests();
        assert_eq!(
            requests.len(),
            2,
            "{vision:?}: the image tool is not offered, so one tool call"
        );
        for r in &requests {
            assert!(images_in(r).is_empty(), "{vision:?}/{accepts:?}: {:?}", r.messages);
            assert!(r.tools.iter().all(|t| t.name != "snap"));
        }
        let last = requests.last().unwrap();
        let text: String = last.messages.iter().map(Message::text).collect();
        assert!(
            text.contains("[image omitted: this model is not sent images]"),
            "{text}"
        );
        assert!(text.contains("takes images: false"));
    }
}

#[tokio::test]
async fn a_vision_agent_sends_the_newest_images() {
    for (vision, accepts) in [(Vision::On, None), (Vision::Auto, Some(true))] {
        let p = provider(accepts);
        let agent = run(p.clone(), vision, 2).await;
        assert!(agent.takes_images());
        let requests = p.requests();
        assert_eq!(requests.len(), 3, "snap, then sneaky, then the answer");
        assert_eq!(images_in(&requests[0]), ["user"]);
        assert_eq!(images_in(&requests[1]), ["user", "snap"]);
        // Three images in the history, two sent: the oldest is a note.
        assert_eq!(images_in(&requests[2]), ["snap", "sneaky"]);
        assert!(
            requests[2].messages[0]
                .text()
                .contains("only the newest 2 images are sent")
        );
    }
}

#[test]
fn vision_is_data_in_the_options_format() {
    let config: AgentConfig = serde_json::from_value(json!({"vision": "off", "max_images": 1})).unwrap();
    assert_eq!((config.vision, config.max_images), (Vision::Off, 1));
    assert_eq!(AgentConfig::default().vision, Vision::Auto);
    let err = serde_json::from_value::<AgentConfig>(json!({"vision": "yes"})).unwrap_err();
    assert!(err.to_string().contains("auto"), "{err}");
}
