//! Screenshots in the CDP host: `Page.captureScreenshot` with a clip in document coordinates,
//! scaled by Chromium itself to the bound the tools ask for (no image decoding here).

use base64::Engine;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, GetLayoutMetricsParams, Viewport,
};
use chromiumoxide::error::CdpError;

use crate::host::{ScreenshotArea, ScreenshotRequest};

/// The tallest area a full-page capture takes, in CSS pixels: GPU textures stop at 16 384
/// device pixels, and a longer page scaled into the bound would be unreadable anyway.
pub(crate) const MAX_CAPTURE_HEIGHT: f64 = 16_384.0;

/// Captures `request.area` of `page` as PNG bytes within the request's bounds.
pub(crate) async fn capture(page: &Page, request: &ScreenshotRequest) -> Result<Vec<u8>, CdpError> {
    let metrics = page.execute(GetLayoutMetricsParams::default()).await?.result;
    let view = &metrics.css_layout_viewport;
    let (page_x, page_y) = (view.page_x as f64, view.page_y as f64);
    let (x, y, width, height) = match request.area {
        ScreenshotArea::Viewport => (page_x, page_y, view.client_width as f64, view.client_height as f64),
        ScreenshotArea::FullPage => {
            let content = &metrics.css_content_size;
            (0.0, 0.0, content.width, content.height.min(MAX_CAPTURE_HEIGHT))
        }
        ScreenshotArea::Region { x, y, width, height } => (page_x + x, page_y + y, width, height),
    };
    let (width, height) = (width.max(1.0), height.max(1.0));
    let ratio: f64 = page
        .evaluate_expression("window.devicePixelRatio")
        .await?
        .into_value()
        .unwrap_or(1.0);
    let ratio = if ratio.is_finite() && ratio > 0.0 { ratio } else { 1.0 };
    let scale = fit_scale(width * ratio, height * ratio, request.max_width, request.max_height);
    let beyond = !matches!(request.area, ScreenshotArea::Viewport);
    let params = CaptureScreenshotParams {
        format: Some(CaptureScreenshotFormat::Png),
        quality: None,
        clip: Some(Viewport {
            x: x.max(0.0),
            y: y.max(0.0),
            width,
            height,
            scale,
        }),
        from_surface: Some(true),
        capture_beyond_viewport: Some(beyond),
        optimize_for_speed: None,
    };
    let shot = page.execute(params).await?.result;
    let encoded: &str = shot.data.as_ref();
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| CdpError::msg(format!("the screenshot was not base64: {e}")))
}

/// The clip scale that fits `width` x `height` device pixels into the bound: never above 1,
/// and a hair under the exact ratio so that rounding cannot exceed the bound by a pixel.
pub(crate) fn fit_scale(width: f64, height: f64, max_width: u32, max_height: u32) -> f64 {
    let fit = (f64::from(max_width.max(1)) / width).min(f64::from(max_height.max(1)) / height);
    if fit >= 1.0 { 1.0 } else { fit * (1.0 - 1e-6) }
}

#[cfg(test)]
mod tests {
    use super::fit_scale;

    #[test]
    fn fits_within_the_bound_and_never_enlarges() {
        assert_eq!(fit_scale(800.0, 600.0, 1280, 1280), 1.0);
        let s = fit_scale(2560.0, 1600.0, 1280, 1280);
        assert!((2560.0 * s).round() <= 1280.0 && (2560.0 * s).round() >= 1279.0);
        let s = fit_scale(1280.0, 20_000.0, 1280, 1280);
        assert!((20_000.0 * s).round() <= 1280.0);
    }
}
