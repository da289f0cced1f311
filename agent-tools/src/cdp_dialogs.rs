//! The JavaScript dialogs open in the CDP host's tabs: a task per tab follows Chromium's
//! `Page.javascriptDialogOpening` / `Page.javascriptDialogClosed` events, so a call into a page
//! paused by a dialog fails at once instead of waiting out its timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{EventJavascriptDialogClosed, EventJavascriptDialogOpening};
use futures::StreamExt;
use tokio::sync::Notify;

use crate::host::DialogInfo;

/// The open dialog of each tab, by target id, and a wake-up for those waiting for one.
#[derive(Clone, Default)]
pub(crate) struct Dialogs(Arc<Inner>);

#[derive(Default)]
struct Inner {
    open: Mutex<HashMap<String, DialogInfo>>,
    opened: Notify,
}

impl Dialogs {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, DialogInfo>> {
        self.0.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The dialog open in the tab, if any.
    pub(crate) fn open(&self, tab: &str) -> Option<DialogInfo> {
        self.map().get(tab).cloned()
    }

    /// Forgets the tab's dialog (answered, or the tab closed).
    pub(crate) fn clear(&self, tab: &str) {
        self.map().remove(tab);
    }

    /// Resolves once a dialog is open in the tab: woken by each dialog that opens, not polled.
    pub(crate) async fn opened(&self, tab: &str) {
        loop {
            // Registered before the check, so a dialog opening in between still wakes it.
            let woken = self.0.opened.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.open(tab).is_some() {
                return;
            }
            woken.await;
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
                            dialogs.0.opened.notify_waiters();
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
