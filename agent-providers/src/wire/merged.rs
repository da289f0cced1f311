//! Kept encodings (see [`KeptItems`]) for wire formats that merge consecutive messages of one
//! role into one wire message, as Anthropic's `messages` and Gemini's `contents` do (a run of
//! tool results is one user message) and send some messages elsewhere or not at all (system
//! messages go to the system instruction). A kept encoding of such a format ends only where
//! one wire message ends and the next begins, never inside the newest one: the next message
//! may join it.

use agent_core::{Message, ModelRequest, ProviderError, Role};
use serde::Serialize;

use super::kept::KeptItems;

/// A format's wire role for a message: `None` for one it does not send among the others.
pub(crate) type WireRole = fn(&Message) -> Option<&'static str>;

/// The messages it sends among the others, newest first, with their wire roles.
pub(crate) fn newest_first(
    messages: &[Message],
    role_of: WireRole,
) -> impl Iterator<Item = (usize, &'static str)> + '_ {
    messages
        .iter()
        .enumerate()
        .rev()
        .filter_map(move |(i, m)| role_of(m).map(|r| (i, r)))
}

/// The first agent message of the wire message whose last one is `end`, of role `role`.
pub(crate) fn start_of(messages: &[Message], end: usize, role: &'static str, role_of: WireRole) -> usize {
    let mut start = end;
    for (i, m) in messages[..end].iter().enumerate().rev() {
        match role_of(m) {
            None => {}
            Some(r) if r == role => start = i,
            Some(_) => break,
        }
    }
    start
}

/// Where a kept encoding must end at the latest: the start of the newest wire message (all of
/// them when none is sent).
pub(crate) fn newest_start(messages: &[Message], role_of: WireRole) -> usize {
    match newest_first(messages, role_of).next() {
        Some((newest, role)) => start_of(messages, newest, role, role_of),
        None => messages.len(),
    }
}

/// Cuts `kept` back to `limit`. False when the first message after it would join its last
/// wire message (an edited message changed roles there): the encoding cannot be continued.
pub(crate) fn fit<F: 'static>(kept: &mut KeptItems<F>, messages: &[Message], limit: usize, role_of: WireRole) -> bool {
    kept.back_to(limit);
    let covered = kept.covered();
    let before = messages[..covered].iter().rev().find_map(role_of);
    let after = messages[covered..].iter().find_map(role_of);
    before.is_none() || before != after
}

/// The wire messages of the request's messages `kept` does not cover, each with the index of
/// its first agent message: `parts` gives a message's role and parts from its index and the
/// message (`None`: not sent among the others), and consecutive ones of a role are merged.
pub(crate) fn merge<'r, F: 'static, P>(
    kept: &mut KeptItems<F>,
    request: &'r ModelRequest,
    parts: impl Fn(usize, &'r Message) -> Option<(&'static str, Vec<P>)>,
) -> Vec<(usize, &'static str, Vec<P>)> {
    let mut wire: Vec<(usize, &'static str, Vec<P>)> = Vec::new();
    for (i, m) in kept.unencoded(request) {
        let Some((role, new)) = parts(i, m) else {
            continue;
        };
        match wire.last_mut() {
            Some((_, last, parts)) if *last == role => parts.extend(new),
            _ => wire.push((i, role, new)),
        }
    }
    wire
}

/// Keeps the wire messages that start before `limit` in `kept`, each a place to continue
/// from, and returns the others, which are sent but not kept.
pub(crate) fn keep_before<F: 'static, W: Serialize>(
    kept: &mut KeptItems<F>,
    wire: Vec<(usize, W)>,
    limit: usize,
) -> Result<Vec<W>, ProviderError> {
    let keep = wire.partition_point(|(start, _)| *start < limit);
    for (k, (_, message)) in wire[..keep].iter().enumerate() {
        kept.push(message)?;
        // The next wire message starts where the encoding may be continued (there always is
        // one: `limit` is at most the newest one's start).
        kept.cut_here(wire.get(k + 1).map_or(limit, |(start, _)| *start));
    }
    Ok(wire.into_iter().skip(keep).map(|(_, m)| m).collect())
}

/// The system prompt and the conversation's system messages, which these formats send in their
/// system instruction, joined; `None` when there is none.
pub(crate) fn system_text(request: &ModelRequest) -> Option<String> {
    let prompt = request.system.iter().filter(|s| !s.is_empty()).cloned();
    let messages = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(Message::text);
    let parts: Vec<String> = prompt.chain(messages).collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}
