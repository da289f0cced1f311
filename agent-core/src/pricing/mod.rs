//! What model calls cost: [`ModelPrice`] (USD per million tokens of each kind) and
//! [`PriceTable`] (prices by model name), with a small built-in table
//! ([`PriceTable::builtin`]) that hosts override.
//!
//! Costs are `f64` US dollars: JSON and every host language read them as they are, and the
//! rounding of a double (about 15 significant digits) stays far below a micro-dollar over any
//! session, while the prices themselves are only as exact as the table.

mod builtin;
mod spend;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::provider::Usage;

pub(crate) use spend::Spend;

/// Tokens per price unit: prices are per million tokens.
const TOKENS_PER_UNIT: f64 = 1_000_000.0;

/// One model's prices, in US dollars per million tokens.
///
/// As data: `{"input": 2.5, "cached_input": 1.25, "output": 10}` (`cached_input`,
/// `cache_write` and `reasoning` may be left out).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Input (prompt) tokens that are neither read from nor written to the cache.
    pub input: f64,
    /// Input tokens read from the provider's cache (default: the `input` price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    /// Input tokens written to the provider's cache, as Anthropic bills them (default: the
    /// `input` price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// Generated tokens.
    pub output: f64,
    /// Reasoning tokens, for a provider that bills them apart from other output (default: the
    /// `output` price). Every adapter counts them within the output tokens, so with a price
    /// here they are billed at it instead of at `output`, never twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<f64>,
}

impl ModelPrice {
    /// A price for input and output tokens; cache reads and writes cost as much as input.
    pub const fn new(input: f64, output: f64) -> Self {
        ModelPrice {
            input,
            cached_input: None,
            cache_write: None,
            output,
            reasoning: None,
        }
    }

    /// With the price of input tokens read from the cache.
    pub const fn with_cached_input(mut self, price: f64) -> Self {
        self.cached_input = Some(price);
        self
    }

    /// With the price of input tokens written to the cache.
    pub const fn with_cache_write(mut self, price: f64) -> Self {
        self.cache_write = Some(price);
        self
    }

    /// With the price of reasoning tokens.
    pub const fn with_reasoning(mut self, price: f64) -> Self {
        self.reasoning = Some(price);
        self
    }

    /// What a call that used `usage` cost, in US dollars: plain input, cache reads, cache
    /// writes, plain output and reasoning, each at its price.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let plain_input = usage
            .input_tokens
            .saturating_sub(usage.cached_input_tokens)
            .saturating_sub(usage.cache_write_tokens);
        // Reasoning is counted within the output tokens (see `reasoning`).
        let reasoning = usage.reasoning_tokens.min(usage.output_tokens);
        let plain_output = usage.output_tokens - reasoning;
        let token_dollars = plain_input as f64 * self.input
            + usage.cached_input_tokens as f64 * self.cached_input.unwrap_or(self.input)
            + usage.cache_write_tokens as f64 * self.cache_write.unwrap_or(self.input)
            + plain_output as f64 * self.output
            + reasoning as f64 * self.reasoning.unwrap_or(self.output);
        token_dollars / TOKENS_PER_UNIT
    }

    /// The most a call with `input_tokens` of input and up to `output_tokens` of output can
    /// cost: every input token at the uncached `input` price (the cache may miss), every
    /// output token at the dearer of `output` and `reasoning`.
    pub fn worst_case(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        let output = self.reasoning.map_or(self.output, |r| r.max(self.output));
        (input_tokens as f64 * self.input + output_tokens as f64 * output) / TOKENS_PER_UNIT
    }
}

/// Prices by model name.
///
/// [`PriceTable::price`] finds a model by its exact name, then by the longest name in the
/// table that the model's name extends with a dated snapshot (`gpt-4o-mini-2024-07-18` takes
/// `gpt-4o-mini`'s price, `claude-sonnet-4-20250514` takes `claude-sonnet-4`'s,
/// `gemini-2.0-flash-001` takes `gemini-2.0-flash`'s) or `-latest`. A different model that merely
/// starts with a known name (`o3-pro`, `claude-opus-4-5` against `claude-opus-4`) is not
/// priced: an unknown price is `None`, never a guess. A `provider/` prefix
/// (`openai/gpt-4o`, `models/gemini-2.5-pro`) is ignored.
///
/// As data, a map from model name to [`ModelPrice`]:
/// `{"gpt-4o": {"input": 2.5, "cached_input": 1.25, "output": 10}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct PriceTable(BTreeMap<String, ModelPrice>);

impl PriceTable {
    /// An empty table: every model's price is unknown.
    pub fn new() -> Self {
        PriceTable::default()
    }

    /// The built-in table: a few current OpenAI, Anthropic and Gemini models at their standard
    /// (not batch, not priority) prices, from the providers' public pricing pages. See
    /// `docs/cost.md` for the list, the source of each figure and when it was taken. **Prices
    /// change:** for billing, set your own with [`PriceTable::set`] or the agent's `prices`.
    pub fn builtin() -> Self {
        let mut table = PriceTable::new();
        for (model, price) in builtin::PRICES.iter().copied().flatten() {
            table.set(*model, *price);
        }
        table
    }

    /// Sets (or replaces) a model's price.
    pub fn set(&mut self, model: impl Into<String>, price: ModelPrice) -> &mut Self {
        self.0.insert(model.into(), price);
        self
    }

    /// With a model's price set (or replaced).
    pub fn with(mut self, model: impl Into<String>, price: ModelPrice) -> Self {
        self.set(model, price);
        self
    }

    /// Sets every price of `other`, replacing those of the same models.
    pub fn extend(&mut self, other: &PriceTable) {
        for (model, price) in &other.0 {
            self.0.insert(model.clone(), *price);
        }
    }

    /// The models and their prices, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ModelPrice)> {
        self.0.iter().map(|(model, price)| (model.as_str(), price))
    }

    /// How many models have a price.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no model has a price.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The price of `model`, when the table knows it (see the type's documentation for how a
    /// name is matched).
    pub fn price(&self, model: &str) -> Option<&ModelPrice> {
        if let Some(price) = self.0.get(model) {
            return Some(price);
        }
        let snapshot = self
            .0
            .iter()
            .filter(|(name, _)| model.strip_prefix(name.as_str()).is_some_and(is_snapshot_suffix))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| price);
        match (snapshot, model.rsplit_once('/')) {
            (Some(price), _) => Some(price),
            (None, Some((_, bare))) if !bare.is_empty() => self.price(bare),
            (None, _) => None,
        }
    }

    /// What a call of `model` that used `usage` cost, in US dollars; `None` when the model's
    /// price is unknown.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.price(model).map(|price| price.cost(usage))
    }
}

/// Whether `rest`, what follows a known model name, names a snapshot of that model: `-latest`,
/// or a dash and a date or version number of at least three digits (`-2024-07-18`,
/// `-20250514`, `-001`).
fn is_snapshot_suffix(rest: &str) -> bool {
    let Some(rest) = rest.strip_prefix('-') else {
        return false;
    };
    if rest == "latest" {
        return true;
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits >= 3 && matches!(rest.as_bytes().get(digits), None | Some(b'-'))
}

#[cfg(test)]
mod tests;
