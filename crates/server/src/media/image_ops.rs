//! Image operations on real files with the pure-Rust `image` crate: decode (format guessed from the
//! bytes, dimensions and memory checked from the header before anything is decoded), resize, crop,
//! rotate, grayscale, convert, encode. An operation keeps the input's format unless it is `convert`;
//! JPEG output drops the alpha channel.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};

use super::error::{MediaError, human_bytes};
use super::input::Loaded;
use super::{Binary, MAX_BINARY_BYTES, Output};

/// Widest or tallest image decoded, by the operations whose output does not follow the input's size
/// (resize, crop, OCR, QR decoding).
pub const MAX_INPUT_SIDE: u32 = 10_000;
/// Widest or tallest image an operation may produce (resize, a drawing canvas, a QR code); the
/// operations whose output has the input's size (rotate, grayscale, convert, drawing on an image)
/// take no larger input.
pub const MAX_OUTPUT_SIDE: u32 = 4096;
/// Memory a decoder may allocate.
const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;
/// Largest decoded image (its header says how large before decoding): half the decoder's budget,
/// so the decoded input and an operation's copy of it stay within 256 MiB together.
pub const MAX_DECODED_BYTES: u64 = MAX_DECODE_ALLOC / 2;

/// The formats images are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    Png,
    Jpeg,
    Gif,
    Bmp,
    Webp,
}

impl OutFormat {
    pub const NAMES: &[&str] = &["png", "jpeg", "gif", "bmp", "webp"];

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "png" => OutFormat::Png,
            "jpeg" | "jpg" => OutFormat::Jpeg,
            "gif" => OutFormat::Gif,
            "bmp" => OutFormat::Bmp,
            "webp" => OutFormat::Webp,
            _ => return None,
        })
    }

    /// The output format for an input decoded as `format` (PNG for formats we cannot write).
    pub fn of(format: ImageFormat) -> Self {
        match format {
            ImageFormat::Jpeg => OutFormat::Jpeg,
            ImageFormat::Gif => OutFormat::Gif,
            ImageFormat::Bmp => OutFormat::Bmp,
            ImageFormat::WebP => OutFormat::Webp,
            _ => OutFormat::Png,
        }
    }

    fn image_format(self) -> ImageFormat {
        match self {
            OutFormat::Png => ImageFormat::Png,
            OutFormat::Jpeg => ImageFormat::Jpeg,
            OutFormat::Gif => ImageFormat::Gif,
            OutFormat::Bmp => ImageFormat::Bmp,
            OutFormat::Webp => ImageFormat::WebP,
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn mime(self) -> &'static str {
        self.image_format().to_mime_type()
    }
}

/// A decoded image and the format it came in.
pub struct Picture {
    pub image: DynamicImage,
    pub format: ImageFormat,
}

/// An image reader over an input's bytes.
pub type Reader<'a> = ImageReader<Cursor<&'a [u8]>>;

/// A reader for an input image whose format is guessed from its bytes, with our memory limit (its
/// size is checked by [`decode`], so that reading a header works for any size).
fn reader(input: &Loaded) -> Result<(Reader<'_>, ImageFormat), MediaError> {
    let mut reader = ImageReader::new(Cursor::new(input.bytes.as_slice()))
        .with_guessed_format()
        .map_err(|e| MediaError::format(&input.name, e))?;
    let Some(format) = reader.format() else {
        return Err(MediaError::format(
            &input.name,
            "not an image in a format we read (PNG, JPEG, GIF, BMP, WebP)",
        ));
    };
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    Ok((reader, format))
}

/// An input image's decoder with only its header read: dimensions and colour type, nothing decoded.
pub fn header(input: &Loaded) -> Result<(impl ImageDecoder + '_, ImageFormat), MediaError> {
    let (reader, format) = reader(input)?;
    let decoder = reader
        .into_decoder()
        .map_err(|e| MediaError::format(&input.name, e))?;
    Ok((decoder, format))
}

/// Decodes an input image, guessing its format from its bytes; an image wider or taller than
/// `max_side`, or larger decoded than [`MAX_DECODED_BYTES`], is refused from its header, naming
/// its size and the limit.
pub fn decode(input: &Loaded, max_side: u32) -> Result<Picture, MediaError> {
    let (decoder, format) = header(input)?;
    let (w, h) = decoder.dimensions();
    let too_large = |size: String, limit: String| MediaError::TooLarge {
        what: input.name.clone(),
        size,
        limit,
    };
    if w > max_side || h > max_side {
        let hint = if max_side < MAX_INPUT_SIDE {
            format!(" for this tool (image_resize takes up to {MAX_INPUT_SIDE}: resize it first)")
        } else {
            String::new()
        };
        return Err(too_large(
            format!("{w}×{h} pixels"),
            format!("{max_side} pixels a side{hint}"),
        ));
    }
    let bytes = decoder.total_bytes();
    if bytes > MAX_DECODED_BYTES {
        let color = format!("{:?}", decoder.color_type()).to_ascii_lowercase();
        return Err(too_large(
            format!("{w}×{h} pixels ({color}: {} decoded)", human_bytes(bytes)),
            format!("{} decoded", human_bytes(MAX_DECODED_BYTES)),
        ));
    }
    let image =
        DynamicImage::from_decoder(decoder).map_err(|e| MediaError::format(&input.name, e))?;
    Ok(Picture { image, format })
}

