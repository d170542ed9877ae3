//! The media tool server's tools: OCR, text to speech and speech to text, image operations, QR codes,
//! image and audio metadata, on real files. Served over MCP by `server.rs` (`sum2act media-server`); the
//! harness's MCP client (or any other) calls them. Binary outputs go back as MCP image/audio content,
//! file inputs are absolute paths or http(s)/data URLs (see `input.rs`).
//!
//! One file per tool family; system programs (tesseract, espeak-ng, pocketsphinx) run through
//! `process.rs`, the rest is pure Rust.

mod audio;
mod dispatch;
mod draw_text;
mod error;
mod image_ops;
mod input;
mod metadata;
mod ocr;
mod process;
mod qr;
mod server;
mod speech;
mod tools;

use std::path::PathBuf;

pub use draw_text::FONT_ENV;
pub use error::MediaError;
pub use input::MAX_INPUT_BYTES;
pub use server::{MediaServer, serve_stdio};
pub use tools::MediaTool;

/// Largest file a tool sends back: base64 makes it 4/3 larger, and rmcp's stdio transport drops
/// messages over 16 MiB.
pub const MAX_BINARY_BYTES: u64 = 8 * 1024 * 1024;

/// How the media server finds its inputs.
#[derive(Debug, Clone, Default)]
pub struct MediaOptions {
    /// Recorded files answering http(s) URLs: `{dir}/{host}/{path}` (a data directory's `url_cache`).
    pub url_cache: Option<PathBuf>,
    /// Never fetch a URL over the network (only the URL cache answers).
    pub offline: bool,
}

/// A tool's result: a JSON summary for the model, and the file it made, if any.
#[derive(Debug)]
pub struct Output {
    pub summary: serde_json::Value,
    pub binary: Option<Binary>,
}

impl Output {
    pub fn text(summary: serde_json::Value) -> Self {
        Output {
            summary,
            binary: None,
        }
    }
}

/// A file a tool made, sent back as MCP image or audio content.
#[derive(Debug)]
pub struct Binary {
    pub kind: BinaryKind,
    pub mime: &'static str,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryKind {
    Image,
    Audio,
}

impl Binary {
    pub fn image(mime: &'static str, bytes: Vec<u8>) -> Self {
        Binary {
            kind: BinaryKind::Image,
            mime,
            bytes,
        }
    }

    pub fn audio(mime: &'static str, bytes: Vec<u8>) -> Self {
        Binary {
            kind: BinaryKind::Audio,
            mime,
            bytes,
        }
    }
}

/// The media tools with their input sources: what the MCP server calls.
#[derive(Debug, Clone)]
pub struct Media {
    inputs: input::Inputs,
}

impl Media {
    pub fn new(options: MediaOptions) -> Self {
        Media {
            inputs: input::Inputs::new(options.url_cache, options.offline),
        }
    }

    /// Runs the tool called `name` with `arguments`.
    pub async fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Output, MediaError> {
        let tool = MediaTool::parse(name).ok_or_else(|| MediaError::UnknownTool {
            name: input::short(name),
            known: MediaTool::names(),
        })?;
        dispatch::run(&self.inputs, tool, arguments).await
    }
}
