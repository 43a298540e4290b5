use image::{Rgb, RgbImage};

use super::*;

fn encoded(width: u32, height: u32, format: ImageFormat) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 256) as u8, (y % 256) as u8, 7])
    });
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), format)
        .unwrap();
    out
}

#[test]
fn sniffs_supported_formats_by_magic_bytes() {
    assert_eq!(
        sniff(&encoded(3, 2, ImageFormat::Png)),
        Some(ImageKind::Png)
    );
    assert_eq!(
        sniff(&encoded(3, 2, ImageFormat::Jpeg)),
        Some(ImageKind::Jpeg)
    );
    assert_eq!(
        sniff(&encoded(3, 2, ImageFormat::Gif)),
        Some(ImageKind::Gif)
    );
    assert_eq!(
        sniff(&encoded(3, 2, ImageFormat::Bmp)),
        Some(ImageKind::Bmp)
    );
    assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(ImageKind::Webp));
    assert_eq!(sniff(b"\xFF\xD8\xFF\xF7 jpeg-ls"), None);
    assert_eq!(sniff(b"BM not really a bitmap header at all"), None);
    assert_eq!(sniff(b"hello"), None);
    assert_eq!(sniff(b""), None);
}

#[test]
fn an_animated_png_is_not_an_image() {
    let mut png = encoded(2, 2, ImageFormat::Png);
    // Insert an acTL chunk right after IHDR (8 + 25 bytes).
    let actl = [
        0, 0, 0, 8, b'a', b'c', b'T', b'L', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    png.splice(33..33, actl);
    assert_eq!(sniff(&png), None);
}

#[test]
fn a_small_image_passes_through_unchanged() {
    let png = encoded(3, 2, ImageFormat::Png);
    let attachment = attach(&png, ImageKind::Png, true);
    assert_eq!(attachment.text, "Read image file [image/png]");
    let (data, mime) = attachment.image.unwrap();
    assert_eq!(mime, "image/png");
    assert_eq!(STANDARD.decode(data).unwrap(), png);
}

#[test]
fn a_bmp_becomes_a_png() {
    let bmp = encoded(4, 4, ImageFormat::Bmp);
    let attachment = attach(&bmp, ImageKind::Bmp, true);
    assert_eq!(
        attachment.text,
        "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    );
    let (data, mime) = attachment.image.unwrap();
    assert_eq!(mime, "image/png");
    let decoded = image::load_from_memory(&STANDARD.decode(data).unwrap()).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (4, 4));
}

#[test]
fn a_large_image_is_resized_to_fit_with_a_coordinate_hint() {
    let png = encoded(3000, 300, ImageFormat::Png);
    let attachment = attach(&png, ImageKind::Png, true);
    assert_eq!(attachment.size, Some((2000, 200)));
    assert!(
        attachment.text.ends_with(
            "[Image: original 3000x300, displayed at 2000x200. Multiply coordinates by 1.50 to map to original image.]"
        ),
        "{}",
        attachment.text
    );
    let (data, _) = attachment.image.unwrap();
    assert!(data.len() < MAX_BASE64_BYTES);
}

#[test]
fn an_undecodable_image_is_omitted_with_a_reason() {
    let attachment = attach(
        b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDRbroken",
        ImageKind::Png,
        true,
    );
    assert!(attachment.image.is_none());
    assert!(
        attachment.text.contains("[Image omitted:"),
        "{}",
        attachment.text
    );
}

#[test]
fn fits_both_dimensions() {
    assert_eq!(fit(100, 100), (100, 100));
    assert_eq!(fit(4000, 3000), (2000, 1500));
    assert_eq!(fit(1000, 5000), (400, 2000));
}

#[test]
fn jpeg_gif_and_webp_pass_through_with_their_own_type() {
    for (format, kind, mime) in [
        (ImageFormat::Jpeg, ImageKind::Jpeg, "image/jpeg"),
        (ImageFormat::Gif, ImageKind::Gif, "image/gif"),
        (ImageFormat::WebP, ImageKind::Webp, "image/webp"),
    ] {
        let bytes = encoded(5, 4, format);
        assert_eq!(sniff(&bytes), Some(kind), "{mime}");
        let attachment = attach(&bytes, kind, true);
        assert_eq!(attachment.text, format!("Read image file [{mime}]"));
        assert_eq!(attachment.image.unwrap(), (STANDARD.encode(&bytes), mime));
        assert_eq!(attachment.size, Some((5, 4)));
    }
}

/// A PNG of `width`x`height` 16-bit RGBA whose pixel data is a few bytes of zlib.
fn png_bomb(width: u32, height: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc32(kind, data).to_be_bytes());
    }
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[16, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &ihdr);
    // zlib of ten zero bytes.
    chunk(
        &mut png,
        b"IDAT",
        &[120, 156, 99, 96, 128, 0, 0, 0, 10, 0, 1],
    );
    chunk(&mut png, b"IEND", &[]);
    png
}

fn crc32(kind: &[u8], data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in kind.iter().chain(data) {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A GIF whose screen and single frame claim 65535x65535 pixels.
const GIF_BOMB: &[u8] = b"GIF89a\xff\xff\xff\xff\x00\x00\x00\x2c\x00\x00\x00\x00\xff\xff\xff\xff\x80\x00\x00\x00\xff\xff\xff\x02\x02\x44\x01\x00\x3b";

#[test]
fn a_png_claiming_65535_squared_pixels_is_refused_from_its_header() {
    let png = png_bomb(65535, 65535);
    assert_eq!(sniff(&png), Some(ImageKind::Png));
    let attachment = attach(&png, ImageKind::Png, true);
    assert!(attachment.image.is_none());
    assert_eq!(
        attachment.text,
        "Read image file [image/png]\n[Image omitted: the PNG header says 65535x65535 pixels, \
         more than the 32 megapixels (at most 32768 a side) read decodes. Shrink it with bash to view it.]"
    );
}

#[test]
fn a_gif_claiming_65535_squared_pixels_is_refused_from_its_header() {
    assert_eq!(GIF_BOMB.len(), 35);
    let attachment = attach(GIF_BOMB, ImageKind::Gif, true);
    assert!(attachment.image.is_none());
    assert!(
        attachment
            .text
            .contains("the GIF header says 65535x65535 pixels"),
        "{}",
        attachment.text
    );
}

#[test]
fn an_image_within_the_pixel_limit_but_over_the_memory_limit_is_refused() {
    // 5000x5000 at 16-bit RGBA is 200 MB of pixels: within 32 megapixels, and
    // still decoded only if the buffer fits the allocation limit.
    let png = png_bomb(5000, 5000);
    let attachment = attach(&png, ImageKind::Png, true);
    assert!(attachment.image.is_none());
    assert!(
        attachment.text.contains("more than 128 MiB of memory"),
        "{}",
        attachment.text
    );
}

#[test]
fn a_truncated_image_is_a_one_line_reason_naming_the_format() {
    let png = encoded(40, 40, ImageFormat::Png);
    let attachment = attach(&png[..png.len() - 30], ImageKind::Png, true);
    assert!(attachment.image.is_none());
    let reason = attachment.text.lines().nth(1).unwrap();
    assert!(
        reason.starts_with("[Image omitted: the file is not a valid PNG image ("),
        "{reason}"
    );
    assert_eq!(attachment.text.lines().count(), 2);
}
