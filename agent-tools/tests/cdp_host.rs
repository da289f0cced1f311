#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The CDP host itself: launch flags, a dead browser failing fast, connecting by websocket
//! address, a long idle wait, and a missing binary.

mod support;

use std::time::{Duration, Instant};

use agent_tools::{BrowserHost, CdpConfig, CdpHost, HostError, Sandbox};
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

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[test]
fn the_sandbox_is_off_only_as_root_and_the_debugging_port_is_the_kernels_choice() {
    assert!(
        !agent_tools::CLOSED_NETWORK_ARGS.contains(&"--no-sandbox"),
        "the launch decides the sandbox, not the fixed flags"
    );
    rt().block_on(async {
        let host = CdpHost::launch_default().await.expect("launch chromium");
        let args = cmdline(host.pid().unwrap());
        let root = nix::unistd::geteuid().is_root();
        // Chromium refuses to start as root in its sandbox; elsewhere (user namespaces
        // available, as on this machine) the sandbox stays on.
        assert_eq!(args.iter().any(|a| a == "--no-sandbox"), root, "{args:?}");
        let ports: Vec<_> = args.iter().filter(|a| a.starts_with("--remote-debugging")).collect();
        assert_eq!(ports, ["--remote-debugging-port=0"], "no fixed DevTools port");
        let ws = url::Url::parse(host.ws_url()).unwrap();
        assert_eq!(ws.host_str(), Some("127.0.0.1"));
        assert_ne!(ws.port(), Some(9222));
        host.close().await.unwrap();
    });
}

#[test]
fn a_sandboxed_browser_runs_and_its_renderers_are_confined() {
    // As root, the browser runs as `nobody` through a small wrapper (Chromium's sandbox needs a
    // non-root user); as any other user, directly.
    let dir = tempfile::tempdir().unwrap();
    let executable = if nix::unistd::geteuid().is_root() {
        let wrapper = dir.path().join("chromium-as-nobody");
        std::fs::write(
            &wrapper,
            "#!/bin/sh\n\
             for a in \"$@\"; do case \"$a\" in --user-data-dir=*) d=\"${a#--user-data-dir=}\"; chown -R 65534:65534 \"$d\"; export HOME=\"$d\";; esac; done\n\
             exec setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/chromium \"$@\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        wrapper
    } else {
        "/usr/bin/chromium".into()
    };
    rt().block_on(async {
        let cfg = CdpConfig {
            executable,
            sandbox: Sandbox::On,
            ..CdpConfig::default()
        };
        let host = CdpHost::launch(cfg).await.expect("a sandboxed launch");
        host.navigate(None, &url("/links.html")).await.unwrap();
        assert_eq!(host.evaluate(None, "document.title").await.unwrap(), "Reading list");
        let pid = host.pid().unwrap();
        let args = cmdline(pid);
        assert!(!args.iter().any(|a| a == "--no-sandbox"), "{args:?}");
        // The renderer runs in a user namespace of its own.
        let profile = args.iter().find(|a| a.starts_with("--user-data-dir=")).unwrap().clone();
        let mine = std::fs::read_link("/proc/self/ns/user").unwrap();
        let renderers: Vec<_> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|p| {
                let a = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                let a = String::from_utf8_lossy(&a);
                a.contains("--type=renderer") && a.contains(profile.trim_start_matches("--user-data-dir="))
            })
            .collect();
        assert!(!renderers.is_empty(), "no renderer of this browser found");
        for r in renderers {
            let ns = std::fs::read_link(format!("/proc/{r}/ns/user")).unwrap();
            assert_ne!(ns, mine, "renderer {r} shares this process's user namespace");
        }
        host.close().await.unwrap();
    });
}
