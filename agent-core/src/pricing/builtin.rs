//! The built-in prices ([`PriceTable::builtin`](super::PriceTable::builtin)).
//!
//! Standard-tier prices in US dollars per million tokens, as the providers' public pricing
//! pages gave them in late 2025 (OpenAI: platform.openai.com/docs/pricing; Anthropic:
//! anthropic.com/pricing and docs.claude.com's pricing page; Google: ai.google.dev's Gemini
//! API pricing page). This table was written on 2026-12-02 from those figures without
//! checking the live pages again that day: treat it as a starting point, and set your own
//! prices for anything you bill. `docs/cost.md` lists the same table.
//!
//! What it leaves out: batch and priority tiers; Anthropic's one-hour cache writes (the
//! five-minute price is given); Gemini 2.5 Pro's dearer rates for prompts over 200 000 tokens
//! and Gemini's cache storage per hour; audio input. Every provider here bills reasoning
//! ("thinking") tokens as output, so no entry prices them apart.

use super::ModelPrice;

/// OpenAI: cache reads are discounted, cache writes are not billed apart (it reports none).
const OPENAI: &[(&str, ModelPrice)] = &[
    ("gpt-5", ModelPrice::new(1.25, 10.0).with_cached_input(0.125)),
    ("gpt-5-mini", ModelPrice::new(0.25, 2.0).with_cached_input(0.025)),
    ("gpt-5-nano", ModelPrice::new(0.05, 0.40).with_cached_input(0.005)),
    ("gpt-4.1", ModelPrice::new(2.0, 8.0).with_cached_input(0.50)),
    ("gpt-4.1-mini", ModelPrice::new(0.40, 1.60).with_cached_input(0.10)),
    ("gpt-4.1-nano", ModelPrice::new(0.10, 0.40).with_cached_input(0.025)),
    ("gpt-4o", ModelPrice::new(2.50, 10.0).with_cached_input(1.25)),
    ("gpt-4o-mini", ModelPrice::new(0.15, 0.60).with_cached_input(0.075)),
    ("o3", ModelPrice::new(2.0, 8.0).with_cached_input(0.50)),
    ("o4-mini", ModelPrice::new(1.10, 4.40).with_cached_input(0.275)),
];

/// Anthropic: cache reads at a tenth of input, five-minute cache writes at 1.25 times input.
const ANTHROPIC: &[(&str, ModelPrice)] = &[
    ("claude-opus-4-5", anthropic(5.0, 25.0)),
    ("claude-opus-4-1", anthropic(15.0, 75.0)),
    ("claude-opus-4", anthropic(15.0, 75.0)),
    ("claude-sonnet-4-5", anthropic(3.0, 15.0)),
    ("claude-sonnet-4", anthropic(3.0, 15.0)),
    ("claude-3-7-sonnet", anthropic(3.0, 15.0)),
    ("claude-haiku-4-5", anthropic(1.0, 5.0)),
    ("claude-3-5-haiku", anthropic(0.80, 4.0)),
];

/// Google Gemini (text input; 2.5 Pro for prompts up to 200 000 tokens).
const GEMINI: &[(&str, ModelPrice)] = &[
    ("gemini-2.5-pro", ModelPrice::new(1.25, 10.0).with_cached_input(0.125)),
    ("gemini-2.5-flash", ModelPrice::new(0.30, 2.50).with_cached_input(0.03)),
    (
        "gemini-2.5-flash-lite",
        ModelPrice::new(0.10, 0.40).with_cached_input(0.01),
    ),
    ("gemini-2.0-flash", ModelPrice::new(0.10, 0.40).with_cached_input(0.025)),
];

const fn anthropic(input: f64, output: f64) -> ModelPrice {
    ModelPrice::new(input, output)
        .with_cached_input(input * 0.1)
        .with_cache_write(input * 1.25)
}

/// Every built-in price, the three providers' tables in turn.
pub(super) const PRICES: &[&[(&str, ModelPrice)]] = &[OPENAI, ANTHROPIC, GEMINI];
