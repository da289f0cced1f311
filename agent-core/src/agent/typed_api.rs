//! Typed turns: a turn whose final answer must match a JSON Schema (issue 16's typed final
//! answers). The loop side is in `typed_answer`.

use schemars::JsonSchema;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::run::Run;
use super::turn::TurnInput;
use crate::gate::TurnOrigin;
use crate::message::Message;
use crate::provider::OutputSchema;

impl Session {
    /// Starts a turn whose final answer is a `T`: the model is asked for JSON matching `T`'s
    /// JSON Schema (from `schemars`) through the provider's structured-output mode, or the
    /// answer tool where that mode cannot be combined with tools. Tools stay offered. The
    /// answer is checked against the schema, with one corrective retry; read it with
    /// [`Outcome::structured_as`](crate::Outcome::structured_as).
    ///
    /// ```
    /// use agent_core::{Agent, ScriptedProvider, ScriptedReply, schemars::JsonSchema};
    /// #[derive(serde::Deserialize, JsonSchema)]
    /// struct City { name: String, population: u64 }
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let reply = ScriptedReply::json(serde_json::json!({"name": "Oslo", "population": 709000}));
    /// let agent = Agent::builder().provider(ScriptedProvider::new([reply.into()])).build()?;
    /// let session = agent.create_session().await?;
    /// let outcome = session.send_typed::<City>("The capital of Norway?").await;
    /// let city: City = outcome.structured_as()?;
    /// assert_eq!((city.name.as_str(), city.population), ("Oslo", 709000));
    /// # Ok(()) }
    /// ```
    pub fn send_typed<T: JsonSchema>(&self, text: impl Into<String>) -> Run {
        let schema = OutputSchema::new(T::schema_name(), crate::tool::schema_for::<T>());
        self.send_with_schema(Message::user(text), schema, CancellationToken::new())
    }

    /// Starts a typed turn with a schema given as JSON (what the bindings pass): like
    /// [`Self::send_typed`], with the answer as JSON in
    /// [`Outcome::structured`](crate::Outcome::structured). A schema that is not a valid JSON
    /// Schema ends the turn in error (`output.schema`) before the model is called.
    pub fn send_with_schema(&self, message: Message, schema: OutputSchema, cancel: CancellationToken) -> Run {
        self.send_with_schema_from(message, schema, TurnOrigin::Person, cancel)
    }

    /// [`Self::send_with_schema`] for a message that `origin` sent (see [`Self::send_from`]).
    pub fn send_with_schema_from(
        &self,
        message: Message,
        schema: OutputSchema,
        origin: TurnOrigin,
        cancel: CancellationToken,
    ) -> Run {
        let input = TurnInput::User {
            message,
            origin,
            output: Some(Box::new(schema)),
            tools: None,
        };
        self.start(input, cancel, 0)
    }
}
