//! QR codes: encoding with `qrcode` (drawn here as a PNG with a quiet zone) and decoding with `rqrr`
//! (every code found in an image). Neither crate's own image support is used, so only one version of
//! `image` is built.

use image::{DynamicImage, GrayImage, Luma};
use qrcode::{Color, EcLevel, QrCode};

use super::error::MediaError;
use super::image_ops::{MAX_OUTPUT_SIDE, Picture};

/// Longest text encoded (a version-40 code at level L holds 2,953 bytes).
pub const MAX_QR_TEXT: usize = 2000;
/// Light modules around the code, as the standard asks.
const QUIET_ZONE: u32 = 4;

/// The error-correction level's name.
pub fn parse_level(name: &str) -> Result<EcLevel, MediaError> {
    Ok(match name.trim().to_ascii_uppercase().as_str() {
        "L" => EcLevel::L,
        "M" => EcLevel::M,
        "Q" => EcLevel::Q,
        "H" => EcLevel::H,
        _ => {
            return Err(MediaError::argument(
                "error_correction",
                format!("`{name}` is not L, M, Q or H"),
            ));
        }
    })
}

/// The QR code of `text`, `module_pixels` pixels per module, black on white.
pub fn encode(text: &str, module_pixels: u32, level: EcLevel) -> Result<DynamicImage, MediaError> {
    if text.is_empty() {
        return Err(MediaError::argument("text", "is empty"));
    }
    if text.len() > MAX_QR_TEXT {
        return Err(MediaError::argument(
            "text",
            format!("is {} bytes, over the limit of {MAX_QR_TEXT}", text.len()),
        ));
    }
    let code = QrCode::with_error_correction_level(text.as_bytes(), level)
        .map_err(|e| MediaError::argument("text", format!("cannot be encoded: {e}")))?;
    let modules = code.width() as u32;
    let side = (modules + 2 * QUIET_ZONE) * module_pixels;
    if module_pixels == 0 || side > MAX_OUTPUT_SIDE {
        return Err(MediaError::argument(
            "module_pixels",
            format!(
                "the code is {modules} modules wide; {module_pixels} pixels per module is not 1 to {}",
                MAX_OUTPUT_SIDE / (modules + 2 * QUIET_ZONE)
            ),
        ));
    }
    let colors = code.to_colors();
    let img = GrayImage::from_fn(side, side, |x, y| {
        let (mx, my) = (x / module_pixels, y / module_pixels);
        let inside = (QUIET_ZONE..QUIET_ZONE + modules).contains(&mx)
            && (QUIET_ZONE..QUIET_ZONE + modules).contains(&my);
        let dark = inside
            && colors[((my - QUIET_ZONE) * modules + (mx - QUIET_ZONE)) as usize] == Color::Dark;
        Luma([if dark { 0 } else { 255 }])
    });
    Ok(DynamicImage::ImageLuma8(img))
}

/// Images larger than this (longer side) are scaled down before the search: a readable code survives
/// it, and the detector's time and memory grow with the pixel count.
const SEARCH_SIDE: u32 = 2048;

/// The texts of every QR code found in the picture, top to bottom as found.
pub fn decode(pic: &Picture) -> Result<Vec<String>, MediaError> {
    let gray = if pic.image.width().max(pic.image.height()) > SEARCH_SIDE {
        pic.image
            .resize(
                SEARCH_SIDE,
                SEARCH_SIDE,
                image::imageops::FilterType::Triangle,
            )
            .to_luma8()
    } else {
        pic.image.to_luma8()
    };
    let mut prepared = rqrr::PreparedImage::prepare_from_greyscale(
        gray.width() as usize,
        gray.height() as usize,
        |x, y| gray.get_pixel(x as u32, y as u32).0[0],
    );
    let grids = prepared.detect_grids();
    if grids.is_empty() {
        return Err(MediaError::NotFound("no QR code found in the image".into()));
    }
    let mut texts = Vec::new();
    let mut failures = Vec::new();
    for grid in grids {
        match grid.decode() {
            Ok((_, text)) => texts.push(text),
            Err(e) => failures.push(e.to_string()),
        }
    }
    if texts.is_empty() {
        return Err(MediaError::NotFound(format!(
            "a QR code was found but could not be read ({})",
            failures.join("; ")
        )));
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::ImageFormat;

    #[test]
    fn encode_then_decode_round_trips() {
        let text = "https://example.com/menu?table=12";
        let image = encode(text, 6, EcLevel::M).unwrap();
        assert_eq!(image.width(), image.height());
        let pic = Picture {
            image,
            format: ImageFormat::Png,
        };
        assert_eq!(decode(&pic).unwrap(), vec![text.to_string()]);
    }

    #[test]
    fn a_code_in_a_large_photo_is_found_after_scaling_down() {
        let code = encode("large", 20, EcLevel::M).unwrap().to_luma8();
        let mut photo = GrayImage::from_pixel(5000, 3000, Luma([230]));
        image::imageops::overlay(&mut photo, &code, 3000, 1500);
        let pic = Picture {
            image: DynamicImage::ImageLuma8(photo),
            format: ImageFormat::Png,
        };
        assert_eq!(decode(&pic).unwrap(), vec!["large".to_string()]);
    }

    #[test]
    fn a_blank_image_has_no_code_and_limits_are_named() {
        let pic = Picture {
            image: DynamicImage::ImageLuma8(GrayImage::from_pixel(64, 64, Luma([255]))),
            format: ImageFormat::Png,
        };
        assert!(decode(&pic).unwrap_err().to_string().contains("no QR code"));
        assert!(
            encode("x", 500, EcLevel::M)
                .unwrap_err()
                .to_string()
                .starts_with("argument `module_pixels`")
        );
        assert!(parse_level("Z").is_err());
    }
}
