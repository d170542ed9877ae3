//! Drawing text onto an image (or a blank canvas) with a TrueType font rasterised by `ab_glyph`. The
//! font is the system's DejaVu Sans (Debian `fonts-dejavu-core`), or the file `SUM2ACT_FONT` names.
//! Lines break at `\n` and wrap at word boundaries to fit the image.

use std::sync::OnceLock;

use ab_glyph::{Font, FontVec, PxScale, ScaleFont, point};
use image::{DynamicImage, Rgba, RgbaImage};

use super::error::MediaError;
use super::image_ops::{MAX_OUTPUT_SIDE, Picture};

/// Environment variable naming a TrueType/OpenType font file to draw with.
pub const FONT_ENV: &str = "SUM2ACT_FONT";
const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];
/// Longest text drawn.
pub const MAX_TEXT_CHARS: usize = 2000;
/// Blank space around text on a canvas made for it.
const MARGIN: f32 = 16.0;

/// What to draw and where.
#[derive(Debug, Clone)]
pub struct TextSpec {
    pub text: String,
    /// Top-left corner of the text block.
    pub x: u32,
    pub y: u32,
    /// Font size in pixels.
    pub size: f32,
    pub color: Rgba<u8>,
}

/// The font, loaded once.
fn font() -> Result<&'static FontVec, MediaError> {
    static FONT: OnceLock<Result<FontVec, String>> = OnceLock::new();
    FONT.get_or_init(load_font)
        .as_ref()
        .map_err(|message| MediaError::Program {
            program: "draw_text",
            message: message.clone(),
        })
}

fn load_font() -> Result<FontVec, String> {
    let chosen = std::env::var_os(FONT_ENV).map(std::path::PathBuf::from);
    let path = match chosen {
        Some(p) => p,
        None => match FONT_PATHS
            .iter()
            .map(std::path::Path::new)
            .find(|p| p.is_file())
        {
            Some(p) => p.to_path_buf(),
            None => {
                return Err("no font found: install the Debian package `fonts-dejavu-core` (scripts/setup.sh does) or set SUM2ACT_FONT to a .ttf file".into());
            }
        },
    };
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    FontVec::try_from_vec(bytes).map_err(|e| format!("{}: not a usable font: {e}", path.display()))
}

/// A colour by name (`black`, `white`, `red`, ...) or as `#rrggbb`.
pub fn parse_color(value: &str) -> Result<Rgba<u8>, MediaError> {
    let v = value.trim().to_ascii_lowercase();
    let named = match v.as_str() {
        "black" => Some([0, 0, 0]),
        "white" => Some([255, 255, 255]),
        "red" => Some([220, 30, 30]),
        "green" => Some([20, 140, 40]),
        "blue" => Some([30, 60, 200]),
        "yellow" => Some([250, 210, 20]),
        "gray" | "grey" => Some([128, 128, 128]),
        _ => None,
    };
    if let Some([r, g, b]) = named {
        return Ok(Rgba([r, g, b, 255]));
    }
    let hex = v
        .strip_prefix('#')
        .filter(|h| h.len() == 6 && h.chars().all(|c| c.is_ascii_hexdigit()));
    match hex {
        Some(h) => {
            let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or(0);
            Ok(Rgba([byte(0), byte(2), byte(4), 255]))
        }
        None => Err(MediaError::argument(
            "color",
            format!(
                "`{value}` is not a colour: black, white, red, green, blue, yellow, gray or #rrggbb"
            ),
        )),
    }
}

/// Draws `spec` onto the picture, or onto a white canvas sized to the text (`canvas`: width, height;
/// either may be left to fit the text).
pub fn draw(
    picture: Option<&Picture>,
    spec: &TextSpec,
    canvas: (Option<u32>, Option<u32>),
) -> Result<DynamicImage, MediaError> {
    let font = font()?;
    let scaled = font.as_scaled(PxScale::from(spec.size));
    let mut target = match picture {
        Some(p) => p.image.to_rgba8(),
        None => blank_canvas(&scaled, spec, canvas)?,
    };
    let wrap_at = (target.width() as f32 - spec.x as f32 - MARGIN / 2.0).max(spec.size);
    let lines = wrap(&scaled, &spec.text, wrap_at);
    let line_height = scaled.height() + scaled.line_gap();
    for (i, line) in lines.iter().enumerate() {
        let baseline = spec.y as f32 + scaled.ascent() + i as f32 * line_height;
        draw_line(
            &mut target,
            &scaled,
            line,
            spec.x as f32,
            baseline,
            spec.color,
        );
    }
    Ok(DynamicImage::ImageRgba8(target))
}

