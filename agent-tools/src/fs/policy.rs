//! Where the filesystem tools may act, and the confined path walk that enforces it.
//!
//! With a root, every path is walked one component at a time from an open handle on the root
//! with `openat(O_NOFOLLOW)`: `..`, absolute paths and symbolic links are refused, and a symlink
//! swapped in after a check cannot redirect the walk, because no path is ever resolved twice.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;

use agent_core::ToolError;

#[cfg(doc)]
use super::env::SAFE_ENV_VARS;
use super::env::ShellEnv;

/// Default cap on what `fs_read` returns (bytes of UTF-8 text).
pub const DEFAULT_MAX_READ_BYTES: usize = 64 * 1024;
/// Default cap on `fs_list` entries.
pub const DEFAULT_MAX_LIST_ENTRIES: usize = 500;
/// Default cap on each of shell_exec's stdout and stderr (bytes).
pub const DEFAULT_MAX_SHELL_OUTPUT: usize = 32 * 1024;
/// Default cap on what one `fs_write` call writes (bytes): 10 MiB.
pub const DEFAULT_MAX_WRITE_BYTES: usize = 10 * 1024 * 1024;

/// Where the filesystem and shell tools may act, and their output caps.
///
/// ```
/// use agent_tools::FsPolicy;
/// let confined = FsPolicy::root("/tmp/agent-work");
/// let anywhere = FsPolicy::unrestricted();
/// assert!(confined.root_dir().is_some() && anywhere.root_dir().is_none());
/// ```
///
/// As data it takes the [options format](agent_core::options): exactly one of `root` (a
/// directory) or `"unrestricted": true`, then the caps and `shell_env`, so that confinement is
/// never lifted by leaving a key out:
///
/// ```
/// let policy: agent_tools::FsPolicy =
///     serde_json::from_value(serde_json::json!({"root": "/tmp/agent-work", "max_write_bytes": 4096})).unwrap();
/// assert_eq!(policy.max_write_bytes, 4096);
/// assert!(serde_json::from_value::<agent_tools::FsPolicy>(serde_json::json!({})).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(try_from = "FsPolicyData")]
pub struct FsPolicy {
    root: Option<PathBuf>,
    /// Cap on the text `fs_read` returns, in bytes.
    pub max_read_bytes: usize,
    /// Cap on the entries `fs_list` returns.
    pub max_list_entries: usize,
    /// Cap on each of shell_exec's stdout and stderr, in bytes.
    pub max_shell_output: usize,
    /// Cap on the content one `fs_write` call writes, in bytes.
    pub max_write_bytes: usize,
    /// The environment shell_exec's commands get (by default only [`SAFE_ENV_VARS`]).
    pub shell_env: ShellEnv,
}

/// The data form of [`FsPolicy`]: its fields plus the explicit `unrestricted` switch.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "FsPolicy")]
struct FsPolicyData {
    /// The directory every path is confined to.
    root: Option<PathBuf>,
    /// No confinement (instead of `root`): paths are used as given.
    unrestricted: bool,
    /// Cap on the text `fs_read` returns, in bytes (default 65 536).
    max_read_bytes: usize,
    /// Cap on the entries `fs_list` returns (default 500).
    max_list_entries: usize,
    /// Cap on each of shell_exec's stdout and stderr, in bytes (default 32 768).
    #[serde(rename = "max_shell_output_bytes")]
    max_shell_output: usize,
    /// Cap on the content one `fs_write` call writes, in bytes (default 10 MiB).
    max_write_bytes: usize,
    /// The environment shell_exec's commands get.
    shell_env: ShellEnv,
}

impl Default for FsPolicyData {
    /// The caps' defaults; neither `root` nor `unrestricted`, which must be given.
    fn default() -> Self {
        FsPolicyData {
            unrestricted: false,
            ..FsPolicy::unrestricted().data()
        }
    }
}

impl FsPolicy {
    /// The data form of this policy.
    fn data(&self) -> FsPolicyData {
        FsPolicyData {
            root: self.root.clone(),
            unrestricted: self.root.is_none(),
            max_read_bytes: self.max_read_bytes,
            max_list_entries: self.max_list_entries,
            max_shell_output: self.max_shell_output,
            max_write_bytes: self.max_write_bytes,
            shell_env: self.shell_env.clone(),
        }
    }
}

impl TryFrom<FsPolicyData> for FsPolicy {
    type Error = String;

