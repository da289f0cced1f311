//! page_upload: chooses files for a file input, as a person picking them in the file picker,
//! from the one folder the host allows (`PageToolsConfig::upload_root`). Gated: it hands the
//! person's files to the page.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use agent_core::untrusted::one_line;
use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::output::{output, source_of};
use super::shared::{Shared, bind};
use super::target::{TargetArgs, capped_target, target_desc};

/// Most files one call attaches.
const MAX_FILES: usize = 20;

/// Arguments of page_upload.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UploadArgs {
    /// The `<input type=file>` (it may be hidden behind a styled button).
    #[serde(flatten)]
    pub target: TargetArgs,
    /// The files, as paths relative to the upload folder (like "reports/q3.pdf").
    pub files: Vec<String>,
}

/// page_upload: attaches files from the upload folder to a file input. Gated.
pub(crate) fn page_upload(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_upload",
            "Attach files to the one file input (<input type=file>) a ref or selector matches, as a person choosing them in the file picker. files are paths relative to the upload folder the host allows; absolute paths, .., symlinks and anything outside it are refused. Reads back the file names the input now holds.",
            bind(sh, upload),
        )
        // The person's files go to the page (and from there, usually, off the machine).
        .gated(true),
    )
}

async fn upload(s: Arc<Shared>, a: UploadArgs) -> Result<ToolOutput, ToolError> {
    let Some(root) = s.cfg.upload_root.clone() else {
        return Err(ToolError::model(
            "refused (no_upload_folder): this host allows no upload folder, so page_upload cannot take files; ask the person to attach them",
        ));
    };
    if a.files.is_empty() || a.files.len() > MAX_FILES {
        return Err(ToolError::model(format!(
            "refused (bad_files): give between 1 and {MAX_FILES} files"
        )));
    }
    let mut paths = Vec::with_capacity(a.files.len());
    for f in &a.files {
        paths.push(checked_path(&root, f).map_err(ToolError::model)?);
    }
    let tab = s.working()?;
    let tab = tab.as_deref();
    let mut args = a.target.to_json();
    args["count"] = json!(paths.len());
    let v = s.op(tab, "uploadtarget", args).await?;
    let n = v.get("n").and_then(Value::as_u64).unwrap_or(0);
    let element = format!(
        "(() => {{ const s = window.__agentToolsState; const w = s && s.byRef instanceof Map ? s.byRef.get({n}) : null; return w ? w.deref() : null; }})()"
    );
    let shown: Vec<String> = paths.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let set = s.host.set_files(tab, &element, &shown).await;
    s.checked(tab, set).await?;
    s.settle(tab).await?;
    let target_ref = v
        .get("target")
        .and_then(|t| t.get("ref"))
        .cloned()
        .unwrap_or(Value::Null);
    let after = s.op(tab, "uploadafter", json!({"ref": target_ref})).await?;
    let held: Vec<String> = after
        .get("files")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f.get("name").and_then(Value::as_str))
                .map(|n| one_line(n, 200))
                .collect()
        })
        .unwrap_or_default();
    let wanted: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let who = target_desc(&v);
    let list = |names: &[String]| {
        names
            .iter()
            .map(|n| json!(n).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if held == wanted {
        Ok(output(
            format!("attached {} to {who}; read back the same", list(&wanted)),
            json!({"ok": true, "files": held, "target": capped_target(&v)}),
            false,
            source_of(&after),
        ))
    } else {
        Ok(output(
            format!(
                "MISMATCH: attached {} to {who}, but the input now holds [{}] (the page cleared or changed it)",
                list(&wanted),
                list(&held)
            ),
            json!({"ok": false, "note": "MISMATCH", "expected": wanted, "actual": held}),
            false,
            source_of(&after),
        ))
    }
}

/// The absolute path of `rel` inside `root`, walked one component at a time, or why it is
/// refused: absolute paths, `..`, symlinks (the root itself may be one), missing files and
/// anything but a regular file.
fn checked_path(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let quoted = json!(one_line(rel, 200)).to_string();
    let root = root
        .canonicalize()
        .map_err(|e| format!("refused (no_upload_folder): the upload folder is not available: {e}"))?;
    let path = Path::new(rel.trim());
    if rel.trim().is_empty() {
        return Err("refused (bad_files): a file path is empty".into());
    }
    let mut at = root;
    for c in path.components() {
        match c {
            Component::Normal(part) => {
                at.push(part);
                let meta = std::fs::symlink_metadata(&at)
                    .map_err(|_| format!("refused (no_file): {quoted} is not in the upload folder"))?;
                if meta.file_type().is_symlink() {
                    return Err(format!(
                        "refused (symlink): {quoted} goes through a symlink; only files inside the upload folder are allowed"
                    ));
                }
            }
            Component::CurDir => {}
            _ => {
                return Err(format!(
                    "refused (outside_root): {quoted} leaves the upload folder; give a path relative to it, without .."
                ));
            }
        }
    }
    let meta = std::fs::symlink_metadata(&at)
        .map_err(|_| format!("refused (no_file): {quoted} is not in the upload folder"))?;
    if !meta.is_file() {
        return Err(format!("refused (not_a_file): {quoted} is not a regular file"));
    }
    Ok(at)
}
