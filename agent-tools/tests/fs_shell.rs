#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Filesystem and shell tools: successes, every escape attempt, caps, and process-group kills.

use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_tools::{FsPolicy, fs_tools};
use serde_json::{Value, json};

mod fs_support;
use fs_support::{call, call_with, cx, fx, refusal};

#[tokio::test]
async fn write_read_list_mkdir_delete_round_trip() {
    let fx = fx();
    let out = call(&fx, "fs_mkdir", json!({"path": "a/b/c"})).await.unwrap();
    assert!(out.text_content().contains("created"));
    assert!(fx.root.join("a/b/c").is_dir());
    call(&fx, "fs_write", json!({"path": "a/b/c/links.txt", "content": "one\n"}))
        .await
        .unwrap();
    call(
        &fx,
        "fs_write",
        json!({"path": "a/b/c/links.txt", "content": "two\n", "append": true}),
    )
    .await
    .unwrap();
    let read = call(&fx, "fs_read", json!({"path": "a/b/c/links.txt"})).await.unwrap();
    assert_eq!(read.text_content(), "one\ntwo\n");
    assert!(!read.truncated);
    let list = call(&fx, "fs_list", json!({"path": "a/b/c"}))
        .await
        .unwrap()
        .text_content();
    assert!(list.contains("links.txt  (8 bytes)"), "{list}");
    let list = call(&fx, "fs_list", json!({})).await.unwrap().text_content();
    assert!(list.contains("a/"), "{list}");
    // mkdir of an existing directory is fine.
    let again = call(&fx, "fs_mkdir", json!({"path": "a/b"})).await.unwrap();
    assert!(again.text_content().contains("already exists"));
    // A non-empty directory is not deleted; a file and then the empty directory are.
    let msg = refusal(call(&fx, "fs_delete", json!({"path": "a/b/c"})).await);
    assert!(msg.contains("not empty"), "{msg}");
    call(&fx, "fs_delete", json!({"path": "a/b/c/links.txt"}))
        .await
        .unwrap();
    call(&fx, "fs_delete", json!({"path": "a/b/c"})).await.unwrap();
    assert!(!fx.root.join("a/b/c").exists());
}

#[tokio::test]
async fn gated_by_default_are_write_delete_and_shell() {
    let fx = fx();
    let gated: Vec<_> = fx
        .tools
        .iter()
        .filter(|t| t.spec().gated)
        .map(|t| t.spec().name.clone())
        .collect();
    assert_eq!(gated, ["fs_write", "fs_delete", "shell_exec"]);
}

#[tokio::test]
async fn escape_dotdot_is_refused() {
    let fx = fx();
    for path in ["../outside/secret.txt", "a/../../outside/secret.txt", ".."] {
        let msg = refusal(call(&fx, "fs_read", json!({"path": path})).await);
        assert!(msg.contains("'..'"), "{path}: {msg}");
    }
    let msg = refusal(call(&fx, "fs_write", json!({"path": "../x.txt", "content": "x"})).await);
    assert!(msg.contains("'..'"));
    assert!(!fx.outside.join("../x.txt").exists());
    // Even a `..` that would come back inside is refused.
    std::fs::create_dir(fx.root.join("d")).unwrap();
    let msg = refusal(call(&fx, "fs_list", json!({"path": "d/.."})).await);
    assert!(msg.contains("'..'"));
}

#[tokio::test]
async fn escape_absolute_path_is_refused() {
    let fx = fx();
    let abs = fx.outside.join("secret.txt");
    let msg = refusal(call(&fx, "fs_read", json!({"path": abs.to_str().unwrap()})).await);
    assert!(msg.contains("absolute"), "{msg}");
    let msg = refusal(call(&fx, "fs_delete", json!({"path": "/etc/passwd"})).await);
    assert!(msg.contains("absolute"), "{msg}");
    let msg = refusal(call(&fx, "fs_mkdir", json!({"path": "/tmp/agent-tools-escape"})).await);
    assert!(msg.contains("absolute"), "{msg}");
    assert!(!std::path::Path::new("/tmp/agent-tools-escape").exists());
}

