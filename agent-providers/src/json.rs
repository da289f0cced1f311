//! A small JSON writer for request bodies: the bytes `serde_json::to_vec` gives for the same
//! structure (compact, same escapes), without serde's per-field machinery, and with strings
//! that need no escape copied whole.

use serde_json::Value;

/// Appends JSON text to a byte buffer. The caller writes the punctuation with
/// [`JsonWriter::raw`]; strings and values go through [`JsonWriter::string`] and
/// [`JsonWriter::value`].
pub(crate) struct JsonWriter {
    pub(crate) buf: Vec<u8>,
}

impl JsonWriter {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        JsonWriter {
            buf: Vec::with_capacity(capacity),
        }
    }

    /// Literal JSON text (punctuation, keys known to need no escape).
    pub(crate) fn raw(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    /// An unsigned integer.
    pub(crate) fn u64(&mut self, n: u64) {
        use std::io::Write as _;
        // Writing to a Vec cannot fail.
        let _ = write!(self.buf, "{n}");
    }

    /// A JSON string, escaped as serde_json does: `\"`, `\\`, the short forms `\b \t \n \f \r`
    /// and `\u00xx` (lowercase hex) for the other control characters; everything else as is.
    pub(crate) fn string(&mut self, text: &str) {
        let bytes = text.as_bytes();
        self.buf.reserve(bytes.len() + 2);
        self.buf.push(b'"');
        if needs_escape(bytes) {
            self.escaped(bytes);
        } else {
            self.buf.extend_from_slice(bytes);
        }
        self.buf.push(b'"');
    }

    fn escaped(&mut self, bytes: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let short = match b {
                b'"' => b'"',
                b'\\' => b'\\',
                0x08 => b'b',
                0x09 => b't',
                0x0a => b'n',
                0x0c => b'f',
                0x0d => b'r',
                0x00..=0x1f => b'u',
                _ => continue,
            };
            self.buf.extend_from_slice(&bytes[start..i]);
            if short == b'u' {
                self.buf.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ]);
            } else {
                self.buf.extend_from_slice(&[b'\\', short]);
            }
            start = i + 1;
        }
        self.buf.extend_from_slice(&bytes[start..]);
    }

    /// A JSON value, as `serde_json::to_writer` writes it.
    pub(crate) fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.raw("null"),
            Value::Bool(true) => self.raw("true"),
            Value::Bool(false) => self.raw("false"),
            Value::String(s) => self.string(s),
            // Numbers are rare in bodies: serde_json's own formatting, to the byte.
            Value::Number(n) => {
                if serde_json::to_writer(&mut self.buf, n).is_err() {
                    self.raw("null");
                }
            }
            Value::Array(items) => {
                self.buf.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(b',');
                    }
                    self.value(item);
                }
                self.buf.push(b']');
            }
            Value::Object(map) => {
                self.buf.push(b'{');
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(b',');
                    }
                    self.string(key);
                    self.buf.push(b':');
                    self.value(item);
                }
                self.buf.push(b'}');
            }
        }
    }
}

/// Whether any byte of `bytes` must be escaped (a quote, a backslash or a control character).
/// Checks 32 bytes at a time without early exit, which the compiler turns into vector code.
fn needs_escape(bytes: &[u8]) -> bool {
    let flag = |acc: bool, &b: &u8| acc | (b < 0x20) | (b == b'"') | (b == b'\\');
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        if chunk.iter().fold(false, flag) {
            return true;
        }
    }
    chunks.remainder().iter().fold(false, flag)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn written(value: &Value) -> String {
        let mut w = JsonWriter::with_capacity(0);
        w.value(value);
        String::from_utf8(w.buf).unwrap()
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let mut every_byte = String::new();
        for c in 0u8..0x80 {
            every_byte.push(char::from(c));
        }
        let long = "x".repeat(70) + "\"" + &"y".repeat(40) + "\u{1}";
        let value = json!({
            "s": every_byte,
            "long": long,
            "plain": "a".repeat(64),
            "unicode": "olá 🌍 \u{7f} \u{2028}",
            "n": [0, -1, 1.5, 1e300, 0.2, u64::MAX, i64::MIN, 3.0],
            "b": [true, false, null],
            "nested": {"z": {}, "a": [], "m": [{"k\n": "v\t"}]},
        });
        assert_eq!(written(&value), serde_json::to_string(&value).unwrap());
        for text in [
            "",
            "\"",
            "\\",
            "a\u{0}b",
            &"q".repeat(31),
            &"q".repeat(32),
            &"q".repeat(33),
        ] {
            let v = Value::String(text.to_owned());
            assert_eq!(written(&v), serde_json::to_string(&v).unwrap());
        }
    }
}
