//! The pure part of reading a streamed response: body chunks in, stream events out, within
//! the response cap. The transport drives it from the network; the fuzz targets from bytes.

use agent_core::{ProviderError, StreamEvent};

use crate::limits;
use crate::sse::SseParser;
use crate::transport::WireDecoder;

/// An SSE parser and a wire decoder, with the count of body bytes against the response cap.
pub(crate) struct BodyDecoder<D> {
    parser: SseParser,
    decoder: D,
    /// Body bytes fed so far, and the most allowed.
    received: usize,
    max_bytes: usize,
}

impl<D: WireDecoder> BodyDecoder<D> {
    /// Decodes a body of at most `max_bytes` bytes (one event can be no larger) with `decoder`.
    pub(crate) fn new(decoder: D, max_bytes: usize) -> Self {
        BodyDecoder {
            parser: SseParser::with_max_event_bytes(max_bytes),
            decoder,
            received: 0,
            max_bytes,
        }
    }

    /// Feeds one body chunk, appending the events it completes to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.received = self.received.saturating_add(bytes.len());
        if self.received > self.max_bytes {
            return Err(limits::response_too_large(self.max_bytes));
        }
        let decoder = &mut self.decoder;
        self.parser.push_with(bytes, |event| decoder.on_event(event, out))
    }

    /// Ends the body: its last event and the decoder's final events go to `out`.
    pub(crate) fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let decoder = &mut self.decoder;
        self.parser
            .finish_with(|event| decoder.on_event(event, out))
            .and_then(|()| self.decoder.on_end(out))
    }
}
