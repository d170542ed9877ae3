//! `run.json`: what produced a run directory (method, model, prompt hashes, config, versions), so a
//! result can be reproduced and a resumed run cannot silently mix two setups.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BatchError;
use crate::toolbench::io::{read_json, write_json_atomic};

/// The manifest's file name inside a run directory.
pub const MANIFEST_FILE: &str = "run.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Version of this manifest layout.
    #[serde(default = "one")]
    pub format: u32,
    pub method: String,
    /// The model that served the run (its replies' `model` field) once a reply came, else the one asked for.
    pub model: String,
    /// The model asked for (`--model`, or the endpoint's default), kept when the served one differs:
    /// resuming compares this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    #[serde(default)]
    pub sum2act_version: String,
    #[serde(default)]
    pub created: String,
    #[serde(default)]
    pub updated: String,
    #[serde(default)]
    pub data: String,
    #[serde(default)]
    pub subsets: Vec<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// `I/N` when this directory holds one shard.
    #[serde(default)]
    pub shard: Option<String>,
    /// The tool environment field by field (`ToolEnv::settings`), with the tool set; older runs
    /// hold one descriptive string.
    #[serde(default)]
    pub tools: Value,
    #[serde(default)]
    pub seed: Option<u64>,
    /// SHA-256 prefix of every prompt template in use.
    #[serde(default)]
    pub prompts: BTreeMap<String, String>,
    /// The options of this run's method (those that apply to it only).
    #[serde(default)]
    pub agent: Value,
    /// The budget the method ran under, as `agent::Budget::record` writes it: limits, policies,
    /// what its model read of a reply, the hashes of its prompts. `Null` in runs made before it.
    #[serde(default)]
    pub budget: Value,
    /// The config file's content (it holds names of key variables, never keys; scrubbed anyway).
    #[serde(default)]
    pub config: Value,
    /// Run directories this one was merged from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// The shards (`I/N`) merged into this directory so far, so a later `merge` knows the set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_shards: Vec<String>,
}

fn one() -> u32 {
    1
}

impl Manifest {
    /// A manifest for a new run; timestamps are set now.
    pub fn new(method: &str, model: &str) -> Self {
        let now = timestamp();
        Manifest {
            format: 2,
            method: method.to_string(),
            model: model.to_string(),
            requested_model: None,
            sum2act_version: env!("CARGO_PKG_VERSION").to_string(),
            created: now.clone(),
            updated: now,
            data: String::new(),
            subsets: Vec::new(),
            limit: None,
            shard: None,
            tools: Value::Null,
            seed: None,
            prompts: BTreeMap::new(),
            agent: Value::Null,
            budget: Value::Null,
            config: Value::Null,
            merged_from: Vec::new(),
            merged_shards: Vec::new(),
        }
    }

