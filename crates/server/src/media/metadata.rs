//! What an image or audio file is, from its header alone (an image is not decoded whole).

use image::ImageDecoder;

use super::error::MediaError;
use super::input::Loaded;
use super::{audio, image_ops};

/// Format, size in pixels, colour type and byte size of an image.
pub fn image_info(input: &Loaded) -> Result<serde_json::Value, MediaError> {
    let (decoder, format) = image_ops::header(input)?;
    let (width, height) = decoder.dimensions();
    let color = format!("{:?}", decoder.color_type()).to_ascii_lowercase();
    Ok(serde_json::json!({
        "format": format.to_mime_type().trim_start_matches("image/"),
        "mime_type": format.to_mime_type(),
        "width": width,
        "height": height,
        "color": color,
        "bytes": input.bytes.len(),
    }))
}

/// Sample rate, channels, sample size and duration of a WAV file.
pub fn audio_info(input: &Loaded) -> Result<serde_json::Value, MediaError> {
    let info = audio::info(input)?;
    serde_json::to_value(info).map_err(|e| MediaError::format(&input.name, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn a_png_is_described_from_its_header() {
        let img = image::DynamicImage::ImageRgb8(image::RgbImage::new(30, 20));
        let mut bytes = Cursor::new(Vec::new());
        img.write_to(&mut bytes, image::ImageFormat::Png).unwrap();
        let info = image_info(&Loaded {
            bytes: bytes.into_inner(),
            name: "x".into(),
        })
        .unwrap();
        assert_eq!(info["format"], "png");
        assert_eq!(info["mime_type"], "image/png");
        assert_eq!(
            (info["width"].as_u64(), info["height"].as_u64()),
            (Some(30), Some(20))
        );
        assert_eq!(info["color"], "rgb8");
    }
}
