//! The media server's tool catalogue: names, descriptions and JSON Schemas of the arguments, as MCP
//! `tools/list` shows them. Running a tool is in `dispatch.rs`.

use serde_json::{Value, json};

/// Every tool the media server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaTool {
    Ocr,
    TextToSpeech,
    SpeechToText,
    ImageResize,
    ImageCrop,
    ImageRotate,
    ImageGrayscale,
    ImageConvert,
    ImageDrawText,
    QrEncode,
    QrDecode,
    ImageInfo,
    AudioInfo,
}

/// How a file argument is described to the model.
const IMAGE_ARG: &str = "The image: an absolute file path, an http(s) URL or a data: URL (PNG, JPEG, GIF, BMP or WebP).";
const AUDIO_ARG: &str =
    "The audio: an absolute file path, an http(s) URL or a data: URL of a WAV file.";

impl MediaTool {
    pub const ALL: [MediaTool; 13] = [
        MediaTool::Ocr,
        MediaTool::TextToSpeech,
        MediaTool::SpeechToText,
        MediaTool::ImageResize,
        MediaTool::ImageCrop,
        MediaTool::ImageRotate,
        MediaTool::ImageGrayscale,
        MediaTool::ImageConvert,
        MediaTool::ImageDrawText,
        MediaTool::QrEncode,
        MediaTool::QrDecode,
        MediaTool::ImageInfo,
        MediaTool::AudioInfo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MediaTool::Ocr => "ocr",
            MediaTool::TextToSpeech => "text_to_speech",
            MediaTool::SpeechToText => "speech_to_text",
            MediaTool::ImageResize => "image_resize",
            MediaTool::ImageCrop => "image_crop",
            MediaTool::ImageRotate => "image_rotate",
            MediaTool::ImageGrayscale => "image_grayscale",
            MediaTool::ImageConvert => "image_convert",
            MediaTool::ImageDrawText => "image_draw_text",
            MediaTool::QrEncode => "qr_encode",
            MediaTool::QrDecode => "qr_decode",
            MediaTool::ImageInfo => "image_info",
            MediaTool::AudioInfo => "audio_info",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// All names, for messages.
    pub fn names() -> String {
        Self::ALL.map(MediaTool::name).join(", ")
    }

    pub fn description(self) -> &'static str {
        match self {
            MediaTool::Ocr => {
                "Read the text in an image (OCR with tesseract). Returns the text line by line."
            }
            MediaTool::TextToSpeech => {
                "Speak a text aloud (espeak-ng). Returns a WAV audio file and its duration."
            }
            MediaTool::SpeechToText => {
                "Transcribe English speech in a WAV file (pocketsphinx). Returns the text; weak on synthetic voices."
            }
            MediaTool::ImageResize => {
                "Resize an image. With only width or only height the other side keeps the aspect ratio. Returns the new image."
            }
            MediaTool::ImageCrop => {
                "Cut the rectangle of width x height pixels whose top-left corner is (x, y) out of an image. Returns the new image."
            }
            MediaTool::ImageRotate => {
                "Rotate an image clockwise by 90, 180 or 270 degrees (negative: anticlockwise). Returns the new image."
            }
            MediaTool::ImageGrayscale => {
                "Turn an image into shades of grey. Returns the new image."
            }
            MediaTool::ImageConvert => {
                "Convert an image to another file format (png, jpeg, gif, bmp, webp). Returns the new image."
            }
            MediaTool::ImageDrawText => {
                "Draw text onto an image, or onto a new white image sized to the text when no image is given. Long text wraps. Returns the new image."
            }
            MediaTool::QrEncode => "Make a QR code image (PNG) that encodes a text or URL.",
            MediaTool::QrDecode => {
                "Read the QR code(s) in an image. Returns the encoded text of each."
            }
            MediaTool::ImageInfo => {
                "Describe an image file: format, width, height, colour type and size in bytes."
            }
            MediaTool::AudioInfo => {
                "Describe a WAV audio file: sample rate, channels, bits per sample, duration in seconds and size in bytes."
            }
        }
    }

    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(self) -> Value {
        let image = json!({ "type": "string", "description": IMAGE_ARG });
        let (properties, required): (Value, &[&str]) = match self {
            MediaTool::Ocr => (
                json!({ "image": image, "lang": { "type": "string", "description": "Tesseract language code(s), e.g. eng or eng+deu (default eng)." } }),
                &["image"],
            ),
            MediaTool::TextToSpeech => (
                json!({
                    "text": { "type": "string", "description": "The text to speak (at most 1000 characters)." },
                    "voice": { "type": "string", "description": "espeak-ng voice, e.g. en-us, en-gb, fr, de, es (default en-us)." },
                    "words_per_minute": { "type": "integer", "minimum": 80, "maximum": 450, "description": "Speaking rate (default 160)." }
                }),
                &["text"],
            ),
            MediaTool::SpeechToText | MediaTool::AudioInfo => (
                json!({ "audio": { "type": "string", "description": AUDIO_ARG } }),
                &["audio"],
            ),
            MediaTool::ImageResize => (
                json!({
                    "image": image,
                    "width": { "type": "integer", "minimum": 1, "maximum": 4096, "description": "New width in pixels." },
                    "height": { "type": "integer", "minimum": 1, "maximum": 4096, "description": "New height in pixels." }
                }),
                &["image"],
            ),
            MediaTool::ImageCrop => (
                json!({
                    "image": image,
                    "x": { "type": "integer", "minimum": 0, "description": "Left edge of the rectangle, in pixels from the left." },
                    "y": { "type": "integer", "minimum": 0, "description": "Top edge of the rectangle, in pixels from the top." },
                    "width": { "type": "integer", "minimum": 1, "description": "Width of the rectangle." },
                    "height": { "type": "integer", "minimum": 1, "description": "Height of the rectangle." }
                }),
                &["image", "x", "y", "width", "height"],
            ),
            MediaTool::ImageRotate => (
                json!({ "image": image, "degrees": { "type": "integer", "enum": [90, 180, 270, -90, -180, -270], "description": "Clockwise angle." } }),
                &["image", "degrees"],
            ),
            MediaTool::ImageGrayscale | MediaTool::QrDecode | MediaTool::ImageInfo => {
                (json!({ "image": image }), &["image"])
            }
            MediaTool::ImageConvert => (
                json!({ "image": image, "format": { "type": "string", "enum": ["png", "jpeg", "gif", "bmp", "webp"], "description": "The new file format." } }),
                &["image", "format"],
            ),
            MediaTool::ImageDrawText => (
                json!({
                    "text": { "type": "string", "description": "The text to draw (at most 2000 characters; \\n starts a new line)." },
                    "image": { "type": "string", "description": "Optional image to draw on (absolute path, http(s) URL or data: URL); without it a white image is made." },
                    "x": { "type": "integer", "minimum": 0, "description": "Left edge of the text in pixels (default 16)." },
                    "y": { "type": "integer", "minimum": 0, "description": "Top edge of the text in pixels (default 16)." },
                    "size": { "type": "integer", "minimum": 6, "maximum": 400, "description": "Font size in pixels (default 32)." },
                    "color": { "type": "string", "description": "Text colour: black, white, red, green, blue, yellow, gray or #rrggbb (default black)." },
                    "width": { "type": "integer", "minimum": 1, "maximum": 4096, "description": "Width of the new white image when no image is given (default: fits the text)." },
                    "height": { "type": "integer", "minimum": 1, "maximum": 4096, "description": "Height of the new white image when no image is given (default: fits the text)." }
                }),
                &["text"],
            ),
            MediaTool::QrEncode => (
                json!({
                    "text": { "type": "string", "description": "The text or URL to encode (at most 2000 bytes)." },
                    "module_pixels": { "type": "integer", "minimum": 1, "maximum": 40, "description": "Pixels per QR module (default 8)." },
                    "error_correction": { "type": "string", "enum": ["L", "M", "Q", "H"], "description": "Error-correction level (default M)." }
                }),
                &["text"],
            ),
        };
        json!({ "type": "object", "properties": properties, "required": required })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_parse_back_and_schemas_require_known_properties() {
        let mut names: Vec<_> = MediaTool::ALL.iter().map(|t| t.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), MediaTool::ALL.len());
        for tool in MediaTool::ALL {
            assert_eq!(MediaTool::parse(tool.name()), Some(tool));
            let schema = tool.input_schema();
            for r in schema["required"].as_array().unwrap() {
                assert!(
                    schema["properties"].get(r.as_str().unwrap()).is_some(),
                    "{}: {r}",
                    tool.name()
                );
            }
        }
    }
}
