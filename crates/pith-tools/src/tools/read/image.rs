//! Images: detection by magic bytes, BMP → PNG, resizing to the inline limits (§4.2, §4.4).

use std::io::Cursor;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::codecs::jpeg::JpegEncoder;
use image::error::ImageError;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};

use crate::messages::read as messages;

/// Largest width or height sent to the model.
const MAX_DIMENSION: u32 = 2000;
/// Largest base64 payload sent to the model (4.5 MiB).
const MAX_BASE64_BYTES: usize = 4_718_592;
/// Largest image decoded, in pixels (32 megapixels, e.g. 8192x4096). Checked from the
/// header before any pixel buffer exists: a few bytes can claim 65535x65535.
const MAX_DECODED_PIXELS: u64 = 32 * 1024 * 1024;
/// Largest width or height decoded.
const MAX_DECODED_SIDE: u32 = 32_768;
/// Most memory a decoder may allocate, the output buffer included (`image::Limits::max_alloc`):
/// 32 megapixels of 8-bit RGBA; deeper images must be smaller.
const MAX_DECODE_ALLOC: u64 = 128 * 1024 * 1024;
/// JPEG qualities tried, best first, after PNG.
const JPEG_QUALITIES: [u8; 4] = [80, 70, 55, 40];

/// An image format the read tool attaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ImageKind {
    Jpeg,
    Png,
    Gif,
    Webp,
    Bmp,
}

impl ImageKind {
    pub(super) fn mime(self) -> &'static str {
        match self {
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Png => "image/png",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
            ImageKind::Bmp => "image/bmp",
        }
    }

    /// The format's name in messages.
    fn name(self) -> &'static str {
        match self {
            ImageKind::Jpeg => "JPEG",
            ImageKind::Png => "PNG",
            ImageKind::Gif => "GIF",
            ImageKind::Webp => "WebP",
            ImageKind::Bmp => "BMP",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            ImageKind::Jpeg => ImageFormat::Jpeg,
            ImageKind::Png => ImageFormat::Png,
            ImageKind::Gif => ImageFormat::Gif,
            ImageKind::Webp => ImageFormat::WebP,
            ImageKind::Bmp => ImageFormat::Bmp,
        }
    }
}

