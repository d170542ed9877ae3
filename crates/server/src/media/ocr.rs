//! Optical character recognition with tesseract (Debian `tesseract-ocr`, English data included). The
//! image is decoded and checked here first, then handed over as a grayscale PNG on stdin, so every format
//! we read works and tesseract never opens a path a model chose.

use super::error::MediaError;
use super::image_ops::{OutFormat, Picture, encode};
use super::process::{Program, safe_word};

const TESSERACT: Program = Program {
    name: "tesseract",
    package: "tesseract-ocr",
};
/// Longest text returned.
const MAX_TEXT_BYTES: u64 = 64 * 1024;
/// Images smaller than this (longer side) are scaled up 2x first: tesseract reads small glyphs poorly.
const UPSCALE_BELOW: u32 = 800;

/// Checks a tesseract language list (`eng`, `eng+deu`).
pub fn check_lang(lang: &str) -> Result<&str, MediaError> {
    let example = "a tesseract language such as eng or eng+deu";
    let lang = safe_word("lang", lang, &['_', '+'], example)?;
    if lang.split('+').any(str::is_empty) {
        return Err(MediaError::argument(
            "lang",
            format!("`{lang}` is not {example}"),
        ));
    }
    Ok(lang)
}

/// The text tesseract reads in the picture, line by line.
pub async fn read_text(pic: &Picture, lang: &str) -> Result<serde_json::Value, MediaError> {
    let lang = check_lang(lang)?;
    let png = prepare(pic)?;
    let out = TESSERACT
        .run(
            &["stdin", "stdout", "-l", lang, "--psm", "3"],
            png,
            MAX_TEXT_BYTES,
        )
        .await
        .map_err(|e| name_missing_language(e, lang))?;
    let text = String::from_utf8_lossy(&out);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return Err(MediaError::NotFound("no text found in the image".into()));
    }
    let joined = lines.join("\n");
    Ok(serde_json::json!({ "text": joined, "lines": lines.len(), "chars": joined.chars().count() }))
}

/// The grayscale PNG handed to tesseract, scaled up when small.
fn prepare(pic: &Picture) -> Result<Vec<u8>, MediaError> {
    let mut gray = image::DynamicImage::ImageLuma8(pic.image.to_luma8());
    if gray.width().max(gray.height()) < UPSCALE_BELOW {
        gray = gray.resize_exact(
            gray.width() * 2,
            gray.height() * 2,
            image::imageops::FilterType::CatmullRom,
        );
    }
    let out = encode(&gray, OutFormat::Png)?;
    Ok(out.binary.map(|b| b.bytes).unwrap_or_default())
}

/// Tesseract's "Failed loading language 'deu'" as the package that brings the language.
fn name_missing_language(e: MediaError, lang: &str) -> MediaError {
    match &e {
        MediaError::Program { message, .. } if message.contains("Failed loading language") => {
            MediaError::Program {
                program: TESSERACT.name,
                message: format!(
                    "no language data for `{lang}`: install the Debian package tesseract-ocr-{} (eng is installed by scripts/setup.sh)",
                    lang.split('+').find(|l| *l != "eng").unwrap_or(lang)
                ),
            }
        }
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_are_checked() {
        assert!(check_lang("eng+deu").is_ok());
        assert!(check_lang("-l").is_err());
        assert!(check_lang("eng+").is_err());
    }
}
