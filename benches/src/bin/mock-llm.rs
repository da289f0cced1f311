//! A mock OpenAI-compatible server (chat completions and Responses) for loopback benchmarks and demos.
//!
//! ```text
//! mock-llm [--port 0] [--tool-steps 10] [--calls-per-step 1] [--tool NAME] [--args JSON]
//!          [--text TEXT] [--max-requests N] [--max-seconds S] [--threads 1]
//! ```
//!
//! It binds 127.0.0.1 only, prints `listening on http://127.0.0.1:PORT/v1` once ready, and
//! stops by itself after `--max-requests` requests or `--max-seconds` seconds (default 900).

use std::time::Duration;

use agent_bench::{MockConfig, MockLlm};

fn main() {
    if let Err(e) = run() {
        eprintln!("mock-llm: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let mut config = MockConfig::default();
    let mut port: u16 = 0;
    let mut threads: usize = 1;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--port" => port = number(value()?)? as u16,
            "--tool-steps" => config.tool_steps = number(value()?)?,
            "--calls-per-step" => config.calls_per_step = number(value()?)?.max(1),
            "--tool" => config.tool = Some(value()?),
            "--args" => {
                let text = value()?;
                serde_json::from_str::<serde_json::Value>(&text).map_err(|e| format!("--args is not JSON: {e}"))?;
                config.arguments = text;
            }
            "--text" => config.final_text = value()?,
            "--max-requests" => config.max_requests = number(value()?)?,
            "--max-seconds" => config.max_duration = Duration::from_secs(number(value()?)?),
            "--threads" => threads = number(value()?)?.max(1) as usize,
            other => return Err(format!("unknown option {other}")),
        }
    }
    let runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
    .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("cannot bind 127.0.0.1:{port}: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!("listening on http://{addr}/v1");
        MockLlm::new(config).serve(listener).await;
        Ok(())
    })
}
