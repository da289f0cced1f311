//! Git-style short handles: the shortest unique prefix of each open tab's UUID, and the
//! resolution of a typed prefix back to one tab.

use std::collections::BTreeSet;
use std::ops::Bound;

use serde::{Deserialize, Serialize};

use super::TabId;

/// The shortest handle ever shown or accepted (so a handle stays unambiguous as tabs open).
pub const MIN_HANDLE_LEN: usize = 4;

/// How many handles a `none` or `ambiguous` answer lists at most (the count says how many
/// there are in all).
pub const MAX_LISTED_HANDLES: usize = 20;

/// The answer to "which open tab does this prefix name?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Resolution {
    /// Exactly one open tab starts with the prefix.
    Ok {
        /// The tab.
        tab: TabId,
        /// Its current handle.
        handle: String,
    },
    /// No open tab starts with the prefix.
    None {
        /// The handles of the open tabs (at most [`MAX_LISTED_HANDLES`]).
        open_handles: Vec<String>,
        /// How many tabs are open.
        open_count: usize,
    },
    /// Several open tabs start with the prefix.
    Ambiguous {
        /// The handles of the matching tabs (at most [`MAX_LISTED_HANDLES`]).
        matches: Vec<String>,
        /// How many tabs match.
        match_count: usize,
    },
    /// The input cannot be a handle: a character outside `[0-9a-f-]`, or fewer than
    /// [`MIN_HANDLE_LEN`] characters. Nothing was looked up.
    Invalid {
        /// Why, written for a person or a model.
        reason: String,
    },
}

impl Resolution {
    /// The tab, for [`Resolution::Ok`].
    pub fn tab(&self) -> Option<&TabId> {
        match self {
            Resolution::Ok { tab, .. } => Some(tab),
            _ => None,
        }
    }

    /// A one-line explanation of a failed resolution, for a person or a model; `None` for `Ok`.
    pub fn explain(&self, input: &str) -> Option<String> {
        match self {
            Resolution::Ok { .. } => None,
            Resolution::None {
                open_handles,
                open_count,
            } => Some(if *open_count == 0 {
                format!("no open tab matches {input:?}; no tabs are open")
            } else {
                format!(
                    "no open tab matches {input:?}; open tabs: {}",
                    list(open_handles, *open_count)
                )
            }),
            Resolution::Ambiguous { matches, match_count } => Some(format!(
                "{input:?} is ambiguous: it matches {}; add one more character",
                list(matches, *match_count)
            )),
            Resolution::Invalid { reason } => Some(reason.clone()),
        }
    }
}

fn list(handles: &[String], total: usize) -> String {
    let mut out = handles.join(", ");
    if total > handles.len() {
        out.push_str(&format!(" and {} more", total - handles.len()));
    }
    out
}

/// Normalises a typed prefix: trims it, lowercases it, and checks that it only holds
/// `[0-9a-f-]` and has at least [`MIN_HANDLE_LEN`] characters. The error says why not.
///
/// ```
/// use agent_core::tabs::normalize_prefix;
/// assert_eq!(normalize_prefix(" 6FE8 ").as_deref(), Ok("6fe8"));
/// assert!(normalize_prefix("6fe").is_err());
/// assert!(normalize_prefix("6fe%").is_err());
/// ```
pub fn normalize_prefix(input: &str) -> Result<String, String> {
    let prefix = input.trim().to_ascii_lowercase();
    if let Some(bad) = prefix.chars().find(|c| !matches!(c, '0'..='9' | 'a'..='f' | '-')) {
        return Err(format!(
            "{input:?} is not a tab handle: {bad:?} is not allowed (handles use only 0-9, a-f and -)"
        ));
    }
    if prefix.len() < MIN_HANDLE_LEN {
        return Err(format!(
            "{input:?} is too short: a tab handle has at least {MIN_HANDLE_LEN} characters"
        ));
    }
    if prefix.len() > 36 {
        return Err(format!("{input:?} is longer than a tab id (36 characters)"));
    }
    Ok(prefix)
}

/// The open tabs, sorted, answering handle and prefix questions in `O(log n)`.
///
/// A tab's handle is the shortest prefix of its id that no other open tab shares, at least
/// [`MIN_HANDLE_LEN`] characters (and never ending on a `-`). It is derived, never stored: it
/// grows when another tab with the same leading characters opens and shrinks back when that
/// tab closes.
///
/// ```
/// use agent_core::tabs::{HandleIndex, Resolution, TabId};
/// let a = TabId::parse("6fe8a000-0000-4000-8000-000000000001")?;
/// let b = TabId::parse("6fe8b000-0000-4000-8000-000000000002")?;
/// let mut index = HandleIndex::new();
/// index.insert(a.clone());
/// assert_eq!(index.handle(&a).as_deref(), Some("6fe8"));
/// index.insert(b.clone());
/// assert_eq!(index.handle(&a).as_deref(), Some("6fe8a"));
/// assert!(matches!(index.resolve("6FE8"), Resolution::Ambiguous { match_count: 2, .. }));
/// assert_eq!(index.resolve("6fe8b").tab(), Some(&b));
/// index.remove(&b);
/// assert_eq!(index.handle(&a).as_deref(), Some("6fe8"));
/// # Ok::<(), agent_core::tabs::InvalidTabId>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct HandleIndex {
    open: BTreeSet<TabId>,
}

