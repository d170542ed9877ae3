//! The config file (TOML): endpoints, limits and prices. Precedence: flags > env > file > defaults.
//! Each section belongs to one layer; unknown keys are rejected so typos do not pass silently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use sum2act_core::agent::AgentSection;
pub use sum2act_core::agent::budget::BudgetSection;
pub use sum2act_core::llm::settings::{Endpoint, LlmSection, Price};
pub use sum2act_core::tools::mcp::spec::McpEntry;
pub use sum2act_core::tools::settings::ToolsSection;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // The OS error is part of the message, not a `source`: a chain would print it twice.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: `{field}` {problem}")]
    Invalid {
        path: PathBuf,
        field: String,
        problem: &'static str,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub llm: LlmSection,
    pub tools: ToolsSection,
    pub agent: AgentSection,
    /// The one budget every method runs under (`agent::Budget`).
    pub budget: BudgetSection,
    /// USD per million tokens, by model id.
    pub prices: BTreeMap<String, Price>,
    /// MCP servers whose tools the agents get (`[[mcp]]`, with `--tools ...+mcp`).
    pub mcp: Vec<McpEntry>,
}

impl Config {
    /// Loads `path`, or the defaults when none is given.
    pub fn load(path: Option<&Path>) -> Result<Self, ConfigError> {
        let Some(path) = path else {
            return Ok(Config::default());
        };
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        let config: Config = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: parse_message(&text, &e),
        })?;
        config.check(path)?;
        Ok(config)
    }

    /// Refuses what the flags refuse: limits of 0, an agent option out of its range.
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let options = [
            ("budget", self.budget.invalid()),
            ("agent", self.agent.invalid()),
        ];
        let invalid = options.into_iter().find_map(|(section, bad)| {
            bad.map(|(key, problem)| (format!("{section}.{key}"), problem))
        });
        let zero = [
            ("llm.timeout_secs", self.llm.timeout_secs),
            ("llm.context", self.llm.context.into()),
            ("tools.timeout_secs", self.tools.timeout_secs),
        ]
        .into_iter()
        .find(|(_, v)| *v == 0)
        .map(|(field, _)| {
            (
                field.to_string(),
                "must be at least 1 (0 would run and do nothing)",
            )
        });
        match invalid.or(zero) {
            Some((field, problem)) => Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                field,
                problem,
            }),
            None => Ok(()),
        }
    }

    /// Cost in USD of a call, when the model has a price.
    pub fn cost(&self, model: &str, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        self.prices.get(model).map_or(0.0, |p| {
            (prompt_tokens as f64 * p.prompt + completion_tokens as f64 * p.completion) / 1e6
        })
    }
}

/// A TOML error as "line L, column C: what is wrong", without the offending line: it may hold a
/// key (`api_key = "sk-..."`), and error messages end up in logs and CI output.
fn parse_message(text: &str, e: &toml::de::Error) -> String {
    let what = e.message().trim();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("invalid TOML at line {line}, column {column}: {what}")
        }
        None => format!("invalid TOML: {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toml_error_does_not_echo_the_line_with_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[llm]\napi_key = \"sk-secret123\" x\n").unwrap();
        let err = Config::load(Some(&path)).unwrap_err().to_string();
        assert!(!err.contains("sk-secret123"), "{err}");
        assert!(err.contains("line 2, column 26"), "{err}");
        let missing = Config::load(Some(&dir.path().join("none.toml"))).unwrap_err();
        let chain = format!("{:#}", anyhow::Error::new(missing));
        assert_eq!(chain.matches("os error").count(), 1, "{chain}");
    }

    #[test]
    fn parses_sections_and_rejects_typos() {
        let ok: Result<Config, _> = toml::from_str(
            "[llm]\nrequests_per_minute = 60\n[[llm.endpoints]]\nbase_url = \"http://127.0.0.1:8000/v1\"\n[prices.gpt-4o-mini]\nprompt = 0.15\ncompletion = 0.6\n",
        );
        let cfg = ok.unwrap_or_default();
        assert_eq!(cfg.llm.requests_per_minute, Some(60));
        assert_eq!(cfg.llm.endpoints.len(), 1);
        assert!((cfg.cost("gpt-4o-mini", 1_000_000, 0) - 0.15).abs() < 1e-9);
        assert!(toml::from_str::<Config>("[llm]\nrequests_per_minit = 60\n").is_err());
    }
}