/// A white canvas big enough for the text at (x, y) plus a margin, unless its sides are given.
fn blank_canvas(
    scaled: &impl ScaleFont<&'static FontVec>,
    spec: &TextSpec,
    canvas: (Option<u32>, Option<u32>),
) -> Result<RgbaImage, MediaError> {
    let max_side = MAX_OUTPUT_SIDE as f32;
    let natural_width = spec
        .text
        .lines()
        .map(|l| line_width(scaled, l))
        .fold(0.0, f32::max);
    let width = match canvas.0 {
        Some(w) => w,
        None => (spec.x as f32 + natural_width + 2.0 * MARGIN)
            .min(max_side)
            .ceil() as u32,
    };
    let lines = wrap(
        scaled,
        &spec.text,
        (width as f32 - spec.x as f32 - MARGIN / 2.0).max(spec.size),
    )
    .len();
    let height = match canvas.1 {
        Some(h) => h,
        None => {
            let line_height = scaled.height() + scaled.line_gap();
            (spec.y as f32 + lines as f32 * line_height + 2.0 * MARGIN)
                .min(max_side)
                .ceil() as u32
        }
    };
    let width = super::image_ops::side("width", width)?;
    let height = super::image_ops::side("height", height)?;
    Ok(RgbaImage::from_pixel(
        width,
        height,
        Rgba([255, 255, 255, 255]),
    ))
}

/// Width in pixels of one line of text.
fn line_width(scaled: &impl ScaleFont<&'static FontVec>, line: &str) -> f32 {
    let mut width = 0.0;
    let mut previous = None;
    for c in line.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            width += scaled.kern(p, id);
        }
        width += scaled.h_advance(id);
        previous = Some(id);
    }
    width
}

/// Breaks text into lines at `\n` and at spaces so that each line fits `max_width` (a word longer
/// than a line stays whole).
fn wrap(scaled: &impl ScaleFont<&'static FontVec>, text: &str, max_width: f32) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if !line.is_empty() && line_width(scaled, &candidate) > max_width {
                lines.push(std::mem::replace(&mut line, word.to_string()));
            } else {
                line = candidate;
            }
        }
        lines.push(line);
    }
    lines
}

/// Rasterises one line with its baseline at `baseline`, blending by glyph coverage.
fn draw_line(
    target: &mut RgbaImage,
    scaled: &impl ScaleFont<&'static FontVec>,
    line: &str,
    x: f32,
    baseline: f32,
    color: Rgba<u8>,
) {
    let mut caret = x;
    let mut previous = None;
    for c in line.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            caret += scaled.kern(p, id);
        }
        let glyph = id.with_scale_and_position(scaled.scale(), point(caret, baseline));
        caret += scaled.h_advance(id);
        previous = Some(id);
        let Some(outline) = scaled.outline_glyph(glyph) else {
            continue;
        };
        let bounds = outline.px_bounds();
        outline.draw(|gx, gy, coverage| {
            let px = bounds.min.x as i64 + gx as i64;
            let py = bounds.min.y as i64 + gy as i64;
            if px < 0 || py < 0 || px >= target.width() as i64 || py >= target.height() as i64 {
                return;
            }
            let pixel = target.get_pixel_mut(px as u32, py as u32);
            let a = coverage.clamp(0.0, 1.0);
            for ch in 0..3 {
                pixel.0[ch] =
                    (pixel.0[ch] as f32 * (1.0 - a) + color.0[ch] as f32 * a).round() as u8;
            }
            pixel.0[3] = pixel.0[3].max((a * 255.0) as u8);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> TextSpec {
        TextSpec {
            text: text.into(),
            x: 10,
            y: 10,
            size: 32.0,
            color: Rgba([0, 0, 0, 255]),
        }
    }

    fn dark_pixels(img: &DynamicImage) -> usize {
        img.to_luma8().pixels().filter(|p| p.0[0] < 128).count()
    }

    #[test]
    fn colours_parse_by_name_and_hex() {
        assert_eq!(parse_color("#ff8000").unwrap(), Rgba([255, 128, 0, 255]));
        assert_eq!(parse_color(" Black ").unwrap(), Rgba([0, 0, 0, 255]));
        assert!(
            parse_color("#12345")
                .unwrap_err()
                .to_string()
                .contains("not a colour")
        );
    }

    #[test]
    fn a_canvas_fits_its_text_and_long_text_wraps() {
        if font().is_err() {
            eprintln!("skipped: no font installed (fonts-dejavu-core)");
            return;
        }
        let one = draw(None, &spec("Hello"), (None, None)).unwrap();
        let two = draw(None, &spec("Hello\nworld"), (None, None)).unwrap();
        assert!(dark_pixels(&one) > 100);
        assert!(two.height() > one.height());
        let wrapped = draw(
            None,
            &spec("one two three four five six"),
            (Some(200), None),
        )
        .unwrap();
        assert_eq!(wrapped.width(), 200);
        assert!(
            wrapped.height() > two.height(),
            "{} lines expected: {}",
            3,
            wrapped.height()
        );
    }
}