fn u16_le(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_le(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u32_be(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// Detects a supported image from the first bytes of a file (extension ignored).
/// APNG, JPEG-LS and implausible BMP headers are not images.
pub(super) fn sniff(header: &[u8]) -> Option<ImageKind> {
    if header.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return (header.get(3) != Some(&0xF7)).then_some(ImageKind::Jpeg);
    }
    if header.starts_with(b"\x89PNG\r\n\x1a\n") {
        let ihdr = u32_be(header, 8) == Some(13) && header.get(12..16) == Some(b"IHDR");
        return (ihdr && !is_apng(header)).then_some(ImageKind::Png);
    }
    if header.starts_with(b"GIF") {
        return Some(ImageKind::Gif);
    }
    if header.starts_with(b"RIFF") && header.get(8..12) == Some(b"WEBP") {
        return Some(ImageKind::Webp);
    }
    if header.starts_with(b"BM") && plausible_bmp(header) {
        return Some(ImageKind::Bmp);
    }
    None
}

/// Whether an `acTL` chunk comes before the first `IDAT` (an animated PNG).
fn is_apng(header: &[u8]) -> bool {
    let mut at = 8;
    while let (Some(length), Some(kind)) = (u32_be(header, at), header.get(at + 4..at + 8)) {
        match kind {
            b"acTL" => return true,
            b"IDAT" => return false,
            _ => at = at.saturating_add(12).saturating_add(length as usize),
        }
    }
    false
}

fn plausible_bmp(header: &[u8]) -> bool {
    let check = || -> Option<bool> {
        if header.len() < 26 {
            return Some(false);
        }
        let declared = u32_le(header, 2)?;
        let pixels = u32_le(header, 10)?;
        let dib = u32_le(header, 14)?;
        if declared != 0 && declared < 26 {
            return Some(false);
        }
        if pixels < 14 + dib || (declared != 0 && pixels >= declared) {
            return Some(false);
        }
        let (planes, bpp) = match dib {
            12 => (u16_le(header, 22)?, u16_le(header, 24)?),
            40..=124 => (u16_le(header, 26)?, u16_le(header, 28)?),
            _ => return Some(false),
        };
        Some(planes == 1 && matches!(bpp, 1 | 4 | 8 | 16 | 24 | 32))
    };
    check().unwrap_or(false)
}

/// What the model gets for an image: a text line and, when it fits, the image.
#[derive(Debug)]
pub(super) struct Attachment {
    pub(super) text: String,
    /// Base64 data and MIME type.
    pub(super) image: Option<(String, &'static str)>,
    /// Final dimensions, when decoded.
    pub(super) size: Option<(u32, u32)>,
}

/// Converts (BMP → PNG) and, when `auto_resize`, shrinks the image to the limits.
pub(super) fn attach(bytes: &[u8], kind: ImageKind, auto_resize: bool) -> Attachment {
    let original_fits = bytes.len().div_ceil(3) * 4 < MAX_BASE64_BYTES;
    if kind != ImageKind::Bmp && !auto_resize {
        return attachment(kind.mime(), Vec::new(), STANDARD.encode(bytes), None);
    }
    let omitted = |message: &str| Attachment {
        text: format!("{}\n{message}", messages::image_header(kind.mime())),
        image: None,
        size: None,
    };
    let decoded = match decode(bytes, kind) {
        Ok(decoded) => decoded,
        Err(reason) => return omitted(&messages::image_omitted(&reason)),
    };
    let (width, height) = (decoded.width(), decoded.height());
    let mut hints = Vec::new();
    if kind == ImageKind::Bmp {
        hints.push(messages::IMAGE_CONVERTED_FROM_BMP.to_owned());
    } else if width <= MAX_DIMENSION && height <= MAX_DIMENSION && original_fits {
        return attachment(
            kind.mime(),
            hints,
            STANDARD.encode(bytes),
            Some((width, height)),
        );
    }
    if !auto_resize {
        return match encode_png(&decoded) {
            Some(png) => attachment(
                "image/png",
                hints,
                STANDARD.encode(png),
                Some((width, height)),
            ),
            None => omitted(messages::IMAGE_NOT_CONVERTIBLE),
        };
    }
    let Some((data, mime, shown)) = shrink(&decoded) else {
        return omitted(messages::IMAGE_NOT_SHRINKABLE);
    };
    if shown != (width, height) {
        let scale = f64::from(width) / f64::from(shown.0);
        hints.push(messages::image_resized(width, height, shown, scale));
    }
    attachment(mime, hints, data, Some(shown))
}

fn attachment(
    mime: &'static str,
    hints: Vec<String>,
    data: String,
    size: Option<(u32, u32)>,
) -> Attachment {
    let mut text = messages::image_header(mime);
    for hint in hints {
        text.push('\n');
        text.push_str(&hint);
    }
    Attachment {
        text,
        image: Some((data, mime)),
        size,
    }
}

/// Decodes and applies the EXIF orientation, within [`MAX_DECODED_PIXELS`] and
/// [`MAX_DECODE_ALLOC`]. The error is one sentence for the model.
fn decode(bytes: &[u8], kind: ImageKind) -> Result<DynamicImage, String> {
    let name = kind.name();
    let malformed = |error: ImageError| -> String {
        match error {
            ImageError::Limits(_) => too_much_memory(name),
            error => messages::image_invalid(name, &one_line(&error.to_string())),
        }
    };
    // The decoder reads only the header here; no pixel buffer exists yet.
    let mut decoder = ImageReader::with_format(Cursor::new(bytes), kind.format())
        .into_decoder()
        .map_err(malformed)?;
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_DECODED_PIXELS || width > MAX_DECODED_SIDE || height > MAX_DECODED_SIDE {
        return Err(messages::image_too_many_pixels(
            name,
            width,
            height,
            MAX_DECODED_PIXELS / (1024 * 1024),
            MAX_DECODED_SIDE,
        ));
    }
    if decoder.total_bytes() > MAX_DECODE_ALLOC {
        return Err(too_much_memory(name));
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODED_SIDE);
    limits.max_image_height = Some(MAX_DECODED_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    decoder.set_limits(limits).map_err(malformed)?;
    let orientation = decoder.orientation().ok();
    let mut image = DynamicImage::from_decoder(decoder).map_err(malformed)?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Ok(image)
}

fn too_much_memory(name: &str) -> String {
    messages::image_too_much_memory(name, MAX_DECODE_ALLOC / (1024 * 1024))
}

/// A decoder's message on one line, without a trailing period.
fn one_line(message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    line.trim_end_matches('.').to_owned()
}

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .ok()?;
    Some(out)
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&rgb)
        .ok()?;
    Some(out)
}

/// Fits `(width, height)` into the maximum dimension, keeping the aspect ratio.
fn fit(width: u32, height: u32) -> (u32, u32) {
    let scale = |value: u32, by: f64| ((f64::from(value) * by).round() as u32).max(1);
    let (mut w, mut h) = (width, height);
    if w > MAX_DIMENSION {
        h = scale(h, f64::from(MAX_DIMENSION) / f64::from(w));
        w = MAX_DIMENSION;
    }
    if h > MAX_DIMENSION {
        w = scale(w, f64::from(MAX_DIMENSION) / f64::from(h));
        h = MAX_DIMENSION;
    }
    (w, h)
}

/// PNG, then JPEG at falling qualities, at falling sizes, until the base64 fits.
fn shrink(image: &DynamicImage) -> Option<(String, &'static str, (u32, u32))> {
    let (mut width, mut height) = fit(image.width(), image.height());
    loop {
        let resized;
        let current = if (width, height) == (image.width(), image.height()) {
            image
        } else {
            resized = image.resize_exact(width, height, FilterType::Lanczos3);
            &resized
        };
        let candidates = std::iter::once((encode_png(current), "image/png")).chain(
            JPEG_QUALITIES
                .iter()
                .map(|&quality| (encode_jpeg(current, quality), "image/jpeg")),
        );
        for (bytes, mime) in candidates {
            if let Some(bytes) = bytes
                && bytes.len().div_ceil(3) * 4 < MAX_BASE64_BYTES
            {
                return Some((STANDARD.encode(bytes), mime, (width, height)));
            }
        }
        let next = ((width * 3 / 4).max(1), (height * 3 / 4).max(1));
        if next == (width, height) {
            return None;
        }
        (width, height) = next;
    }
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