#[tokio::test]
async fn escape_symlink_file_and_dir_are_refused() {
    let fx = fx();
    std::os::unix::fs::symlink(fx.outside.join("secret.txt"), fx.root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&fx.outside, fx.root.join("linkdir")).unwrap();
    let msg = refusal(call(&fx, "fs_read", json!({"path": "link.txt"})).await);
    assert!(msg.contains("symbolic link"), "{msg}");
    let msg = refusal(call(&fx, "fs_read", json!({"path": "linkdir/secret.txt"})).await);
    assert!(msg.contains("symbolic link"), "{msg}");
    let msg = refusal(call(&fx, "fs_write", json!({"path": "link.txt", "content": "pwned"})).await);
    assert!(msg.contains("symbolic link"), "{msg}");
    let msg = refusal(call(&fx, "fs_write", json!({"path": "linkdir/new.txt", "content": "pwned"})).await);
    assert!(msg.contains("symbolic link"), "{msg}");
    let msg = refusal(call(&fx, "fs_list", json!({"path": "linkdir"})).await);
    assert!(msg.contains("symbolic link"), "{msg}");
    let msg = refusal(call(&fx, "fs_mkdir", json!({"path": "linkdir/sub"})).await);
    assert!(msg.contains("symbolic link"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "TOP SECRET"
    );
    assert!(!fx.outside.join("new.txt").exists() && !fx.outside.join("sub").exists());
    // fs_delete removes the link itself, never its target.
    call(&fx, "fs_delete", json!({"path": "linkdir"})).await.unwrap();
    assert!(fx.outside.join("secret.txt").exists());
    // A listing shows links without following them.
    let list = call(&fx, "fs_list", json!({})).await.unwrap().text_content();
    assert!(list.contains("link.txt  (symlink, not followed)"), "{list}");
}

#[tokio::test]
async fn escape_symlink_swapped_in_after_the_check_never_leaks() {
    // A racer keeps swapping `d` between a real directory and a symlink to the outside while
    // the tool reads `d/secret.txt`: the walk opens each component once with O_NOFOLLOW, so
    // no read can ever see the outside file.
    let fx = fx();
    let d = fx.root.join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("secret.txt"), "inside").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let racer = {
        let (d, outside, stop) = (d.clone(), fx.outside.clone(), stop.clone());
        let real = fx.root.join("real");
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::rename(&d, &real);
                let _ = std::os::unix::fs::symlink(&outside, &d);
                std::thread::yield_now();
                let _ = std::fs::remove_file(&d);
                let _ = std::fs::rename(&real, &d);
            }
        })
    };
    let mut inside = 0;
    let mut refused = 0;
    for _ in 0..400 {
        match call(&fx, "fs_read", json!({"path": "d/secret.txt"})).await {
            Ok(o) => {
                assert_eq!(o.text_content(), "inside", "a read escaped the root");
                inside += 1;
            }
            Err(_) => refused += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    assert_eq!(inside + refused, 400);
    assert!(refused > 0 || inside > 0);
}

#[tokio::test]
async fn escape_non_utf8_names_are_withheld() {
    let fx = fx();
    let name = std::ffi::OsStr::from_bytes(b"bad-\xff-name.txt");
    std::fs::write(fx.root.join(name), "x").unwrap();
    std::fs::write(fx.root.join("good.txt"), "x").unwrap();
    let list = call(&fx, "fs_list", json!({})).await.unwrap().text_content();
    assert!(list.contains("good.txt"), "{list}");
    assert!(list.contains("1 entries with names that are not valid UTF-8"), "{list}");
    assert!(!list.contains("bad-"), "{list}");
    // Control characters (a NUL cannot even reach the OS) are refused.
    let msg = refusal(call(&fx, "fs_read", json!({"path": "good.txt\u{0}../../etc/passwd"})).await);
    assert!(msg.contains("control character"), "{msg}");
}

#[tokio::test]
async fn clear_errors_for_missing_directory_and_binary() {
    let fx = fx();
    let msg = refusal(call(&fx, "fs_read", json!({"path": "nope.txt"})).await);
    assert!(msg.contains("does not exist"), "{msg}");
    std::fs::create_dir(fx.root.join("sub")).unwrap();
    let msg = refusal(call(&fx, "fs_read", json!({"path": "sub"})).await);
    assert!(msg.contains("is a directory"), "{msg}");
    let msg = refusal(call(&fx, "fs_read", json!({"path": "."})).await);
    assert!(msg.contains("is a directory"), "{msg}");
    std::fs::write(fx.root.join("img.png"), [0x89, b'P', b'N', b'G', 0, 0, 1, 2]).unwrap();
    let msg = refusal(call(&fx, "fs_read", json!({"path": "img.png"})).await);
    assert!(msg.contains("binary"), "{msg}");
    std::fs::write(fx.root.join("latin1.txt"), [b'c', b'a', b'f', 0xe9]).unwrap();
    let msg = refusal(call(&fx, "fs_read", json!({"path": "latin1.txt"})).await);
    assert!(msg.contains("binary"), "{msg}");
    let msg = refusal(call(&fx, "fs_write", json!({"path": "missing/dir/f.txt", "content": "x"})).await);
    assert!(msg.contains("does not exist"), "{msg}");
    let msg = refusal(call(&fx, "fs_list", json!({"path": "img.png"})).await);
    assert!(msg.contains("not a directory"), "{msg}");
    let msg = refusal(call(&fx, "fs_delete", json!({"path": "."})).await);
    assert!(msg.contains("root directory itself"), "{msg}");
}

#[tokio::test]
async fn reads_and_listings_are_capped_with_the_truncated_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut policy = FsPolicy::root(dir.path());
    policy.max_read_bytes = 100;
    policy.max_list_entries = 3;
    policy.max_shell_output = 50;
    let tools = fs_tools(policy);
    let get = |n: &str| tools.iter().find(|t| t.spec().name == n).unwrap().clone();
    // 60 two-byte characters: the cap cuts inside one, which is not "binary".
    std::fs::write(dir.path().join("big.txt"), "é".repeat(60)).unwrap();
    let out = get("fs_read").call(json!({"path": "big.txt"}), cx()).await.unwrap();
    assert!(out.truncated);
    assert!(out.text_content().starts_with(&"é".repeat(50)));
    assert!(
        out.text_content()
            .contains("[truncated: showed the first 100 of 120 bytes]")
    );
    for i in 0..5 {
        std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
    }
    let out = get("fs_list").call(json!({}), cx()).await.unwrap();
    assert!(out.truncated);
    assert!(
        out.text_content().contains("listing stopped after 3 entries"),
        "{}",
        out.text_content()
    );
    let out = get("shell_exec")
        .call(json!({"command": "yes | head -c 1000"}), cx())
        .await
        .unwrap();
    assert!(out.truncated);
    assert_eq!(out.structured.unwrap()["stdout"].as_str().unwrap().len(), 50);
}

