//! Shared test support: one Tokio runtime, one loopback fixture server and one headless
//! Chromium per test binary. Chromium tests never skip: a missing browser fails them.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use agent_core::{SessionId, Tool, ToolContext, ToolError, ToolOutput};
use agent_tools::{BrowserHost, CdpHost, PageToolsConfig, page_tools_with};
use serde_json::Value;

pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    })
}

/// Serves `tests/fixtures` on 127.0.0.1, plus `/redirect?to=<path>` (302).
pub fn server() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(match stream.try_clone() {
                        Ok(s) => s,
                        Err(_) => return,
                    });
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                            break;
                        }
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let mut stream = stream;
                    let (status, ctype, body, extra) = if let Some(to) = path.strip_prefix("/redirect?to=") {
                        ("302 Found", "text/plain", Vec::new(), format!("Location: {to}\r\n"))
                    } else {
                        let name = path.split(['?', '#']).next().unwrap_or("/").trim_start_matches('/');
                        let name = if name.is_empty() { "links.html" } else { name };
                        match std::fs::read(dir.join(name)) {
                            Ok(b) if !name.contains("..") => ("200 OK", "text/html; charset=utf-8", b, String::new()),
                            _ => ("404 Not Found", "text/plain", b"not found".to_vec(), String::new()),
                        }
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&body);
                });
            }
        });
        base
    })
}

pub fn url(path: &str) -> String {
    format!("{}{path}", server())
}

/// The binary's shared browser. Fails (never skips) when Chromium is missing.
pub fn browser() -> &'static CdpHost {
    static HOST: OnceLock<CdpHost> = OnceLock::new();
    HOST.get_or_init(|| {
        rt().block_on(CdpHost::launch_default())
            .unwrap_or_else(|e| panic!("cannot launch headless Chromium (scripts/test installs it with apt): {e}"))
    })
}

/// Page tests share one browser and its active tab: they run one at a time.
pub fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct Page {
    pub tools: Vec<Arc<dyn Tool>>,
    pub host: Arc<dyn BrowserHost>,
}

pub fn tools() -> Page {
    let host: Arc<dyn BrowserHost> = Arc::new(browser().clone());
    let cfg = PageToolsConfig {
        scrape_loopback_http: true,
        ..PageToolsConfig::default()
    };
    Page {
        tools: page_tools_with(host.clone(), cfg),
        host,
    }
}

impl Page {
    pub fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        let tool = self
            .tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
            .clone();
        rt().block_on(async move {
            tool.call(args, ToolContext::detached(SessionId::new_random(), "t"))
                .await
        })
    }

    pub fn ok(&self, name: &str, args: Value) -> ToolOutput {
        match self.call(name, args.clone()) {
            Ok(o) => o,
            Err(e) => panic!("{name} {args} failed: {e}"),
        }
    }

    pub fn text(&self, name: &str, args: Value) -> String {
        self.ok(name, args).text_content()
    }

    /// The refusal message; panics when the call succeeded or failed fatally.
    pub fn refused(&self, name: &str, args: Value) -> String {
        match self.call(name, args.clone()) {
            Err(ToolError::ForModel { message, .. }) => message,
            Err(e) => panic!("{name} {args}: expected a refusal, got fatal {e}"),
            Ok(o) => panic!("{name} {args}: expected a refusal, got {}", o.text_content()),
        }
    }

    /// Loads a fixture in the active tab (directly through the host, not the gated tool).
    pub fn open(&self, path: &str) {
        let u = url(path);
        rt().block_on(async {
            self.host.navigate(None, &u).await.expect("navigate");
            self.host
                .wait_settled(None, std::time::Duration::from_secs(5))
                .await
                .expect("settle");
        });
    }

    pub fn eval(&self, expr: &str) -> Value {
        rt().block_on(self.host.evaluate(None, expr)).expect("evaluate")
    }

    /// The ref page_read gives the element whose line contains `needle`.
    pub fn ref_of(&self, needle: &str) -> String {
        let snap = self.text("page_read", serde_json::json!({}));
        let line = snap
            .lines()
            .find(|l| is_element_line(l) && l.contains(needle))
            .unwrap_or_else(|| panic!("no element line with {needle:?} in\n{snap}"));
        line.split_whitespace().next().unwrap_or_default().to_string()
    }
}

/// Whether a snapshot line is an element line (`e12 button "Save"`).
pub fn is_element_line(l: &str) -> bool {
    let mut c = l.chars();
    c.next() == Some('e') && c.next().is_some_and(|d| d.is_ascii_digit())
}
