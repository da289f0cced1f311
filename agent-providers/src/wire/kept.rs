//! A request body built around the kept encoding of its messages (see
//! [`EncodingReuse`](agent_core::EncodingReuse)): the fields before the messages' array, the
//! array's items (those kept from the previous request copied, the new ones encoded), then the
//! fields after it.

use std::marker::PhantomData;
use std::sync::Arc;

use agent_core::{ContentPart, ImageSource, Message, ModelRequest, ProviderError, ToolSchema};
use serde::Serialize;
use serde_json::value::RawValue;

use super::write_json;

/// The JSON of a request's array items (its messages in wire form), kept for the next request
/// of the turn. `F` names the wire format, so that one format's memo is never taken for
/// another's.
pub(crate) struct KeptItems<F> {
    /// What the items depend on besides their own messages (the Chat Completions system
    /// prompt, sent as the first item): the memo serves only a request with the same.
    key: Option<String>,
    /// The items' JSON, in order, separated by commas.
    encoded: Vec<u8>,
    /// The tool list last sent (shared, so never another list at the same address), and its
    /// JSON.
    tools: Option<(Arc<Vec<ToolSchema>>, Box<RawValue>)>,
    /// The places the encoding may be continued from, in order: after how many of the
    /// request's messages nothing was waiting for a later message, and how long the encoding
    /// was there. The first is the start.
    cuts: Vec<Cut>,
    format: PhantomData<fn() -> F>,
}

#[derive(Clone, Copy)]
struct Cut {
    messages: usize,
    bytes: usize,
}