    fn try_from(data: FsPolicyData) -> Result<Self, String> {
        let root = match (data.root, data.unrestricted) {
            (Some(root), false) => Some(root),
            (None, true) => None,
            (Some(_), true) => return Err("give either `root` or `unrestricted: true`, not both".into()),
            (None, false) => {
                return Err(
                    "give `root` (the directory the tools are confined to), or `unrestricted: true` to lift the \
                     confinement explicitly"
                        .into(),
                );
            }
        };
        Ok(FsPolicy {
            root,
            max_read_bytes: data.max_read_bytes,
            max_list_entries: data.max_list_entries,
            max_shell_output: data.max_shell_output,
            max_write_bytes: data.max_write_bytes,
            shell_env: data.shell_env,
        })
    }
}

impl serde::Serialize for FsPolicy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.data().serialize(serializer)
    }
}

impl schemars::JsonSchema for FsPolicy {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        FsPolicyData::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        FsPolicyData::json_schema(generator)
    }
}

impl FsPolicy {
    /// Confines every path to `dir`: relative paths only, no `..`, no symbolic links. The
    /// directory must exist when a tool runs. `shell_exec` runs with `dir` as its working
    /// directory (a shell cannot be confined by path checks; sandbox the process for that).
    pub fn root(dir: impl Into<PathBuf>) -> Self {
        FsPolicy {
            root: Some(dir.into()),
            ..Self::unrestricted()
        }
    }

    /// No confinement: paths are used as given (relative ones against the process's working
    /// directory). Choose it explicitly, for hosts that sandbox the whole process.
    pub fn unrestricted() -> Self {
        FsPolicy {
            root: None,
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
            max_list_entries: DEFAULT_MAX_LIST_ENTRIES,
            max_shell_output: DEFAULT_MAX_SHELL_OUTPUT,
            max_write_bytes: DEFAULT_MAX_WRITE_BYTES,
            shell_env: ShellEnv::default(),
        }
    }

    /// The root directory, when confined.
    pub fn root_dir(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Opens the directory that holds the last component of `path` and returns it with that
    /// component's name (`None` for the root itself). Refuses escapes.
    pub(crate) fn open_parent(&self, path: &str) -> Result<(Dir, Option<String>), ToolError> {
        check_text(path)?;
        match &self.root {
            None => {
                let p = Path::new(if path.is_empty() { "." } else { path });
                let (parent, name) = match (p.parent(), p.file_name()) {
                    (Some(parent), Some(name)) => {
                        let parent = if parent.as_os_str().is_empty() {
                            Path::new(".")
                        } else {
                            parent
                        };
                        (parent.to_path_buf(), Some(name_str(name)?))
                    }
                    _ => (p.to_path_buf(), None),
                };
                let fd = open_dir_path(&parent, path)?;
                Ok((
                    Dir {
                        fd,
                        shown: parent.display().to_string(),
                        confined: false,
                    },
                    name,
                ))
            }
            Some(root) => {
                let comps = confined_components(path)?;
                let root_fd = open_dir_path(root, ".")?;
                let mut dir = Dir {
                    fd: root_fd,
                    shown: ".".into(),
                    confined: true,
                };
                let Some((last, parents)) = comps.split_last() else {
                    return Ok((dir, None));
                };
                for comp in parents {
                    dir = dir.open_subdir(comp, path)?;
                }
                Ok((dir, Some(last.clone())))
            }
        }
    }

    /// Opens `path` itself as a directory (the root for an empty path or `.`).
    pub(crate) fn open_dir(&self, path: &str) -> Result<Dir, ToolError> {
        let (parent, name) = self.open_parent(path)?;
        match name {
            None => Ok(parent),
            Some(name) => parent.open_subdir(&name, path),
        }
    }
}

/// An open directory reached by a confined walk.
pub(crate) struct Dir {
    pub fd: OwnedFd,
    shown: String,
    /// Whether the walk is confined (symlinks refused) or unrestricted (symlinks followed).
    confined: bool,
}

impl Dir {
    /// Opens a child directory without following symlinks.
    pub fn open_subdir(&self, name: &str, whole: &str) -> Result<Dir, ToolError> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | self.nofollow();
        match openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(Dir {
                fd,
                shown: format!("{}/{}", self.shown, name),
                confined: self.confined,
            }),
            Err(e) => Err(self.explain(e, name, whole, "a directory")),
        }
    }

    /// Opens a child file with `flags | O_NOFOLLOW`.
    pub fn open_file(&self, name: &str, whole: &str, flags: OFlag) -> Result<File, ToolError> {
        let flags = flags | self.nofollow() | OFlag::O_CLOEXEC | OFlag::O_NOCTTY;
        match openat(&self.fd, name, flags, Mode::from_bits_truncate(0o644)) {
            Ok(fd) => Ok(File::from(fd)),
            Err(e) => Err(self.explain(e, name, whole, "a file")),
        }
    }

    fn nofollow(&self) -> OFlag {
        if self.confined {
            OFlag::O_NOFOLLOW
        } else {
            OFlag::empty()
        }
    }

    /// Whether symlinks are refused.
    pub fn confined(&self) -> bool {
        self.confined
    }

    /// Turns an errno from an operation on `name` into a message for the model.
    pub fn explain(&self, e: Errno, name: &str, whole: &str, wanted: &str) -> ToolError {
        match e {
            Errno::ELOOP => ToolError::model(format!(
                "refused: {whole:?}: {name:?} is a symbolic link, and symbolic links are not followed inside the root"
            )),
            Errno::ENOTDIR => {
                // O_NOFOLLOW|O_DIRECTORY on a symlink also gives ENOTDIR on some systems.
                if is_symlink_at(&self.fd, name) {
                    ToolError::model(format!(
                        "refused: {whole:?}: {name:?} is a symbolic link, and symbolic links are not followed inside the root"
                    ))
                } else {
                    ToolError::model(format!("{whole:?}: {name:?} is not a directory (expected {wanted})"))
                }
            }
            Errno::ENOENT => ToolError::model(format!("{whole:?} does not exist")),
            Errno::EISDIR => ToolError::model(format!(
                "{whole:?} is a directory, not a file (use fs_list to see what it holds)"
            )),
            Errno::EACCES | Errno::EPERM => ToolError::model(format!("{whole:?}: permission denied")),
            Errno::ENOTEMPTY => ToolError::model(format!(
                "{whole:?} is a directory that is not empty; fs_delete removes files and empty directories only"
            )),
            Errno::EEXIST => ToolError::model(format!("{whole:?} already exists")),
            // A non-blocking open for writing of a FIFO without a reader, or of a socket.
            Errno::ENXIO => ToolError::model(format!(
                "refused: {whole:?} is a FIFO or socket, not a regular file; only regular files are read and written"
            )),
            other => ToolError::model(format!("{whole:?}: {}", other.desc())),
        }
    }
}

