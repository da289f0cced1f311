//! Pending approvals as AG-UI interrupts, one per call waiting for the person (the resume
//! entries that answer them are read in `resume_approval`).

use agent_core::{ApprovalCall, PendingApproval};
use serde_json::{Value, json};

use crate::events::Interrupt;
use crate::iso_time::iso_utc;

/// The `reason` of the interrupts a pending approval becomes.
pub const APPROVAL_REASON: &str = "tool_approval";

/// The interrupts of a pending approval: one per call, answered by a resume entry whose id is
/// the call's id and whose payload is `{"approved": true|false, "arguments"?, "reason"?,
/// "remember"?: "session"|"always"|{"host": pattern}}`. A call on a web page names its host
/// in the metadata. A call waiting in a sub-agent's turn points at the call of the sub-agent
/// tool the client saw, and its metadata names the sub-agents (`via`).
pub fn approval_interrupts(approval: &PendingApproval) -> Vec<Interrupt> {
    approval
        .calls
        .iter()
        .map(|call| Interrupt {
            id: call.call_id.clone(),
            reason: APPROVAL_REASON.into(),
            message: Some(
                call.prompt
                    .clone()
                    .unwrap_or_else(|| format!("Allow {} to run?", call.tool)),
            ),
            tool_call_id: Some(call.via.first().map_or(&call.call_id, |step| &step.call_id).clone()),
            response_schema: Some(json!({
                "type": "object",
                "properties": {
                    "approved": {"type": "boolean"},
                    "arguments": {"type": "object"},
                    "reason": {"type": "string"},
                    "remember": {"oneOf": [
                        {"type": "string", "enum": ["session", "always"]},
                        {
                            "type": "object",
                            "properties": {"host": {"type": "string"}},
                            "required": ["host"],
                            "additionalProperties": false,
                        },
                    ]},
                },
                "required": ["approved"],
            })),
            expires_at: Some(iso_utc(approval.expires_at_ms)),
            metadata: Some(metadata(approval, call)),
        })
        .collect()
}

/// What an interrupt tells about its call: the approval, the tool, the arguments, the model's
/// text, and the host of the page the call acts on when its tool names one.
fn metadata(approval: &PendingApproval, call: &ApprovalCall) -> Value {
    let mut m = json!({
        "approvalId": approval.id,
        "tool": call.tool,
        "arguments": call.arguments,
        "message": approval.message,
    });
    if let Some(host) = &call.host {
        m["host"] = json!(host);
    }
    if !call.via.is_empty() {
        let via: Vec<Value> = call
            .via
            .iter()
            .map(|step| {
                json!({
                    "tool": step.tool,
                    "callId": step.call_id,
                    "sessionId": step.session_id.to_string(),
                    "approvalId": step.approval_id,
                })
            })
            .collect();
        m["via"] = Value::Array(via);
    }
    m
}

#[cfg(test)]
mod tests {
    use agent_core::{ApprovalCall, PendingApproval, SessionId, SubAgentStep, TurnOrigin};
    use serde_json::json;

    use super::approval_interrupts;

    fn call(call_id: &str, via: Vec<SubAgentStep>) -> ApprovalCall {
        ApprovalCall {
            call_id: call_id.into(),
            tool: "pay".into(),
            arguments: json!({"amount": 5}),
            prompt: None,
            host: None,
            via,
        }
    }

    #[test]
    fn a_sub_agents_call_points_at_the_call_the_client_saw_and_names_the_sub_agent() {
        let session = SessionId::new_random();
        let step = SubAgentStep {
            tool: "helper".into(),
            call_id: "c1".into(),
            session_id: session.clone(),
            approval_id: "a2".into(),
        };
        let approval = PendingApproval {
            id: "a1".into(),
            calls: vec![call("own", Vec::new()), call("c1/c9", vec![step])],
            message: None,
            origin: TurnOrigin::Person,
            asked_at_ms: 0,
            expires_at_ms: 1,
        };
        let interrupts = approval_interrupts(&approval);
        assert_eq!(interrupts[0].tool_call_id.as_deref(), Some("own"));
        assert!(interrupts[0].metadata.as_ref().is_some_and(|m| m.get("via").is_none()));
        // Answered by the nested id; shown against the sub-agent tool's call.
        assert_eq!(interrupts[1].id, "c1/c9");
        assert_eq!(interrupts[1].tool_call_id.as_deref(), Some("c1"));
        let via = &interrupts[1].metadata.as_ref().map(|m| m["via"].clone());
        assert_eq!(
            via.clone().unwrap_or_default(),
            json!([{"tool": "helper", "callId": "c1", "sessionId": session.to_string(), "approvalId": "a2"}])
        );
    }
}
