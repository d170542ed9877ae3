//! Running one media tool: its arguments read from the call's JSON (numbers may come as numeric
//! strings, as models often write them), its inputs loaded, the work done off the async threads.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::draw_text::{self, MAX_TEXT_CHARS, TextSpec};
use super::error::MediaError;
use super::image_ops::{self, MAX_INPUT_SIDE, MAX_OUTPUT_SIDE, OutFormat, Picture};
use super::input::{Inputs, Loaded};
use super::tools::MediaTool;
use super::{Output, metadata, ocr, qr, speech};

/// Runs `tool` with `arguments`.
pub async fn run(
    inputs: &Inputs,
    tool: MediaTool,
    arguments: Map<String, Value>,
) -> Result<Output, MediaError> {
    let args = Value::Object(arguments);
    match tool {
        MediaTool::Ocr => {
            let a: OcrArgs = parse(args)?;
            let pic = picture(inputs, &a.image, MAX_INPUT_SIDE).await?;
            let summary = ocr::read_text(&pic, a.lang.as_deref().unwrap_or("eng")).await?;
            Ok(Output::text(summary))
        }
        MediaTool::TextToSpeech => {
            let a: SpeakArgs = parse(args)?;
            speech::text_to_speech(
                &a.text,
                a.voice.as_deref().unwrap_or("en-us"),
                a.words_per_minute.unwrap_or(160),
            )
            .await
        }
        MediaTool::SpeechToText => {
            let a: AudioArgs = parse(args)?;
            speech::speech_to_text(&inputs.load("audio", &a.audio).await?).await
        }
        MediaTool::AudioInfo => {
            let a: AudioArgs = parse(args)?;
            Ok(Output::text(metadata::audio_info(
                &inputs.load("audio", &a.audio).await?,
            )?))
        }
        MediaTool::ImageInfo => {
            let a: ImageArgs = parse(args)?;
            Ok(Output::text(metadata::image_info(
                &inputs.load("image", &a.image).await?,
            )?))
        }
        MediaTool::QrDecode => {
            let a: ImageArgs = parse(args)?;
            let pic = picture(inputs, &a.image, MAX_INPUT_SIDE).await?;
            let texts = blocking(move || qr::decode(&pic)).await?;
            Ok(Output::text(serde_json::json!({ "texts": texts })))
        }
        MediaTool::QrEncode => {
            let a: QrArgs = parse(args)?;
            let level = qr::parse_level(a.error_correction.as_deref().unwrap_or("M"))?;
            blocking(move || {
                image_ops::encode(
                    &qr::encode(&a.text, a.module_pixels.unwrap_or(8), level)?,
                    OutFormat::Png,
                )
            })
            .await
        }
        MediaTool::ImageDrawText => draw(inputs, parse(args)?).await,
        _ => edit(inputs, tool, args).await,
    }
}

/// One edit of one image, its arguments checked before the image is loaded.
enum Edit {
    Resize(Option<u32>, Option<u32>),
    Crop {
        x: u32,
        y: u32,
        width: u32,
        height: u32,
    },
    Rotate(i64),
    Grayscale,
    Convert,
}

impl Edit {
    fn of(tool: MediaTool, a: &EditArgs) -> Result<Self, MediaError> {
        let need =
            |v: Option<u32>, name: &str| v.ok_or_else(|| MediaError::argument(name, "is required"));
        Ok(match tool {
            MediaTool::ImageResize => Edit::Resize(a.width, a.height),
            MediaTool::ImageCrop => Edit::Crop {
                x: need(a.x, "x")?,
                y: need(a.y, "y")?,
                width: need(a.width, "width")?,
                height: need(a.height, "height")?,
            },
            MediaTool::ImageRotate => Edit::Rotate(
                a.degrees
                    .ok_or_else(|| MediaError::argument("degrees", "is required"))?,
            ),
            MediaTool::ImageGrayscale => Edit::Grayscale,
            _ => Edit::Convert,
        })
    }

    /// Inputs larger than the output limit only for the edits whose output size is their own.
    fn max_input_side(&self) -> u32 {
        match self {
            Edit::Resize(..) | Edit::Crop { .. } => MAX_INPUT_SIDE,
            Edit::Rotate(_) | Edit::Grayscale | Edit::Convert => MAX_OUTPUT_SIDE,
        }
    }

    fn apply(&self, pic: &Picture) -> Result<image::DynamicImage, MediaError> {
        match *self {
            Edit::Resize(w, h) => image_ops::resize(pic, w, h),
            Edit::Crop {
                x,
                y,
                width,
                height,
            } => image_ops::crop(pic, x, y, width, height),
            Edit::Rotate(degrees) => image_ops::rotate(pic, degrees),
            Edit::Grayscale => Ok(image_ops::grayscale(pic)),
            Edit::Convert => Ok(pic.image.clone()),
        }
    }
}

/// The image operations that take one image and give one back in the same format (or another, for
/// `image_convert`).
async fn edit(inputs: &Inputs, tool: MediaTool, args: Value) -> Result<Output, MediaError> {
    let a: EditArgs = parse(args)?;
    let format = match &a.format {
        Some(f) => Some(OutFormat::parse(f).ok_or_else(|| {
            MediaError::argument(
                "format",
                format!("`{f}` is not one of {}", OutFormat::NAMES.join(", ")),
            )
        })?),
        None if tool == MediaTool::ImageConvert => {
            return Err(MediaError::argument("format", "is required"));
        }
        None => None,
    };
    let edit = Edit::of(tool, &a)?;
    let pic = picture(inputs, &a.image, edit.max_input_side()).await?;
    blocking(move || {
        image_ops::encode(
            &edit.apply(&pic)?,
            format.unwrap_or(OutFormat::of(pic.format)),
        )
    })
    .await
}

