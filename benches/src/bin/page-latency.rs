//! `page_read` and `page_click` latency on a large page in real headless Chromium (Debian's
//! `/usr/bin/chromium`, launched with the closed-network flags), p50/p99 over `--calls` calls.
//!
//! The page is generated: a table of `--rows` rows (a link and a button each), a form of 100
//! fields, and a few kilobytes of prose, loaded from a file (no network). `page_read` reads the
//! first page of elements; `page_click` clicks a button whose handler changes the page's text.
//!
//! ```text
//! cargo run --release -p agent-bench --bin page-latency -- [--calls 200] [--rows 2000]
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::{SessionId, Tool, ToolContext};
use agent_tools::{BrowserHost, CdpHost, page_tools};
use serde_json::json;

fn large_page(rows: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Large fixture</title></head><body>\
         <h1>Inventory</h1><p id=status>Nothing clicked yet.</p>",
    );
    for i in 0..40 {
        html.push_str(&format!(
            "<p>Paragraph {i}: the quick brown fox jumps over the lazy dog, again and again, so that \
             the page has prose to read as well as controls.</p>"
        ));
    }
    html.push_str("<form>");
    for i in 0..100 {
        html.push_str(&format!("<label>Field {i} <input name=f{i} value='v{i}'></label>"));
    }
    html.push_str("</form><table>");
    for i in 0..rows {
        html.push_str(&format!(
            "<tr><td>Item {i}</td><td><a href='#item{i}'>Details {i}</a></td>\
             <td><button onclick=\"document.getElementById('status').textContent='Clicked {i}'\">Pick {i}</button></td></tr>"
        ));
    }
    html.push_str("</table></body></html>");
    html
}

fn summary(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3;
    println!(
        "{what:<40} p50 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   ({} calls)",
        at(0.5),
        at(0.99),
        at(1.0),
        samples.len()
    );
}

async fn run(calls: usize, rows: usize) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("agent-page-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let page = dir.join("large.html");
    let html = large_page(rows);
    std::fs::write(&page, &html).map_err(|e| e.to_string())?;
    let browser = CdpHost::launch_default()
        .await
        .map_err(|e| format!("cannot launch headless Chromium (apt install chromium): {e}"))?;
    let host: Arc<dyn BrowserHost> = Arc::new(browser.clone());
    host.navigate(None, &format!("file://{}", page.display()))
        .await
        .map_err(|e| e.to_string())?;
    host.wait_settled(None, Duration::from_secs(10))
        .await
        .map_err(|e| e.to_string())?;
    let tools = page_tools(host);
    let tool = |name: &str| -> Result<Arc<dyn Tool>, String> {
        tools
            .iter()
            .find(|t| t.spec().name == name)
            .cloned()
            .ok_or(format!("no tool {name}"))
    };
    let (read, click) = (tool("page_read")?, tool("page_click")?);
    let cx = || ToolContext::detached(SessionId::new_random(), "bench");
    println!(
        "page: {} KiB of HTML, {rows} table rows, 100 form fields",
        html.len() / 1024
    );

    let mut reads = Vec::with_capacity(calls);
    let mut snapshot = String::new();
    for _ in 0..calls {
        let t0 = Instant::now();
        let out = read.call(json!({}), cx()).await.map_err(|e| e.to_string())?;
        reads.push(t0.elapsed());
        snapshot = out.text_content();
    }
    summary("page_read (first page of elements)", reads);

    let button = snapshot
        .lines()
        .find(|l| l.contains("button") && l.contains("Pick"))
        .and_then(|l| l.split_whitespace().next())
        .ok_or("no button in the snapshot")?
        .to_owned();
    let mut clicks = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t0 = Instant::now();
        click
            .call(json!({"ref": button}), cx())
            .await
            .map_err(|e| e.to_string())?;
        clicks.push(t0.elapsed());
    }
    summary("page_click (a button, page text changes)", clicks);
    let _ = browser.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() {
    let mut calls = 200;
    let mut rows = 2000;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().and_then(|v| v.parse().ok());
        match (flag.as_str(), value) {
            ("--calls", Some(v)) => calls = v,
            ("--rows", Some(v)) => rows = v,
            _ if flag == "--bench" => {}
            _ => {
                eprintln!("usage: page-latency [--calls N] [--rows N]");
                std::process::exit(2);
            }
        }
    }
    let result = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
        .and_then(|rt| rt.block_on(run(calls.max(1), rows)));
    if let Err(e) = result {
        eprintln!("page-latency: {e}");
        std::process::exit(1);
    }
}