impl HandleIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an open tab. Returns false if it was already there.
    pub fn insert(&mut self, id: TabId) -> bool {
        self.open.insert(id)
    }

    /// Removes a tab (it closed). Returns false if it was not there.
    pub fn remove(&mut self, id: &TabId) -> bool {
        self.open.remove(id.as_str())
    }

    /// Whether the tab is open.
    pub fn contains(&self, id: &TabId) -> bool {
        self.open.contains(id.as_str())
    }

    /// How many tabs are open.
    pub fn len(&self) -> usize {
        self.open.len()
    }

    /// Whether no tab is open.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The open tabs, sorted by id.
    pub fn iter(&self) -> impl Iterator<Item = &TabId> {
        self.open.iter()
    }

    /// The handle of an open tab; `None` if the tab is not open.
    pub fn handle(&self, id: &TabId) -> Option<String> {
        let key = id.as_str();
        if !self.open.contains(key) {
            return None;
        }
        Some(handle_among(key, self.neighbours(key)))
    }

    /// Every open tab with its handle, sorted by id. `O(n)`.
    pub fn handles(&self) -> Vec<(TabId, String)> {
        let ids: Vec<&TabId> = self.open.iter().collect();
        (0..ids.len())
            .map(|i| {
                let prev = i.checked_sub(1).map(|j| ids[j].as_str());
                let next = ids.get(i + 1).map(|t| t.as_str());
                (ids[i].clone(), handle_among(ids[i].as_str(), (prev, next)))
            })
            .collect()
    }

    fn neighbours(&self, key: &str) -> (Option<&str>, Option<&str>) {
        let prev = self
            .open
            .range::<str, _>((Bound::Unbounded, Bound::Excluded(key)))
            .next_back()
            .map(TabId::as_str);
        let next = self
            .open
            .range::<str, _>((Bound::Excluded(key), Bound::Unbounded))
            .next()
            .map(TabId::as_str);
        (prev, next)
    }

    /// Resolves a typed prefix (any case, surrounding spaces ignored) against the open tabs.
    pub fn resolve(&self, input: &str) -> Resolution {
        let prefix = match normalize_prefix(input) {
            Ok(p) => p,
            Err(reason) => return Resolution::Invalid { reason },
        };
        let mut matches = self
            .open
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .take_while(|id| id.as_str().starts_with(prefix.as_str()));
        let Some(first) = matches.next() else {
            return Resolution::None {
                open_handles: self.window_handles(Bound::Unbounded, MAX_LISTED_HANDLES),
                open_count: self.open.len(),
            };
        };
        if matches.next().is_none() {
            return Resolution::Ok {
                tab: first.clone(),
                handle: handle_among(first.as_str(), self.neighbours(first.as_str())),
            };
        }
        let match_count = 2 + matches.count();
        Resolution::Ambiguous {
            matches: self.window_handles(Bound::Included(first.as_str()), match_count.min(MAX_LISTED_HANDLES)),
            match_count,
        }
    }

    /// The handles of up to `n` consecutive open tabs starting at `from`: one range lookup for
    /// the whole window, since each tab's neighbours are the window's own elements.
    fn window_handles(&self, from: Bound<&str>, n: usize) -> Vec<String> {
        let prev = match from {
            Bound::Included(key) => self
                .open
                .range::<str, _>((Bound::Unbounded, Bound::Excluded(key)))
                .next_back()
                .map(TabId::as_str),
            _ => None,
        };
        let window: Vec<&str> = self
            .open
            .range::<str, _>((from, Bound::Unbounded))
            .take(n + 1)
            .map(TabId::as_str)
            .collect();
        (0..n.min(window.len()))
            .map(|i| {
                let before = if i == 0 { prev } else { Some(window[i - 1]) };
                handle_among(window[i], (before, window.get(i + 1).copied()))
            })
            .collect()
    }
}

fn common_prefix_len(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// The shortest prefix of `id` not shared with its sorted neighbours.
fn handle_among(id: &str, (prev, next): (Option<&str>, Option<&str>)) -> String {
    let shared = prev
        .map(|p| common_prefix_len(id, p))
        .max(next.map(|n| common_prefix_len(id, n)))
        .unwrap_or(0);
    let mut len = (shared + 1).max(MIN_HANDLE_LEN).min(id.len());
    // A handle ending on a dash reads as cut off; take the next character too.
    while len < id.len() && id.as_bytes()[len - 1] == b'-' {
        len += 1;
    }
    id[..len].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> TabId {
        TabId::parse(s).unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn handle_skips_trailing_dash() {
        let mut index = HandleIndex::new();
        let a = id("12345678-aaaa-4000-8000-000000000000");
        let b = id("12345678-bbbb-4000-8000-000000000000");
        index.insert(a.clone());
        index.insert(b.clone());
        assert_eq!(index.handle(&a).as_deref(), Some("12345678-a"));
        assert_eq!(index.handles()[1].1, "12345678-b");
    }
}