/// Encodes an image as `format` and describes it: the tool's output.
pub fn encode(image: &DynamicImage, format: OutFormat) -> Result<Output, MediaError> {
    let flattened;
    let image = if format == OutFormat::Jpeg && image.color().has_alpha() {
        flattened = DynamicImage::ImageRgb8(image.to_rgb8());
        &flattened
    } else {
        image
    };
    let mut bytes = Cursor::new(Vec::new());
    image
        .write_to(&mut bytes, format.image_format())
        .map_err(|e| MediaError::format("the output image", e))?;
    let bytes = bytes.into_inner();
    if bytes.len() as u64 > MAX_BINARY_BYTES {
        return Err(MediaError::too_large(
            "the output image",
            bytes.len() as u64,
            MAX_BINARY_BYTES,
        ));
    }
    let summary = serde_json::json!({
        "format": format.name(),
        "width": image.width(),
        "height": image.height(),
        "bytes": bytes.len(),
    });
    Ok(Output {
        summary,
        binary: Some(Binary::image(format.mime(), bytes)),
    })
}

/// Checks an output dimension requested by argument `arg`.
pub fn side(arg: &str, value: u32) -> Result<u32, MediaError> {
    if value == 0 || value > MAX_OUTPUT_SIDE {
        return Err(MediaError::argument(
            arg,
            format!("must be 1 to {MAX_OUTPUT_SIDE} pixels, not {value}"),
        ));
    }
    Ok(value)
}

/// Resizes to `width` × `height`; with one of them, the other follows the aspect ratio.
pub fn resize(
    pic: &Picture,
    width: Option<u32>,
    height: Option<u32>,
) -> Result<DynamicImage, MediaError> {
    let (w0, h0) = (
        pic.image.width().max(1) as f64,
        pic.image.height().max(1) as f64,
    );
    let scaled = |n: f64| (n.round() as u32).max(1);
    let (w, h) = match (width, height) {
        (Some(w), Some(h)) => (side("width", w)?, side("height", h)?),
        (Some(w), None) => (side("width", w)?, scaled(h0 * w as f64 / w0)),
        (None, Some(h)) => (scaled(w0 * h as f64 / h0), side("height", h)?),
        (None, None) => return Err(MediaError::argument("width", "give width, height or both")),
    };
    side("width", w)?;
    side("height", h)?;
    // Shrinking averages pixel areas in 8-bit (memory: the output); the filter's pass in f32 would
    // take 16 bytes per pixel of an intermediate as wide as the input.
    if w <= pic.image.width() && h <= pic.image.height() {
        return Ok(pic.image.thumbnail_exact(w, h));
    }
    Ok(pic
        .image
        .resize_exact(w, h, image::imageops::FilterType::CatmullRom))
}

/// The rectangle at (`x`, `y`) of `width` × `height`, which must lie inside the image.
pub fn crop(
    pic: &Picture,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
) -> Result<DynamicImage, MediaError> {
    let (w, h) = (pic.image.width(), pic.image.height());
    if width == 0 || height == 0 {
        return Err(MediaError::argument(
            "width",
            "the crop must be at least 1 × 1 pixels",
        ));
    }
    side("width", width)?;
    side("height", height)?;
    if x.checked_add(width).is_none_or(|r| r > w) || y.checked_add(height).is_none_or(|b| b > h) {
        return Err(MediaError::argument(
            "x",
            format!(
                "the rectangle {width}×{height} at ({x}, {y}) does not fit inside the {w}×{h} image"
            ),
        ));
    }
    Ok(pic.image.crop_imm(x, y, width, height))
}

/// Rotates clockwise by a multiple of 90 degrees (negative turns anticlockwise).
pub fn rotate(pic: &Picture, degrees: i64) -> Result<DynamicImage, MediaError> {
    Ok(match degrees.rem_euclid(360) {
        0 => pic.image.clone(),
        90 => pic.image.rotate90(),
        180 => pic.image.rotate180(),
        270 => pic.image.rotate270(),
        _ => {
            return Err(MediaError::argument(
                "degrees",
                format!("must be a multiple of 90 (90, 180, 270, -90), not {degrees}"),
            ));
        }
    })
}

