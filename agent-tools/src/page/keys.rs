//! Keys as page_press_key takes them ("Enter", "Control+A", "Shift+Tab"): parsed into a DOM key
//! value and modifiers, and the chords a careful person would not press refused, before
//! anything reaches the page.

use agent_core::untrusted::one_line;
use serde_json::json;

/// Modifiers in the order they are pressed and shown.
const MODIFIERS: [&str; 4] = ["Control", "Alt", "Meta", "Shift"];

/// One key with the modifiers held while it is pressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chord {
    /// The DOM key value: "Enter", "Tab", " ", "a", "A".
    pub key: String,
    /// Held modifiers, each once, in [`MODIFIERS`] order.
    pub modifiers: Vec<String>,
}

impl Chord {
    /// The chord as results name it: "Control+A", "Shift+Tab", "Space".
    pub(crate) fn shown(&self) -> String {
        let key = match self.key.as_str() {
            " " => "Space".to_string(),
            k if !self.modifiers.is_empty() && k.chars().count() == 1 => k.to_uppercase(),
            k => k.to_string(),
        };
        let mut parts: Vec<&str> = self.modifiers.iter().map(String::as_str).collect();
        parts.push(&key);
        parts.join("+")
    }

    fn has(&self, m: &str) -> bool {
        self.modifiers.iter().any(|x| x == m)
    }
}

/// Named keys by their lowercase spellings, with the DOM key value each means.
const NAMED: &[(&[&str], &str)] = &[
    (&["enter", "return"], "Enter"),
    (&["tab"], "Tab"),
    (&["escape", "esc"], "Escape"),
    (&["backspace"], "Backspace"),
    (&["delete", "del"], "Delete"),
    (&["space", "spacebar"], " "),
    (&["arrowup", "up"], "ArrowUp"),
    (&["arrowdown", "down"], "ArrowDown"),
    (&["arrowleft", "left"], "ArrowLeft"),
    (&["arrowright", "right"], "ArrowRight"),
    (&["home"], "Home"),
    (&["end"], "End"),
    (&["pageup", "pgup"], "PageUp"),
    (&["pagedown", "pgdn"], "PageDown"),
    (&["insert", "ins"], "Insert"),
    (&["f1"], "F1"),
    (&["f2"], "F2"),
    (&["f3"], "F3"),
    (&["f4"], "F4"),
    (&["f5"], "F5"),
    (&["f6"], "F6"),
    (&["f7"], "F7"),
    (&["f8"], "F8"),
    (&["f9"], "F9"),
    (&["f10"], "F10"),
    (&["f11"], "F11"),
    (&["f12"], "F12"),
];

fn modifier(part: &str) -> Option<&'static str> {
    match part.to_ascii_lowercase().as_str() {
        "control" | "ctrl" => Some("Control"),
        "alt" | "option" => Some("Alt"),
        "meta" | "cmd" | "command" | "super" | "win" => Some("Meta"),
        "shift" => Some("Shift"),
        _ => None,
    }
}

/// Parses a key or chord, or says why it is refused (a message for the model).
pub(crate) fn parse(input: &str) -> Result<Chord, String> {
    let raw = input.trim();
    let quoted = json!(one_line(input, 40)).to_string();
    let bad = || {
        format!(
            "refused (bad_key): {quoted} is not a key. page_press_key presses one key or chord, like \"Enter\", \"Escape\", \"Tab\", \"ArrowDown\", \"Control+A\" or \"Shift+Tab\"; to type text use page_fill"
        )
    };
    if raw.is_empty() {
        return Err("refused (bad_key): the key is empty; name one, like \"Enter\" or \"Control+A\"".into());
    }
    let (mods, key) = if raw == "+" {
        ("", "+")
    } else if let Some(rest) = raw.strip_suffix("++") {
        (rest, "+")
    } else {
        match raw.rfind('+') {
            Some(i) => (&raw[..i], &raw[i + 1..]),
            None => ("", raw),
        }
    };
    let mut held = Vec::new();
    if !mods.is_empty() {
        for part in mods.split('+') {
            let m = modifier(part.trim()).ok_or_else(bad)?;
            if !held.contains(&m) {
                held.push(m);
            }
        }
    }
    let key = key.trim();
    if modifier(key).is_some() {
        return Err(format!(
            "refused (bad_key): {quoted} is a modifier alone; name the key pressed with it, like \"Control+A\""
        ));
    }
    let lower = key.to_ascii_lowercase();
    let named = NAMED
        .iter()
        .find(|(names, _)| names.contains(&lower.as_str()))
        .map(|(_, k)| (*k).to_string());
    let key = match named {
        Some(k) => k,
        None => {
            let mut chars = key.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii_graphic() => {
                    if !c.is_ascii_alphabetic() {
                        c.to_string()
                    } else if held.contains(&"Shift") {
                        c.to_ascii_uppercase().to_string()
                    } else if held.iter().any(|m| *m != "Shift") {
                        c.to_ascii_lowercase().to_string()
                    } else {
                        c.to_string()
                    }
                }
                _ => return Err(bad()),
            }
        }
    };
    let modifiers = MODIFIERS
        .iter()
        .filter(|m| held.contains(m))
        .map(|m| m.to_string())
        .collect();
    let chord = Chord { key, modifiers };
    refuse_careless(&chord)?;
    Ok(chord)
}

