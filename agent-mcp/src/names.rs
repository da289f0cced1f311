//! Tool names: an MCP server's tool names, prefixed with the server's alias, made to fit the
//! name rules every provider accepts (`^[a-zA-Z0-9_-]{1,64}$`).

use std::collections::HashMap;

/// The longest tool name providers accept.
pub const MAX_TOOL_NAME: usize = 64;

/// The separator between a server's alias and its tool's name (`jira__create_issue`).
pub const SEPARATOR: &str = "__";

/// Longest alias: leaves room for the separator and a recognizable tool name.
pub const MAX_ALIAS: usize = 32;

/// Whether `alias` can prefix tool names: 1 to 32 of `[a-zA-Z0-9_-]`, not containing `__`.
pub fn valid_alias(alias: &str) -> bool {
    !alias.is_empty() && alias.len() <= MAX_ALIAS && alias.bytes().all(allowed) && !alias.contains(SEPARATOR)
}

fn allowed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// FNV-1a: a small, stable hash (the same on every run and platform), so a shortened name
/// stays the same across reconnects.
fn fnv1a(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// `alias__tool` with every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64
/// characters with a stable hash of the original name when it is too long.
pub fn prefixed(alias: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| if c.is_ascii() && allowed(c as u8) { c } else { '_' })
        .collect();
    let clean = if clean.is_empty() { "tool".to_owned() } else { clean };
    let name = format!("{alias}{SEPARATOR}{clean}");
    if name.len() <= MAX_TOOL_NAME {
        return name;
    }
    with_hash(alias, &clean, tool)
}

fn with_hash(alias: &str, clean: &str, original: &str) -> String {
    let suffix = format!("_{:08x}", fnv1a(original));
    let room = MAX_TOOL_NAME - alias.len() - SEPARATOR.len() - suffix.len();
    // `clean` is ASCII, so byte slicing is safe.
    let head = &clean[..room.min(clean.len())];
    format!("{alias}{SEPARATOR}{head}{suffix}")
}

/// Maps every tool of one server to a unique prefixed name. Two remote names that clean up to
/// the same text (`a.b` and `a_b`) both get a hash suffix, so neither shadows the other.
pub fn assign(alias: &str, tools: &[String]) -> HashMap<String, String> {
    let mut first: HashMap<String, Vec<&String>> = HashMap::new();
    for tool in tools {
        let originals = first.entry(prefixed(alias, tool)).or_default();
        // A name listed twice is one tool (the client keeps its first listing), not a collision.
        if !originals.contains(&tool) {
            originals.push(tool);
        }
    }
    let mut out = HashMap::new();
    for (name, originals) in first {
        if originals.len() == 1 {
            out.insert(originals[0].clone(), name);
            continue;
        }
        for original in originals {
            let clean = name[alias.len() + SEPARATOR.len()..].to_owned();
            out.insert(original.clone(), with_hash(alias, &clean, original));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn fits(name: &str) -> bool {
        !name.is_empty() && name.len() <= MAX_TOOL_NAME && name.bytes().all(allowed)
    }

    #[test]
    fn plain_names_are_prefixed() {
        assert_eq!(prefixed("jira", "create_issue"), "jira__create_issue");
        assert_eq!(prefixed("everything", "get-sum"), "everything__get-sum");
    }

    #[test]
    fn odd_characters_are_replaced() {
        let name = prefixed("gh", "repos.list/all é");
        assert_eq!(name, "gh__repos_list_all__");
        assert!(fits(&name));
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash() {
        let long = "x".repeat(200);
        let a = prefixed("server", &long);
        assert!(fits(&a), "{a}");
        assert_eq!(a.len(), MAX_TOOL_NAME);
        assert_eq!(a, prefixed("server", &long));
        let b = prefixed("server", &format!("{long}y"));
        assert_ne!(a, b);
    }

    #[test]
    fn collisions_get_distinct_names() {
        let tools = vec!["a.b".to_owned(), "a_b".to_owned(), "c".to_owned()];
        let map = assign("s", &tools);
        assert_eq!(map["c"], "s__c");
        assert_ne!(map["a.b"], map["a_b"]);
        assert!(map.values().all(|n| fits(n)));
        let twice = assign("s", &["c".to_owned(), "c".to_owned()]);
        assert_eq!(twice["c"], "s__c");
    }

    #[test]
    fn aliases_are_checked() {
        assert!(valid_alias("jira"));
        assert!(valid_alias("my-server_2"));
        assert!(!valid_alias(""));
        assert!(!valid_alias("a__b"));
        assert!(!valid_alias("has space"));
        assert!(!valid_alias(&"a".repeat(33)));
    }
}
