//! # agent-providers
//!
//! [`Provider`](agent_core::Provider) adapters for `agent-core`:
//!
//! - [`OpenAiCompatible`]: Chat Completions (OpenAI, OpenRouter, Ollama, LM Studio, llama.cpp,
//!   vLLM, Groq, DeepSeek, LiteLLM);
//! - [`OpenAiResponses`]: OpenAI Responses, stateless, with encrypted reasoning replayed;
//! - [`Anthropic`]: the Messages API;
//! - [`Gemini`]: generateContent / streamGenerateContent;
//! - [`FallbackRouter`]: a primary route plus fallbacks.
//!
//! Each adapter streams over SSE (or makes a plain JSON call when `streaming` is off), with
//! connect/read/idle/call timeouts, retries with exponential backoff, jitter and
//! `Retry-After`, and cancellation that drops the HTTP request at once ([`HttpConfig`]).
//! What a server sends is bounded ([`Limits`]): response, error body, tool arguments and the
//! number of tool calls each have a cap past which the call fails with a clear error.
//! Plain-HTTP endpoints reached without a proxy (local servers) go through a lean hyper client,
//! HTTPS and proxied ones through reqwest; both send the same requests and report the same
//! errors. One generic HTTP adapter carries all of that; each API is a module of pure functions
//! (`request_body`, the `*Decoder` types and `parse_response`), testable without a network.
//!
//! Configure in code with [`ProviderConfig`], or from `LLM_PROVIDER`, `LLM_MODEL`,
//! `LLM_API_KEY` and `LLM_BASE_URL` with [`from_env`] (the only function that reads the
//! environment; [`ProviderConfig::from_lookup`] takes any lookup closure instead).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_core::Agent;
//! let provider = agent_providers::from_env()?; // Arc<dyn Provider>
//! let agent = Agent::builder().provider(provider).build()?;
//! let outcome = agent.create_session().await?.send("Hello!").await;
//! println!("{}", outcome.final_text.unwrap_or_default());
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod body_decoder;
mod config;
mod errors;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod http;
mod limits;
mod router;
// Internal, public only for the SSE benchmark and conformance test.
#[doc(hidden)]
pub mod sse;
mod transport;
mod util;
mod vision;
mod wire;

pub use wire::{anthropic, gemini, openai, openai_responses};

pub use config::{ApiKey, ProviderConfig, ProviderKind, from_env};
pub use limits::{
    DEFAULT_MAX_ERROR_BODY_BYTES, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_TOOL_ARGS_BYTES, DEFAULT_MAX_TOOL_CALLS,
    Limits,
};
pub use router::FallbackRouter;
pub use transport::{HttpConfig, WireDecoder, decode_sse};

/// The Anthropic Messages adapter.
pub type Anthropic = wire::adapter::HttpProvider<anthropic::Messages>;

/// The Gemini adapter.
///
/// ```
/// use agent_providers::{Gemini, ProviderConfig, ProviderKind};
/// let config = ProviderConfig::new(ProviderKind::Gemini, "gemini-2.5-flash", "key")
///     .with_base_url("http://127.0.0.1:9/ignored");
/// let gemini = Gemini::new(&config).unwrap();
/// assert_eq!(
///     gemini.url(),
///     "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
/// );
/// ```
pub type Gemini = wire::adapter::HttpProvider<gemini::GenerateContent>;

/// The OpenAI-compatible Chat Completions adapter.
///
/// ```
/// use agent_providers::{OpenAiCompatible, ProviderConfig, ProviderKind};
/// let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, "llama3.2", "unused-key")
///     .with_base_url("http://127.0.0.1:11434/v1");
/// let provider = OpenAiCompatible::new(&config).unwrap();
/// assert_eq!(provider.url(), "http://127.0.0.1:11434/v1/chat/completions");
/// ```
pub type OpenAiCompatible = wire::adapter::HttpProvider<openai::ChatCompletions>;

/// The OpenAI Responses adapter (`store: false`; encrypted reasoning travels in the transcript).
///
/// ```
/// use agent_providers::{OpenAiResponses, ProviderConfig, ProviderKind};
/// let config = ProviderConfig::new(ProviderKind::OpenAiResponses, "gpt-5", "sk-...");
/// let provider = OpenAiResponses::new(&config).unwrap();
/// assert_eq!(provider.url(), "https://api.openai.com/v1/responses");
/// ```
pub type OpenAiResponses = wire::adapter::HttpProvider<openai_responses::Responses>;
