//! A typed turn's schema, and a turn's external tools, kept with the turn it is parked in (in
//! the store's parked-run state beside the question, the approval or the external calls), so
//! that the turn continued after a restart is still a typed turn and offers the same tools.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::pending_tools::ExternalTool;
use crate::provider::OutputSchema;

/// The key of the schema in the parked-run state.
const KEY: &str = "output_schema";

/// Adds the parked turn's schema, if it has one, to its parked-run state.
pub(crate) fn attach(parked: &mut Value, output: Option<OutputSchema>) {
    if let (Some(output), Some(object)) = (output, parked.as_object_mut())
        && let Ok(value) = serde_json::to_value(output)
    {
        object.insert(KEY.to_owned(), value);
    }
}

/// The schema stored with a parked turn, if any.
pub(crate) fn read(parked: &Value) -> Option<OutputSchema> {
    parked.get(KEY).and_then(|value| OutputSchema::deserialize(value).ok())
}

/// The key of a turn's external tools in the parked-run state.
const TOOLS_KEY: &str = "offered_tools";

/// Adds the parked turn's external tools, if it has any, to its parked-run state.
pub(crate) fn attach_tools(parked: &mut Value, tools: Option<Arc<[ExternalTool]>>) {
    if let (Some(tools), Some(object)) = (tools, parked.as_object_mut())
        && let Ok(value) = serde_json::to_value(&*tools)
    {
        object.insert(TOOLS_KEY.to_owned(), value);
    }
}

/// The external tools stored with a parked turn, if any.
pub(crate) fn read_tools(parked: &Value) -> Option<Arc<[ExternalTool]>> {
    parked
        .get(TOOLS_KEY)
        .and_then(|value| Vec::<ExternalTool>::deserialize(value).ok())
        .map(Into::into)
}
