//! Who asks for a completion. Every request carries a purpose label (router, state, judge, …) for logs
//! and accounting; the by-hand endpoint turns it into a reader *role*, so the tool simulator's reader
//! never sees a user's request and the judge's reader never sees the agent's prompts. This file is the
//! one place where purposes map to roles.

use crate::names::named_values;

/// Who asks for a completion, written as its label (`"router"`, `"tool-simulator"`…): the label is the
/// meter's key, the value of the purpose header and the `purpose` field of recorded requests.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Purpose {
    /// No purpose named (`""`).
    #[default]
    Unnamed,
    /// Sum2Act's router: the next action.
    Router,
    /// Sum2Act's state manager: the observation summarised into the state.
    State,
    /// Sum2Act's final answer, written again from the whole facts.
    Answer,
    /// The request split into parts (Sum2Act's checklist, the graph method's subtasks).
    Decompose,
    /// A ReAct step.
    React,
    /// A DFSDT step.
    Dfsdt,
    /// The plan method's plan, its replan, and each after a repair round.
    Plan,
    PlanRepair,
    Replan,
    ReplanRepair,
    /// The plan method's choice among candidate APIs.
    Select,
    /// The plan method's final response.
    Respond,
    /// The graph method's arguments of a call, its scoring and ranking of APIs.
    Arguments,
    Score,
    Rank,
    /// Example requests for the retriever's index.
    ExampleRequests,
    /// `llm --check`.
    Check,
    /// A request served by `serve-llm` without a purpose of its own.
    Serve,
    /// The LLM tool simulation and MirrorAPI (`server::llm_sim`, `server::mirrorapi`).
    ToolSimulator,
    /// Every request the evaluator (`eval`) makes.
    Judge,
    /// A request whose sender named no purpose and no role.
    Agent,
    /// A label from elsewhere (another client's purpose header).
    Other(String),
}

/// The named purposes and their labels.
const LABELS: &[(Purpose, &str)] = &[
    (Purpose::Unnamed, ""),
    (Purpose::Router, "router"),
    (Purpose::State, "state"),
    (Purpose::Answer, "answer"),
    (Purpose::Decompose, "decompose"),
    (Purpose::React, "react"),
    (Purpose::Dfsdt, "dfsdt"),
    (Purpose::Plan, "plan"),
    (Purpose::PlanRepair, "plan_repair"),
    (Purpose::Replan, "replan"),
    (Purpose::ReplanRepair, "replan_repair"),
    (Purpose::Select, "select"),
    (Purpose::Respond, "respond"),
    (Purpose::Arguments, "arguments"),
    (Purpose::Score, "score"),
    (Purpose::Rank, "rank"),
    (Purpose::ExampleRequests, "example_requests"),
    (Purpose::Check, "check"),
    (Purpose::Serve, "serve"),
    (Purpose::ToolSimulator, "tool-simulator"),
    (Purpose::Judge, "judge"),
    (Purpose::Agent, "agent"),
];

impl Purpose {
    /// The label.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Purpose::Other(label) => label,
            named => LABELS
                .iter()
                .find(|(p, _)| p == named)
                .map_or("", |(_, label)| label),
        }
    }

    /// The purpose of the same request asked again after a repair round (`plan` -> `plan_repair`).
    pub(crate) fn repair(&self) -> Purpose {
        match self {
            Purpose::Plan => Purpose::PlanRepair,
            Purpose::Replan => Purpose::ReplanRepair,
            other => Purpose::from(format!("{other}_repair")),
        }
    }
}

impl From<&str> for Purpose {
    fn from(label: &str) -> Self {
        LABELS
            .iter()
            .find(|(_, l)| *l == label)
            .map_or_else(|| Purpose::Other(label.to_string()), |(p, _)| p.clone())
    }
}

impl From<String> for Purpose {
    fn from(label: String) -> Self {
        Purpose::from(label.as_str())
    }
}

impl std::fmt::Display for Purpose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Purpose {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Purpose> for &str {
    fn eq(&self, other: &Purpose) -> bool {
        *self == other.as_str()
    }
}

impl serde::Serialize for Purpose {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Purpose {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Purpose::from(<String as serde::Deserialize>::deserialize(
            d,
        )?))
    }
}

/// HTTP header in which our OpenAI client sends the purpose (never part of the prompt).
pub const PURPOSE_HEADER: &str = "x-sum2act-purpose";

/// Longest purpose label accepted from a header.
pub(crate) const MAX_PURPOSE_CHARS: usize = 64;

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
    pub fn of_purpose(purpose: &Purpose) -> Self {
        match purpose {
            Purpose::ToolSimulator => ReaderRole::Simulator,
            Purpose::Judge => ReaderRole::Judge,
            _ => ReaderRole::Agent,
        }
    }

    /// The purpose a request gets when its URL names this role (`/role/judge/v1`).
    pub fn purpose(self) -> Purpose {
        match self {
            ReaderRole::Agent => Purpose::Agent,
            ReaderRole::Simulator => Purpose::ToolSimulator,
            ReaderRole::Judge => Purpose::Judge,
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
        assert_eq!(ReaderRole::of_purpose(&Purpose::Router), ReaderRole::Agent);
        assert_eq!(ReaderRole::of_purpose(&Purpose::State), ReaderRole::Agent);
        assert_eq!(
            ReaderRole::of_purpose(&Purpose::ToolSimulator),
            ReaderRole::Simulator
        );
        assert_eq!(ReaderRole::of_purpose(&Purpose::Judge), ReaderRole::Judge);
        for (purpose, label) in LABELS {
            assert_eq!(purpose.as_str(), *label);
            assert_eq!(&Purpose::from(*label), purpose);
        }
        assert_eq!(Purpose::from("custom").as_str(), "custom");
        assert_eq!(Purpose::Plan.repair().as_str(), "plan_repair");
        assert_eq!(Purpose::Replan.repair().as_str(), "replan_repair");
        for role in ReaderRole::ALL {
            assert_eq!(ReaderRole::of_purpose(&role.purpose()), role);
            assert_eq!(role.name().parse::<ReaderRole>(), Ok(role));
        }
        assert_eq!(from_header(" judge "), Some("judge".into()));
        assert_eq!(from_header("a b"), None);
        assert_eq!(from_header(&"x".repeat(65)), None);
    }
}
