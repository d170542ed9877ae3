//! How an episode ended, as our record in an answer file stores it (`sum2act.finish`). The agent writes
//! a [`FinishKind`]; batch bookkeeping and the evaluator read it back as a [`RecordedFinish`], which also
//! keeps whatever another writer (or an older file) put there, so reading never drops a record.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishKind {
    /// `Finish` with `give_answer`.
    GiveAnswer,
    /// `Finish` with `give_up_and_restart`.
    GiveUp,
    /// The step limit or the LLM-call budget ran out.
    Limit,
    /// The model could not be used (endpoint down, context overflow).
    Error,
}

impl FinishKind {
    /// The name as written in answer files (`give_answer`, `give_up`, `limit`, `error`).
    pub fn as_str(&self) -> &'static str {
        match self {
            FinishKind::GiveAnswer => "give_answer",
            FinishKind::GiveUp => "give_up",
            FinishKind::Limit => "limit",
            FinishKind::Error => "error",
        }
    }
}

impl fmt::Display for FinishKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an episode ended in `error`, which decides the exit code of `run` and `batch`: the user's setup
/// (2), an outage of the model (1) or of the tool server (1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCause {
    /// The model setup is wrong: a rejected key, an unknown model, no endpoint at the URL.
    Setup,
    /// The model failed while it was there: a timeout, a server error, a rate limit, a cut reply.
    Outage,
    /// The tool server could not be reached for some of the episode's calls.
    ToolServer,
}

/// The `finish` field as read from an answer file: one of ours, or any other string verbatim (`""`
/// when the field is missing), so a record from another writer still loads and writes back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RecordedFinish {
    Known(FinishKind),
    Other(String),
}

impl RecordedFinish {
    /// The finish kind, when it is one of ours.
    pub fn kind(&self) -> Option<FinishKind> {
        match self {
            RecordedFinish::Known(k) => Some(*k),
            RecordedFinish::Other(_) => None,
        }
    }

    /// Whether the episode ended as `kind`.
    pub fn is(&self, kind: FinishKind) -> bool {
        self.kind() == Some(kind)
    }

    /// The name as written in the file.
    pub fn as_str(&self) -> &str {
        match self {
            RecordedFinish::Known(k) => k.as_str(),
            RecordedFinish::Other(s) => s,
        }
    }
}

impl Default for RecordedFinish {
    fn default() -> Self {
        RecordedFinish::Other(String::new())
    }
}

impl From<FinishKind> for RecordedFinish {
    fn from(kind: FinishKind) -> Self {
        RecordedFinish::Known(kind)
    }
}

impl From<&str> for RecordedFinish {
    /// Reads a name as a file would: one of ours, else kept verbatim.
    fn from(name: &str) -> Self {
        serde_json::from_value(serde_json::Value::String(name.to_string()))
            .unwrap_or_else(|_| RecordedFinish::Other(name.to_string()))
    }
}

impl fmt::Display for RecordedFinish {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_strings_are_kept() {
        for kind in [
            FinishKind::GiveAnswer,
            FinishKind::GiveUp,
            FinishKind::Limit,
            FinishKind::Error,
        ] {
            let text = serde_json::to_string(&kind).unwrap();
            assert_eq!(text, format!("\"{}\"", kind.as_str()));
            let read: RecordedFinish = serde_json::from_str(&text).unwrap();
            assert_eq!(read, RecordedFinish::Known(kind));
            assert_eq!(serde_json::to_string(&read).unwrap(), text);
        }
        let other: RecordedFinish = serde_json::from_str("\"stopped\"").unwrap();
        assert_eq!(other.kind(), None);
        assert_eq!(other.as_str(), "stopped");
        assert_eq!(serde_json::to_string(&other).unwrap(), "\"stopped\"");
        assert!(serde_json::from_str::<RecordedFinish>("3").is_err());
        assert_eq!(RecordedFinish::default().as_str(), "");
        assert_eq!(
            RecordedFinish::from("give_up"),
            RecordedFinish::Known(FinishKind::GiveUp)
        );
        assert_eq!(RecordedFinish::from("x"), RecordedFinish::Other("x".into()));
    }
}
