//! [`AgentBuilder`]: a provider, tools, an optional store and gate, and the loop's configuration.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::runtime::Handle;

use super::clarification::AskClarificationTool;
use super::{Agent, AgentConfig, AgentError, AgentInner, EventObserver, Vision};
use crate::agent::hooks::Hooks;
use crate::event::AgentEvent;
use crate::gate::Gate;
use crate::provider::Provider;
use crate::store::Store;
use crate::tool::{Tool, ToolSet, ToolSetError};

/// Builds an [`Agent`].
#[derive(Default)]
pub struct AgentBuilder {
    provider: Option<Arc<dyn Provider>>,
    tools: ToolSet,
    tool_error: Option<ToolSetError>,
    store: Option<Arc<dyn Store>>,
    gate: Option<Arc<dyn Gate>>,
    system_prompt: Option<String>,
    config: AgentConfig,
    observers: Vec<EventObserver>,
    runtime: Option<Handle>,
    clarification: bool,
    hooks: Vec<Arc<dyn Hooks>>,
    prices: Option<crate::pricing::PriceTable>,
}

impl AgentBuilder {
    /// The model provider (required).
    pub fn provider(self, provider: impl Provider + 'static) -> Self {
        self.provider_arc(Arc::new(provider))
    }

    /// The model provider, shared.
    pub fn provider_arc(mut self, provider: Arc<dyn Provider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Adds a tool. A duplicate name makes [`Self::build`] fail.
    pub fn tool(self, tool: impl Tool + 'static) -> Self {
        self.tool_arc(Arc::new(tool))
    }

    /// Adds a shared tool. A duplicate name makes [`Self::build`] fail.
    pub fn tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        if let Err(e) = self.tools.register_arc(tool)
            && self.tool_error.is_none()
        {
            self.tool_error = Some(e);
        }
        self
    }

    /// Adds every tool of a set. A duplicate name makes [`Self::build`] fail.
    pub fn tools(mut self, tools: ToolSet) -> Self {
        for tool in tools.iter() {
            self = self.tool_arc(tool.clone());
        }
        self
    }

    /// Where sessions are persisted. Without a store, history lives only in memory.
    pub fn store(self, store: impl Store + 'static) -> Self {
        self.store_arc(Arc::new(store))
    }

    /// Where sessions are persisted, shared.
    pub fn store_arc(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// The consent gate for gated tools. Without one, gated calls are denied and never run.
    pub fn gate(self, gate: impl Gate + 'static) -> Self {
        self.gate_arc(Arc::new(gate))
    }

    /// The consent gate, shared.
    pub fn gate_arc(mut self, gate: Arc<dyn Gate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The loop's limits and defaults.
    pub fn config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// Prices that replace or add to the built-in table and [`AgentConfig::prices`] (see
    /// `docs/cost.md`); calling it again adds to the earlier ones.
    pub fn prices(mut self, prices: crate::pricing::PriceTable) -> Self {
        match &mut self.prices {
            Some(table) => table.extend(&prices),
            None => self.prices = Some(prices),
        }
        self
    }

    /// A callback that sees every event of every run, synchronously and in order. Keep it
    /// fast: the loop waits for it.
    pub fn on_event(mut self, observer: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// Offers the model the built-in `ask_clarification` tool: a turn that calls it ends
    /// `awaiting_user` with the question persisted, and continues when the host answers with
    /// [`Session::answer_clarification`](super::Session::answer_clarification). Off by default.
    pub fn clarification(mut self, enabled: bool) -> Self {
        self.clarification = enabled;
        self
    }

    /// Adds lifecycle hooks ([`Hooks`]): they run at their points of every turn, in the order
    /// they were added.
    pub fn hooks(self, hooks: impl Hooks + 'static) -> Self {
        self.hooks_arc(Arc::new(hooks))
    }

    /// Adds shared lifecycle hooks.
    pub fn hooks_arc(mut self, hooks: Arc<dyn Hooks>) -> Self {
        self.hooks.push(hooks);
        self
    }

    /// The Tokio runtime turns run on (default: the runtime `build` is called in).
    pub fn runtime(mut self, handle: Handle) -> Self {
        self.runtime = Some(handle);
        self
    }

    /// Builds the agent.
    pub fn build(mut self) -> Result<Agent, AgentError> {
        if self.clarification {
            self = self.tool(AskClarificationTool::new());
        }
        if let Some(e) = self.tool_error {
            return Err(e.into());
        }
        let provider = self.provider.ok_or(AgentError::NoProvider)?;
        let runtime = match self.runtime {
            Some(h) => h,
            None => Handle::try_current().map_err(|_| AgentError::NoRuntime)?,
        };
        let takes_images = match self.config.vision {
            Vision::On => true,
            Vision::Off => false,
            Vision::Auto => provider.accepts_images().unwrap_or(false),
        };
        let pricing = super::cost::Pricing::new(&self.config, self.prices.as_ref(), provider.model());
        if let Some(model) = super::cost::unpriced_budget(&self.config, &pricing) {
            return Err(AgentError::Unpriced(model));
        }
        let mut tools = self.tools;
        if !takes_images {
            super::images::drop_image_tools(&mut tools);
        }
        Ok(Agent {
            inner: Arc::new(AgentInner {
                provider,
                tools: std::sync::RwLock::new(Arc::new(tools)),
                takes_images,
                hooks: self.hooks.into(),
                clarification: self.clarification,
                store: self.store,
                gate: self.gate,
                system_prompt: self.system_prompt,
                config: self.config,
                pricing,
                observers: self.observers.into(),
                runtime,
                approval_rules: Default::default(),
                sessions: Mutex::new(HashMap::new()),
            }),
        })
    }
}
