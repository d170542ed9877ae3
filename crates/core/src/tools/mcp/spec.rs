//! Where an MCP server is: `--mcp "[NAME=]COMMAND ARGS"` (stdio), `--mcp [NAME=]URL` (streamable
//! HTTP), or a `[[mcp]]` entry of the config file.

use std::collections::BTreeMap;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::toolbench::naming::is_secret;

/// One MCP server: `command` (with `args`, `env`) for stdio, or `url` for streamable HTTP.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpEntry {
    /// The name its functions are spaced under (default: the name the server gives itself).
    pub name: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Extra environment of the command. Never written out (run manifests copy the config, and
    /// these may be secrets).
    #[serde(skip_serializing)]
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    /// Name of the environment variable holding a bearer token for `url` (the token never goes in
    /// the file).
    pub bearer_token_env: Option<String>,
}

/// How to reach one MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A command whose stdin and stdout speak MCP; we start it and stop it.
    Stdio {
        program: String,
        args: Vec<String>,
        /// Extra environment variables (config file only).
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP endpoint someone else runs.
    Http {
        url: String,
        /// The environment variable holding a bearer token (config file only; never logged).
        bearer_token_env: Option<String>,
    },
}

/// One MCP server to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSpec {
    /// The name its functions are spaced under (`mcp__NAME__tool`); default: the name the server
    /// gives itself.
    pub name: Option<String>,
    pub transport: McpTransport,
}

impl McpSpec {
    /// The command line or URL, for messages, manifests and logs: no credentials (a URL's user and
    /// password, the values of secret-named flags and query parameters become `***`).
    pub(crate) fn shown(&self) -> String {
        match &self.transport {
            McpTransport::Stdio { program, args, .. } => {
                let words = redacted(std::iter::once(program).chain(args));
                let quoted: Vec<String> = words
                    .iter()
                    .map(|w| shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned()))
                    .collect();
                quoted.join(" ")
            }
            McpTransport::Http { url, .. } => match reqwest::Url::parse(url) {
                Ok(mut u) => {
                    let _ = u.set_username("");
                    let _ = u.set_password(None);
                    let pairs: Vec<(String, String)> = u
                        .query_pairs()
                        .map(|(k, v)| {
                            let v = if is_secret(&k) {
                                "***".into()
                            } else {
                                v.into_owned()
                            };
                            (k.into_owned(), v)
                        })
                        .collect();
                    if !pairs.is_empty() {
                        u.query_pairs_mut().clear().extend_pairs(pairs);
                    }
                    u.to_string()
                }
                Err(_) => "(an invalid URL)".to_string(),
            },
        }
    }

    /// A config file entry: exactly one of `command` and `url`.
    pub fn from_entry(e: &McpEntry) -> Result<McpSpec, String> {
        let name = match &e.name {
            Some(n) if !valid_name(n) => {
                return Err(format!(
                    "[[mcp]] name `{n}`: use letters, digits, `_` and `-` (at most 32, a letter first)"
                ));
            }
            n => n.clone(),
        };
        let transport = match (&e.command, &e.url) {
            (Some(c), None) if !c.trim().is_empty() => McpTransport::Stdio {
                program: c.clone(),
                args: e.args.clone(),
                env: e.env.clone(),
            },
            (None, Some(u)) => {
                check_url(u)?;
                McpTransport::Http {
                    url: u.clone(),
                    bearer_token_env: e.bearer_token_env.clone(),
                }
            }
            _ => {
                return Err(
                    "[[mcp]] entry: give exactly one of `command` (stdio) and `url` (streamable HTTP)"
                        .into(),
                );
            }
        };
        Ok(McpSpec { name, transport })
    }
}

impl FromStr for McpSpec {
    type Err = String;

    /// `[NAME=]URL` for http(s) URLs, else `[NAME=]COMMAND ARGS` split as a POSIX shell would
    /// (quotes and backslashes), without running a shell.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (name, rest) = match s.split_once('=') {
            Some((n, r)) if valid_name(n) && !r.trim().is_empty() => {
                (Some(n.to_string()), r.trim())
            }
            _ => (None, s),
        };
        if rest.is_empty() {
            return Err("empty MCP server: give a command line or an http(s) URL".into());
        }
        if rest.contains("://") && !rest.contains(char::is_whitespace) {
            check_url(rest)?;
            let transport = McpTransport::Http {
                url: rest.to_string(),
                bearer_token_env: None,
            };
            return Ok(McpSpec { name, transport });
        }
        let words = shlex::split(rest)
            .ok_or_else(|| format!("`{rest}`: unbalanced quotes in the command line"))?;
        let Some((program, args)) = words.split_first() else {
            return Err("empty MCP server: give a command line or an http(s) URL".into());
        };
        let transport = McpTransport::Stdio {
            program: program.clone(),
            args: args.to_vec(),
            env: BTreeMap::new(),
        };
        Ok(McpSpec { name, transport })
    }
}

