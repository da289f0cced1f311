//! The page a page tool acts on, as the gate sees it: every page tool names a host
//! ([`Tool::target_host`]), so a person can approve a tool for the pages of one site. Most act
//! on their tab's page; page_navigate, page_back and page_forward act on the page they load, so
//! they name its host, not that of the page they leave.

use std::sync::Arc;

use agent_core::{SessionId, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait};
use serde_json::Value;

use super::shared::Shared;

/// Which page a tool's call acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acts {
    /// The page in its tab.
    OnPage,
    /// The page at its `url` argument, resolved as the address bar would (page_navigate).
    Loads,
    /// The tab's history entry one step back (page_back).
    Back,
    /// The tab's history entry one step forward (page_forward).
    Forward,
}

/// A page tool that names the host of the page it acts on.
struct OnPage {
    inner: Arc<dyn Tool>,
    shared: Arc<Shared>,
    acts: Acts,
}

#[async_trait]
impl Tool for OnPage {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    async fn call(&self, args: Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.inner.call(args, cx).await
    }

    async fn turn_ended(&self, session_id: &SessionId) {
        self.inner.turn_ended(session_id).await;
    }

    async fn target_host(&self, args: &Value) -> Option<String> {
        match self.acts {
            Acts::OnPage => self.shared.page_host().await,
            Acts::Loads => self.shared.destination_host(args).await,
            Acts::Back => self.shared.history_host(-1).await,
            Acts::Forward => self.shared.history_host(1).await,
        }
    }
}

/// `tool`, naming the host of the page it acts on.
pub(crate) fn on_page(sh: &Arc<Shared>, tool: Arc<dyn Tool>, acts: Acts) -> Arc<dyn Tool> {
    Arc::new(OnPage {
        inner: tool,
        shared: sh.clone(),
        acts,
    })
}

/// The host of a web address as the host rules compare it: parsed by the `url` crate, which
/// writes a host name in ASCII lowercase and an internationalised one in punycode (`xn--…`),
/// and an IPv6 address in brackets. `None` for an address without a host (`about:`, `data:`,
/// `javascript:`, `file:`) or one that does not parse.
pub(crate) fn host_of(address: &str) -> Option<String> {
    let url = url::Url::parse(address).ok()?;
    if url.scheme() == "file" {
        // A path on this machine (or a network share), not a site.
        return None;
    }
    url.host_str().filter(|h| !h.is_empty()).map(str::to_owned)
}

impl Shared {
    /// The host of the page in the tab the tools work in (`None`: no tab, or an address
    /// without a host such as `about:blank`). From the browser's record of the tab's address
    /// ([`crate::BrowserHost::tabs`]), never from the page's own scripts or text: a page can
    /// change its path with the history API, not its host.
    pub(crate) async fn page_host(&self) -> Option<String> {
        let tab = self.working().ok()?;
        let tabs = self.host.tabs().await.ok()?;
        let info = match tab {
            Some(id) => tabs.into_iter().find(|t| t.id == id)?,
            None => tabs.into_iter().find(|t| t.active)?,
        };
        host_of(&info.url)
    }

    /// The host page_navigate would load with `args`: its `url` argument resolved as the call
    /// resolves it (the host's address-bar resolver, else the built-in one; a search goes to
    /// the search page). `None` when it resolves to no address with a host or is refused.
    /// The answer depends on the arguments only, not on the tab, so it is the same when the
    /// core asks again just before an approved call runs. Where the server redirects is up to
    /// it: the host is where the address points.
    pub(crate) async fn destination_host(&self, args: &Value) -> Option<String> {
        let input = args.get("url")?.as_str()?;
        let (url, _kind) = self.resolve_address(input).await.ok()?;
        host_of(&url)
    }

