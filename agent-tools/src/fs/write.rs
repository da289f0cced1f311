//! fs_write: never through a hard link inside a root, never into a FIFO, socket or device, and
//! never past the policy's size cap.
//!
//! A hard link is refused rather than replaced (temp file + rename) because the check is made
//! on the opened file before anything in it changes, so it cannot be raced; appending keeps
//! working without copying the file; and the file keeps its owner, mode and other names'
//! expectations. The model can delete the name (fs_delete removes only that name) and write a
//! fresh file.

use std::io::Write;
use std::os::unix::fs::MetadataExt;

use agent_core::{ToolError, ToolOutput};
use nix::fcntl::OFlag;

use super::kind::{peek, require_regular};
use super::policy::FsPolicy;

/// Writes (or appends) text to a file.
pub(crate) fn fs_write(policy: &FsPolicy, path: &str, content: &str, append: bool) -> Result<ToolOutput, ToolError> {
    let cap = policy.max_write_bytes;
    let len = content.len() as u64;
    if len > cap as u64 {
        return Err(over_cap(path, len, cap));
    }
    let (dir, name) = policy.open_parent(path)?;
    let Some(name) = name else {
        return Err(ToolError::model(format!("{path:?} is a directory, not a file")));
    };
    // Refuse a FIFO or device without opening it; the checks are repeated on the opened file.
    if let Some(st) = peek(&dir.fd, &name, dir.confined()) {
        require_regular(st.st_mode, path, "fs_write", "writes")?;
    }
    // No O_TRUNC: nothing changes before the opened file is checked. O_NONBLOCK: a FIFO swapped
    // in after the check fails to open instead of waiting for a reader.
    let mode = if append { OFlag::O_APPEND } else { OFlag::empty() };
    let mut file = dir.open_file(&name, path, OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_NONBLOCK | mode)?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::model(format!("{path:?}: {e}")))?;
    require_regular(meta.mode(), path, "fs_write", "writes")?;
    // Checked on the opened file, before any change, so a link made after a check cannot slip
    // through. Without a root there is nothing a link could escape to.
    if dir.confined() {
        refuse_hard_link(meta.nlink(), path)?;
    }
    let size_after = if append { meta.len().saturating_add(len) } else { len };
    if size_after > cap as u64 {
        return Err(over_cap(path, size_after, cap));
    }
    if !append {
        file.set_len(0)
            .map_err(|e| ToolError::model(format!("{path:?}: {e}")))?;
    }
    file.write_all(content.as_bytes())
        .and_then(|_| file.flush())
        .map_err(|e| ToolError::model(format!("{path:?}: {e}")))?;
    let verb = if append { "appended" } else { "wrote" };
    Ok(ToolOutput::text(format!("{verb} {} bytes to {path}", content.len())))
}

fn refuse_hard_link(links: u64, path: &str) -> Result<(), ToolError> {
    if links > 1 {
        return Err(ToolError::model(format!(
            "refused: {path:?} has {links} hard links, and fs_write does not write through a hard link (another name of the same file may be outside the root); delete it with fs_delete (which removes only this name) and write it again"
        )));
    }
    Ok(())
}

fn over_cap(path: &str, size: u64, cap: usize) -> ToolError {
    ToolError::model(format!(
        "refused: writing {path:?} would make it {size} bytes, over fs_write's cap of {cap} bytes ({:.1} MiB); write less",
        cap as f64 / (1024.0 * 1024.0)
    ))
}
