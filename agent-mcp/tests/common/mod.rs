//! Shared helpers: where the peers are (exported by scripts/lib/ensure-mcp-peers.sh), a
//! server-everything over HTTP, and small tools for the server tests.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_core::{
    ContentPart, ImageSource, Tool, ToolContext, ToolError, ToolOutput, ToolSet, ToolSpec, async_trait, tool_fn,
};
use serde_json::json;

fn peer(var: &str, what: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(path) if Path::new(&path).exists() => PathBuf::from(path),
        Some(path) => panic!(
            "{var}={} does not exist: run scripts/test (it installs {what})",
            PathBuf::from(path).display()
        ),
        None => panic!(
            "{var} is not set: these tests need {what}. Run `scripts/test`, or \
             `source scripts/lib/ensure-mcp-peers.sh && ensure_mcp_peers` before cargo test"
        ),
    }
}

/// The entry script of `@modelcontextprotocol/server-everything` (run with node).
pub fn everything_entry() -> PathBuf {
    peer(
        "AGENT_MCP_EVERYTHING",
        "the npm package @modelcontextprotocol/server-everything",
    )
}

/// The python of the virtualenv holding the official `mcp` SDK.
pub fn mcp_python() -> PathBuf {
    peer("AGENT_MCP_PYTHON", "a virtualenv with the Python `mcp` SDK")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// server-everything over streamable HTTP on a free loopback port; killed on drop.
pub struct EverythingHttp {
    pub child: tokio::process::Child,
    pub url: String,
}

impl EverythingHttp {
    pub async fn start() -> EverythingHttp {
        Self::start_on(free_port()).await
    }

    pub async fn start_on(port: u16) -> EverythingHttp {
        let child = tokio::process::Command::new("node")
            .arg(everything_entry())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start node server-everything streamableHttp");
        let deadline = Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen on port {port} within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        EverythingHttp {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

/// The fs/shell tools of agent-tools confined to `root`, plus an image tool and a tool that
/// waits to be cancelled (counting cancellations).
pub struct TestTools {
    pub set: ToolSet,
    pub cancelled: Arc<AtomicUsize>,
    pub started: Arc<tokio::sync::Notify>,
}

pub fn test_tools(root: &Path) -> TestTools {
    let mut set = ToolSet::new();
    for tool in agent_tools::fs_tools(agent_tools::FsPolicy::root(root)) {
        set.register_arc(tool).unwrap();
    }
    set.register(tool_fn(
        "snapshot",
        "Returns a tiny PNG.",
        |_a: serde_json::Value, _cx: ToolContext| async move {
            Ok::<_, ToolError>(ToolOutput {
                content: vec![
                    ContentPart::text("a 1x1 PNG"),
                    ContentPart::Image {
                        media_type: "image/png".into(),
                        source: ImageSource::Base64 { data: TINY_PNG.into() },
                    },
                ],
                structured: None,
                truncated: false,
                provenance: None,
            })
        },
    ))
    .unwrap();
    let cancelled = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(tokio::sync::Notify::new());
    set.register(WaitForCancel {
        spec: ToolSpec::new(
            "wait_for_cancel",
            "Waits until cancelled.",
            json!({"type": "object", "properties": {}}),
        ),
        cancelled: cancelled.clone(),
        started: started.clone(),
    })
    .unwrap();
    TestTools {
        set,
        cancelled,
        started,
    }
}

pub const TINY_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

struct WaitForCancel {
    spec: ToolSpec,
    cancelled: Arc<AtomicUsize>,
    started: Arc<tokio::sync::Notify>,
}

#[async_trait]
impl Tool for WaitForCancel {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _args: serde_json::Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.started.notify_one();
        tokio::select! {
            _ = cx.cancel.cancelled() => {
                self.cancelled.fetch_add(1, Ordering::SeqCst);
                Err(ToolError::model("cancelled"))
            }
            _ = tokio::time::sleep(Duration::from_secs(60)) => Ok(ToolOutput::text("never cancelled")),
        }
    }
}
