//! The tool protocol's messages: a StableToolBench `/virtual` request, the server's reply, and the
//! observation an agent sees.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `/virtual` request body (StableToolBench `server/main.py`), without the key (sent as a header and never stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRequest {
    pub category: String,
    pub tool_name: String,
    pub api_name: String,
    /// The raw arguments string the model wrote (the server also accepts an object).
    pub tool_input: Value,
    #[serde(default)]
    pub strip: String,
}

/// Where a reply came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReplySource {
    /// A recorded real response.
    Cache,
    /// Schema-driven simulation.
    Simulated,
    /// Simulated by an LLM.
    Llm,
    /// A remote server that does not say.
    #[default]
    Remote,
    /// Produced by the caller itself (validation errors, Finish, timeouts).
    Caller,
    /// Fault injection.
    Fault,
    /// No reply: the tool server could not be reached (the caller wrote the error). An environment
    /// failure, not an answer of the API: the episode is not kept as a result.
    Unreachable,
    /// A tool of an MCP server.
    Mcp,
}

impl ReplySource {
    pub fn as_str(&self) -> &'static str {
        match self {
            ReplySource::Cache => "cache",
            ReplySource::Simulated => "simulated",
            ReplySource::Llm => "llm",
            ReplySource::Remote => "remote",
            ReplySource::Caller => "caller",
            ReplySource::Fault => "fault",
            ReplySource::Unreachable => "unreachable",
            ReplySource::Mcp => "mcp",
        }
    }

    /// The inverse of `as_str`.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "cache" => ReplySource::Cache,
            "simulated" => ReplySource::Simulated,
            "llm" => ReplySource::Llm,
            "remote" => ReplySource::Remote,
            "caller" => ReplySource::Caller,
            "fault" => ReplySource::Fault,
            "unreachable" => ReplySource::Unreachable,
            "mcp" => ReplySource::Mcp,
            _ => return None,
        })
    }
}

/// The server's reply: always `{"error": str, "response": any}`; `source` is our extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolReply {
    #[serde(default)]
    pub error: String,
    #[serde(default)]
    pub response: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ReplySource>,
    /// Binary outputs (an MCP tool's images and audio), stored as files by the caller; the
    /// `response` marks where each goes (see `tools::resources`). Never on the wire.
    #[serde(skip)]
    pub attachments: Vec<Attachment>,
}

impl ToolReply {
    /// A reply with no binary outputs.
    pub fn new(error: String, response: Value, source: Option<ReplySource>) -> Self {
        ToolReply {
            error,
            response,
            source,
            attachments: Vec::new(),
        }
    }
}

/// How an episode ended through the `Finish` function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    Answer(String),
    GiveUp,
}

/// What one action produced, as the agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The function name the model called.
    pub function: String,
    /// The raw arguments string.
    pub arguments: String,
    /// The observation text shown to the model (`{"error":…,"response":…}`, truncated).
    pub text: String,
    /// ToolBench status code (`rapidapi.py`).
    pub code: ObservationCode,
    pub error: String,
    pub response: Value,
    pub source: ReplySource,
    /// The call failed (error set, unknown function, bad arguments, …): the state manager records it.
    pub failed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<Finish>,
    pub elapsed_ms: u64,
    /// Files this call produced (images, audio), stored in the episode's folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// Attempts that failed transiently and were retried before this outcome (timeouts, HTTP 429/5xx,
    /// an unreachable server), in order: a reader sees what the harness did, not only the last try.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<Retry>,
}

/// One failed attempt of a tool call that was tried again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Retry {
    /// 1 for the first attempt.
    pub attempt: u32,
    /// Why it failed.
    pub error: String,
    pub elapsed_ms: u64,
    /// The wait before the next attempt.
    pub backoff_ms: u64,
}

/// What a stored file holds, from its mime type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    Image,
    Audio,
    Other,
}

impl MediaKind {
    pub(crate) fn of_mime(mime: &str) -> MediaKind {
        match mime.split('/').next().unwrap_or("") {
            "image" => MediaKind::Image,
            "audio" => MediaKind::Audio,
            _ => MediaKind::Other,
        }
    }
}

/// Binary content of a reply before it is stored. `slot` says which object of the reply's
/// `response` describes it: the response itself (`None`) or item `i` of the response array.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    pub mime_type: String,
    pub data: Vec<u8>,
    pub slot: Option<usize>,
}

/// A stored file, as answer files and trajectories list it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// What the model sees and passes on (`<file-1>`).
    pub handle: String,
    pub kind: MediaKind,
    pub mime_type: String,
    pub bytes: u64,
    /// The file's absolute path (what MCP tools receive for the handle).
    pub path: PathBuf,
    /// The function whose call produced it.
    pub function: String,
}

/// ToolBench's status code of an observation (`rapidapi.py`), written as its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum ObservationCode {
    /// No error string ToolBench knows (which is why `Ok` alone does not mean success).
    #[default]
    Ok = 0,
    NoSuchFunction = 1,
    BadFinish = 2,
    Answer = 3,
    GiveUp = 4,
    Timeout = 5,
    NotWorking = 6,
    Unauthorized = 7,
    Unsubscribed = 8,
    TooManyRequests = 9,
    RateLimit = 10,
    Message = 11,
    HttpError = 12,
}

impl ObservationCode {
    const ALL: [ObservationCode; 13] = [
        ObservationCode::Ok,
        ObservationCode::NoSuchFunction,
        ObservationCode::BadFinish,
        ObservationCode::Answer,
        ObservationCode::GiveUp,
        ObservationCode::Timeout,
        ObservationCode::NotWorking,
        ObservationCode::Unauthorized,
        ObservationCode::Unsubscribed,
        ObservationCode::TooManyRequests,
        ObservationCode::RateLimit,
        ObservationCode::Message,
        ObservationCode::HttpError,
    ];

    /// The number ToolBench writes.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The code with this number, if there is one.
    pub(crate) fn from_number(n: u8) -> Option<Self> {
        Self::ALL.get(usize::from(n)).copied()
    }
}

impl std::fmt::Display for ObservationCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}

impl PartialEq<u8> for ObservationCode {
    fn eq(&self, other: &u8) -> bool {
        self.number() == *other
    }
}

impl serde::Serialize for ObservationCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.number())
    }
}

impl<'de> serde::Deserialize<'de> for ObservationCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = <u8 as serde::Deserialize>::deserialize(d)?;
        Self::from_number(n)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown observation code {n}")))
    }
}
