//! An incremental Server-Sent Events parser that accepts bytes cut anywhere.
//!
//! Chunks may split a line, a CRLF pair or a multi-byte UTF-8 character: the parser keeps the
//! unfinished tail and only decodes whole lines. `data:` lines of one event are joined with
//! `\n`, comment lines (`: ...`, such as OpenRouter's `: OPENROUTER PROCESSING`) are skipped,
//! and `\n`, `\r\n` and `\r` all end a line (Gemini separates events with CRLF CRLF).
//!
//! Every byte is scanned and validated a bounded number of times, however the body is cut: a
//! line trickled one byte at a time costs linear time, not quadratic.

use agent_core::ProviderError;

use crate::limits;

/// The largest event a parser from [`SseParser::new`] buffers before reporting the stream as
/// malformed: the default response cap (an event cannot be larger than its response).
pub const MAX_EVENT_BYTES: usize = limits::DEFAULT_MAX_RESPONSE_BYTES;

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
#[derive(Debug)]
pub struct SseParser {
    /// The unfinished last line; it never holds a line break, so a new chunk is searched alone.
    buf: Vec<u8>,
    /// How much of `buf` is known to be UTF-8 (up to a character boundary), and whether it
    /// holds an invalid sequence: checked as bytes arrive, so that each is checked once.
    buf_valid: usize,
    buf_invalid: bool,
    /// The event being read; its strings are reused from one event to the next.
    current: SseEvent,
    has_data: bool,
    /// The previous chunk ended with `\r`: a `\n` at the start of the next one belongs to it.
    skip_lf: bool,
    max_event_bytes: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::with_max_event_bytes(MAX_EVENT_BYTES)
    }
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
    /// A parser with nothing buffered, whose events may be [`MAX_EVENT_BYTES`] long.
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser whose events (and unfinished lines) may be at most `max` bytes long; a longer
    /// one fails the stream as malformed rather than being buffered.
    pub fn with_max_event_bytes(max: usize) -> Self {
        SseParser {
            buf: Vec::new(),
            buf_valid: 0,
            buf_invalid: false,
            current: SseEvent::default(),
            has_data: false,
            skip_lf: false,
            max_event_bytes: max,
        }
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
        // Conservative: a chunk that might fail goes the buffered way. `buf` was checked as it
        // grew; only the new chunk is checked here.
        let rejectable = self
            .buf
            .len()
            .saturating_add(self.current.data.len())
            .saturating_add(chunk.len())
            > self.max_event_bytes
            || self.buf_invalid
            || !utf8_but_for_a_cut_tail(chunk);
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
        if !self.buf.is_empty() {
            // `buf` holds no line break: only the new bytes are searched.
            let Some(end) = find_line_break(chunk) else {
                self.extend_buf(chunk);
                return self.check_size();
            };
            self.buf.extend_from_slice(&chunk[..end]);
            let next = self.after_break(chunk, end);
            let line = std::mem::take(&mut self.buf);
            let result = self.line(&line, out);
            self.buf = line;
            self.clear_buf();
            result?;
            chunk = &chunk[next..];
        }
        let consumed = self.lines(chunk, out)?;
        self.extend_buf(&chunk[consumed..]);
        self.check_size()
    }

    /// Appends to the unfinished line, checking the new bytes' UTF-8 (and the cut character
    /// before them, if any).
    fn extend_buf(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        if self.buf_invalid {
            return;
        }
        match std::str::from_utf8(&self.buf[self.buf_valid..]) {
            Ok(_) => self.buf_valid = self.buf.len(),
            Err(e) => {
                self.buf_valid += e.valid_up_to();
                self.buf_invalid = e.error_len().is_some();
            }
        }
    }

    fn clear_buf(&mut self) {
        self.buf.clear();
        self.buf_valid = 0;
        self.buf_invalid = false;
    }

    fn check_size(&self) -> Result<(), ProviderError> {
        if self.buf.len().saturating_add(self.current.data.len()) > self.max_event_bytes {
            return Err(limits::event_too_large(self.max_event_bytes));
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
            let line = std::mem::take(&mut self.buf);
            let result = self.line(&line, out);
            self.buf = line;
            self.clear_buf();
            result?;
        }
        self.dispatch(out)
    }

    /// Processes every complete line of `bytes`; returns how many bytes were consumed.
    fn lines(&mut self, bytes: &[u8], out: &mut impl Sink) -> Result<usize, ProviderError> {
        let mut start = 0;
        while let Some(offset) = find_line_break(&bytes[start..]) {
            let end = start + offset;
            let next = self.after_break(bytes, end);
            self.line(&bytes[start..end], out)?;
            start = next;
        }
        Ok(start)
    }

    /// Where the line break at `bytes[end]` ends (`\r\n` is one break).
    fn after_break(&mut self, bytes: &[u8], end: usize) -> usize {
        if bytes[end] != b'\r' {
            return end + 1;
        }
        match bytes.get(end + 1) {
            Some(b'\n') => end + 2,
            Some(_) => end + 1,
            None => {
                // A lone CR at the end of the chunk: the LF may be in the next one.
                self.skip_lf = true;
                end + 1
            }
        }
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

    /// Feeds `body` one byte at a time through the callback path (what the transport uses)
    /// and returns the events' data lengths.
    fn trickle(body: &[u8]) -> Vec<usize> {
        let mut parser = SseParser::new();
        let mut lengths = Vec::new();
        for byte in body.chunks(1) {
            parser
                .push_with(byte, |e| {
                    lengths.push(e.data.len());
                    Ok(())
                })
                .unwrap();
        }
        parser
            .finish_with(|e| {
                lengths.push(e.data.len());
                Ok(())
            })
            .unwrap();
        lengths
    }

    #[test]
    fn a_long_line_trickled_byte_by_byte_takes_linear_time() {
        // Rescanning the unfinished line at each byte would take minutes here.
        const LEN: usize = 4 << 20;
        let mut body = b"data: ".to_vec();
        body.resize(body.len() + LEN, b'x');
        body.extend_from_slice(b"\n\n");
        assert_eq!(trickle(&body), vec![LEN]);
        // Multi-byte characters cut at every byte: the UTF-8 check is incremental too.
        let mut body = b"data: ".to_vec();
        body.extend_from_slice("é€".repeat(LEN / 20).as_bytes());
        body.extend_from_slice(b"\n\n");
        assert_eq!(trickle(&body), vec![LEN / 20 * 5]);
    }

    #[test]
    fn an_event_over_the_cap_fails_with_the_caps_message() {
        for chunk in [1usize << 10, 1 << 16, 3 << 20] {
            // One endless line, then one event of many short lines.
            let endless = [b"data: ".as_slice(), &vec![b'x'; 3 << 20]].concat();
            let many = b"data: 0123456789\n".repeat(200_000);
            for body in [endless, many] {
                let mut parser = SseParser::with_max_event_bytes(1 << 20);
                let err = body
                    .chunks(chunk)
                    .find_map(|piece| parser.push_with(piece, |_| Ok(())).err())
                    .unwrap();
                let text = err.to_string();
                assert!(matches!(err, ProviderError::Malformed(_)), "{text}");
                assert!(
                    text.contains("1048576 bytes") && text.contains("max_response_bytes"),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn invalid_utf8_is_malformed() {
        let mut parser = SseParser::new();
        let err = parser.push(b"data: \xff\xfe\n\n", &mut Vec::new()).unwrap_err();
        assert!(matches!(err, ProviderError::Malformed(_)));
        // Cut anywhere, including inside the unfinished line and across a character.
        for body in [
            b"data: ab\xff\xfecd\n\n".as_slice(),
            b"data: \xc3\n\n",
            b"data: \xc3(\n\n",
        ] {
            for size in 1..body.len() {
                let mut parser = SseParser::new();
                let result = body
                    .chunks(size)
                    .try_for_each(|piece| parser.push_with(piece, |_| Ok(())))
                    .and_then(|()| parser.finish_with(|_| Ok(())));
                assert!(
                    matches!(result, Err(ProviderError::Malformed(_))),
                    "{body:?} in pieces of {size}"
                );
            }
        }
    }
}