/// The image in shades of grey (8-bit luma, alpha kept).
pub fn grayscale(pic: &Picture) -> DynamicImage {
    if pic.image.color().has_alpha() {
        DynamicImage::ImageLumaA8(pic.image.to_luma_alpha8())
    } else {
        DynamicImage::ImageLuma8(pic.image.to_luma8())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgba, RgbaImage};

    fn picture(w: u32, h: u32) -> Picture {
        let mut img = RgbaImage::from_pixel(w, h, Rgba([255, 255, 255, 255]));
        img.put_pixel(0, 0, Rgba([255, 0, 0, 255]));
        Picture {
            image: DynamicImage::ImageRgba8(img),
            format: ImageFormat::Png,
        }
    }

    fn loaded(out: &Output) -> Loaded {
        Loaded {
            bytes: out.binary.as_ref().unwrap().bytes.clone(),
            name: "out".into(),
        }
    }

    #[test]
    fn resize_keeps_the_aspect_with_one_side() {
        let p = picture(200, 100);
        let r = resize(&p, Some(50), None).unwrap();
        assert_eq!((r.width(), r.height()), (50, 25));
        let r = resize(&p, None, Some(10)).unwrap();
        assert_eq!((r.width(), r.height()), (20, 10));
        assert!(
            resize(&p, Some(5000), None)
                .unwrap_err()
                .to_string()
                .contains("1 to 4096")
        );
    }

    #[test]
    fn rotation_turns_clockwise_and_crop_checks_bounds() {
        let p = picture(4, 2);
        let r = rotate(&p, 90).unwrap();
        assert_eq!((r.width(), r.height()), (2, 4));
        // The red top-left pixel is top-right after a clockwise quarter turn.
        assert_eq!(r.to_rgba8().get_pixel(1, 0), &Rgba([255, 0, 0, 255]));
        assert!(rotate(&p, 45).is_err());
        assert_eq!(crop(&p, 1, 0, 3, 2).unwrap().width(), 3);
        assert!(
            crop(&p, 2, 0, 3, 2)
                .unwrap_err()
                .to_string()
                .contains("does not fit")
        );
    }

    #[test]
    fn encoding_round_trips_through_every_format() {
        let p = picture(8, 6);
        for name in OutFormat::NAMES {
            let format = OutFormat::parse(name).unwrap();
            let out = encode(&p.image, format).unwrap();
            assert_eq!(out.binary.as_ref().unwrap().mime, format.mime());
            let back = decode(&loaded(&out), MAX_OUTPUT_SIDE).unwrap();
            assert_eq!((back.image.width(), back.image.height()), (8, 6), "{name}");
            assert_eq!(OutFormat::of(back.format), format, "{name}");
        }
    }

    #[test]
    fn garbage_is_not_an_image() {
        let e = decode(
            &Loaded {
                bytes: b"hello, world".to_vec(),
                name: "/tmp/x.png".into(),
            },
            MAX_OUTPUT_SIDE,
        )
        .err()
        .unwrap();
        assert!(e.to_string().starts_with("/tmp/x.png: not an image"), "{e}");
    }

    /// A PNG that is only a header saying `w`×`h` RGBA and 4 bytes of pixel data that do not
    /// inflate: what can be learnt without decoding it.
    fn png_header(w: u32, h: u32) -> Loaded {
        let mut ihdr = Vec::from(*b"IHDR");
        ihdr.extend(w.to_be_bytes());
        ihdr.extend(h.to_be_bytes());
        ihdr.extend([8, 6, 0, 0, 0]);
        let crc = crc32(&ihdr);
        let mut bytes = Vec::from(*b"\x89PNG\r\n\x1a\n");
        bytes.extend(13u32.to_be_bytes());
        bytes.extend(&ihdr);
        bytes.extend(crc.to_be_bytes());
        bytes.extend(4u32.to_be_bytes());
        bytes.extend(b"IDAT\xff\xff\xff\xff");
        bytes.extend(crc32(b"IDAT\xff\xff\xff\xff").to_be_bytes());
        Loaded {
            bytes,
            name: "big.png".into(),
        }
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in data {
            crc ^= u32::from(b);
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

    #[test]
    fn sizes_are_checked_from_the_header_with_numbers() {
        // Refused before decoding: decoding this header-only file would fail for its missing data.
        let e = decode(&png_header(9000, 8000), MAX_OUTPUT_SIDE)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("9000×8000 pixels") && e.contains("limit of 4096 pixels a side"),
            "{e}"
        );
        let e = decode(&png_header(9000, 8000), MAX_INPUT_SIDE)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("274.7 MiB decoded") && e.contains("limit of 128.0 MiB decoded"),
            "{e}"
        );
        let e = decode(&png_header(12000, 10), MAX_INPUT_SIDE)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("12000×10 pixels over the limit of 10000"), "{e}");
    }

    #[test]
    fn shrinking_a_large_image_keeps_the_requested_size() {
        let p = picture(5000, 100);
        let r = resize(&p, Some(1000), None).unwrap();
        assert_eq!((r.width(), r.height()), (1000, 20));
        assert!(
            crop(&p, 0, 0, 4097, 10)
                .unwrap_err()
                .to_string()
                .contains("1 to 4096")
        );
    }
}
