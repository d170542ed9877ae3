use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;
use crate::agent::budget::{BudgetSection, Preset, RetryPrompt};
use crate::agent::{AgentOptions, Method};

/// An option group as its table makes it, for the checks below.
trait Group: Default {
    type Section: DeserializeOwned;
    const KEYS: &'static [&'static str];
    fn overlay(section: &Self::Section, on: &mut Self);
    fn invalid(section: &Self::Section) -> Option<(&'static str, &'static str)>;
    fn record(&self, method: Method) -> serde_json::Map<String, Value>;
}

impl Group for AgentOptions {
    type Section = AgentSection;
    const KEYS: &'static [&'static str] = AgentOptions::KEYS;
    fn overlay(section: &AgentSection, on: &mut Self) {
        section.overlay(on)
    }
    fn invalid(section: &AgentSection) -> Option<(&'static str, &'static str)> {
        section.invalid()
    }
    fn record(&self, method: Method) -> serde_json::Map<String, Value> {
        match AgentOptions::record(self, method) {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }
}

impl Group for Budget {
    type Section = BudgetSection;
    const KEYS: &'static [&'static str] = Budget::KEYS;
    fn overlay(section: &BudgetSection, on: &mut Self) {
        section.overlay(on)
    }
    fn invalid(section: &BudgetSection) -> Option<(&'static str, &'static str)> {
        section.invalid()
    }
    fn record(&self, method: Method) -> serde_json::Map<String, Value> {
        match Budget::record(self, method, &Default::default()) {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }
}

/// Values other than `default` of the same JSON kind, to set an option to.
fn others(default: &Value) -> Vec<Value> {
    match default {
        Value::Bool(b) => vec![json!(!b)],
        Value::Number(n) if n.is_u64() => vec![json!(n.as_u64().unwrap_or(0) + 1)],
        Value::Number(n) => vec![json!(if n.as_f64() < Some(0.5) { 0.75 } else { 0.25 })],
        Value::Null => vec![json!(7)],
        Value::String(s) => [
            Strategy::NAMES,
            Preset::NAMES,
            RetryPrompt::NAMES,
            ToolDocs::NAMES,
        ]
        .concat()
        .into_iter()
        .filter(|(name, _)| name != s)
        .map(|(name, _)| json!(name))
        .collect(),
        other => panic!("an option recorded as {other}"),
    }
}

/// Every option of `G` is in the record of a method that reads it, settable from the config section
/// (the record then shows the value set), and a count of 0 is refused by the section's check.
fn every_option_is_recorded_and_settable<G: Group>() {
    let defaults = G::default();
    for key in G::KEYS {
        let method = Method::ALL
            .into_iter()
            .find(|m| defaults.record(*m).contains_key(*key))
            .unwrap_or_else(|| panic!("`{key}` is in no method's record"));
        let default = defaults.record(method)[*key].clone();
        let set = others(&default).into_iter().find_map(|value| {
            let section: G::Section = serde_json::from_value(json!({ *key: value })).ok()?;
            let mut options = G::default();
            G::overlay(&section, &mut options);
            Some((value, options.record(method)[*key].clone()))
        });
        let (value, recorded) = set.unwrap_or_else(|| panic!("`{key}` cannot be set"));
        assert_eq!(recorded, value, "`{key}` set from the section");
        // Counts refuse 0, but for `fold_chars` (Sum2Act) 0 is the setting "fold nothing".
        if (default.is_u64() || default.is_null()) && *key != "fold_chars" {
            let zero: G::Section = serde_json::from_value(json!({ *key: 0 })).unwrap();
            assert_eq!(G::invalid(&zero).map(|(k, _)| k), Some(*key));
        }
    }
    let unknown = serde_json::from_value::<G::Section>(json!({"no_such_option": 1}));
    assert!(unknown.is_err(), "unknown keys are refused");
}

#[test]
fn every_agent_option_is_recorded_and_settable() {
    every_option_is_recorded_and_settable::<AgentOptions>();
}

#[test]
fn every_budget_option_is_recorded_and_settable() {
    every_option_is_recorded_and_settable::<Budget>();
}

#[test]
fn a_method_records_only_the_options_it_reads() {
    let o = AgentOptions::default();
    let react = o.record(Method::React);
    assert_eq!(react["method"], "react");
    assert!(react.get("tries").is_some() && react.get("width").is_none());
    assert_eq!(o.record(Method::Graph)["strategy"], "adaptive");
    let threshold = AgentSection {
        threshold: Some(1.5),
        ..AgentSection::default()
    };
    assert_eq!(threshold.invalid().map(|(k, _)| k), Some("threshold"));
}

#[test]
fn parses_strategies() {
    for (name, _) in Strategy::NAMES {
        let s: Strategy = name.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.as_str(), *name);
    }
    assert!("dfs".parse::<Strategy>().is_err());
}
