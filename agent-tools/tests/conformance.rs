#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The page-tool conformance table (`tests/conformance/cases.json`) on the Rust CDP host in real
//! headless Chromium. The same table runs on the Python WebKitGTK host
//! (`examples/webkit/tests/test_conformance.py`), so a behaviour that differs between engines
//! is a failing case. Every case runs (each in a new tab, with fresh tools); the test fails
//! once at the end, naming every failing case and step. `CONFORMANCE_CASE=name` runs one.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::{SessionId, Tool, ToolContext, ToolError};
use agent_tools::{BrowserHost, PageTab, PageToolsConfig, page_tools_for_tab_with};
use serde_json::{Value, json};

const ENGINE: &str = "chromium";

fn cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance/cases.json");
    let text = std::fs::read_to_string(path).expect("the case table");
    let table: Value = serde_json::from_str(&text).expect("the case table is JSON");
    table["cases"].as_array().expect("cases").clone()
}

/// One case's tabs, tools and what its steps saved.
struct Run {
    host: Arc<dyn BrowserHost>,
    tools: Vec<Arc<dyn Tool>>,
    case_tab: String,
    front_tab: Option<String>,
    vars: HashMap<String, String>,
    /// Every page_read result so far, oldest first (for `ref_of`).
    reads: Vec<String>,
}

impl Run {
    fn fill(&self, s: &str) -> String {
        let mut out = s.replace("{base}", support::server());
        out = out.replace("{host}", support::server().trim_start_matches("http://"));
        out = out.replace("{case_tab}", &self.case_tab);
        if let Some(front) = &self.front_tab {
            out = out.replace("{front_tab}", front);
        }
        for (k, v) in &self.vars {
            out = out.replace(&format!("{{{k}}}"), v);
        }
        out
    }

    fn fill_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.fill(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.fill_value(x)).collect()),
            Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), self.fill_value(x))).collect()),
            other => other.clone(),
        }
    }

    fn tab(&self, step: &Value) -> String {
        match step["tab"].as_str() {
            Some("front") => self.front_tab.clone().expect("the case has a front tab"),
            _ => self.case_tab.clone(),
        }
    }

    /// The ref the newest page_read gave an element whose line contains `needle`.
    fn ref_of(&self, needle: &str) -> Result<String, String> {
        for read in self.reads.iter().rev() {
            if let Some(line) = read.lines().find(|l| support::is_element_line(l) && l.contains(needle)) {
                return Ok(line.split_whitespace().next().unwrap_or_default().to_string());
            }
        }
        Err(format!("no page_read so far lists an element line with {needle:?}"))
    }

    async fn call(&self, name: &str, args: Value) -> Result<(bool, String), String> {
        let tool = self
            .tools
            .iter()
            .find(|t| t.spec().name == name)
            .ok_or_else(|| format!("no tool {name}"))?
            .clone();
        let cx = ToolContext::detached(SessionId::new_random(), "conformance");
        match tokio::time::timeout(Duration::from_secs(60), tool.call(args, cx)).await {
            Err(_) => Err(format!("{name} did not answer within 60 s")),
            Ok(Ok(out)) => Ok((false, out.text_content())),
            Ok(Err(ToolError::ForModel { message, .. })) => Ok((true, message)),
            Ok(Err(e)) => Ok((true, format!("(fatal) {e}"))),
        }
    }
}

/// The expectations of a step on this engine: the step itself, or its override for the engine.
enum Expect {
    Skip,
    Check(Value),
}

fn expectations(step: &Value) -> Expect {
    match &step[ENGINE] {
        Value::Null => Expect::Check(step.clone()),
        Value::String(s) if s == "unsupported" => Expect::Check(json!({
            "error": true,
            "contains": ["not supported by this host"],
        })),
        Value::Object(o) if o.contains_key("skip") => Expect::Skip,
        Value::Object(o) => Expect::Check(Value::Object(o.clone())),
        other => panic!("bad {ENGINE} override {other}"),
    }
}