/// The words of a command line with the values of secret-named flags hidden (`--token X`,
/// `--api-key=X`).
fn redacted<'a>(words: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut hide_next = false;
    for w in words {
        if std::mem::take(&mut hide_next) {
            out.push("***".to_string());
            continue;
        }
        if let Some(flag) = w.strip_prefix('-') {
            match flag.split_once('=') {
                Some((name, _)) if is_secret(name) => {
                    out.push(format!("-{name}=***"));
                    continue;
                }
                None => hide_next = is_secret(flag),
                _ => {}
            }
        }
        out.push(w.clone());
    }
    out
}

/// A server name usable in function names.
pub(crate) fn valid_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && n.len() <= 32
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn check_url(u: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(u).map_err(|e| format!("`{u}` is not a valid URL: {e}"))?;
    match parsed.scheme() {
        "http" | "https" => Ok(()),
        other => Err(format!(
            "`{u}`: MCP over `{other}` is not supported; use an http(s) URL (streamable HTTP) or a command (stdio)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(program: &str, args: &[&str]) -> McpTransport {
        McpTransport::Stdio {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: BTreeMap::new(),
        }
    }

    #[test]
    fn parses_commands_urls_and_names() {
        let s: McpSpec = "sum2act serve --mcp stdio --data 'my dir'".parse().unwrap();
        assert_eq!(s.name, None);
        assert_eq!(
            s.transport,
            stdio("sum2act", &["serve", "--mcp", "stdio", "--data", "my dir"])
        );
        assert_eq!(s.shown(), "sum2act serve --mcp stdio --data 'my dir'");
        let s: McpSpec = "media=python3 server.py".parse().unwrap();
        assert_eq!(s.name.as_deref(), Some("media"));
        assert_eq!(s.transport, stdio("python3", &["server.py"]));
        let s: McpSpec = "http://u:pw@127.0.0.1:9/mcp?a=b".parse().unwrap();
        assert_eq!(s.name, None);
        assert_eq!(s.shown(), "http://127.0.0.1:9/mcp?a=b");
        let s: McpSpec = "web=https://example.org/mcp".parse().unwrap();
        assert_eq!(s.name.as_deref(), Some("web"));
    }

    #[test]
    fn credentials_are_not_shown() {
        let s: McpSpec = "srv --api-key sk-1 --token=t0 --port 9 -v".parse().unwrap();
        assert_eq!(s.shown(), "srv --api-key '***' '--token=***' --port 9 -v");
        let s: McpSpec = "https://x.example/mcp?api_key=sk-2&region=eu"
            .parse()
            .unwrap();
        assert_eq!(s.shown(), "https://x.example/mcp?api_key=***&region=eu");
    }

    #[test]
    fn bad_specs_say_why() {
        assert!("".parse::<McpSpec>().unwrap_err().contains("empty"));
        assert!("a='b".parse::<McpSpec>().unwrap_err().contains("quotes"));
        assert!(
            "ws://x/mcp"
                .parse::<McpSpec>()
                .unwrap_err()
                .contains("not supported")
        );
        assert!(
            "http://"
                .parse::<McpSpec>()
                .unwrap_err()
                .contains("valid URL")
        );
    }

    #[test]
    fn config_entries_need_one_transport() {
        let e = McpEntry {
            command: Some("srv".into()),
            url: Some("http://x".into()),
            ..McpEntry::default()
        };
        assert!(McpSpec::from_entry(&e).is_err());
        let e = McpEntry {
            name: Some("9x".into()),
            url: Some("http://x/mcp".into()),
            ..McpEntry::default()
        };
        assert!(McpSpec::from_entry(&e).unwrap_err().contains("9x"));
        let e = McpEntry {
            url: Some("http://x/mcp".into()),
            bearer_token_env: Some("TOKEN".into()),
            ..McpEntry::default()
        };
        assert!(matches!(
            McpSpec::from_entry(&e).unwrap().transport,
            McpTransport::Http { .. }
        ));
    }
}
