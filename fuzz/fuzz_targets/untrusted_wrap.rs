//! The untrusted-content wrapper over arbitrary page text: exactly one opening and one closing
//! marker survive, with the same nonce, and the body is the text with marker text neutralised;
//! labels and one-line excerpts never hold a line break.
#![no_main]

use agent_core::untrusted::{MARKER_TAG, Provenance, neutralize_markers, one_line, wrap_untrusted};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, u8)| {
    let (label, body, max) = input;
    let source = Provenance::new(label);
    assert!(!source.label().contains('\n'));
    let wrapped = wrap_untrusted(&source, body);
    let lower = wrapped.to_ascii_lowercase();
    assert_eq!(lower.matches(MARKER_TAG).count(), 2, "{wrapped}");
    let open = format!("<{MARKER_TAG} nonce=\"");
    let start = wrapped.find(&open).expect("opening marker") + open.len();
    let nonce = &wrapped[start..start + 16];
    let close = format!("\n</{MARKER_TAG} nonce=\"{nonce}\">");
    assert!(wrapped.ends_with(&close));
    let inner = &wrapped[start + 16 + 3..wrapped.len() - close.len()];
    assert_eq!(inner, neutralize_markers(body));
    let line = one_line(body, max as usize);
    assert!(!line.contains('\n') && !line.contains('\r'));
    assert!(line.chars().count() <= max as usize + 1);
});
