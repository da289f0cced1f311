//! Approvals from Python: the decisions dict the Python layer builds, and the errors.

use agent_core::{ApprovalDecision, ApprovalError};
use pyo3::prelude::*;

use crate::convert::py_to_json;
use crate::errors::{config_error, new_error, store_error};

/// `{call_id: {"decision": "approve" | "reject", ...}}` (the Python layer normalizes what
/// users pass) as the core's decisions, in call order of the dict.
pub(crate) fn decisions(value: &Bound<'_, PyAny>) -> PyResult<Vec<(String, ApprovalDecision)>> {
    let serde_json::Value::Object(map) = py_to_json(value)? else {
        return Err(config_error("decisions must be a dict of call id to decision"));
    };
    map.into_iter()
        .map(|(call_id, decision)| {
            serde_json::from_value::<ApprovalDecision>(decision)
                .map(|d| (call_id.clone(), d))
                .map_err(|e| config_error(format!("the decision for call {call_id} is not one: {e}")))
        })
        .collect()
}

/// Maps an approval error to `ApprovalError` with its kind.
pub(crate) fn approval_error(e: ApprovalError) -> PyErr {
    let kind = match &e {
        ApprovalError::NotPending(_) => "approval.not_pending",
        ApprovalError::Expired => "approval.expired",
        ApprovalError::MissingDecision(_) => "approval.missing_decision",
        ApprovalError::UnknownCall(_) => "approval.unknown_call",
        ApprovalError::InvalidArguments { .. } => "approval.invalid_arguments",
        ApprovalError::InvalidRemember { .. } => "approval.invalid_remember",
        ApprovalError::Store(s) => return store_error(s),
    };
    new_error("ApprovalError", e.to_string(), Some(kind))
}
