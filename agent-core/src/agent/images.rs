//! What the model is sent of images: none to a model that takes none, and only the newest few
//! to one that does.

use crate::message::{ContentPart, Message};
use crate::tool::ToolSet;

/// Replaces an image for a model that takes none.
pub(crate) const NO_VISION_NOTE: &str = "[image omitted: this model is not sent images]";

/// Removes the tools whose results are images (see [`crate::ToolSpec::returns_images`]).
pub(crate) fn drop_image_tools(tools: &mut ToolSet) {
    let names: Vec<String> = tools
        .iter()
        .filter(|t| t.spec().returns_images)
        .map(|t| t.spec().name.clone())
        .collect();
    for name in names {
        tools.remove(&name);
    }
}

/// Keeps the newest `keep` images of `messages` and replaces every older one with a note.
/// Cheap when there are no images: one pass over the parts, nothing allocated. Returns the
/// index of the first message it edited, if any.
pub(crate) fn keep_newest_images(messages: &mut [Message], keep: usize) -> Option<usize> {
    let mut seen = 0usize;
    let mut first_edited = None;
    for (index, message) in messages.iter_mut().enumerate().rev() {
        for part in message.content.iter_mut().rev() {
            if !matches!(part, ContentPart::Image { .. }) {
                continue;
            }
            seen += 1;
            if seen > keep {
                *part = ContentPart::text(if keep == 0 {
                    NO_VISION_NOTE.to_owned()
                } else {
                    format!("[image omitted: only the newest {keep} images are sent]")
                });
                first_edited = Some(index);
            }
        }
    }
    first_edited
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::message::ImageSource;

    fn image(tag: &str) -> ContentPart {
        ContentPart::Image {
            media_type: "image/png".into(),
            source: ImageSource::Base64 { data: tag.into() },
        }
    }

    fn images_left(messages: &[Message]) -> Vec<String> {
        let mut out = Vec::new();
        for m in messages {
            for p in &m.content {
                if let ContentPart::Image {
                    source: ImageSource::Base64 { data },
                    ..
                } = p
                {
                    out.push(data.clone());
                }
            }
        }
        out
    }

    #[test]
    fn keeps_the_newest_images_in_order_and_notes_the_rest() {
        let mut messages = vec![
            Message::user_parts(vec![ContentPart::text("look"), image("a")]),
            Message::user_parts(vec![image("b"), image("c")]),
            Message::user("no image"),
            Message::user_parts(vec![image("d")]),
        ];
        assert_eq!(keep_newest_images(&mut messages, 2), Some(0), "a and b go");
        assert_eq!(images_left(&messages), ["c", "d"]);
        assert_eq!(
            messages[0].text(),
            "look[image omitted: only the newest 2 images are sent]"
        );
        // Idempotent: a kept view goes through it again on the next call, and is not edited.
        assert_eq!(keep_newest_images(&mut messages, 2), None);
        assert_eq!(images_left(&messages), ["c", "d"]);
        // A newer image pushes out c: the message holding it is the first one edited.
        messages.push(Message::user_parts(vec![image("e")]));
        assert_eq!(keep_newest_images(&mut messages, 2), Some(1));
        assert_eq!(images_left(&messages), ["d", "e"]);
    }

    #[test]
    fn no_image_reaches_a_model_without_vision() {
        let mut messages = vec![Message::user_parts(vec![image("a"), image("b")])];
        keep_newest_images(&mut messages, 0);
        assert!(images_left(&messages).is_empty());
        assert!(messages[0].text().contains(NO_VISION_NOTE));
    }
}
