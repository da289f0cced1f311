//! fs_read, fs_write, fs_list, fs_mkdir and fs_delete.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use agent_core::untrusted::Provenance;
use agent_core::{Tool, ToolContext, ToolError, ToolOutput, tool_fn};
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{Mode, fstatat};
use nix::unistd::UnlinkatFlags;
use schemars::JsonSchema;
use serde::Deserialize;

use super::kind::{kind_of, peek, require_regular};
use super::list::fs_list;
use super::policy::FsPolicy;
use super::write::fs_write;

/// Arguments of fs_read.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// The file to read (relative to the root directory when there is one).
    pub path: String,
}

/// Arguments of fs_write.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// The file to write (its directory must exist: create it with fs_mkdir).
    pub path: String,
    /// The text to write.
    pub content: String,
    /// Append to the file instead of replacing it.
    #[serde(default)]
    pub append: bool,
}

/// Arguments of fs_list, fs_mkdir and fs_delete.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PathArgs {
    /// The path (relative to the root directory when there is one; "." is the root).
    #[serde(default = "dot")]
    pub path: String,
}

fn dot() -> String {
    ".".into()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::fatal(format!("filesystem task failed: {e}")))?
}

/// Reads a text file, capped. The text is untrusted: the output names the file as its source.
pub(crate) fn fs_read(policy: &FsPolicy, path: &str) -> Result<ToolOutput, ToolError> {
    let (dir, name) = policy.open_parent(path)?;
    let Some(name) = name else {
        return Err(ToolError::model(format!(
            "{path:?} is a directory, not a file (use fs_list to see what it holds)"
        )));
    };
    // Refuse a FIFO or device without opening it; O_NONBLOCK keeps a FIFO swapped in after
    // this check from blocking the open, and the opened file is checked again.
    if let Some(st) = peek(&dir.fd, &name, dir.confined()) {
        require_regular(st.st_mode, path, "fs_read", "reads")?;
    }
    let file = dir.open_file(&name, path, OFlag::O_RDONLY | OFlag::O_NONBLOCK)?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::model(format!("{path:?}: {e}")))?;
    require_regular(meta.mode(), path, "fs_read", "reads")?;
    let cap = policy.max_read_bytes;
    let mut buf = Vec::with_capacity(cap.min(meta.len() as usize) + 1);
    file.take(cap as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::model(format!("{path:?}: {e}")))?;
    let truncated = buf.len() > cap;
    buf.truncate(cap);
    if buf.contains(&0) {
        return Err(ToolError::model(format!(
            "{path:?} is a binary file ({} bytes); fs_read returns text only",
            meta.len()
        )));
    }
    let text = match String::from_utf8(buf) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            // A multi-byte character cut at the cap is not binary.
            if truncated && e.utf8_error().error_len().is_none() {
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).map_err(|_| ToolError::model(format!("{path:?} is not UTF-8 text")))?
            } else {
                return Err(ToolError::model(format!(
                    "{path:?} is a binary file (not UTF-8 text, {} bytes); fs_read returns text only",
                    meta.len()
                )));
            }
        }
    };
    let source = Provenance::file(path);
    if truncated {
        let shown = text.len();
        Ok(ToolOutput::text(format!(
            "{text}\n[truncated: showed the first {shown} of {} bytes]",
            meta.len()
        ))
        .with_truncated(true)
        .with_provenance(source))
    } else {
        Ok(ToolOutput::text(text).with_provenance(source))
    }
}

