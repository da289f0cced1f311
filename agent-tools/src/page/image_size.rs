//! The pixel size of an encoded image, read from its header (PNG and JPEG), to hold a host to
//! the size bound without decoding the image.

/// Width and height of a PNG or JPEG image, `None` for anything else or a broken header.
pub(crate) fn image_size(data: &[u8]) -> Option<(u32, u32)> {
    png_size(data).or_else(|| jpeg_size(data))
}

/// The media type of a PNG or JPEG image by its signature.
pub(crate) fn media_type(data: &[u8]) -> Option<&'static str> {
    if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if data.starts_with(&[0xFF, 0xD8]) {
        Some("image/jpeg")
    } else {
        None
    }
}

fn png_size(data: &[u8]) -> Option<(u32, u32)> {
    // The signature, then the IHDR chunk: length, "IHDR", width, height.
    if !data.starts_with(b"\x89PNG\r\n\x1a\n") || data.get(12..16)? != b"IHDR" {
        return None;
    }
    let be = |at: usize| -> Option<u32> { Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?)) };
    Some((be(16)?, be(20)?))
}

fn jpeg_size(data: &[u8]) -> Option<(u32, u32)> {
    if !data.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut at = 2usize;
    // Walk the segments up to the first start-of-frame marker, which holds the size.
    while at + 4 <= data.len() {
        if data[at] != 0xFF {
            return None;
        }
        let marker = data[at + 1];
        if marker == 0xFF {
            at += 1;
            continue;
        }
        let len = usize::from(u16::from_be_bytes([data[at + 2], data[at + 3]]));
        let is_frame = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
        if is_frame {
            let seg = data.get(at + 4..at + 9)?;
            let height = u32::from(u16::from_be_bytes([seg[1], seg[2]]));
            let width = u32::from(u16::from_be_bytes([seg[3], seg[4]]));
            return Some((width, height));
        }
        if len < 2 {
            return None;
        }
        at += 2 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_png_and_jpeg_headers_and_refuses_the_rest() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((640, 480)));
        assert_eq!(media_type(&png), Some("image/png"));
        // SOI, an APP0 segment of 16 bytes, then SOF0 with height 300 and width 400.
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
        jpeg.extend_from_slice(&[0; 14]);
        jpeg.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0x2C, 0x01, 0x90]);
        assert_eq!(image_size(&jpeg), Some((400, 300)));
        assert_eq!(media_type(&jpeg), Some("image/jpeg"));
        for broken in [&b""[..], b"GIF89a", &png[..20], &[0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01]] {
            assert_eq!(image_size(broken), None);
        }
    }
}
