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
/// in the metadata.
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
            tool_call_id: Some(call.call_id.clone()),
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
    m
}
