//! The `send_to_tab` and `read_tab` tools, built per tab by the hub and bound to that tab.

use std::sync::{Arc, Weak};

use schemars::JsonSchema;
use serde::Deserialize;

use super::hub_inner::HubInner;
use super::types::TabError;
use super::{DeliveryStatus, TabId, TabPermissions, TabState};
use crate::message::Message;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, tool_fn};
use crate::untrusted::Provenance;

/// The name of the tool that messages another tab.
pub const SEND_TO_TAB: &str = "send_to_tab";

/// The name of the tool that reads another tab's last answer and status.
pub const READ_TAB: &str = "read_tab";

const SEND_DESCRIPTION: &str = "Send a message to the agent of another browser tab, addressed by its short handle \
(any unique prefix of its id, at least 4 characters, as shown on the tab). If that tab is idle the message starts a \
new turn there; if it is busy the message is queued for when its current turn ends. Returns at once with \
started, queued or held; it does not wait for a reply: use read_tab later to see the tab's answer. If the answer \
is held, do not resend: the message is queued and a person must message that tab first.";

const READ_DESCRIPTION: &str = "Read the last completed answer of the agent of another browser tab, addressed by \
its short handle, together with its status (idle, running or error). Never waits: while the tab is running you \
get its previous completed answer; read again later for the new one.";

/// Arguments of `send_to_tab`.
#[derive(Deserialize, JsonSchema)]
struct SendArgs {
    /// The target tab's handle: any unique prefix of its id, at least 4 characters (for example "6fe8").
    tab_id: String,
    /// The message to deliver to that tab's agent.
    message: String,
}

/// Arguments of `read_tab`.
#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// The target tab's handle: any unique prefix of its id, at least 4 characters (for example "6fe8").
    tab_id: String,
}

/// The tab tools `permissions` allow, bound to `tab`.
pub(crate) fn tab_tools(hub: Weak<HubInner>, tab: TabId, permissions: TabPermissions) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if permissions.send_to_tab {
        let (hub, tab) = (hub.clone(), tab.clone());
        tools.push(Arc::new(tool_fn(
            SEND_TO_TAB,
            SEND_DESCRIPTION,
            move |args: SendArgs, _cx: ToolContext| {
                let (hub, tab) = (hub.clone(), tab.clone());
                async move { send_to_tab(hub, tab, args).await }
            },
        )));
    }
    if permissions.read_tab {
        tools.push(Arc::new(
            tool_fn(READ_TAB, READ_DESCRIPTION, move |args: ReadArgs, _cx: ToolContext| {
                let (hub, tab) = (hub.clone(), tab.clone());
                async move { read_tab(hub, tab, args).await }
            })
            .parallel_safe(true),
        ));
    }
    tools
}

fn upgrade(hub: &Weak<HubInner>) -> Result<Arc<HubInner>, ToolError> {
    hub.upgrade()
        .ok_or_else(|| ToolError::fatal("the tab hub this tool belongs to has been dropped"))
}

/// Resolves the model's handle to an open tab, or explains why not.
fn target(hub: &HubInner, input: &str) -> Result<(TabId, String), ToolError> {
    let resolution = hub.resolve(input);
    match resolution.tab() {
        Some(tab) => {
            let handle = hub.handle(tab).unwrap_or_else(|| tab.to_string());
            Ok((tab.clone(), handle))
        }
        None => Err(ToolError::model(
            resolution
                .explain(input)
                .unwrap_or_else(|| format!("no open tab matches {input:?}")),
        )),
    }
}

async fn send_to_tab(hub: Weak<HubInner>, tab: TabId, args: SendArgs) -> Result<String, ToolError> {
    let hub = upgrade(&hub)?;
    if !hub.permissions(&tab).send_to_tab {
        return Err(ToolError::model(
            "send_to_tab is not permitted in this tab (the permission was revoked)",
        ));
    }
    if args.message.trim().is_empty() {
        return Err(ToolError::model("message is empty: write the text to send"));
    }
    let (target, handle) = target(&hub, &args.tab_id)?;
    if target == tab {
        return Err(ToolError::model(format!(
            "tab {handle} is this tab itself; send_to_tab delivers to other tabs"
        )));
    }
    let delivery = match hub
        .deliver_from_tab(&target, Message::user(args.message), None, &tab)
        .await
    {
        Ok(d) => d,
        Err(TabError::QueueFull { limit, .. }) => {
            return Err(ToolError::model(format!(
                "REFUSED: tab {handle} already holds {limit} messages from other tabs, the most it keeps; this message was not delivered. Wait until a person messages that tab before sending more."
            )));
        }
        Err(TabError::Closed(_) | TabError::NotFound(_)) => {
            return Err(ToolError::model(format!(
                "tab {handle} closed before the message arrived"
            )));
        }
        Err(e) => return Err(ToolError::model(format!("could not deliver to tab {handle}: {e}"))),
    };
    Ok(match delivery.status {
        DeliveryStatus::Started => format!(
            "Delivered to tab {handle} (status: idle → started a new turn). It does not reply automatically; use read_tab later to see its answer."
        ),
        DeliveryStatus::Queued => format!(
            "Delivered to tab {handle} (status: running → queued). It reads your message when its current turn ends."
        ),
        DeliveryStatus::Held if delivery.awaiting_user => format!(
            "HELD: tab {handle} is waiting for its person to answer a question. Your message is queued (not lost) and will be read after that. held — do not keep resending."
        ),
        DeliveryStatus::Held => format!(
            "HELD: tab {handle} has used its auto-wake budget (too many agent messages without a human in between). Your message is queued (not lost) and will be read when a person next messages that tab. held — do not keep resending."
        ),
    })
}

async fn read_tab(hub: Weak<HubInner>, tab: TabId, args: ReadArgs) -> Result<ToolOutput, ToolError> {
    let hub = upgrade(&hub)?;
    if !hub.permissions(&tab).read_tab {
        return Err(ToolError::model(
            "read_tab is not permitted in this tab (the permission was revoked)",
        ));
    }
    let (target, handle) = target(&hub, &args.tab_id)?;
    let snapshot = hub
        .read(&target)
        .await
        .map_err(|e| ToolError::model(format!("could not read tab {handle}: {e}")))?;
    let status = snapshot.state.as_str();
    let running = snapshot.state == TabState::Running;
    let provenance = Provenance::tab(&handle);
    let text = match snapshot.last_response {
        Some(text) => {
            let mut out = format!("<tab_response tab={handle} status={status}>\n{text}\n</tab_response>");
            if running {
                out.push_str(
                    "\nThe tab is still running a turn: this is its previous completed turn. Read again later for the new one.",
                );
            }
            out
        }
        None if running => format!("Tab {handle} (status: running) has no completed turn yet."),
        None => format!("Tab {handle} (status: {status}) has no assistant responses yet."),
    };
    // Another agent's answer may repeat what a hostile page told it: the loop wraps it.
    Ok(ToolOutput::text(text).with_provenance(provenance))
}
