//! A typed turn's schema kept with the turn it is parked in (in the store's parked-run state
//! beside the question or the approval), so that the turn continued after a restart is still
//! a typed turn.

use serde::Deserialize;
use serde_json::Value;

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
