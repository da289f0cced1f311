//! File kinds, and the refusal of anything that is not a regular file: a FIFO can hang a read or
//! a write forever, and opening a device can have side effects.

use std::os::fd::AsFd;

use agent_core::ToolError;
use nix::fcntl::AtFlags;
use nix::libc;
use nix::sys::stat::{FileStat, fstatat};

/// A short name for the kind of file `mode` describes.
pub(crate) fn kind_of(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => "dir",
        libc::S_IFREG => "file",
        libc::S_IFLNK => "symlink",
        libc::S_IFIFO => "FIFO (named pipe)",
        libc::S_IFSOCK => "socket",
        libc::S_IFCHR => "character device",
        libc::S_IFBLK => "block device",
        _ => "special file",
    }
}

/// Refuses `mode` unless it is a regular file (`verb` is the tool's action, "reads" or
/// "writes"). Directories get the usual hint.
pub(crate) fn require_regular(mode: u32, path: &str, tool: &str, verb: &str) -> Result<(), ToolError> {
    match kind_of(mode) {
        // A symlink is only seen before the open: inside a root the open refuses it with its
        // own message, outside one it is followed and the target is checked after the open.
        "file" | "symlink" => Ok(()),
        "dir" => Err(ToolError::model(format!(
            "{path:?} is a directory, not a file (use fs_list to see what it holds)"
        ))),
        other => Err(ToolError::model(format!(
            "refused: {path:?} is a {other}, not a regular file; {tool} {verb} regular files only"
        ))),
    }
}

/// The status of `name` in `dir` before opening it, so a FIFO or device is refused without
/// being opened. `None` when it does not exist (or cannot be examined: the open then reports
/// why). Symlinks are not followed when `nofollow`.
pub(crate) fn peek(dir: impl AsFd, name: &str, nofollow: bool) -> Option<FileStat> {
    let flags = if nofollow {
        AtFlags::AT_SYMLINK_NOFOLLOW
    } else {
        AtFlags::empty()
    };
    fstatat(dir, name, flags).ok()
}
