#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The CDP host itself: launch flags, a dead browser failing fast, connecting by websocket
//! address, a long idle wait, and a missing binary.

mod support;

use std::time::{Duration, Instant};

use agent_tools::{BrowserHost, CdpConfig, CdpHost, HostError};
use support::{rt, url};

#[test]
fn dead_browser_fails_fast_instead_of_hanging() {
    rt().block_on(async {
        let host = CdpHost::launch_default().await.expect("launch chromium");
        let v = host.evaluate(None, "1 + 1").await.unwrap();
        assert_eq!(v, 2);
        let pid = host.pid().unwrap();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let started = Instant::now();
        let err = host.evaluate(None, "1 + 1").await.unwrap_err();
        assert!(matches!(err, HostError::Disconnected(_)), "{err:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "took {:?}",
            started.elapsed()
        );
        let err = host.tabs().await.unwrap_err();
        assert!(matches!(err, HostError::Disconnected(_)), "{err:?}");
        assert!(!host.is_alive());
        // A dead host ends the turn: it becomes a fatal tool error.
        assert!(agent_core::ToolError::from(err).is_fatal());
        host.close().await.unwrap();
    });
}

#[test]
fn connect_by_websocket_url_sees_the_running_browser() {
    rt().block_on(async {
        let owner = CdpHost::launch_default().await.expect("launch chromium");
        owner.navigate(None, &url("/links.html")).await.unwrap();
        let client = CdpHost::connect(owner.ws_url(), Duration::from_secs(10)).await.unwrap();
        let tabs = client.tabs().await.unwrap();
        assert!(tabs.iter().any(|t| t.url.ends_with("/links.html")), "{tabs:?}");
        owner.close().await.unwrap();
    });
}

#[test]
fn launch_uses_every_closed_network_flag_and_a_fresh_profile() {
    rt().block_on(async {
        let host = CdpHost::launch_default().await.expect("launch chromium");
        let pid = host.pid().unwrap();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        for flag in agent_tools::CLOSED_NETWORK_ARGS {
            assert!(args.iter().any(|a| a == flag), "missing {flag} in {args:?}");
        }
        assert_eq!(args.iter().filter(|a| a.starts_with("--disable-features")).count(), 1);
        let profile = args
            .iter()
            .find_map(|a| a.strip_prefix("--user-data-dir="))
            .unwrap()
            .to_string();
        assert!(profile.contains("agent-tools-chromium-"));
        // A name that is not loopback never resolves.
        let r = host.navigate(None, "https://example.com/").await;
        let landed = host.evaluate(None, "location.href").await.unwrap();
        assert!(
            r.is_err() || landed.as_str().unwrap().starts_with("chrome-error"),
            "{r:?} {landed}"
        );
        host.close().await.unwrap();
        assert!(!std::path::Path::new(&profile).exists(), "profile removed on close");
    });
}

#[test]
fn missing_browser_binary_is_a_clear_error() {
    rt().block_on(async {
        let cfg = CdpConfig {
            executable: "/nonexistent/chromium".into(),
            ..CdpConfig::default()
        };
        let err = CdpHost::launch(cfg).await.unwrap_err();
        assert!(err.to_string().contains("apt-get install chromium"), "{err}");
    });
}

#[test]
fn long_idle_wait_keeps_the_connection() {
    // A slow model may think for longer than the 30 s CDP request timeout.
    rt().block_on(async {
        let host = CdpHost::launch_default().await.expect("launch chromium");
        host.navigate(None, &url("/links.html")).await.unwrap();
        tokio::time::sleep(Duration::from_secs(35)).await;
        assert_eq!(host.evaluate(None, "document.title").await.unwrap(), "Reading list");
        host.close().await.unwrap();
    });
}
