//! The README's main job: an agent opens a page with links in headless Chromium and saves every
//! link to a file (default `~/temp/links.txt`), printing events as they happen.
//!
//! ```text
//! scripts/demo                                  # offline: the scripted model, no network, no key
//! scripts/demo --out /tmp/links.txt             # another file
//! LLM_PROVIDER=openai-compatible LLM_MODEL=... LLM_API_KEY=... LLM_BASE_URL=... scripts/demo
//! ```
//!
//! Without `LLM_*` variables the model is `ScriptedProvider::from_fn`: a function, not an LLM,
//! that plans each tool call from what the tools returned (it reads the snapshot, dismisses a
//! banner, expands the list, collects the links, writes the file). With `LLM_*` set, the real
//! provider from `agent-providers` does the same job. The page is served from 127.0.0.1 and
//! the browser runs with closed-network flags: nothing leaves the machine.
//!
//! Options: `--out FILE` (where the links go), `--url URL` (another page instead of the
//! built-in one), `--db FILE` (the SQLite session store; default next to the output file),
//! `--chromium PATH` (default `/usr/bin/chromium`).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::{
    Agent, AgentConfig, DenialPolicy, EventKind, GateDecision, GateRequest, Message, ModelRequest, OutcomeStatus,
    Provider, Role, ScriptStep, ScriptedProvider, ScriptedReply, gate_fn,
};
use agent_store::SqliteStore;
use agent_tools::{BrowserHost, BrowserPrompt, CdpConfig, CdpHost, FsPolicy, fs_tools, page_tools};
use futures::StreamExt;
use serde_json::json;

const PAGE: &str = include_str!("../../fixtures/demo-links.html");
const ABOUT: &str = include_str!("../../fixtures/about.html");

/// What the demo adds to the library's browser-agent rules.
const INSTRUCTIONS: &str = "Your filesystem root is the output directory; give paths relative to it.";

struct Args {
    out: PathBuf,
    url: Option<String>,
    db: Option<PathBuf>,
    chromium: PathBuf,
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        out: home().join("temp").join("links.txt"),
        url: None,
        db: None,
        chromium: PathBuf::from("/usr/bin/chromium"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--out" => a.out = PathBuf::from(val("--out")?),
            "--url" => a.url = Some(val("--url")?),
            "--db" => a.db = Some(PathBuf::from(val("--db")?)),
            "--chromium" => a.chromium = PathBuf::from(val("--chromium")?),
            "-h" | "--help" => {
                return Err("usage: browser-demo [--out FILE] [--url URL] [--db FILE] [--chromium PATH]".into());
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    if let Some(s) = a.out.to_str()
        && let Some(rest) = s.strip_prefix("~/")
    {
        a.out = home().join(rest);
    }
    Ok(a)
}

/// Serves the demo page (and its about page) on 127.0.0.1; returns the page's URL.
fn serve() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base = format!("http://127.0.0.1:{}", listener.local_addr()?.port());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let Ok(read_half) = stream.try_clone() else { return };
                let mut reader = BufReader::new(read_half);
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/");
                let (status, body) = match path {
                    "/" | "/index.html" => ("200 OK", PAGE),
                    "/about.html" => ("200 OK", ABOUT),
                    _ => ("404 Not Found", "not found"),
                };
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    Ok(format!("{base}/"))
}

// ---------------------------------------------------------------- the offline scripted model

/// The tool results of the current turn, oldest first: (tool name, text, is_error).
fn turn_results(req: &ModelRequest) -> Vec<(String, String, bool)> {
    let start = req.messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
    req.messages[start..]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m: &Message| (m.tool_name.clone().unwrap_or_default(), m.text(), m.is_error))
        .collect()
}

fn element_lines(snapshot: &str) -> impl Iterator<Item = &str> {
    snapshot.lines().filter(|l| {
        let mut c = l.chars();
        c.next() == Some('e') && c.next().is_some_and(|d| d.is_ascii_digit())
    })
}

fn quoted_name(line: &str) -> String {
    let Some(start) = line.find('"') else {
        return String::new();
    };
    serde_json::Deserializer::from_str(&line[start..])
        .into_iter::<String>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_default()
}

/// Turns a snapshot's short link (`/about.html`, `www.rust-lang.org/learn`) back into a URL.
fn full_url(short: &str, page_url: &str) -> Option<String> {
    if short.starts_with('[') {
        return None; // withheld (data: or blob:)
    }
    if short.starts_with("http://") || short.starts_with("https://") {
        return Some(short.to_string());
    }
    let origin: String = page_url.splitn(4, '/').take(3).collect::<Vec<_>>().join("/");
    if short.starts_with('/') {
        return Some(format!("{origin}{short}"));
    }
    if short.starts_with('#') {
        return Some(format!("{}{short}", page_url.split('#').next().unwrap_or(page_url)));
    }
    Some(format!("https://{short}"))
}