/// Chords a careful person would not press for someone: shortcuts that act on the browser
/// rather than the page, and the chords that usually send what was typed.
fn refuse_careless(c: &Chord) -> Result<(), String> {
    let shown = c.shown();
    let ctrl = c.has("Control") || c.has("Meta");
    let k = c.key.to_ascii_lowercase();
    if c.key == "Enter" && ctrl {
        return Err(format!(
            "refused (commit_key): {shown} usually sends or submits what was typed; sending is left to the person"
        ));
    }
    let browser = (ctrl && ["w", "t", "n", "q", "r", "l", "tab", "pageup", "pagedown"].contains(&k.as_str()))
        || (c.has("Alt") && ["arrowleft", "arrowright", "f4", "home"].contains(&k.as_str()))
        || ["F5", "F6", "F11", "F12"].contains(&c.key.as_str());
    if browser {
        return Err(format!(
            "refused (browser_key): {shown} is a browser shortcut (it acts on tabs, windows, history or the address bar, not the page); use the tab tools, page_navigate, page_back or page_forward"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used, clippy::panic)]
    use super::*;

    fn ok(s: &str) -> (String, Vec<String>, String) {
        let c = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let shown = c.shown();
        (c.key, c.modifiers, shown)
    }

    #[test]
    fn keys_and_chords_parse_to_dom_keys_and_modifiers() {
        assert_eq!(ok("Enter"), ("Enter".into(), vec![], "Enter".into()));
        assert_eq!(ok(" return "), ("Enter".into(), vec![], "Enter".into()));
        assert_eq!(ok("ctrl+a"), ("a".into(), vec!["Control".into()], "Control+A".into()));
        assert_eq!(
            ok("Control+A"),
            ("a".into(), vec!["Control".into()], "Control+A".into())
        );
        assert_eq!(
            ok("shift+tab"),
            ("Tab".into(), vec!["Shift".into()], "Shift+Tab".into())
        );
        assert_eq!(ok("Shift+a").0, "A");
        assert_eq!(ok("A").0, "A");
        assert_eq!(ok("Space"), (" ".into(), vec![], "Space".into()));
        assert_eq!(ok("Control++").0, "+");
        assert_eq!(ok("Esc").0, "Escape");
        assert_eq!(
            ok("Shift+Control+ArrowDown").1,
            vec!["Control".to_string(), "Shift".to_string()]
        );
    }

    #[test]
    fn text_modifiers_alone_and_browser_shortcuts_are_refused() {
        for (input, code) in [
            ("hello", "bad_key"),
            ("", "bad_key"),
            ("Hyper+a", "bad_key"),
            ("Shift", "bad_key"),
            ("Control+Enter", "commit_key"),
            ("Meta+Enter", "commit_key"),
            ("Control+W", "browser_key"),
            ("Control+Tab", "browser_key"),
            ("Alt+ArrowLeft", "browser_key"),
            ("F5", "browser_key"),
        ] {
            let e = parse(input).expect_err(input);
            assert!(e.starts_with(&format!("refused ({code})")), "{input}: {e}");
        }
    }
}
