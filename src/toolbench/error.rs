use std::path::PathBuf;

/// Errors of the data layer. Every variant names the file, and the JSON path where one is known.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
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
    #[error("{0}")]
    Other(String),
}

impl DataError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        DataError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn invalid(
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