/// Plans the next step from the conversation, as a model would: read, dismiss the banner,
/// expand the list, read again, write the links, answer.
fn plan(req: &ModelRequest, out_name: &str) -> ScriptStep {
    let results = turn_results(req);
    let last_read = results.iter().rev().find(|(n, _, e)| n == "page_read" && !e);
    let Some((_, snapshot, _)) = last_read else {
        return ScriptedReply::tool_call("page_read", json!({}))
            .with_text("I'll read the page first.")
            .into();
    };
    let tried: Vec<&str> = results
        .iter()
        .filter(|(n, _, _)| n == "page_click")
        .map(|(_, t, _)| t.as_str())
        .collect();
    if let Some((name, text, is_error)) = results.last() {
        if name == "fs_write" {
            let links = snapshot_links(snapshot);
            let answer = if *is_error {
                format!("I could not save the links: {text}")
            } else {
                format!(
                    "Saved {} links to {out_name} (one per line: URL, then its text). {}",
                    links.0.len(),
                    if links.1 > 0 {
                        format!(
                            "{} data:/blob: link was withheld by the page tools and is not in the file.",
                            links.1
                        )
                    } else {
                        String::new()
                    }
                )
            };
            return ScriptedReply::text(answer.trim_end()).into();
        }
        if name == "page_click" && !is_error {
            return ScriptedReply::tool_call("page_read", json!({}))
                .with_text("The page changed; reading it again.")
                .into();
        }
    }
    let lines: Vec<&str> = element_lines(snapshot).collect();
    // A consent banner in the way: try to dismiss it once (the tools may refuse it).
    let mut in_dialog = false;
    for l in snapshot.lines() {
        if l.starts_with("[dialog") {
            in_dialog = true;
            continue;
        }
        if in_dialog && l.contains(" button ") {
            let r = l.split_whitespace().next().unwrap_or("");
            if !tried.iter().any(|t| mentions_ref(t, r)) {
                return ScriptedReply::tool_call("page_click", json!({"ref": r}))
                    .with_text("A cookie banner is open; I'll dismiss it.")
                    .into();
            }
            break;
        }
        if l.starts_with('[') || l.starts_with('#') {
            in_dialog = false;
        }
    }
    // A collapsed "show more" control hides part of the list: expand it.
    if let Some(l) = lines.iter().find(|l| {
        let n = quoted_name(l).to_lowercase();
        l.contains(" button ") && l.contains("collapsed") && (n.contains("show") || n.contains("more"))
    }) {
        let r = l.split_whitespace().next().unwrap_or("");
        if !tried.iter().any(|t| mentions_ref(t, r)) {
            return ScriptedReply::tool_call("page_click", json!({"ref": r}))
                .with_text(format!(
                    "Some links are hidden behind {:?}; expanding it.",
                    quoted_name(l)
                ))
                .into();
        }
    }
    let (links, _) = snapshot_links(snapshot);
    let content: String = links.iter().map(|(u, n)| format!("{u}\t{n}\n")).collect();
    ScriptedReply::tool_call("fs_write", json!({"path": out_name, "content": content}))
        .with_text(format!("The page lists {} links; saving them.", links.len()))
        .into()
}

/// The links of a snapshot as (url, text), deduplicated, and how many were withheld.
fn snapshot_links(snapshot: &str) -> (Vec<(String, String)>, usize) {
    let page_url = snapshot
        .lines()
        .find_map(|l| l.strip_prefix("url: "))
        .unwrap_or("")
        .to_string();
    let mut seen = BTreeSet::new();
    let mut links = Vec::new();
    let mut withheld = 0;
    for l in element_lines(snapshot).filter(|l| l.contains(" link ")) {
        let Some((_, target)) = l.rsplit_once(" -> ") else {
            continue;
        };
        match full_url(target.trim(), &page_url) {
            Some(u) => {
                if seen.insert(u.clone()) {
                    links.push((u, quoted_name(l)));
                }
            }
            None => withheld += 1,
        }
    }
    (links, withheld)
}

// ---------------------------------------------------------------- main

fn short(s: &str, n: usize) -> String {
    let one_line = s.replace('\n', " ⏎ ");
    if one_line.chars().count() > n {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    } else {
        one_line
    }
}

#[tokio::main]
async fn main() {
    let code = match run().await {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("browser-demo: {e}");
            2
        }
    };
    std::process::exit(code);
}

async fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let out_dir = args
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let out_name = args
        .out
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("--out must name a file")?
        .to_string();
    std::fs::create_dir_all(&out_dir)?;
    let db = args.db.clone().unwrap_or_else(|| out_dir.join("browser-demo.sqlite"));

    let llm = std::env::vars().any(|(k, _)| k.starts_with("LLM_"));
    let provider: Arc<dyn Provider> = if llm {
        let p = agent_providers::from_env()?;
        println!("model: the real provider from LLM_* ({})", p.id());
        p
    } else {
        println!("model: OFFLINE SCRIPTED MODEL (ScriptedProvider::from_fn): not an LLM. A function plans each");
        println!("       tool call from what the tools return. Set LLM_PROVIDER, LLM_MODEL, LLM_API_KEY (and");
        println!("       LLM_BASE_URL) to run the same task with a real model.");
        let name = out_name.clone();
        Arc::new(ScriptedProvider::from_fn(move |req| plan(req, &name)))
    };

    let url = match args.url {
        Some(u) => u,
        None => serve()?,
    };
    println!("page:  {url} (served on loopback)");
    let host = CdpHost::launch(CdpConfig {
        executable: args.chromium.clone(),
        ..CdpConfig::default()
    })
    .await?;
    println!(
        "browser: headless {} (pid {}), closed-network flags",
        args.chromium.display(),
        host.pid().unwrap_or(0)
    );
    host.navigate(None, &url).await?;
    host.wait_settled(None, std::time::Duration::from_secs(5)).await?;

    let store = SqliteStore::open(&db).await?;
    let mut builder = Agent::builder()
        .provider_arc(provider)
        .store(store)
        .system_prompt(BrowserPrompt::new().instructions(INSTRUCTIONS).render())
        .config(AgentConfig {
            on_denial: DenialPolicy::TellModel,
            max_iterations: 20,
            ..AgentConfig::default()
        })
        .gate(gate_fn(|req: &GateRequest| {
            let decision = match req.tool.as_str() {
                "page_click" | "page_fill" | "page_select" | "page_navigate" | "fs_write" | "fs_mkdir" => {
                    GateDecision::Allow
                }
                _ => GateDecision::Deny {
                    reason: Some("the demo only allows page actions and writing files".into()),
                },
            };
            // The verdict is printed from the event stream (tool_call_started of a gated tool,
            // or tool_call_denied), so it stays in order with the streamed text.
            async move { decision }
        }));
    let browser: Arc<dyn BrowserHost> = Arc::new(host.clone());
    let mut gated = std::collections::HashSet::new();
    for tool in page_tools(browser)
        .into_iter()
        .chain(fs_tools(FsPolicy::root(&out_dir)))
    {
        if tool.spec().name != "shell_exec" {
            if tool.spec().gated {
                gated.insert(tool.spec().name.clone());
            }
            builder = builder.tool_arc(tool);
        }
    }
    let agent = builder.build()?;
    let session = agent.create_session().await?;
    println!("session: {} in {}", session.id(), db.display());
    let task = format!(
        "Save the links of this page to {} (write the file {out_name:?}, one link per line).",
        args.out.display()
    );
    println!("\nuser: {task}\n");
    let run = session.send(task);
    let mut events = run.events();
    let mut streamed = false;
    while let Some(event) = events.next().await {
        match &event.kind {
            EventKind::ContentToken { text } => {
                if !streamed {
                    print!("assistant: ");
                    streamed = true;
                }
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            EventKind::ModelCallCompleted { .. } if streamed => {
                println!();
                streamed = false;
            }
            EventKind::ToolCallStarted { name, arguments, .. } => {
                if streamed {
                    println!();
                    streamed = false;
                }
                if gated.contains(name) {
                    println!("  gate: allow {name}");
                }
                println!("  -> {name} {}", short(&arguments.to_string(), 120));
            }
            EventKind::ToolCallSucceeded {
                name,
                output,
                duration_ms,
                ..
            } => {
                let shown = if name == "page_read" {
                    let n = element_lines(output).count();
                    format!("{n} element lines, {} chars", output.chars().count())
                } else {
                    short(output, 140)
                };
                println!("  <- {name} ok ({duration_ms} ms): {shown}");
            }
            EventKind::ToolCallFailed { name, error, .. } => {
                println!(
                    "  <- {name} REFUSED/FAILED: {}",
                    short(error.trim_start_matches("error: "), 200)
                );
            }
            EventKind::ToolCallDenied { name, reason, .. } => {
                println!("  <- {name} DENIED by the gate: {reason}");
            }
            _ => {}
        }
    }
    let outcome = run.await;
    if streamed {
        println!();
    }
    println!("\noutcome: {}", outcome.status.as_str());
    if let Some(e) = &outcome.error {
        println!("error: {e}");
    }
    let ok = outcome.status == OutcomeStatus::Done && args.out.exists();
    if ok {
        let text = std::fs::read_to_string(&args.out)?;
        println!("\n{} ({} lines):", args.out.display(), text.lines().count());
        print!("{text}");
    }
    host.close().await?;
    Ok(ok)
}

/// Whether a tool result names the ref `r` as a word of its own: a plain substring test would
/// also find `e8` inside a wrapper's random hex nonce (`…18e869…`) and skip a click never made.
fn mentions_ref(text: &str, r: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(r).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + r.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::mentions_ref;

    #[test]
    fn a_ref_inside_a_nonce_or_a_longer_ref_is_not_a_mention() {
        let refused = "<untrusted-content nonce=\"768c18e869374cf8\">\ne1 (button \"Confirm\") reads like a commit";
        assert!(mentions_ref(refused, "e1"));
        assert!(!mentions_ref(refused, "e8"), "e8 only occurs inside the nonce");
        assert!(!mentions_ref("clicked e12 (button)", "e1"));
        assert!(mentions_ref("clicked e12 (button)", "e12"));
    }
}
