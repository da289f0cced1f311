//! page_scrape: fetch an https page without rendering it, and extract its text. Every address
//! is checked against a [`ScrapePolicy`] before it is connected to.

use std::time::Duration;

use agent_core::ToolError;
use agent_core::untrusted::{Provenance, wrap_untrusted};

use super::html_text::html_to_text;
use super::scrape_policy::{FilteringResolver, Refused, ScrapePolicy, redirect_policy};

/// Largest body page_scrape downloads.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The HTTP client of page_scrape with its policy, or why it could not be built (a bad extra
/// root certificate): never a client without the policy.
pub(crate) struct Scraper {
    policy: ScrapePolicy,
    client: Result<reqwest::Client, String>,
}

impl Scraper {
    /// A client that resolves names through the policy's filter, checks every redirect, trusts
    /// the policy's extra roots and ignores proxy settings (a proxy would resolve names itself,
    /// out of the filter's reach).
    pub(crate) fn new(policy: ScrapePolicy) -> Scraper {
        let client = build_client(&policy);
        Scraper { policy, client }
    }

    /// Fetches `url` and returns `(final_url, content_type, text)`.
    pub(crate) async fn scrape(&self, url: &str) -> Result<(String, String, String), ToolError> {
        let parsed =
            reqwest::Url::parse(url.trim()).map_err(|e| ToolError::model(format!("{url:?} is not a URL: {e}")))?;
        self.policy
            .check_url(&parsed)
            .map_err(|why| ToolError::model(format!("refused: {why}")))?;
        let client = self.client.as_ref().map_err(|e| ToolError::model(e.clone()))?;
        let mut resp = client
            .get(parsed)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| fetch_error(url, e))?;
        let final_url = resp.url().to_string();
        if !resp.status().is_success() {
            return Err(ToolError::model(format!("{url} answered HTTP {}", resp.status())));
        }
        let ctype = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| ToolError::retryable(format!("reading {url} failed: {e}")))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_BODY {
                body.truncate(MAX_BODY);
                break;
            }
        }
        let raw = String::from_utf8_lossy(&body);
        let text = if ctype.contains("html") || ctype.is_empty() && raw.trim_start().starts_with('<') {
            html_to_text(&raw)
        } else if ctype.starts_with("text/") || ctype.contains("json") || ctype.contains("xml") {
            raw.into_owned()
        } else {
            return Err(ToolError::model(format!(
                "{url} is {}, not text; page_scrape returns text only",
                agent_core::untrusted::one_line(&ctype, 100)
            )));
        };
        Ok((final_url, ctype, text))
    }
}

fn build_client(policy: &ScrapePolicy) -> Result<reqwest::Client, String> {
    let mut roots = Vec::with_capacity(policy.extra_roots_pem.len());
    for pem in &policy.extra_roots_pem {
        let invalid =
            |why: String| format!("page_scrape is not available: an extra root certificate is invalid: {why}");
        let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes()).map_err(|e| invalid(e.to_string()))?;
        // Text without a certificate in it parses as an empty bundle: a mistake, not "no roots".
        if certs.is_empty() {
            return Err(invalid("no certificate in it".into()));
        }
        roots.extend(certs);
    }
    reqwest::Client::builder()
        .user_agent(concat!("agent-tools/", env!("CARGO_PKG_VERSION")))
        .no_proxy()
        .dns_resolver(std::sync::Arc::new(FilteringResolver { policy: policy.clone() }))
        .redirect(redirect_policy(policy.clone()))
        .tls_certs_merge(roots)
        .build()
        .map_err(|e| format!("page_scrape is not available: {e}"))
}

/// A refusal by the policy (a redirect or a resolved address) is final; other failures may be
/// worth a retry. Addresses the page chose (a redirect target) reach the model wrapped.
fn fetch_error(url: &str, e: reqwest::Error) -> ToolError {
    // The error's own URL may be a redirect target the page chose: left out.
    let e = e.without_url();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(err) = source {
        if let Some(r) = err.downcast_ref::<Refused>() {
            let target = match &r.target {
                Some(t) => format!("\nthe {} refused:\n{}", r.what, wrap_untrusted(&answer_source(url), t)),
                None => String::new(),
            };
            return ToolError::model(format!("refused {}: {}{target}", r.what, r.why));
        }
        source = err.source();
    }
    ToolError::retryable(format!("fetching {url} failed: {}", error_chain(&e)))
}

/// Names the server that answered with a redirect or whose name resolved: only the host of the
/// address the model asked for (its path may quote the redirect target).
fn answer_source(url: &str) -> Provenance {
    let host = reqwest::Url::parse(url.trim())
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    Provenance::new(format!("the answer of the server {host}"))
}

/// The error and its sources, one after another (reqwest's own message is often just
/// "error sending request").
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(err) = source {
        out.push_str(": ");
        out.push_str(&err.to_string());
        source = err.source();
    }
    out
}
