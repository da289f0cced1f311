use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// A [`Tool`] built from an async function over a typed argument struct.
///
/// The JSON Schema comes from the argument type's [`JsonSchema`] derive, so it can never drift
/// from what the function accepts. Build one with [`tool_fn`].
pub struct TypedTool<A, F> {
    spec: ToolSpec,
    run: F,
    _args: PhantomData<fn(A)>,
}

/// Turns an async function over a `serde` + `schemars` argument type into a [`Tool`].
///
/// ```
/// use agent_core::{tool_fn, ToolContext, ToolError};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Arguments of `add`.
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs {
///     /// First addend.
///     a: i64,
///     /// Second addend.
///     b: i64,
/// }
///
/// let add = tool_fn("add", "Adds two integers.", |args: AddArgs, _cx: ToolContext| async move {
///     Ok::<_, ToolError>(serde_json::json!({ "sum": args.a + args.b }))
/// })
/// .parallel_safe(true);
/// # let _ = add;
/// ```
pub fn tool_fn<A, F, Fut, R>(name: impl Into<String>, description: impl Into<String>, run: F) -> TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    R: Into<ToolOutput>,
{
    TypedTool {
        spec: ToolSpec::new(name, description, schema_for::<A>()),
        run,
        _args: PhantomData,
    }
}

impl<A, F> TypedTool<A, F> {
    /// Requires the gate's consent before each call.
    pub fn gated(mut self, gated: bool) -> Self {
        self.spec.gated = gated;
        self
    }

    /// Allows running alongside other parallel-safe tools.
    pub fn parallel_safe(mut self, parallel_safe: bool) -> Self {
        self.spec.parallel_safe = parallel_safe;
        self
    }

    /// Sets this tool's timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.spec.timeout = Some(timeout);
        self
    }

    /// Marks its results as images: offered only to a model sent images.
    pub fn returns_images(mut self, returns_images: bool) -> Self {
        self.spec.returns_images = returns_images;
        self
    }
}

/// The JSON Schema of `A` in the plain, inlined form providers accept: an object schema with
/// no `$schema`, `title` or `$defs`.
pub fn schema_for<A: JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = generator.into_root_schema_for::<A>().to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        if !obj.contains_key("properties") && obj.get("type").and_then(|t| t.as_str()) == Some("object") {
            obj.insert("properties".into(), serde_json::Value::Object(Default::default()));
        }
    }
    value
}

#[async_trait]
impl<A, F, Fut, R> Tool for TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    R: Into<ToolOutput>,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: serde_json::Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: A = serde_json::from_value(args)
            .map_err(|e| ToolError::model(format!("invalid arguments for {}: {e}", self.spec.name)))?;
        (self.run)(args, cx).await.map(Into::into)
    }
}
