//! The JavaScript dialogs open in the CDP host's tabs: a task per tab follows Chromium's
//! `Page.javascriptDialogOpening` / `Page.javascriptDialogClosed` events, so a call into a page
//! paused by a dialog fails at once instead of waiting out its timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{EventJavascriptDialogClosed, EventJavascriptDialogOpening};
use futures::StreamExt;

use crate::host::DialogInfo;

/// The open dialog of each tab, by target id.
#[derive(Clone, Default)]
pub(crate) struct Dialogs(Arc<Mutex<HashMap<String, DialogInfo>>>);

impl Dialogs {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, DialogInfo>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The dialog open in the tab, if any.
    pub(crate) fn open(&self, tab: &str) -> Option<DialogInfo> {
        self.map().get(tab).cloned()
    }

    /// Forgets the tab's dialog (answered, or the tab closed).
    pub(crate) fn clear(&self, tab: &str) {
        self.map().remove(tab);
    }

    /// Resolves once a dialog is open in the tab.
    pub(crate) async fn opened(&self, tab: &str) {
        while self.open(tab).is_none() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Starts following the dialogs of `page` (until its event streams end with the tab).
    pub(crate) async fn watch(&self, page: &Page) {
        let id = page.target_id().as_ref().to_string();
        let (Ok(mut opening), Ok(mut closed)) = (
            page.event_listener::<EventJavascriptDialogOpening>().await,
            page.event_listener::<EventJavascriptDialogClosed>().await,
        ) else {
            tracing::debug!(target: "agent_tools::cdp", "cannot follow the dialogs of tab {id}");
            return;
        };
        let dialogs = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    ev = opening.next() => match ev {
                        Some(ev) => {
                            let info = DialogInfo {
                                kind: ev.r#type.as_ref().to_string(),
                                message: ev.message.clone(),
                                default_text: ev.default_prompt.clone().unwrap_or_default(),
                            };
                            dialogs.map().insert(id.clone(), info);
                        }
                        None => break,
                    },
                    ev = closed.next() => match ev {
                        Some(_) => dialogs.clear(&id),
                        None => break,
                    },
                }
            }
            dialogs.clear(&id);
        });
    }
}
