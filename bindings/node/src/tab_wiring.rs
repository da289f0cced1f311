//! What a tab hub is built with to wire its tabs to the browser tabs of a JS host: page tools
//! bound to the browser tab each hub tab is wired to, and who gets a browser tab an agent
//! opens (a name or a JS function). The hub's wiring methods are in `hub_wiring`.

use std::sync::Arc;
use std::time::Duration;

use agent_core::tabs::{OpenedTab, OpenedTabOwner, OpenedTabPolicy, TabHubBuilder};
use agent_tools::{BrowserHost, PageTab, PageToolsConfig};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::callbacks::Callback;
use crate::error::coded;
use crate::host::NativeBrowserHost;

/// A browser tab a hub tab's agent opened, as a JS opened-tab policy sees it.
#[napi(object)]
pub struct OpenedTabInfo {
    /// The hub tab whose agent opened it.
    pub opener: String,
    /// The host's id for the new browser tab.
    pub host_tab: String,
    /// Its address when it opened (empty for a blank tab).
    pub url: String,
}

/// The JS policy as the JS layer wraps it: it always answers `same_agent` or `new_agent`
/// synchronously, and never throws.
type PolicyFn = Callback<OpenedTabInfo, String>;

/// How long the hub waits for a JS policy's answer before the tab stays with its opener (the
/// default owner). A policy is a quick synchronous function; only a JS thread blocked for this
/// long gets here.
const POLICY_WAIT: Duration = Duration::from_secs(10);

/// How a hub wires its tabs to a JS host's browser tabs (built by `TabHub.create` from its
/// `pageTools` and `openedTabPolicy` options).
#[napi]
pub struct NativeTabWiring {
    page_tools: Option<(Arc<dyn BrowserHost>, PageToolsConfig)>,
    policy: Option<OpenedTabPolicy>,
}

#[napi]
impl NativeTabWiring {
    /// `host` and `options` (a `PageToolsConfig` options object) give every tab's agent page
    /// tools bound to the browser tab its hub tab is wired to; `openedTabPolicy` is
    /// `same_agent`, `new_agent` or a function answering one of them.
    #[napi(
        constructor,
        ts_args_type = "host: NativeBrowserHost | undefined | null, options: object | undefined | null, openedTabPolicy: string | ((opened: OpenedTabInfo) => string) | undefined | null"
    )]
    pub fn new(
        host: Option<&NativeBrowserHost>,
        options: Option<Unknown<'_>>,
        opened_tab_policy: Option<Either<String, Function<'_, OpenedTabInfo, String>>>,
    ) -> Result<Self> {
        let page_tools = match host {
            Some(h) => Some((h.host(), crate::options::from_js("TabHub pageTools options", options)?)),
            None => None,
        };
        let policy: Option<OpenedTabPolicy> = match opened_tab_policy {
            None => None,
            Some(Either::A(name)) => {
                let owner = owner(&name)?;
                Some(Arc::new(move |_: &OpenedTab| owner))
            }
            Some(Either::B(f)) => {
                // Weak: the policy never keeps the process alive on its own.
                let func: Arc<PolicyFn> = Arc::new(f.build_threadsafe_function().weak::<true>().build()?);
                Some(Arc::new(move |opened: &OpenedTab| {
                    ask(&func, opened).unwrap_or_default()
                }))
            }
        };
        Ok(NativeTabWiring { page_tools, policy })
    }
}

impl NativeTabWiring {
    /// Adds the tab tools and the policy to a hub being built.
    pub(crate) fn apply(&self, mut b: TabHubBuilder) -> TabHubBuilder {
        if let Some((host, cfg)) = &self.page_tools {
            let (host, cfg) = (host.clone(), cfg.clone());
            b = b.tab_tools(move |tab, hub| {
                let bound = PageTab::Hub {
                    hub: hub.clone(),
                    tab: tab.clone(),
                };
                agent_tools::page_tools_for_tab_with(host.clone(), bound, cfg.clone())
            });
        }
        if let Some(policy) = &self.policy {
            let policy = policy.clone();
            b = b.opened_tab_policy(move |opened| policy(opened));
        }
        b
    }
}

/// An opened-tab owner by its wire name, read by the Rust type's own serde.
fn owner(name: &str) -> Result<OpenedTabOwner> {
    serde_json::from_value(Value::String(name.to_owned())).map_err(|_| {
        coded(
            "invalid_argument",
            format!(
                "openedTabPolicy: {name:?} is not an owner: use 'same_agent', 'new_agent' or a function (opened) => 'same_agent' | 'new_agent'"
            ),
        )
    })
}

/// Asks the JS policy who gets `opened`. `None` (the default owner then) when the JS side
/// cannot answer: the process is ending, or the JS thread did not answer in time.
fn ask(func: &Arc<PolicyFn>, opened: &OpenedTab) -> Option<OpenedTabOwner> {
    // The hub asks synchronously, from inside a tool call on a runtime worker, and only the JS
    // thread can answer: the worker waits in `block_in_place`, which hands its other tasks to
    // another worker meanwhile. A current-thread runtime could not run the call while waiting,
    // so it keeps the default.
    let runtime = Handle::try_current().ok()?;
    if runtime.runtime_flavor() != RuntimeFlavor::MultiThread {
        return None;
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let (func, info) = (
        func.clone(),
        OpenedTabInfo {
            opener: opened.opener.to_string(),
            host_tab: opened.host_tab.clone(),
            url: opened.url.clone(),
        },
    );
    runtime.spawn(async move {
        let _ = tx.send(func.call_async_catch(info).await);
    });
    let answer = tokio::task::block_in_place(|| rx.recv_timeout(POLICY_WAIT))
        .ok()?
        .ok()?;
    owner(&answer).ok()
}