#[tokio::test]
async fn unrestricted_mode_uses_paths_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let tools = fs_tools(FsPolicy::unrestricted());
    let get = |n: &str| tools.iter().find(|t| t.spec().name == n).unwrap().clone();
    let target = dir.path().join("x/y");
    get("fs_mkdir")
        .call(json!({"path": target.to_str().unwrap()}), cx())
        .await
        .unwrap();
    let file = target.join("f.txt");
    get("fs_write")
        .call(json!({"path": file.to_str().unwrap(), "content": "hi"}), cx())
        .await
        .unwrap();
    std::os::unix::fs::symlink(&file, dir.path().join("l.txt")).unwrap();
    let out = get("fs_read")
        .call(json!({"path": dir.path().join("l.txt").to_str().unwrap()}), cx())
        .await
        .unwrap();
    assert_eq!(out.text_content(), "hi");
}

// ---------------------------------------------------------------- shell_exec

/// A number unique to this test process and test, used as a sleep length so that `ps` finds
/// exactly the processes a test started (`sleep <marker>1`, `sleep <marker>2`).
fn uniq(test: u32) -> String {
    format!("9{:06}{test}", std::process::id() % 1_000_000)
}

fn pids_with_marker(marker: &str) -> Vec<String> {
    let out = std::process::Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&format!("sleep {marker}")) && !l.contains("ps -eo"))
        .map(|l| l.to_string())
        .collect()
}