    /// Reads `RUN_DIR/run.json` if it exists.
    pub fn read(run_dir: &Path) -> Result<Option<Self>, BatchError> {
        let path = run_dir.join(MANIFEST_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        Ok(Some(read_json(&path)?))
    }

    /// Writes `RUN_DIR/run.json` atomically, with secrets scrubbed.
    pub fn write(&self, run_dir: &Path) -> Result<(), BatchError> {
        let mut clean = self.clone();
        scrub(&mut clean.config);
        scrub(&mut clean.agent);
        scrub(&mut clean.tools);
        clean.data = crate::redact::text(&clean.data);
        clean.model = crate::redact::text(&clean.model);
        write_json_atomic(&run_dir.join(MANIFEST_FILE), &clean)?;
        Ok(())
    }

    /// Records the models the endpoint served (`Meter::served_models`), keeping the name asked for.
    pub fn record_served(&mut self, served: &[String]) {
        let served = served.join(", ");
        if !served.is_empty() && served != self.model {
            self.requested_model.get_or_insert(self.model.clone());
            self.model = served;
        }
    }

    /// The model asked for.
    pub(crate) fn asked(&self) -> &str {
        self.requested_model.as_deref().unwrap_or(&self.model)
    }

    /// Refuses to resume into a directory produced by another method or model (unless `force`);
    /// keeps the original creation time.
    pub fn check_resume(
        &mut self,
        existing: &Manifest,
        run_dir: &Path,
        force: bool,
    ) -> Result<(), BatchError> {
        if !force {
            for (field, old, new) in [
                ("method", existing.method.as_str(), self.method.as_str()),
                ("model", existing.asked(), self.asked()),
            ] {
                if old != new {
                    return Err(BatchError::ManifestMismatch {
                        dir: run_dir.to_path_buf(),
                        field,
                        existing: old.to_string(),
                        requested: new.to_string(),
                    });
                }
            }
        }
        if self.requested_model.is_none() && existing.asked() == self.model {
            self.record_served(std::slice::from_ref(&existing.model));
        }
        let changed: Vec<&str> = self
            .prompts
            .iter()
            .filter(|(name, hash)| existing.prompts.get(*name).is_some_and(|old| old != *hash))
            .map(|(name, _)| name.as_str())
            .collect();
        if !changed.is_empty() {
            tracing::warn!(
                "{}: prompts changed since this run started: {}",
                run_dir.display(),
                changed.join(", ")
            );
        }
        if !existing.created.is_empty() {
            self.created = existing.created.clone();
        }
        Ok(())
    }
}

/// The current time, RFC 3339 in UTC.
pub fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Field names whose values are secrets wherever they appear.
const SECRET_KEYS: [&str; 8] = [
    "api_key",
    "key",
    "toolbench_key",
    "openai_api_key",
    "password",
    "secret",
    "token",
    "authorization",
];

/// Blanks secret-looking fields and credentials embedded in URLs.
fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if SECRET_KEYS.contains(&k.to_ascii_lowercase().as_str()) && !v.is_null() {
                    *v = Value::String("***".into());
                } else {
                    scrub(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub),
        Value::String(s) => *s = crate::redact::text(s),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scrubs_secrets() {
        let mut v = json!({"llm": {"endpoints": [{"base_url": "http://u:p@h:1/v1", "api_key_env": "K", "api_key": "sk-1"}]}});
        scrub(&mut v);
        let text = v.to_string();
        assert!(!text.contains("sk-1") && !text.contains("u:p"), "{text}");
        assert!(text.contains("\"api_key_env\":\"K\""), "{text}");
    }

    #[test]
    fn resume_refuses_other_method_unless_forced() {
        let dir = Path::new("/tmp/run");
        let old = Manifest::new("react", "m");
        let mut new = Manifest::new("sum2act", "m");
        let err = new
            .check_resume(&old, dir, false)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("method `react`") && err.contains("--force"),
            "{err}"
        );
        assert!(new.check_resume(&old, dir, true).is_ok());
        let mut same = Manifest::new("react", "m");
        assert!(same.check_resume(&old, dir, false).is_ok());
    }

    #[test]
    fn the_served_model_is_recorded_and_resuming_compares_the_one_asked_for() {
        let dir = Path::new("/tmp/run");
        let mut old = Manifest::new("react", "gpt-4o");
        old.record_served(&["gpt-4o-2024-08-06".to_string()]);
        assert_eq!(old.model, "gpt-4o-2024-08-06");
        assert_eq!(old.requested_model.as_deref(), Some("gpt-4o"));
        // A resume asking for the same name keeps what was served until its own replies say.
        let mut again = Manifest::new("react", "gpt-4o");
        assert!(again.check_resume(&old, dir, false).is_ok());
        assert_eq!(again.model, "gpt-4o-2024-08-06");
        let mut other = Manifest::new("react", "gpt-4o-2024-08-06");
        assert!(other.check_resume(&old, dir, false).is_err());
        // Served under the name asked for: nothing more to record.
        let mut plain = Manifest::new("react", "m");
        plain.record_served(&["m".to_string()]);
        assert_eq!((plain.model.as_str(), plain.requested_model), ("m", None));
    }
}