async fn draw(inputs: &Inputs, a: DrawArgs) -> Result<Output, MediaError> {
    if a.text.trim().is_empty() {
        return Err(MediaError::argument("text", "is empty"));
    }
    if a.text.chars().count() > MAX_TEXT_CHARS {
        return Err(MediaError::argument(
            "text",
            format!("is over the limit of {MAX_TEXT_CHARS} characters"),
        ));
    }
    let size = a.size.unwrap_or(32);
    if !(6..=400).contains(&size) {
        return Err(MediaError::argument(
            "size",
            format!("must be 6 to 400 pixels, not {size}"),
        ));
    }
    let spec = TextSpec {
        text: a.text,
        x: a.x.unwrap_or(16),
        y: a.y.unwrap_or(16),
        size: size as f32,
        color: draw_text::parse_color(a.color.as_deref().unwrap_or("black"))?,
    };
    let pic = match &a.image {
        Some(source) if !source.trim().is_empty() => {
            Some(picture(inputs, source, MAX_OUTPUT_SIDE).await?)
        }
        _ => None,
    };
    let canvas = (a.width, a.height);
    blocking(move || {
        let format = pic
            .as_ref()
            .map_or(OutFormat::Png, |p| OutFormat::of(p.format));
        image_ops::encode(&draw_text::draw(pic.as_ref(), &spec, canvas)?, format)
    })
    .await
}

/// Loads and decodes an image argument no wider or taller than `max_side` (decoding off the async
/// threads).
async fn picture(inputs: &Inputs, source: &str, max_side: u32) -> Result<Picture, MediaError> {
    let loaded: Loaded = inputs.load("image", source).await?;
    blocking(move || image_ops::decode(&loaded, max_side)).await
}

/// Runs CPU-bound work on the blocking pool; a panic in it (a codec's bug) becomes a tool error.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, MediaError> + Send + 'static,
) -> Result<T, MediaError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(MediaError::Program {
            program: "media server",
            message: format!("the operation failed unexpectedly: {e}"),
        })
    })
}

/// Reads a tool's arguments; the message names the argument at fault.
fn parse<T: DeserializeOwned>(args: Value) -> Result<T, MediaError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        match inner.strip_prefix("missing field ") {
            Some(field) => MediaError::argument(field.trim_matches('`'), "is required"),
            None => MediaError::argument(&path, inner),
        }
    })
}

/// An integer given as a number or a numeric string.
fn lenient_int<'de, D: serde::Deserializer<'de>, T: TryFrom<i64>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    let n = match &v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(_) => None,
    };
    let n = n.ok_or_else(|| {
        serde::de::Error::custom(format!(
            "expected a whole number, got {}",
            v.unwrap_or_default()
        ))
    })?;
    T::try_from(n)
        .map(Some)
        .map_err(|_| serde::de::Error::custom(format!("{n} is out of range")))
}

#[derive(Deserialize)]
struct OcrArgs {
    image: String,
    lang: Option<String>,
}

#[derive(Deserialize)]
struct SpeakArgs {
    text: String,
    voice: Option<String>,
    #[serde(default, deserialize_with = "lenient_int")]
    words_per_minute: Option<u32>,
}

#[derive(Deserialize)]
struct AudioArgs {
    audio: String,
}

#[derive(Deserialize)]
struct ImageArgs {
    image: String,
}

#[derive(Deserialize)]
struct QrArgs {
    text: String,
    #[serde(default, deserialize_with = "lenient_int")]
    module_pixels: Option<u32>,
    error_correction: Option<String>,
}

#[derive(Deserialize)]
struct EditArgs {
    image: String,
    #[serde(default, deserialize_with = "lenient_int")]
    width: Option<u32>,
    #[serde(default, deserialize_with = "lenient_int")]
    height: Option<u32>,
    #[serde(default, deserialize_with = "lenient_int")]
    x: Option<u32>,
    #[serde(default, deserialize_with = "lenient_int")]
    y: Option<u32>,
    #[serde(default, deserialize_with = "lenient_int")]
    degrees: Option<i64>,
    format: Option<String>,
}

#[derive(Deserialize)]
struct DrawArgs {
    text: String,
    image: Option<String>,
    #[serde(default, deserialize_with = "lenient_int")]
    x: Option<u32>,
    #[serde(default, deserialize_with = "lenient_int")]
    y: Option<u32>,
    #[serde(default, deserialize_with = "lenient_int")]
    size: Option<u32>,
    color: Option<String>,
    #[serde(default, deserialize_with = "lenient_int")]
    width: Option<u32>,
    #[serde(default, deserialize_with = "lenient_int")]
    height: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_accept_numeric_strings_and_name_what_is_wrong() {
        let a: EditArgs =
            parse(serde_json::json!({ "image": "/a.png", "width": "120", "height": 80.0 }))
                .unwrap();
        assert_eq!((a.width, a.height), (Some(120), Some(80)));
        let e = parse::<EditArgs>(serde_json::json!({ "width": 3 }))
            .err()
            .unwrap();
        assert_eq!(e.to_string(), "argument `image`: is required");
        let e = parse::<EditArgs>(serde_json::json!({ "image": "/a.png", "width": "wide" }))
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .starts_with("argument `width`: expected a whole number"),
            "{e}"
        );
        let e = parse::<EditArgs>(serde_json::json!({ "image": "/a.png", "width": -4 }))
            .err()
            .unwrap();
        assert!(e.to_string().contains("out of range"), "{e}");
    }
}