/// Creates a directory and its missing parents.
pub(crate) fn fs_mkdir(policy: &FsPolicy, path: &str) -> Result<ToolOutput, ToolError> {
    if policy.root_dir().is_none() {
        std::fs::create_dir_all(path).map_err(|e| ToolError::model(format!("{path:?}: {e}")))?;
        return Ok(ToolOutput::text(format!("created {path}")));
    }
    // Confined: walk and create one component at a time, never following a symlink.
    let (mut dir, last) = policy.open_parent("")?;
    debug_assert!(last.is_none());
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    // Validate the whole path first (refuses .., absolute, control characters).
    policy.open_parent(path).map(|_| ()).or_else(|e| match &e {
        ToolError::ForModel { message, .. } if message.contains("does not exist") => Ok(()),
        _ => Err(e),
    })?;
    let mut created = false;
    for part in parts {
        match nix::sys::stat::mkdirat(&dir.fd, part, Mode::from_bits_truncate(0o755)) {
            Ok(()) => created = true,
            Err(Errno::EEXIST) => {}
            Err(e) => return Err(dir.explain(e, part, path, "a directory")),
        }
        dir = dir.open_subdir(part, path)?;
    }
    Ok(ToolOutput::text(if created {
        format!("created {path}")
    } else {
        format!("{path} already exists")
    }))
}

/// Deletes a file, a symlink (not its target) or an empty directory.
pub(crate) fn fs_delete(policy: &FsPolicy, path: &str) -> Result<ToolOutput, ToolError> {
    let (dir, name) = policy.open_parent(path)?;
    let Some(name) = name else {
        return Err(ToolError::model(format!(
            "refused: {path:?} is the root directory itself"
        )));
    };
    let st = fstatat(dir.fd.as_fd(), name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
        .map_err(|e| dir.explain(e, &name, path, "a file"))?;
    let (flag, what) = if kind_of(st.st_mode) == "dir" {
        (UnlinkatFlags::RemoveDir, "directory")
    } else {
        (UnlinkatFlags::NoRemoveDir, "file")
    };
    nix::unistd::unlinkat(&dir.fd, name.as_str(), flag).map_err(|e| dir.explain(e, &name, path, "a file"))?;
    Ok(ToolOutput::text(format!("deleted {what} {path}")))
}

/// The five filesystem tools over one policy. fs_write and fs_delete are gated.
pub fn fs_file_tools(policy: FsPolicy) -> Vec<Arc<dyn Tool>> {
    let p = Arc::new(policy);
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let pol = p.clone();
    tools.push(Arc::new(
        tool_fn(
            "fs_read",
            "Read a UTF-8 text file. Large files are cut (the result says so); binary files are refused.",
            move |a: ReadArgs, _cx: ToolContext| {
                let pol = pol.clone();
                blocking(move || fs_read(&pol, &a.path))
            },
        )
        .parallel_safe(true),
    ));
    let pol = p.clone();
    tools.push(Arc::new(
        tool_fn(
            "fs_write",
            "Write text to a file, replacing it (or appending with append=true). The directory must exist.",
            move |a: WriteArgs, _cx: ToolContext| {
                let pol = pol.clone();
                blocking(move || fs_write(&pol, &a.path, &a.content, a.append))
            },
        )
        .gated(true),
    ));
    let pol = p.clone();
    tools.push(Arc::new(
        tool_fn(
            "fs_list",
            "List a directory: one entry per line, directories end with '/', files show their size.",
            move |a: PathArgs, _cx: ToolContext| {
                let pol = pol.clone();
                blocking(move || fs_list(&pol, &a.path))
            },
        )
        .parallel_safe(true),
    ));
    let pol = p.clone();
    tools.push(Arc::new(tool_fn(
        "fs_mkdir",
        "Create a directory and any missing parent directories.",
        move |a: PathArgs, _cx: ToolContext| {
            let pol = pol.clone();
            blocking(move || fs_mkdir(&pol, &a.path))
        },
    )));
    let pol = p;
    tools.push(Arc::new(
        tool_fn(
            "fs_delete",
            "Delete a file or an empty directory.",
            move |a: PathArgs, _cx: ToolContext| {
                let pol = pol.clone();
                blocking(move || fs_delete(&pol, &a.path))
            },
        )
        .gated(true),
    ));
    tools
}
