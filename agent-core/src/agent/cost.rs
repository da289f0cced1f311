//! What the agent's model calls cost, and the budgets that stop a turn before a call that
//! could pass them (`docs/cost.md`).

use super::config::{AgentConfig, DEFAULT_BUDGET_OUTPUT_TOKENS};
use crate::pricing::{ModelPrice, PriceTable, Spend};
use crate::provider::Usage;

/// The agent's prices: the built-in table with the host's on top, and the price of the
/// provider's configured model looked up once (most calls are priced without a lookup).
pub(crate) struct Pricing {
    table: PriceTable,
    model: String,
    configured: Option<ModelPrice>,
}

impl Pricing {
    /// The built-in table, then `config.prices`, then `extra` (the builder's), for `model`.
    pub fn new(config: &AgentConfig, extra: Option<&PriceTable>, model: &str) -> Self {
        let mut table = PriceTable::builtin();
        table.extend(&config.prices);
        if let Some(extra) = extra {
            table.extend(extra);
        }
        let configured = table.price(model).copied();
        Pricing {
            table,
            model: model.to_owned(),
            configured,
        }
    }

    pub fn table(&self) -> &PriceTable {
        &self.table
    }

    /// The configured model's price, when known.
    pub fn configured(&self) -> Option<&ModelPrice> {
        self.configured.as_ref()
    }

    /// What one call cost: priced as the model a router says served it, else as the
    /// provider's configured model. `None` when that price is unknown or the call reported
    /// no usage.
    pub fn call_cost(&self, served_model: Option<&str>, usage: Option<&Usage>) -> Option<f64> {
        let usage = usage?;
        match served_model {
            Some(model) if model != self.model => self.table.cost(model, usage),
            _ => self.configured.map(|price| price.cost(usage)),
        }
    }
}

/// Whether a run or session budget is set (the loop prices nothing ahead otherwise).
pub(crate) fn has_budget(config: &AgentConfig) -> bool {
    config.max_run_cost_usd.is_some() || config.max_session_cost_usd.is_some()
}

/// Why an agent with a budget cannot price its calls: the message of
/// [`AgentError::Unpriced`](super::AgentError::Unpriced), or `None` when it can (or has no
/// budget).
pub(crate) fn unpriced_budget(config: &AgentConfig, pricing: &Pricing) -> Option<String> {
    (has_budget(config) && pricing.configured.is_none()).then(|| pricing.model.clone())
}

/// What was spent before the next model call: in the turn so far, and in the session's
/// earlier turns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spent {
    pub run_usd: f64,
    pub session_before_usd: f64,
}

/// The turn's running count, which every model call it makes adds to: its own calls and the
/// summaries compaction asks for.
pub(crate) struct Meter<'a> {
    pub usage: &'a mut Usage,
    pub spend: &'a mut Spend,
    /// What the session's earlier turns spent (priced calls).
    pub session_before_usd: f64,
}

impl Meter<'_> {
    /// What was spent so far, as the budgets count it.
    pub fn spent(&self) -> Spent {
        Spent {
            run_usd: self.spend.priced_usd,
            session_before_usd: self.session_before_usd,
        }
    }

    /// Counts one model call that answered; returns its cost (`None` when unknown).
    pub fn count(&mut self, pricing: &Pricing, served_model: Option<&str>, usage: Option<&Usage>) -> Option<f64> {
        if let Some(usage) = usage {
            self.usage.add(usage);
        }
        let cost = pricing.call_cost(served_model, usage);
        self.spend.add_call(cost);
        cost
    }
}

/// The message a turn ends with when the next model call, with `input_tokens` of input, could
/// pass a budget; `None` when it cannot (or no budget is set).
pub(crate) fn over_budget(config: &AgentConfig, pricing: &Pricing, input_tokens: u64, spent: Spent) -> Option<String> {
    let output_tokens = config.max_output_tokens.unwrap_or(DEFAULT_BUDGET_OUTPUT_TOKENS);
    over_budget_for(
        "the next model call",
        config,
        pricing,
        input_tokens,
        u64::from(output_tokens),
        spent,
    )
}

/// Like [`over_budget`] for a call of `what` (named in the message) that answers with at most
/// `output_tokens`.
pub(crate) fn over_budget_for(
    what: &str,
    config: &AgentConfig,
    pricing: &Pricing,
    input_tokens: u64,
    output_tokens: u64,
    spent: Spent,
) -> Option<String> {
    if !has_budget(config) {
        return None;
    }
    let price = pricing.configured()?;
    let estimate = price.worst_case(input_tokens, output_tokens);
    if let Some(budget) = config.max_run_cost_usd
        && spent.run_usd + estimate > budget
    {
        return Some(format!(
            "Stopped: {what} (estimated ${estimate:.4}) would pass the run's budget of ${budget} (${:.4} spent)",
            spent.run_usd
        ));
    }
    let session_usd = spent.session_before_usd + spent.run_usd;
    if let Some(budget) = config.max_session_cost_usd
        && session_usd + estimate > budget
    {
        return Some(format!(
            "Stopped: {what} (estimated ${estimate:.4}) would pass the session's budget of ${budget} (${session_usd:.4} spent)"
        ));
    }
    None
}