async fn assert_no_survivors(marker: &str) {
    // SIGKILL is immediate, but give the kernel a moment to reap.
    for _ in 0..50 {
        if pids_with_marker(marker).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("processes survived: {:?}", pids_with_marker(marker));
}

#[tokio::test]
async fn shell_returns_stdout_stderr_and_exit_code_in_the_root() {
    let fx = fx();
    let out = call(&fx, "shell_exec", json!({"command": "pwd; echo oops >&2; exit 3"}))
        .await
        .unwrap();
    let v = out.structured.unwrap();
    assert_eq!(v["exit_code"], 3);
    assert_eq!(
        v["stdout"].as_str().unwrap().trim(),
        fx.root.canonicalize().unwrap().to_str().unwrap()
    );
    assert_eq!(v["stderr"], "oops\n");
    let msg = refusal(call(&fx, "shell_exec", json!({"command": "  "})).await);
    assert!(msg.contains("empty"));
}

#[tokio::test]
async fn shell_timeout_kills_the_whole_group_grandchildren_included() {
    let fx = fx();
    let marker = uniq(0);
    // A grandchild in the background and a child in the foreground, both sleeping.
    let cmd = format!("sh -c 'sleep {marker}1; :' & sh -c 'sleep {marker}2; :'; wait");
    let started = std::time::Instant::now();
    let seen = {
        let marker = marker.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            pids_with_marker(&marker).len()
        })
    };
    let out = call(&fx, "shell_exec", json!({"command": cmd, "timeout_ms": 900}))
        .await
        .unwrap();
    // Both sleeps (and their shells) were running before the timeout.
    assert!(
        seen.await.unwrap() >= 2,
        "the test did not see the processes it should kill"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let v = out.structured.unwrap();
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["exit_code"], Value::Null);
    assert_no_survivors(&marker).await;
}

#[tokio::test]
async fn shell_cancel_kills_the_whole_group() {
    let fx = fx();
    let marker = uniq(1);
    let cmd = format!("sh -c 'sleep {marker}1; :' & sleep {marker}2");
    let cx = cx();
    let cancel = cx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    });
    let msg = refusal(call_with(&fx, "shell_exec", json!({"command": cmd}), cx).await);
    assert!(msg.contains("cancelled"), "{msg}");
    // An error is not wrapped by the loop, so its partial output comes wrapped already.
    assert!(
        msg.contains("partial stdout:\n[untrusted data from command `sh -c"),
        "{msg}"
    );
    assert!(msg.contains("<untrusted-content nonce=\""), "{msg}");
    assert_no_survivors(&marker).await;
}

#[tokio::test]
async fn shell_dropped_future_kills_the_whole_group() {
    // The loop drops a call's future when the tool times out at the loop level.
    let fx = fx();
    let marker = uniq(2);
    let cmd = format!("sh -c 'sleep {marker}1; :' & sleep {marker}2");
    let fut = call(&fx, "shell_exec", json!({"command": cmd}));
    let r = tokio::time::timeout(Duration::from_millis(700), fut).await;
    assert!(r.is_err());
    assert_no_survivors(&marker).await;
}

#[tokio::test]
async fn shell_background_processes_do_not_outlive_the_call() {
    let fx = fx();
    let marker = uniq(3);
    let cmd = format!("(sh -c 'sleep {marker}1; :') >/dev/null 2>&1 & echo started");
    let out = call(&fx, "shell_exec", json!({"command": cmd})).await.unwrap();
    let v = out.structured.unwrap();
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["stdout"], "started\n");
    assert_no_survivors(&marker).await;
}