    /// The host of the tab's history entry `offset` steps from the current one (page_back:
    /// -1, page_forward: 1), from the browser's record ([`crate::BrowserHost::history`]).
    /// `None` when the host cannot tell or there is no such entry.
    pub(crate) async fn history_host(&self, offset: isize) -> Option<String> {
        let tab = self.working().ok()?;
        let history = self.host.history(tab.as_deref()).await.ok()??;
        host_of(history.step(offset)?)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::host::{BrowserHost, HostError, TabHistory, TabInfo};
    use crate::page::{PageTab, PageToolsConfig};

    #[test]
    fn web_addresses_name_their_host_normalised() {
        let cases = [
            ("http://127.0.0.1:8080/form.html", "127.0.0.1"),
            ("http://localhost:8080/x?y#z", "localhost"),
            ("https://WWW.Example.COM/a", "www.example.com"),
            ("https://bücher.de/", "xn--bcher-kva.de"),
            ("https://xn--bcher-kva.de/", "xn--bcher-kva.de"),
            ("http://[::1]:3000/", "[::1]"),
            ("https://user:pw@example.org:444/", "example.org"),
        ];
        for (address, host) in cases {
            assert_eq!(host_of(address).as_deref(), Some(host), "{address}");
        }
    }

    #[test]
    fn addresses_without_a_host_or_that_do_not_parse_name_none() {
        for address in [
            "about:blank",
            "data:text/html,<b>x</b>",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "file://server/share/x",
            "mailto:a@example.com",
            "example.com",
            "not a url",
            "http://",
            "",
        ] {
            assert_eq!(host_of(address), None, "{address}");
        }
    }

    /// A host with no tabs, its own resolver for "home" and a history of three entries, on the
    /// middle one.
    struct Stub;

    #[async_trait]
    impl BrowserHost for Stub {
        async fn evaluate(&self, _: Option<&str>, _: &str) -> Result<Value, HostError> {
            Err(HostError::Other("stub".into()))
        }
        async fn navigate(&self, _: Option<&str>, _: &str) -> Result<(), HostError> {
            Err(HostError::Other("stub".into()))
        }
        async fn wait_settled(&self, _: Option<&str>, _: Duration) -> Result<(), HostError> {
            Ok(())
        }
        async fn tabs(&self) -> Result<Vec<TabInfo>, HostError> {
            Ok(Vec::new())
        }
        async fn open_tab(&self, _: Option<&str>) -> Result<TabInfo, HostError> {
            Err(HostError::Other("stub".into()))
        }
        async fn close_tab(&self, _: &str) -> Result<(), HostError> {
            Err(HostError::Other("stub".into()))
        }
        async fn activate_tab(&self, _: &str) -> Result<(), HostError> {
            Err(HostError::Other("stub".into()))
        }
        async fn resolve_address(&self, input: &str) -> Result<Option<String>, HostError> {
            Ok(match input {
                "home" => Some("https://Intranet.Example/start".into()),
                "dangerous" => Some("javascript:alert(1)".into()),
                _ => None,
            })
        }
        async fn history(&self, _: Option<&str>) -> Result<Option<TabHistory>, HostError> {
            Ok(Some(TabHistory {
                entries: vec![
                    "http://127.0.0.1:9/a".into(),
                    "http://localhost:9/b".into(),
                    "about:blank".into(),
                ],
                current: 1,
            }))
        }
    }

    fn shared(host: Arc<dyn BrowserHost>) -> Shared {
        let cfg = PageToolsConfig {
            search_template: "https://search.example/?q={}".into(),
            ..PageToolsConfig::default()
        };
        Shared::new(host, PageTab::Active, cfg)
    }

    #[tokio::test]
    async fn a_navigation_names_the_host_of_the_address_it_loads() {
        let s = shared(Arc::new(Stub));
        let host = |url: &str| {
            let args = json!({ "url": url });
            let s = &s;
            async move { s.destination_host(&args).await }
        };
        assert_eq!(host("http://127.0.0.1:9/x").await.as_deref(), Some("127.0.0.1"));
        assert_eq!(host("HTTP://LocalHost:9/x").await.as_deref(), Some("localhost"));
        assert_eq!(host("example.com/a").await.as_deref(), Some("example.com"));
        assert_eq!(host("localhost:8080/x").await.as_deref(), Some("localhost"));
        assert_eq!(host("https://bücher.de/").await.as_deref(), Some("xn--bcher-kva.de"));
        // A search loads the search page; the host's own resolver answers first.
        assert_eq!(host("what is a host").await.as_deref(), Some("search.example"));
        assert_eq!(host("home").await.as_deref(), Some("intranet.example"));
        // No host, or refused before loading: none.
        for url in [
            "about:blank",
            "javascript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "dangerous",
            "",
        ] {
            assert_eq!(host(url).await, None, "{url}");
        }
        assert_eq!(s.destination_host(&json!({})).await, None);
        assert_eq!(s.destination_host(&json!({ "url": 7 })).await, None);
    }

    #[tokio::test]
    async fn a_history_step_names_the_host_of_the_entry_it_goes_to() {
        let s = shared(Arc::new(Stub));
        assert_eq!(s.history_host(-1).await.as_deref(), Some("127.0.0.1"));
        // The next entry has no host; two steps is past the end.
        assert_eq!(s.history_host(1).await, None);
        assert_eq!(s.history_host(2).await, None);
        assert_eq!(s.history_host(-2).await, None);
        let history = TabHistory {
            entries: vec!["http://a.example/".into()],
            current: 0,
        };
        assert_eq!(history.step(0), Some("http://a.example/"));
        assert_eq!(history.step(-1), None);
        assert_eq!(history.step(1), None);
    }
}
