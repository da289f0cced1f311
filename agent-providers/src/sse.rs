//! An incremental Server-Sent Events parser that accepts bytes cut anywhere.
//!
//! Chunks may split a line, a CRLF pair or a multi-byte UTF-8 character: the parser keeps the
//! unfinished tail and only decodes whole lines. `data:` lines of one event are joined with
//! `\n`, comment lines (`: ...`, such as OpenRouter's `: OPENROUTER PROCESSING`) are skipped,
//! and `\n`, `\r\n` and `\r` all end a line (Gemini separates events with CRLF CRLF).

use agent_core::ProviderError;

/// The largest event the parser buffers before reporting the stream as malformed.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched SSE event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (empty when the server sent none).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental SSE parser: feed it chunks with [`SseParser::push`], then call
/// [`SseParser::finish`] at the end of the body. [`SseParser::push_with`] and
/// [`SseParser::finish_with`] hand each event to a callback instead, without allocating one.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// The event being read; its strings are reused from one event to the next.
    current: SseEvent,
    has_data: bool,
    /// The previous chunk ended with `\r`: a `\n` at the start of the next one belongs to it.
    skip_lf: bool,
}

/// Where [`SseParser`] sends each completed event.
trait Sink {
    fn event(&mut self, event: &SseEvent) -> Result<(), ProviderError>;
}

/// Collects owned copies.
impl Sink for Vec<SseEvent> {
    fn event(&mut self, event: &SseEvent) -> Result<(), ProviderError> {
        self.push(event.clone());
        Ok(())
    }
}

/// Calls a closure.
struct Callback<F>(F);

impl<F: FnMut(&SseEvent) -> Result<(), ProviderError>> Sink for Callback<F> {
    fn event(&mut self, event: &SseEvent) -> Result<(), ProviderError> {
        (self.0)(event)
    }
}

impl SseParser {
    /// A parser with nothing buffered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk and appends every event it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), ProviderError> {
        self.push_into(chunk, out)
    }

    /// Feeds one chunk and hands every event it completes to `on_event`, in order; the first
    /// error (the parser's or `on_event`'s) is returned.
    ///
    /// A chunk the parser rejects (invalid UTF-8, an oversized event) reaches `on_event` with
    /// none of its events, exactly as [`SseParser::push`] then returns no event of it.
    pub fn push_with<F>(&mut self, chunk: &[u8], on_event: F) -> Result<(), ProviderError>
    where
        F: FnMut(&SseEvent) -> Result<(), ProviderError>,
    {
        let rejectable = self.buf.len() + self.current.data.len() + chunk.len() > MAX_EVENT_BYTES
            || !utf8_but_for_a_cut_tail(if self.buf.is_empty() { chunk } else { &self.buf })
            || (!self.buf.is_empty() && !utf8_but_for_a_cut_tail(chunk));
        if rejectable {
            // Parse the whole chunk first, so that an error leaves no event behind.
            let mut events = Vec::new();
            self.push_into(chunk, &mut events)?;
            return events.iter().try_for_each(on_event);
        }
        self.push_into(chunk, &mut Callback(on_event))
    }

    /// [`SseParser::finish`] with a callback, like [`SseParser::push_with`].
    pub fn finish_with<F>(&mut self, on_event: F) -> Result<(), ProviderError>
    where
        F: FnMut(&SseEvent) -> Result<(), ProviderError>,
    {
        // The last line cannot complete an event, so an error in it comes before any event.
        self.finish_into(&mut Callback(on_event))
    }

    fn push_into(&mut self, chunk: &[u8], out: &mut impl Sink) -> Result<(), ProviderError> {
        let mut chunk = chunk;
        if self.skip_lf {
            if let Some((&b'\n', rest)) = chunk.split_first() {
                chunk = rest;
            }
            if !chunk.is_empty() {
                self.skip_lf = false;
            }
        }
        if self.buf.is_empty() {
            let consumed = self.lines(chunk, out)?;
            self.buf.extend_from_slice(&chunk[consumed..]);
        } else {
            self.buf.extend_from_slice(chunk);
            let buf = std::mem::take(&mut self.buf);
            let consumed = self.lines(&buf, out);
            self.buf = buf;
            let consumed = consumed?;
            self.buf.drain(..consumed);
        }
        if self.buf.len() + self.current.data.len() > MAX_EVENT_BYTES {
            return Err(ProviderError::Malformed(format!(
                "an SSE event exceeds {MAX_EVENT_BYTES} bytes"
            )));
        }
        Ok(())
    }

    /// Ends the body: a last line without a line break and an event without its closing blank
    /// line are still dispatched (several real servers end the body that way).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), ProviderError> {
        self.finish_into(out)
    }

    fn finish_into(&mut self, out: &mut impl Sink) -> Result<(), ProviderError> {
        if !self.buf.is_empty() {
            let buf = std::mem::take(&mut self.buf);
            self.line(&buf, out)?;
        }
        self.dispatch(out)
    }

    /// Processes every complete line of `bytes`; returns how many bytes were consumed.
    fn lines(&mut self, bytes: &[u8], out: &mut impl Sink) -> Result<usize, ProviderError> {
        let mut start = 0;
        while let Some(offset) = find_line_break(&bytes[start..]) {
            let end = start + offset;
            let next = if bytes[end] == b'\r' {
                match bytes.get(end + 1) {
                    Some(b'\n') => end + 2,
                    Some(_) => end + 1,
                    None => {
                        // A lone CR at the end of the chunk: the LF may be in the next one.
                        self.skip_lf = true;
                        end + 1
                    }
                }
            } else {
                end + 1
            };
            self.line(&bytes[start..end], out)?;
            start = next;
        }
        Ok(start)
    }

    fn line(&mut self, line: &[u8], out: &mut impl Sink) -> Result<(), ProviderError> {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| {
            ProviderError::Malformed(format!("invalid UTF-8 in the event stream: {}", excerpt_bytes(line)))
        })?;
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.current.event.clear();
                self.current.event.push_str(value);
            }
            _ => {} // id, retry and unknown fields do not matter here
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut impl Sink) -> Result<(), ProviderError> {
        let result = if self.has_data {
            self.has_data = false;
            out.event(&self.current)
        } else {
            Ok(())
        };
        self.current.event.clear();
        self.current.data.clear();
        result
    }
}

