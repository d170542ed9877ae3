//! The media tools' errors. Each one becomes an MCP tool error (`isError: true`) whose one line of text
//! tells the model (and the user reading the trajectory) what to change: the file, the argument, or the
//! Debian package to install. None of them ends the server.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// An argument is missing, of the wrong type, or out of range.
    #[error("argument `{name}`: {message}")]
    Argument { name: String, message: String },
    /// A local input file cannot be read.
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    /// A URL input cannot be fetched (or is not allowed).
    #[error("{url}: {message}")]
    Fetch { url: String, message: String },
    /// The input's bytes are not a supported image or audio file.
    #[error("{what}: {message}")]
    Format { what: String, message: String },
    /// An input or output is over one of the size caps.
    #[error("{what} is too large: {size} over the limit of {limit}")]
    TooLarge {
        what: String,
        size: String,
        limit: String,
    },
    /// A system program the tool runs is not installed.
    #[error(
        "`{program}` is not installed: install the Debian package `{package}` (scripts/setup.sh does)"
    )]
    MissingProgram {
        program: &'static str,
        package: &'static str,
    },
    /// A system program ran and failed, or ran past its time limit.
    #[error("{program} failed: {message}")]
    Program {
        program: &'static str,
        message: String,
    },
    /// The tool ran and found nothing (no QR code in the image, no text).
    #[error("{0}")]
    NotFound(String),
    /// No tool of that name.
    #[error("no media tool named `{name}` (tools: {known})")]
    UnknownTool { name: String, known: String },
}

impl MediaError {
    pub fn argument(name: &str, message: impl Into<String>) -> Self {
        MediaError::Argument {
            name: name.to_string(),
            message: message.into(),
        }
    }

    pub fn format(what: impl Into<String>, message: impl std::fmt::Display) -> Self {
        MediaError::Format {
            what: what.into(),
            message: message.to_string(),
        }
    }

    pub fn too_large(what: impl Into<String>, size: u64, limit: u64) -> Self {
        MediaError::TooLarge {
            what: what.into(),
            size: human_bytes(size),
            limit: human_bytes(limit),
        }
    }
}

/// `1536` → `1.5 KiB`: sizes in messages a person reads.
pub fn human_bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    if f < KIB {
        format!("{n} B")
    } else if f < KIB * KIB {
        format!("{:.1} KiB", f / KIB)
    } else {
        format!("{:.1} MiB", f / KIB / KIB)
    }
}
