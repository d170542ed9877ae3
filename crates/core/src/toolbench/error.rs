use std::path::PathBuf;

/// Errors of the data layer. Every variant names the file, and the JSON path where one is known.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    // The OS error is part of the message, not a `source`: an error chain would print it twice.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: invalid JSON at `{json_path}`: {message}")]
    Json {
        path: PathBuf,
        json_path: String,
        message: String,
    },
    #[error("{path}: `{field}`: {message}")]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
    /// Writing a result failed (disk full, permissions): a run failure, not bad input.
    #[error("cannot write {path}: {error}")]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

impl DataError {
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        DataError::Io {
            path: path.into(),
            error,
        }
    }

    pub(crate) fn write(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        DataError::Write {
            path: path.into(),
            error,
        }
    }

    /// An output error (a result could not be written): exit code 1, not 2.
    pub fn is_output(&self) -> bool {
        matches!(self, DataError::Write { .. })
    }

    pub(crate) fn invalid(
        path: impl Into<PathBuf>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        DataError::Invalid {
            path: path.into(),
            field: field.into(),
            message: message.into(),
        }
    }
}