/// The position of the first `\n` or `\r` in `bytes`, eight bytes at a time.
fn find_line_break(bytes: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    // Whether a byte of `word` is zero (exact: no false positives).
    let has_zero = |word: u64| (word.wrapping_sub(LO) & !word & HI) != 0;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        if has_zero(word ^ (LO * u64::from(b'\n'))) || has_zero(word ^ (LO * u64::from(b'\r'))) {
            break;
        }
        offset += 8;
    }
    bytes[offset..]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|i| offset + i)
}

/// Whether `bytes` is UTF-8, but for an incomplete character at its very end (which belongs to
/// a line the next chunk completes).
fn utf8_but_for_a_cut_tail(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

/// A short, printable excerpt of raw bytes for error messages.
pub(crate) fn excerpt_bytes(bytes: &[u8]) -> String {
    excerpt(&String::from_utf8_lossy(bytes))
}

/// At most 120 characters of `text`, on one line, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX: usize = 120;
    let mut out: String = text
        .chars()
        .take(MAX)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > MAX {
        out.push('…');
    }
    format!("{:?}", out.trim())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse_in_pieces(body: &[u8], size: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for piece in body.chunks(size) {
            parser.push(piece, &mut out).unwrap();
        }
        parser.finish(&mut out).unwrap();
        out
    }

    #[test]
    fn every_split_gives_the_same_events() {
        let body =
            "event: a\r\ndata: {\"t\":\"olá\"}\r\n\r\n: comment\n\ndata: x\ndata: y\n\ndata:z\r\rdata: last".as_bytes();
        let whole = parse_in_pieces(body, body.len());
        assert_eq!(
            whole,
            vec![
                SseEvent {
                    event: "a".into(),
                    data: "{\"t\":\"olá\"}".into()
                },
                SseEvent {
                    event: "".into(),
                    data: "x\ny".into()
                },
                SseEvent {
                    event: "".into(),
                    data: "z".into()
                },
                SseEvent {
                    event: "".into(),
                    data: "last".into()
                },
            ]
        );
        for size in 1..body.len() {
            assert_eq!(parse_in_pieces(body, size), whole, "chunk size {size}");
        }
    }

    fn parse_with_callback(body: &[u8], size: usize) -> Result<Vec<SseEvent>, ProviderError> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for piece in body.chunks(size) {
            parser.push_with(piece, |e| {
                out.push(e.clone());
                Ok(())
            })?;
        }
        parser.finish_with(|e| {
            out.push(e.clone());
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn the_callback_sees_what_push_returns() {
        let body =
            "event: a\r\ndata: {\"t\":\"olá\"}\r\n\r\n: comment\n\ndata: x\ndata: y\n\ndata:z\r\rdata: last".as_bytes();
        for size in 1..=body.len() {
            assert_eq!(
                parse_with_callback(body, size).unwrap(),
                parse_in_pieces(body, size),
                "chunk size {size}"
            );
        }
    }

    #[test]
    fn a_rejected_chunk_gives_no_event() {
        // The first event is complete in the chunk that also holds the invalid line: like
        // `push`, the callback sees none of that chunk's events.
        let mut parser = SseParser::new();
        let mut seen = 0;
        let err = parser
            .push_with(b"data: ok\n\ndata: \xff\n\n", |_| {
                seen += 1;
                Ok(())
            })
            .unwrap_err();
        assert!(matches!(err, ProviderError::Malformed(_)));
        assert_eq!(seen, 0);
    }

    #[test]
    fn line_breaks_are_found_at_every_position() {
        for len in 0..40 {
            for at in 0..len {
                for brk in [b'\n', b'\r'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = brk;
                    if at + 1 < len {
                        bytes[at + 1] = b'\n';
                    }
                    assert_eq!(find_line_break(&bytes), Some(at), "len {len} at {at}");
                }
            }
            let mut bytes: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(7).wrapping_add(14)).collect();
            bytes.retain(|&b| b != b'\n' && b != b'\r');
            assert_eq!(find_line_break(&bytes), None);
        }
        // Bytes next to the line breaks' values do not count.
        assert_eq!(
            find_line_break(&[0x0b, 0x0c, 0x0e, 0x09, 0x8a, 0x8d, 0xff, 0x00, 0x01]),
            None
        );
    }

    #[test]
    fn invalid_utf8_is_malformed() {
        let mut parser = SseParser::new();
        let err = parser.push(b"data: \xff\xfe\n\n", &mut Vec::new()).unwrap_err();
        assert!(matches!(err, ProviderError::Malformed(_)));
    }
}
