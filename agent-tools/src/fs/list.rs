//! fs_list: reads at most the cap's worth of entries, so a directory with a million entries
//! costs no more than one with the cap's count.

use std::os::fd::AsFd;

use agent_core::untrusted::Provenance;
use agent_core::{ToolError, ToolOutput};
use nix::fcntl::AtFlags;
use nix::sys::stat::fstatat;

use super::kind::kind_of;
use super::policy::{FsPolicy, display_name};

/// Lists a directory, capped. Names are attacker-controlled, so the output is untrusted.
pub(crate) fn fs_list(policy: &FsPolicy, path: &str) -> Result<ToolOutput, ToolError> {
    let dir = policy.open_dir(path)?;
    let fd = dir
        .fd
        .try_clone()
        .map_err(|e| ToolError::model(format!("{path:?}: {e}")))?;
    let mut listing = nix::dir::Dir::from_fd(fd).map_err(|e| dir.explain(e, path, path, "a directory"))?;
    let entries = listing.iter().filter_map(|entry| match entry {
        Ok(e) if matches!(e.file_name().to_bytes(), b"." | b"..") => None,
        Ok(e) => Some(Ok(e.file_name().to_bytes().to_vec())),
        Err(e) => Some(Err(e)),
    });
    let cap = policy.max_list_entries;
    let (names, truncated) = take_capped(entries, cap).map_err(|e| dir.explain(e, path, path, "a directory"))?;
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut withheld = 0usize;
    for raw in names {
        let Ok(name) = display_name(&raw) else {
            withheld += 1;
            continue;
        };
        let line = match fstatat(dir.fd.as_fd(), raw.as_slice(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => match kind_of(st.st_mode) {
                "dir" => format!("{name}/"),
                "file" => format!("{name}  ({} bytes)", st.st_size),
                "symlink" if dir.confined() => format!("{name}  (symlink, not followed)"),
                "symlink" => format!("{name}  (symlink)"),
                other => format!("{name}  ({other})"),
            },
            Err(_) => name.clone(),
        };
        rows.push((name, line));
    }
    rows.sort();
    let mut out = String::new();
    for (_, line) in &rows {
        out.push_str(line);
        out.push('\n');
    }
    if rows.is_empty() && withheld == 0 {
        out.push_str("(empty directory)\n");
    }
    if truncated {
        out.push_str(&format!(
            "[truncated: listing stopped after {cap} entries and the directory holds more; which entries are shown follows the directory's own order, not the alphabet]\n"
        ));
    }
    if withheld > 0 {
        out.push_str(&format!(
            "[{withheld} entries with names that are not valid UTF-8 are not shown and cannot be used]\n"
        ));
    }
    Ok(ToolOutput::text(out)
        .with_truncated(truncated)
        .with_provenance(Provenance::new(format!("directory listing of {path}"))))
}

/// Takes at most `cap` items and says whether there were more, pulling at most `cap + 1`.
fn take_capped<T, E>(items: impl Iterator<Item = Result<T, E>>, cap: usize) -> Result<(Vec<T>, bool), E> {
    let mut out = Vec::new();
    for item in items {
        let item = item?;
        if out.len() == cap {
            return Ok((out, true));
        }
        out.push(item);
    }
    Ok((out, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn take_capped_stops_pulling_at_the_cap() {
        let pulled = Cell::new(0usize);
        let items = (0..1_000_000).map(|i| {
            pulled.set(pulled.get() + 1);
            Ok::<_, ()>(i)
        });
        assert_eq!(take_capped(items, 3), Ok((vec![0, 1, 2], true)));
        assert_eq!(
            pulled.get(),
            4,
            "pulled one past the cap to know there is more, no further"
        );
        assert_eq!(take_capped((0..3).map(Ok::<_, ()>), 3), Ok((vec![0, 1, 2], false)));
        assert_eq!(take_capped([Ok(1), Err("bad")].into_iter(), 3), Err("bad"));
    }
}
