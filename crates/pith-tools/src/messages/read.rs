//! `read` (`tools/read.rs`; the text window's notices are in `tools/read/text.rs`).

use std::fmt::Display;

/// The file does not exist (similar names are added after).
pub(crate) fn not_found(path: impl Display) -> String {
    format!("File not found: {path}")
}

/// The path is a directory.
pub(crate) fn directory(path: impl Display) -> String {
    format!("{path} is a directory; read only reads files. Use ls to list it.")
}

/// The path is a FIFO, socket or device.
pub(crate) fn special(path: impl Display, kind: &str) -> String {
    format!("{path} is not a regular file ({kind}); read only reads files.")
}

/// A file that is not text.
pub(crate) fn binary(raw_path: &str, size: &str, quoted: &str) -> String {
    format!(
        "{raw_path} is a binary file ({size}); read cannot show it. Inspect it with bash, e.g. xxd {quoted} | head."
    )
}

/// An image too large to attach.
pub(crate) fn image_too_large(mime: &str, size: &str, max: &str) -> String {
    format!(
        "Read image file [{mime}]\n[Image omitted: the file is {size}, more than the {max} an image may have to be attached.]"
    )
}

/// The image decoder's task failed.
pub(crate) fn image_failed(path: impl Display) -> String {
    format!("Could not process the image {path}")
}

/// The text window's first line alone is over the byte limit (`quoted`: the
/// path quoted for a shell).
pub(crate) fn line_too_long(
    line: u64,
    size: &str,
    limit: &str,
    quoted: &str,
    max_bytes: usize,
) -> String {
    format!(
        "[Line {line} is {size}, exceeds {limit} limit. Use bash: sed -n '{line}p' {quoted} | head -c {max_bytes}]"
    )
}

/// The part of a window's notice naming the byte limit that cut it.
pub(crate) fn byte_limit(limit: &str) -> String {
    format!(" ({limit} limit)")
}

/// `text`, then the notice of a window cut by a limit (`limit_note` from
/// [`byte_limit`] or empty; `at_least` when the file was not counted to its end).
pub(crate) fn showing_lines(
    text: &str,
    first: u64,
    last: u64,
    at_least: bool,
    total: u64,
    limit_note: &str,
) -> String {
    format!(
        "{text}\n\n[Showing lines {first}-{last} of {}{total}{limit_note}. Use offset={} to continue.]",
        if at_least { "at least " } else { "" },
        last + 1
    )
}

/// `text`, then the notice of a window that ended before the file did, which
/// was not counted to its end.
pub(crate) fn at_least_more_lines(text: &str, more: u64, next: u64) -> String {
    format!("{text}\n\n[At least {more} more lines in file. Use offset={next} to continue.]")
}

/// `text`, then the notice of a window that ended before the file did.
pub(crate) fn more_lines(text: &str, more: u64, next: u64) -> String {
    format!("{text}\n\n[{more} more lines in file. Use offset={next} to continue.]")
}

/// The result for an empty file (an empty string would look like a failed call).
pub(crate) const EMPTY_FILE: &str = "(empty file)";

/// The notice after the text of a file that is not valid UTF-8.
pub(crate) const NOT_UTF8: &str = "[This file is not valid UTF-8: invalid bytes are shown as \u{FFFD}. \
     edit cannot change it; inspect the bytes with bash (xxd).]";

/// An offset past the end of the file.
pub(crate) fn beyond_end(offset: u64, total: u64) -> String {
    format!("Offset {offset} is beyond end of file ({total} lines total)")
}

/// The note after a text file that is not plain UTF-8.
pub(crate) fn encoding(describe: &str) -> String {
    format!("[file is {describe}; edits keep it]")
}

/// The first line of an image's result.
pub(crate) fn image_header(mime: &str) -> String {
    format!("Read image file [{mime}]")
}

/// An image that is not attached (`reason`: one sentence from the decoder
/// checks, without its stop).
pub(crate) fn image_omitted(reason: &str) -> String {
    format!("[Image omitted: {reason}]")
}

/// A BMP was converted to attach it.
pub(crate) const IMAGE_CONVERTED_FROM_BMP: &str = "[Image converted from image/bmp to image/png.]";

/// No supported format could carry the image.
pub(crate) const IMAGE_NOT_CONVERTIBLE: &str =
    "[Image omitted: could not be converted to a supported inline image format.]";

/// The image could not be made small enough.
pub(crate) const IMAGE_NOT_SHRINKABLE: &str =
    "[Image omitted: could not be resized below the inline image size limit.]";

/// The image was shrunk to attach it.
pub(crate) fn image_resized(width: u32, height: u32, shown: (u32, u32), scale: f64) -> String {
    format!(
        "[Image: original {width}x{height}, displayed at {}x{}. Multiply coordinates by {scale:.2} to map to original image.]",
        shown.0, shown.1
    )
}

/// The image does not decode (`error`: the decoder's message on one line).
pub(crate) fn image_invalid(name: &str, error: &str) -> String {
    format!("the file is not a valid {name} image ({error}). Inspect it with bash (e.g. file).")
}

/// The image's header claims more pixels than read decodes.
pub(crate) fn image_too_many_pixels(
    name: &str,
    width: u32,
    height: u32,
    megapixels: u64,
    max_side: u32,
) -> String {
    format!(
        "the {name} header says {width}x{height} pixels, more than the {megapixels} megapixels (at most {max_side} a side) read decodes. Shrink it with bash to view it."
    )
}

/// Decoding the image would take too much memory.
pub(crate) fn image_too_much_memory(name: &str, mib: u64) -> String {
    format!(
        "decoding this {name} image would need more than {mib} MiB of memory. Shrink it with bash to view it."
    )
}
