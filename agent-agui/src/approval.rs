//! Pending approvals as AG-UI interrupts, one per call waiting for the person (the resume
//! entries that answer them are read in `resume_approval`).

use agent_core::PendingApproval;
use serde_json::json;

use crate::events::Interrupt;
use crate::iso_time::iso_utc;

/// The `reason` of the interrupts a pending approval becomes.
pub const APPROVAL_REASON: &str = "tool_approval";

/// The interrupts of a pending approval: one per call, answered by a resume entry whose id is
/// the call's id and whose payload is `{"approved": true|false, "arguments"?, "reason"?,
/// "remember"?: "session"|"always"}`.
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
                    "remember": {"type": "string", "enum": ["session", "always"]},
                },
                "required": ["approved"],
            })),
            expires_at: Some(iso_utc(approval.expires_at_ms)),
            metadata: Some(json!({
                "approvalId": approval.id,
                "tool": call.tool,
                "arguments": call.arguments,
                "message": approval.message,
            })),
        })
        .collect()
}
