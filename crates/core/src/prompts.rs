//! Prompt templates. Every prompt is a `prompts/*.md` file with `{placeholder}`s; the files are embedded
//! at build time and can be overridden at run time from a folder (`SUM2ACT_PROMPTS`), so researchers can
//! edit prompts without rebuilding. Each prompt's SHA-256 goes into run manifests. Code names a prompt
//! by [`PromptName`], which `build.rs` makes with one variant per file: a misspelt name does not
//! compile.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

include!(concat!(env!("OUT_DIR"), "/prompts.rs"));

/// Environment variable naming a folder whose `*.md` files replace the embedded prompts.
pub(crate) const PROMPTS_ENV: &str = "SUM2ACT_PROMPTS";

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("prompt `{0}` not found (expected prompts/{0}.md)")]
    Missing(String),
    #[error("prompt `{name}`: placeholder {{{placeholder}}} was not filled")]
    Unfilled { name: String, placeholder: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl std::fmt::Display for PromptName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The set of prompt templates in use.
#[derive(Debug, Clone)]
pub struct Prompts {
    templates: BTreeMap<String, String>,
}

impl Prompts {
    /// The embedded prompts, overridden by `$SUM2ACT_PROMPTS/*.md` when that is set.
    pub fn load() -> Result<Self, PromptError> {
        let mut p = Self::embedded();
        if let Some(dir) = std::env::var_os(PROMPTS_ENV) {
            p.override_from(Path::new(&dir))?;
        }
        Ok(p)
    }

    pub fn embedded() -> Self {
        Prompts {
            templates: EMBEDDED
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
        }
    }

    /// Replaces templates with the `*.md` files found in `dir`.
    pub(crate) fn override_from(&mut self, dir: &Path) -> Result<(), PromptError> {
        let io = |source| PromptError::Io {
            path: dir.display().to_string(),
            source,
        };
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).map_err(|source| PromptError::Io {
                    path: path.display().to_string(),
                    source,
                })?;
                if let Some(stem) = path.file_stem() {
                    self.templates
                        .insert(stem.to_string_lossy().to_string(), text);
                }
            }
        }
        Ok(())
    }

    /// The raw template.
    pub fn template(&self, name: PromptName) -> Result<&str, PromptError> {
        self.lookup(name.as_str())
    }

    /// The template named `name` (a file of `$SUM2ACT_PROMPTS` may add names the build does not know).
    fn lookup(&self, name: &str) -> Result<&str, PromptError> {
        self.templates
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| PromptError::Missing(name.to_string()))
    }

    /// Fills `{key}` placeholders; a placeholder left unfilled is an error (a typo would otherwise
    /// silently reach the model).
    pub fn render(&self, name: PromptName, vars: &[(&str, &str)]) -> Result<String, PromptError> {
        render_template(name.as_str(), self.template(name)?, vars)
    }

    /// SHA-256 (hex, first 16 chars) of each template, for manifests and judge logs.
    pub fn hashes(&self) -> BTreeMap<String, String> {
        self.templates
            .iter()
            .map(|(n, t)| (n.clone(), short_hash(t)))
            .collect()
    }
}

/// Hex SHA-256 prefix of a text.
pub fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    hex::encode(digest)[..16].to_string()
}

/// Fills `{key}` placeholders in one pass (values are not re-scanned, so a value containing `{x}` is safe).
/// Only `{identifier}` counts as a placeholder; other braces (JSON examples) pass through.
pub(crate) fn render_template(
    name: &str,
    template: &str,
    vars: &[(&str, &str)],
) -> Result<String, PromptError> {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let end = after.find('}');
        let key = end.map(|e| &after[..e]);
        match key {
            Some(k)
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                match vars.iter().find(|(n, _)| *n == k) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        return Err(PromptError::Unfilled {
                            name: name.to_string(),
                            placeholder: k.to_string(),
                        });
                    }
                }
                rest = &after[k.len() + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PromptName` is made from `prompts/*.md` by `build.rs`: one variant per file, and each
    /// variant's template is embedded.
    #[test]
    fn every_prompt_file_has_a_name_and_every_name_a_file() {
        let dir = crate::toolbench::source_root().join("prompts");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
            .collect();
        files.sort();
        let names: Vec<&str> = PromptName::ALL.iter().map(|n| n.as_str()).collect();
        assert_eq!(names, files);
        let prompts = Prompts::embedded();
        for name in PromptName::ALL {
            assert!(prompts.template(*name).is_ok(), "{name}");
        }
        assert_eq!(PromptName::RouterSystem.to_string(), "router_system");
    }

    #[test]
    fn fills_placeholders_once() {
        let out = render_template("t", "Hi {name}, {x}!", &[("name", "{x}"), ("x", "there")]);
        assert_eq!(out.ok().as_deref(), Some("Hi {x}, there!"));
    }

    #[test]
    fn json_braces_pass_through() {
        let out = render_template("t", "Answer as {\"a\": 1} for {q}", &[("q", "me")]);
        assert_eq!(out.ok().as_deref(), Some("Answer as {\"a\": 1} for me"));
    }

    #[test]
    fn unfilled_placeholder_is_an_error() {
        let err = render_template("t", "Hi {name}", &[])
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("prompt `t`: placeholder {name} was not filled")
        );
    }
}
