//! Entry points for the fuzz targets (feature `fuzzing`): each takes arbitrary bytes and runs
//! one parser of untrusted input; any panic is a bug.

use serde_json::Value;

use super::format::{ReadView, Snapshot, format_changes, format_read as format_read_view};
use super::refusal::format_refusal;

/// Extracts text from arbitrary bytes read as (lossy) UTF-8 HTML.
pub fn html_to_text(data: &[u8]) -> String {
    super::html_text::html_to_text(&String::from_utf8_lossy(data))
}

/// Formats arbitrary JSON as page.js `read` and refusal results would be, with a view chosen by
/// the first bytes (offset, find, caps), and as the change list from and to an empty read.
/// Inputs that are not JSON are ignored.
pub fn format_read(data: &[u8]) {
    let (head, body) = data.split_at(data.len().min(4));
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let b = |i: usize| head.get(i).copied().unwrap_or(0) as usize;
    let view = ReadView {
        offset: b(0),
        find: (b(1) % 2 == 1).then(|| String::from_utf8_lossy(&head[..head.len().min(2)]).into_owned()),
        max_elements: b(2),
        max_chars: b(3) * 100,
        preview_chars: b(3) * 20,
    };
    let _ = format_read_view(&v, &view);
    let _ = format_read_view(
        &v,
        &ReadView {
            max_elements: 100,
            max_chars: 20_000,
            preview_chars: 1_500,
            ..ReadView::default()
        },
    );
    let (read, empty) = (Snapshot::of(&v, None), Snapshot::of(&Value::Null, None));
    let _ = format_changes(&read, &empty);
    let _ = format_changes(&empty, &read);
    let _ = format_changes(&read, &read);
    let url = v.get("url").and_then(Value::as_str).unwrap_or("");
    let _ = format_refusal(&v, url, &agent_core::untrusted::Provenance::web_page(url));
}