/// Checks an answer (`error`, `contains`, `not_contains`, `equals`); the problems found.
fn check(run: &Run, expect: &Value, error: Option<bool>, text: &str, value: Option<&Value>) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(is_error) = error {
        let want = expect["error"].as_bool().unwrap_or(false);
        if want != is_error {
            problems.push(if want {
                "expected an error (a refusal), got a success".to_string()
            } else {
                "expected a success, got an error".to_string()
            });
        }
    }
    for want in expect["contains"].as_array().into_iter().flatten() {
        let want = run.fill(want.as_str().unwrap_or_default());
        if !text.contains(&want) {
            problems.push(format!("does not contain {want:?}"));
        }
    }
    for not in expect["not_contains"].as_array().into_iter().flatten() {
        let not = run.fill(not.as_str().unwrap_or_default());
        if text.contains(&not) {
            problems.push(format!("contains {not:?}"));
        }
    }
    if let (Some(want), Some(got)) = (expect.get("equals"), value) {
        let want = run.fill_value(want);
        if &want != got {
            problems.push(format!("expected {want}, got {got}"));
        }
    }
    problems
}

async fn settle(host: &Arc<dyn BrowserHost>, tab: &str) -> Result<(), String> {
    host.wait_settled(Some(tab), Duration::from_secs(5))
        .await
        .map_err(|e| format!("settling tab {tab}: {e}"))
}

/// Runs one step; `Err` holds what went wrong.
async fn step(run: &mut Run, step: &Value) -> Result<(), String> {
    let expect = match expectations(step) {
        Expect::Skip => return Ok(()),
        Expect::Check(e) => e,
    };
    if let Some(page) = step["open"].as_str() {
        let tab = run.tab(step);
        let url = if page.contains(':') {
            page.to_string()
        } else {
            support::url(&format!("/{page}"))
        };
        run.host
            .navigate(Some(&tab), &url)
            .await
            .map_err(|e| format!("opening {url}: {e}"))?;
        return settle(&run.host, &tab).await;
    }
    if let Some(expr) = step["eval"].as_str() {
        let tab = run.tab(step);
        let v = run
            .host
            .evaluate(Some(&tab), expr)
            .await
            .map_err(|e| format!("evaluating {expr:?}: {e}"))?;
        let problems = check(run, &expect, None, &v.to_string(), Some(&v));
        return if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("eval {expr:?}: {}", problems.join("; ")))
        };
    }
    if let Some(which) = step["active"].as_str() {
        let want = match which {
            "front" => run.front_tab.clone().unwrap_or_default(),
            _ => run.case_tab.clone(),
        };
        let tabs = run.host.tabs().await.map_err(|e| format!("tabs: {e}"))?;
        let active = tabs.iter().find(|t| t.active).map(|t| t.id.clone()).unwrap_or_default();
        return if active == want {
            Ok(())
        } else {
            Err(format!("expected the {which} tab ({want}) in front, found {active}"))
        };
    }
    let name = step["tool"]
        .as_str()
        .ok_or("a step without tool, eval, open or active")?;
    let mut args = run.fill_value(&step["args"]);
    if args.is_null() {
        args = json!({});
    }
    if let Some(needle) = step["ref_of"].as_str() {
        args["ref"] = json!(run.ref_of(needle)?);
    }
    let (is_error, text) = run.call(name, args.clone()).await?;
    if name == "page_read" && !is_error {
        run.reads.push(text.clone());
    }
    if let Some(save) = step.get("save") {
        let after = save["after"].as_str().unwrap_or_default();
        if let Some(rest) = text.split(after).nth(1) {
            let word = rest.split_whitespace().next().unwrap_or_default();
            run.vars.insert(
                save["name"].as_str().unwrap_or_default().to_string(),
                word.trim_end_matches([';', ',']).to_string(),
            );
        }
    }
    let problems = check(run, &expect, Some(is_error), &text, None);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name} {args}: {}\n--- answer ---\n{text}\n---",
            problems.join("; ")
        ))
    }
}

/// The upload folder of cases with `upload_folder`: a.txt, sub/b.txt, a directory, a symlink out.
fn upload_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/b.txt"), "bravo!").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("link.txt")).unwrap();
    dir
}

