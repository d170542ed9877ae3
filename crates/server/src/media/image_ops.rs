//! Image operations on real files with the pure-Rust `image` crate: decode (format guessed from the
//! bytes, dimensions and memory capped), resize, crop, rotate, grayscale, convert, encode. An operation
//! keeps the input's format unless it is `convert`; JPEG output drops the alpha channel.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, Limits};

use super::error::MediaError;
use super::input::Loaded;
use super::{Binary, MAX_BINARY_BYTES, Output};

/// Widest or tallest image decoded.
pub const MAX_INPUT_SIDE: u32 = 10_000;
/// Widest or tallest image an operation may produce (resize, a drawing canvas, a QR code).
pub const MAX_OUTPUT_SIDE: u32 = 4096;
/// Memory a decoder may allocate.
const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;

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

/// A reader for an input image whose format is guessed from its bytes, with our decoding limits.
pub fn reader(input: &Loaded) -> Result<(Reader<'_>, ImageFormat), MediaError> {
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
    limits.max_image_width = Some(MAX_INPUT_SIDE);
    limits.max_image_height = Some(MAX_INPUT_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    Ok((reader, format))
}

/// Decodes an input image, guessing its format from its bytes.
pub fn decode(input: &Loaded) -> Result<Picture, MediaError> {
    let (reader, format) = reader(input)?;
    let image = reader
        .decode()
        .map_err(|e| MediaError::format(&input.name, e))?;
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
            let back = decode(&loaded(&out)).unwrap();
            assert_eq!((back.image.width(), back.image.height()), (8, 6), "{name}");
            assert_eq!(OutFormat::of(back.format), format, "{name}");
        }
    }

    #[test]
    fn garbage_is_not_an_image() {
        let e = decode(&Loaded {
            bytes: b"hello, world".to_vec(),
            name: "/tmp/x.png".into(),
        })
        .err()
        .unwrap();
        assert!(e.to_string().starts_with("/tmp/x.png: not an image"), "{e}");
    }
}