fn is_symlink_at(dir: &OwnedFd, name: &str) -> bool {
    use nix::fcntl::AtFlags;
    nix::sys::stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
        .map(|st| (st.st_mode & nix::libc::S_IFMT) == nix::libc::S_IFLNK)
        .unwrap_or(false)
}

fn open_dir_path(dir: &Path, whole: &str) -> Result<OwnedFd, ToolError> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    nix::fcntl::open(dir, flags, Mode::empty()).map_err(|e| match e {
        Errno::ENOENT => ToolError::model(format!("{whole:?}: directory {} does not exist", dir.display())),
        Errno::ENOTDIR => ToolError::model(format!("{whole:?}: {} is not a directory", dir.display())),
        other => ToolError::model(format!("{whole:?}: {}: {}", dir.display(), other.desc())),
    })
}

fn check_text(path: &str) -> Result<(), ToolError> {
    if path.chars().any(|c| c == '\0' || c.is_control()) {
        return Err(ToolError::model(format!(
            "refused: {path:?} contains a control character; give a plain path"
        )));
    }
    Ok(())
}

fn name_str(name: &OsStr) -> Result<String, ToolError> {
    match std::str::from_utf8(name.as_bytes()) {
        Ok(s) => Ok(s.to_string()),
        Err(_) => Err(ToolError::model("refused: the path has a name that is not valid UTF-8")),
    }
}

/// Splits a confined path into plain names: refuses absolute paths and `..`.
fn confined_components(path: &str) -> Result<Vec<String>, ToolError> {
    let p = Path::new(path);
    let mut out = Vec::new();
    for comp in p.components() {
        match comp {
            Component::Normal(name) => out.push(name_str(name)?),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ToolError::model(format!(
                    "refused: {path:?} contains '..'; paths must stay inside the root directory (use a path relative to it)"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ToolError::model(format!(
                    "refused: {path:?} is absolute; give a path relative to the root directory"
                )));
            }
        }
    }
    Ok(out)
}

/// Reads a non-UTF-8 directory entry name as something the model can see but not address.
pub(crate) fn display_name(name: &[u8]) -> Result<String, String> {
    match std::str::from_utf8(name) {
        Ok(s) => Ok(s.to_string()),
        Err(_) => Err(String::from_utf8_lossy(name).into_owned()),
    }
}
