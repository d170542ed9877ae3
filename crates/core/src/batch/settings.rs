//! What runs were made under, setting by setting, so that a comparison can say what differs besides
//! the thing it compares. Two methods under one model, or two models under one method, are a
//! comparison; any other difference (the budget, the tools, a prompt, a method's own option) is named.

use std::collections::BTreeMap;

use serde_json::Value;

use super::manifest::Manifest;

/// What a set of runs compares, and the settings they differ in besides.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsCheck {
    /// `method` and/or `model`: the settings that vary by design.
    pub compared: Vec<&'static str>,
    /// Every other setting whose value is not the same in all runs: (setting, value per run).
    pub differences: Vec<(String, Vec<String>)>,
}

impl SettingsCheck {
    /// Whether the runs differ only in what they compare (at most one of method and model).
    pub fn is_fair(&self) -> bool {
        self.differences.is_empty() && self.compared.len() <= 1
    }

    /// The differences as lines, `setting: a | b`, with both method and model named when both vary.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.compared.len() > 1 {
            lines.push("both the method and the model differ: compare one at a time".to_string());
        }
        for (setting, values) in &self.differences {
            lines.push(format!("{setting}: {}", values.join(" | ")));
        }
        lines
    }
}

/// Compares the settings of `runs` (each a run's manifest).
pub fn check(runs: &[&Manifest]) -> SettingsCheck {
    let flat: Vec<BTreeMap<String, String>> = runs.iter().map(|m| flatten(m)).collect();
    let varies = |key: &str| {
        let first = flat.first().and_then(|f| f.get(key));
        flat.iter().any(|f| f.get(key) != first)
    };
    let compared: Vec<&'static str> = ["method", "model"]
        .into_iter()
        .filter(|k| varies(k))
        .collect();
    let same_method = !compared.contains(&"method");
    let mut keys: Vec<&String> = flat.iter().flat_map(|f| f.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut differences = Vec::new();
    for key in keys {
        if key == "method" || key == "model" {
            continue;
        }
        let present = flat.iter().filter(|f| f.contains_key(key)).count();
        // A setting only some methods have (a method's own option, its own prompt) is the method.
        if present < flat.len() && !same_method {
            continue;
        }
        if varies(key) {
            let values = flat
                .iter()
                .map(|f| {
                    f.get(key)
                        .cloned()
                        .unwrap_or_else(|| "(not recorded)".into())
                })
                .collect();
            differences.push((key.clone(), values));
        }
    }
    SettingsCheck {
        compared,
        differences,
    }
}

/// A run's settings as `name → value` text: method, model, data, the budget, the tools, the
/// method's options and the hashes of its prompts. Where a run has no budget record (made before
/// there was one), `budget` says so.
fn flatten(m: &Manifest) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    out.insert("method".into(), m.method.clone());
    // The model asked for: a run recorded before served names were kept has no other, and an endpoint
    // may serve the one model under its own name (a by-hand endpoint answers as `by-hand`).
    out.insert("model".into(), m.asked().to_string());
    out.insert("data".into(), m.data.clone());
    if let Some(seed) = m.seed {
        out.insert("seed".into(), seed.to_string());
    }
    let mut budget = m.budget.clone();
    if budget.is_null() {
        out.insert(
            "budget".into(),
            "(not recorded: made before the one budget)".into(),
        );
    } else if let Some(b) = budget.as_object_mut() {
        // What the method's model reads follows from the budget and the method.
        b.remove("reads");
        let prompts = b.remove("prompts").unwrap_or(Value::Null);
        put(&mut out, "budget", &budget);
        put(&mut out, "prompt", &prompts);
        out.insert("budget".into(), "recorded".into());
    }
    put(&mut out, "tools", &m.tools);
    let mut agent = m.agent.clone();
    if let Some(a) = agent.as_object_mut() {
        a.remove("method");
    }
    put(&mut out, "agent", &agent);
    out
}

fn put(out: &mut BTreeMap<String, String>, prefix: &str, v: &Value) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                put(out, &format!("{prefix}.{k}"), x);
            }
        }
        Value::Null => {}
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(method: &str, model: &str, chars: u64) -> Manifest {
        let mut m = Manifest::new(method, model);
        m.budget = json!({"preset": "equal", "observation_chars": chars, "max_steps": 30,
            "reads": format!("{method} reads"), "prompts": {"finish_now": "aa", method: "bb"}});
        m.agent = json!({"method": method, "max_tokens": 384});
        m.tools = json!({"source": "virtual API", "timeout_s": 15.0});
        m
    }

    #[test]
    fn two_methods_under_one_budget_compare_without_a_word() {
        let (a, b) = (run("react", "m", 16384), run("sum2act", "m", 16384));
        let c = check(&[&a, &b]);
        assert_eq!(c.compared, vec!["method"]);
        assert!(c.is_fair(), "{:?}", c.lines());
    }

    #[test]
    fn a_different_observation_budget_is_named() {
        let (a, b) = (run("react", "m", 1024), run("sum2act", "m", 16384));
        let c = check(&[&a, &b]);
        assert!(!c.is_fair());
        assert_eq!(c.lines(), vec!["budget.observation_chars: 1024 | 16384"]);
    }

    #[test]
    fn a_shared_prompt_that_changed_is_named_but_a_methods_own_is_not() {
        let (a, mut b) = (run("react", "m", 16384), run("sum2act", "m", 16384));
        b.budget["prompts"]["finish_now"] = json!("cc");
        let c = check(&[&a, &b]);
        assert_eq!(c.lines(), vec!["prompt.finish_now: aa | cc"]);
    }

    #[test]
    fn two_models_under_one_method_compare_and_both_varying_is_refused() {
        let (a, b) = (run("react", "m1", 16384), run("react", "m2", 16384));
        assert!(check(&[&a, &b]).is_fair());
        let c = run("dfsdt", "m3", 16384);
        let both = check(&[&a, &c]);
        assert!(!both.is_fair());
        assert!(both.lines()[0].contains("both the method and the model"));
    }

    #[test]
    fn a_run_without_a_budget_record_is_named() {
        let a = run("react", "m", 16384);
        let mut b = run("sum2act", "m", 16384);
        b.budget = Value::Null;
        let lines = check(&[&a, &b]).lines();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("budget: recorded | (not recorded")),
            "{lines:?}"
        );
    }
}
