//! Who asks for a completion. Every request carries a purpose label (router, state, judge, …) for logs
//! and accounting; the by-hand endpoint turns it into a reader *role*, so the tool simulator's reader
//! never sees a user's request and the judge's reader never sees the agent's prompts. This file is the
//! one place where purposes map to roles.

use crate::names::named_values;

/// The purpose of the LLM tool simulation and of MirrorAPI (`server::llm_sim`, `server::mirrorapi`).
pub const TOOL_SIMULATOR: &str = "tool-simulator";

/// The purpose of every request the evaluator (`eval`) makes.
pub const JUDGE: &str = "judge";

/// The purpose of a request whose sender named no purpose and no role.
pub const AGENT: &str = "agent";

/// HTTP header in which our OpenAI client sends the purpose (never part of the prompt).
pub const PURPOSE_HEADER: &str = "x-sum2act-purpose";

/// Longest purpose label accepted from a header.
pub const MAX_PURPOSE_CHARS: usize = 64;

/// Which reader answers a request by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReaderRole {
    /// Every request of the method being run (router, state manager, planner, ReAct step, answer).
    Agent,
    /// Tool-simulation requests (`--tool-simulation llm`, MirrorAPI).
    Simulator,
    /// Evaluation requests (`eval`).
    Judge,
}

named_values!(ReaderRole, "reader role" {
    Agent => "agent": "the method's own requests",
    Simulator => "simulator": "tool-simulation requests",
    Judge => "judge": "evaluation requests",
});

impl ReaderRole {
    pub const ALL: [ReaderRole; 3] = [ReaderRole::Agent, ReaderRole::Simulator, ReaderRole::Judge];

    /// The role that answers a request with this purpose.
    pub fn of_purpose(purpose: &str) -> Self {
        match purpose {
            TOOL_SIMULATOR => ReaderRole::Simulator,
            JUDGE => ReaderRole::Judge,
            _ => ReaderRole::Agent,
        }
    }

    /// The purpose a request gets when its URL names this role (`/role/judge/v1`).
    pub fn purpose(self) -> &'static str {
        match self {
            ReaderRole::Agent => AGENT,
            ReaderRole::Simulator => TOOL_SIMULATOR,
            ReaderRole::Judge => JUDGE,
        }
    }
}

/// A purpose label as received in a header: printable ASCII, capped; `None` when empty or unusable.
pub fn from_header(value: &str) -> Option<String> {
    let v = value.trim();
    (!v.is_empty() && v.len() <= MAX_PURPOSE_CHARS && v.bytes().all(|b| b.is_ascii_graphic()))
        .then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purposes_map_to_roles_and_back() {
        assert_eq!(ReaderRole::of_purpose("router"), ReaderRole::Agent);
        assert_eq!(ReaderRole::of_purpose("state"), ReaderRole::Agent);
        assert_eq!(
            ReaderRole::of_purpose(TOOL_SIMULATOR),
            ReaderRole::Simulator
        );
        assert_eq!(ReaderRole::of_purpose(JUDGE), ReaderRole::Judge);
        for role in ReaderRole::ALL {
            assert_eq!(ReaderRole::of_purpose(role.purpose()), role);
            assert_eq!(role.name().parse::<ReaderRole>(), Ok(role));
        }
        assert_eq!(from_header(" judge "), Some("judge".into()));
        assert_eq!(from_header("a b"), None);
        assert_eq!(from_header(&"x".repeat(65)), None);
    }
}