/// Runs one case in new tabs; the failures of its steps.
async fn case(host: Arc<dyn BrowserHost>, case: &Value) -> Vec<String> {
    let page = case["page"].as_str().unwrap_or("page2.html");
    let opened = match host.open_tab(Some(&support::url(&format!("/{page}")))).await {
        Ok(t) => t,
        Err(e) => return vec![format!("opening the case's tab: {e}")],
    };
    let mut failures = Vec::new();
    if let Err(e) = settle(&host, &opened.id).await {
        failures.push(e);
    }
    let mut front_tab = None;
    if let Some(front) = case["front"].as_str() {
        match host.open_tab(Some(&support::url(&format!("/{front}")))).await {
            Ok(t) => {
                let _ = settle(&host, &t.id).await;
                front_tab = Some(t.id);
            }
            Err(e) => failures.push(format!("opening the front tab: {e}")),
        }
    }
    let folder = case["upload_folder"].as_bool().unwrap_or(false).then(upload_folder);
    let cfg = PageToolsConfig {
        scrape_loopback_http: true,
        upload_root: folder.as_ref().map(|d| d.path().to_path_buf()),
        ..PageToolsConfig::default()
    };
    let bound = if case["bound"].as_bool().unwrap_or(false) {
        PageTab::Host(opened.id.clone())
    } else {
        PageTab::Active
    };
    let mut run = Run {
        tools: page_tools_for_tab_with(host.clone(), bound, cfg),
        host: host.clone(),
        case_tab: opened.id.clone(),
        front_tab,
        vars: HashMap::new(),
        reads: Vec::new(),
    };
    if failures.is_empty() {
        for (i, s) in case["steps"].as_array().into_iter().flatten().enumerate() {
            if let Err(e) = step(&mut run, s).await {
                failures.push(format!("step {}: {e}", i + 1));
                break;
            }
        }
    }
    if failures.is_empty()
        && let Some(after) = case["after_turn"].as_array()
    {
        // The turn ends, as the agent loop ends it: every tool hears of it.
        let session = SessionId::new_random();
        for tool in &run.tools {
            tool.turn_ended(&session).await;
        }
        for (i, s) in after.iter().enumerate() {
            if let Err(e) = step(&mut run, s).await {
                failures.push(format!("after the turn, step {}: {e}", i + 1));
                break;
            }
        }
    }
    // Close every tab the case opened (tab_open ones too), leaving the others.
    if let Some(front) = &run.front_tab {
        let _ = host.close_tab(front).await;
    }
    for v in run.vars.values() {
        let _ = host.close_tab(v).await;
    }
    let _ = host.close_tab(&opened.id).await;
    failures
}

#[test]
fn conformance_cases_on_chromium() {
    let _g = support::exclusive();
    let host: Arc<dyn BrowserHost> = Arc::new(support::browser().clone());
    let only = std::env::var("CONFORMANCE_CASE").ok();
    let mut failed = Vec::new();
    let mut ran = 0;
    let start = Instant::now();
    for c in cases() {
        let name = c["name"].as_str().unwrap_or("?").to_string();
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        if let Some(why) = c[ENGINE]["skip"].as_str() {
            eprintln!("conformance {name}: skipped on {ENGINE}: {why}");
            continue;
        }
        ran += 1;
        let t = Instant::now();
        let failures = support::rt().block_on(case(host.clone(), &c));
        eprintln!(
            "conformance {name}: {} ({} ms)",
            if failures.is_empty() { "ok" } else { "FAILED" },
            t.elapsed().as_millis()
        );
        if !failures.is_empty() {
            failed.push(format!("case {name}:\n  {}", failures.join("\n  ")));
        }
    }
    eprintln!(
        "conformance: {ran} cases on {ENGINE} in {} ms",
        start.elapsed().as_millis()
    );
    assert!(ran > 0, "no case ran (CONFORMANCE_CASE={only:?})");
    assert!(
        failed.is_empty(),
        "{} of {ran} conformance cases failed on {ENGINE}:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