impl<F: 'static> KeptItems<F> {
    /// The kept encoding `request` continues, cut to the messages it vouches for, if it has
    /// one made with the same `key`; else a new one, [started](Self::start) with `first`.
    pub(crate) fn for_request<T: Serialize>(
        request: &ModelRequest,
        key: Option<&str>,
        first: impl FnOnce() -> Option<T>,
    ) -> Result<Self, ProviderError> {
        match request.reuse.take::<Self>() {
            Some((mut kept, reusable)) if kept.key.as_deref() == key => {
                kept.back_to(reusable.min(request.messages.len()));
                Ok(kept)
            }
            _ => Self::start(request, key, first()),
        }
    }

    /// A new encoding for `key`, holding `first`: an item that comes before every message's
    /// (the Chat Completions system prompt), if any.
    pub(crate) fn start<T: Serialize>(
        request: &ModelRequest,
        key: Option<&str>,
        first: Option<T>,
    ) -> Result<Self, ProviderError> {
        let mut kept = KeptItems {
            key: key.map(str::to_owned),
            encoded: Vec::new(),
            tools: None,
            cuts: Vec::with_capacity(request.messages.len() + 1),
            format: PhantomData,
        };
        if let Some(first) = first {
            kept.push(&first)?;
        }
        kept.cut_here(0);
        Ok(kept)
    }

    /// How many of the request's leading messages this encoding covers.
    pub(crate) fn covered(&self) -> usize {
        self.cuts.last().map_or(0, |c| c.messages)
    }

    /// Gives up what this encoding holds beyond the first `messages` messages (to the last
    /// place it may be continued from there).
    pub(crate) fn back_to(&mut self, messages: usize) {
        let keep = self.cuts.partition_point(|c| c.messages <= messages).max(1);
        self.cuts.truncate(keep);
        self.encoded.truncate(self.cuts.last().map_or(0, |c| c.bytes));
    }

    /// The request's messages this encoding does not cover yet, with their index, after
    /// making room for their items (so that encoding them seldom grows the buffer).
    pub(crate) fn unencoded<'r>(
        &mut self,
        request: &'r ModelRequest,
    ) -> impl Iterator<Item = (usize, &'r Message)> + use<'r, F> {
        let from = self.covered();
        let new = request.messages.get(from..).unwrap_or_default();
        self.encoded.reserve(new.iter().map(approx_len).sum());
        new.iter().enumerate().map(move |(i, m)| (from + i, m))
    }

    /// Appends an item.
    pub(crate) fn push<T: Serialize>(&mut self, item: &T) -> Result<(), ProviderError> {
        if !self.encoded.is_empty() {
            self.encoded.push(b',');
        }
        write_json(&mut self.encoded, item)
    }

    /// Records that the items so far encode the first `messages` messages, and that what
    /// follows does not depend on them.
    pub(crate) fn cut_here(&mut self, messages: usize) {
        self.cuts.push(Cut {
            messages,
            bytes: self.encoded.len(),
        });
    }

    /// Encodes the request's tools with `wire` unless the kept JSON was made from the same
    /// list.
    pub(crate) fn encode_tools<T: Serialize>(
        &mut self,
        request: &ModelRequest,
        wire: impl FnOnce() -> T,
    ) -> Result<(), ProviderError> {
        let kept = self
            .tools
            .as_ref()
            .is_some_and(|(list, _)| Arc::ptr_eq(list, &request.tools));
        if !kept && !request.tools.is_empty() {
            let encoded = serde_json::value::to_raw_value(&wire())
                .map_err(|e| ProviderError::BadRequest(format!("could not encode the tools: {e}")))?;
            self.tools = Some((request.tools.clone(), encoded));
        }
        Ok(())
    }

    /// The JSON of the request's tools (after [`Self::encode_tools`]); `None` for none.
    pub(crate) fn tools(&self, request: &ModelRequest) -> Option<&RawValue> {
        match &self.tools {
            Some((list, encoded)) if Arc::ptr_eq(list, &request.tools) => Some(encoded),
            _ => None,
        }
    }

    /// The body: `head`'s fields, then `"{array}":[` with the kept items and `extra` (items
    /// sent but not kept), then `rest`'s fields.
    pub(crate) fn body<T: Serialize>(
        &self,
        head: &impl Serialize,
        array: &str,
        extra: &[T],
        rest: &impl Serialize,
    ) -> Result<Vec<u8>, ProviderError> {
        let mut body =
            Vec::with_capacity(1024 + self.encoded.len() + self.tools.as_ref().map_or(0, |t| t.1.get().len()));
        // `{"model":…}` loses its `}`: the array follows, and `rest`'s `}` closes the body.
        write_json(&mut body, head)?;
        body.pop();
        if body.len() > 1 {
            body.push(b',');
        }
        write_json(&mut body, array)?;
        body.extend_from_slice(b":[");
        body.extend_from_slice(&self.encoded);
        for item in extra {
            if body.last() != Some(&b'[') {
                body.push(b',');
            }
            write_json(&mut body, item)?;
        }
        body.push(b']');
        let at = body.len();
        write_json(&mut body, rest)?;
        if body.len() - at == 2 {
            // `{}`: no field after the array.
            body.truncate(at);
            body.push(b'}');
        } else {
            body[at] = b',';
        }
        // The body is kept until the response head arrives (for retries): give back the room
        // that growing for the items sent but not kept may have left over, rather than hold it
        // for every call in flight.
        if body.capacity() - body.len() > (body.len() / 8).max(4096) {
            body.shrink_to_fit();
        }
        Ok(body)
    }

    /// Leaves this encoding for the request's retries and the next request.
    pub(crate) fn keep(self, request: &ModelRequest) {
        request.reuse.put(self);
    }

    #[cfg(test)]
    pub(crate) fn first_cuts(&self) -> (usize, usize) {
        (self.cuts[0].bytes, self.cuts[1].bytes)
    }

    /// Replaces the kept encoding of the first message of `request`'s memo with `tracer`
    /// (tests: proves kept bytes are sent). Fails the test when the request has no such memo,
    /// since a tracer never planted would make "not sent" checks pass for nothing.
    #[cfg(test)]
    pub(crate) fn trace_first(request: &ModelRequest, tracer: &[u8]) {
        let taken = request.reuse.take::<Self>();
        assert!(taken.is_some(), "the request carries no memo of this format to trace");
        let Some((mut kept, _)) = taken else {
            return;
        };
        let (from, to) = kept.first_cuts();
        kept.encoded.splice(from..to, tracer.iter().copied());
        for cut in &mut kept.cuts[1..] {
            cut.bytes = cut.bytes + tracer.len() - (to - from);
        }
        request.reuse.put(kept);
    }
}

/// About the length of a message's JSON: its texts and arguments, and room for the rest.
fn approx_len(m: &Message) -> usize {
    let content: usize = m
        .content
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => text.len(),
            ContentPart::Image {
                source: ImageSource::Base64 { data },
                ..
            } => data.len(),
            ContentPart::Image {
                source: ImageSource::Url { url },
                ..
            } => url.len(),
        })
        .sum();
    let calls: usize = m.tool_calls.iter().map(|c| c.arguments.len() + c.id.len() + 64).sum();
    content + content / 8 + calls + 64
}
