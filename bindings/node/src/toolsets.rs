//! Built-in tool sets (filesystem and shell, page and tab tools over a JS BrowserHost) and the
//! SQLite store.

use std::sync::Arc;

use agent_core::Tool;
use agent_tools::{FsPolicy, PageTab, PageToolsConfig};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::agent::NativeStore;
use crate::error::coded;
use crate::host::NativeBrowserHost;

/// A group of native tools, added to an agent as a whole.
#[napi]
pub struct NativeToolSet {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
}

#[napi]
impl NativeToolSet {
    /// The tools' specs (name, description, parameters, gated, parallelSafe, timeout).
    #[napi(ts_return_type = "any[]")]
    pub fn specs(&self) -> crate::convert::Json {
        let specs: Vec<&agent_core::ToolSpec> = self.tools.iter().map(|t| t.spec()).collect();
        crate::convert::js(&specs)
    }

    /// The same tools with `gated` overridden for the named ones.
    #[napi]
    pub fn regated(&self, names: Vec<String>, gated: bool) -> NativeToolSet {
        let tools = self
            .tools
            .iter()
            .map(|t| {
                if names.contains(&t.spec().name) {
                    agent_tools::with_gated(t.clone(), gated)
                } else {
                    t.clone()
                }
            })
            .collect();
        NativeToolSet { tools }
    }
}

/// fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec (writes, deletes and the
/// shell are gated). `options` is an `FsPolicy` options object (camelCase keys of the options
/// format): `root` or `unrestricted: true`, the caps and `shellEnv`.
#[napi(ts_args_type = "options: object")]
pub fn fs_tools(options: Unknown<'_>) -> Result<NativeToolSet> {
    const WHAT: &str = "fsTools options";
    let policy: FsPolicy = crate::options::parse(WHAT, crate::options::value_of(WHAT, options)?)?;
    Ok(NativeToolSet {
        tools: agent_tools::fs_tools(policy),
    })
}

/// Opens (or creates) a SQLite session store at `path`. `options` is a `SqliteOptions` options
/// object (camelCase keys of the options format; absent: the defaults).
#[napi(
    ts_args_type = "path: string, options?: object | undefined | null",
    ts_return_type = "Promise<NativeStore>"
)]
pub fn open_sqlite_store<'env>(
    env: &'env Env,
    path: String,
    options: Option<Unknown<'_>>,
) -> Result<PromiseRaw<'env, NativeStore>> {
    let options: agent_store::SqliteOptions = crate::options::from_js("SqliteStore options", options)?;
    env.spawn_future(async move {
        let store = agent_store::SqliteStore::open_with(&path, options)
            .await
            .map_err(|e| coded("store", e))?;
        Ok(NativeStore {
            inner: Arc::new(store.clone()),
            sqlite: Some(store),
        })
    })
}

/// The page and tab tools (page_read, page_text, page_scrape, page_navigate, page_click,
/// page_fill, page_select, tabs_list, tab_open, tab_activate, tab_close) over a JS host.
/// `options` is a `PageToolsConfig` options object (camelCase keys of the options format).
/// `tab` binds them to that host tab whatever tab is active (absent: the active tab).
#[napi(ts_args_type = "host: NativeBrowserHost, options: object | undefined | null, tab?: string | undefined | null")]
pub fn page_tools(
    host: &NativeBrowserHost,
    options: Option<Unknown<'_>>,
    tab: Option<String>,
) -> Result<NativeToolSet> {
    let cfg: PageToolsConfig = crate::options::from_js("pageTools options", options)?;
    let bound = match tab {
        Some(id) => PageTab::Host(id),
        None => PageTab::Active,
    };
    Ok(NativeToolSet {
        tools: agent_tools::page_tools_for_tab_with(host.host(), bound, cfg),
    })
}

/// `agent` offered to another agent as the tool `name`, taking `{ task }`: each call runs one
/// turn of it in a new session and answers with its final text. Calls nesting deeper than
/// `maxDepth` levels below the first agent (absent: 3) are refused with a message the model
/// reads. What it spends is added to the calling turn's usage and listed in `subAgents`.
#[napi]
pub fn agent_tool(
    name: String,
    description: String,
    agent: &crate::agent::NativeAgent,
    max_depth: Option<u32>,
    output_name: Option<String>,
    output_schema: Option<Unknown<'_>>,
) -> Result<NativeToolSet> {
    let mut tool = agent_core::agent_tool(name, description, agent.agent().clone())
        .max_depth(max_depth.unwrap_or(agent_core::DEFAULT_MAX_AGENT_DEPTH));
    if let (Some(schema_name), Some(schema)) = (output_name, output_schema) {
        let mut schema = crate::options::value_of("output", schema)?;
        crate::convert::integral_numbers(&mut schema);
        tool = tool.output_schema(agent_core::OutputSchema::new(schema_name, schema));
    }
    Ok(NativeToolSet {
        tools: vec![Arc::new(tool)],
    })
}
