//! Example requests per API: document expansion written by an LLM. ToolBench requests are phrased as
//! a person's needs ("I'm planning a movie night…") while API docs are terse names; a few imagined
//! requests per API carry the words people actually use into the index (the Re-Invoke / EasyTool
//! idea). Generating them is slow on a CPU, so they live in their own JSON Lines file, one API per
//! line, appended as each finishes: an interrupted pass loses nothing and a rerun does only the rest.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::RetrieveError;
use sum2act_core::llm::Purpose;
use sum2act_core::llm::{CompletionRequest, LlmClient, Message};
use sum2act_core::prompts::{PromptName, Prompts};
use sum2act_core::toolbench::{Catalog, Tool, ToolApi};

/// One line of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleLine {
    pub tool: String,
    pub api: String,
    /// [`api_key`] of the API the requests were written for: a changed doc makes them stale.
    pub key: String,
    pub requests: Vec<String>,
    /// The model that wrote them.
    #[serde(default)]
    pub model: String,
}

/// The example requests of a catalogue, as loaded from a file.
#[derive(Debug, Clone, Default)]
pub struct ExampleRequests {
    by_key: HashMap<String, Vec<String>>,
    digest: String,
}

/// Identifies an API's documentation: SHA-256 (first 12 bytes, hex) of the compact JSON array
/// `[category, tool name, API name, API description]`, so other tools can write the file too.
pub fn api_key(tool: &Tool, api: &ToolApi) -> String {
    let doc = serde_json::json!([
        tool.category,
        tool.file.tool_name,
        api.name,
        api.description
    ]);
    let mut h = Sha256::new();
    h.update(doc.to_string().as_bytes());
    hex::encode(&h.finalize()[..12])
}

impl ExampleRequests {
    /// Reads a file written by [`generate`]; a missing file is an empty set. A malformed line is an
    /// error naming the file and line; a later line for the same API replaces an earlier one.
    pub fn load(path: &Path) -> Result<Self, RetrieveError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(RetrieveError::io(path, e)),
        };
        let mut by_key = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed: ExampleLine = serde_json::from_str(line).map_err(|e| {
                RetrieveError::BadInput(format!("{}:{}: {e}", path.display(), n + 1))
            })?;
            by_key.insert(parsed.key, parsed.requests);
        }
        let mut h = Sha256::new();
        h.update(text.as_bytes());
        Ok(ExampleRequests {
            by_key,
            digest: hex::encode(&h.finalize()[..12]),
        })
    }

    /// The requests written for this API's current doc (none when absent or stale).
    pub fn for_api(&self, tool: &Tool, api: &ToolApi) -> &[String] {
        self.by_key
            .get(&api_key(tool, api))
            .map_or(&[], Vec::as_slice)
    }

    /// The catalogue's APIs without requests for their current doc, in catalogue order: what a
    /// pass of [`generate`] has left to do.
    pub fn missing<'a>(&self, catalog: &'a Catalog) -> Vec<(&'a Tool, &'a ToolApi)> {
        catalog
            .tools()
            .iter()
            .flat_map(|t| t.file.api_list.iter().map(move |a| (t, a)))
            .filter(|(t, a)| self.for_api(t, a).is_empty())
            .collect()
    }

    /// Changes whenever the file does, for the index fingerprint.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// The request lines of a model's reply: list markers, quotes and empty or commentary lines
/// dropped, repeats removed, at most `n`.
pub fn parse_requests(reply: &str, n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in reply.lines() {
        let mut s = line.trim();
        s = s.trim_start_matches(|c: char| c.is_ascii_digit() || "-*•.)".contains(c));
        s = s
            .trim()
            .trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .trim();
        let lower = s.to_lowercase();
        let commentary = lower.starts_with("response:")
            || lower.starts_with("here are")
            || lower.starts_with("sure")
            || s.ends_with(':');
        if s.split_whitespace().count() < 2 || commentary {
            continue;
        }
        if out.iter().any(|o| o.eq_ignore_ascii_case(s)) {
            continue;
        }
        out.push(s.to_string());
        if out.len() == n {
            break;
        }
    }
    out
}

/// How to run a generation pass.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub out: PathBuf,
    /// Requests to ask for per API.
    pub per_api: usize,
    /// Model calls in flight.
    pub concurrency: usize,
    /// Stop after this many APIs (for a trial run).
    pub limit: Option<usize>,
}

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GenerateSummary {
    pub apis: usize,
    pub already: usize,
    pub written: usize,
    pub failed: Vec<String>,
}

/// The prompt for one API.
fn request_for(
    prompts: &Prompts,
    tool: &Tool,
    api: &ToolApi,
    per_api: usize,
) -> Result<CompletionRequest, RetrieveError> {
    let inputs: Vec<String> = api
        .required_parameters
        .iter()
        .chain(&api.optional_parameters)
        .map(|p| match p.default_text() {
            d if d.is_empty() => p.name.clone(),
            d => format!("{} (e.g. {d})", p.name),
        })
        .collect();
    let inputs = if inputs.is_empty() {
        "none".to_string()
    } else {
        inputs.join("; ")
    };
    let description = if api.description.trim().is_empty() {
        api.name.as_str()
    } else {
        api.description.as_str()
    };
    let render = |name: PromptName, vars: &[(&str, &str)]| {
        prompts
            .render(name, vars)
            .map_err(|e| RetrieveError::BadInput(e.to_string()))
    };
    let system = render(PromptName::ExampleRequestsSystem, &[])?;
    let user = render(
        PromptName::ExampleRequests,
        &[
            ("tool", &tool.file.tool_name),
            ("category", &tool.category.replace('_', " ")),
            ("api", &api.name),
            ("description", description),
            ("inputs", &inputs),
            ("count", &per_api.to_string()),
        ],
    )?;
    let key = api_key(tool, api);
    // A fixed seed per API: the embedded model writes the same requests on every machine.
    let seed = u64::from_str_radix(&key[..12], 16).unwrap_or(0);
    let mut request = CompletionRequest::new(
        Purpose::ExampleRequests,
        vec![Message::system(system), Message::user(user)],
    )
    .with_max_tokens(40 * per_api as u32)
    .with_temperature(0.7);
    request.seed = Some(seed);
    Ok(request)
}

/// Writes example requests for every API of `catalog` that `existing` lacks, appending one line per
/// API to `options.out` as soon as it is done. `on_done` is told after each API.
pub async fn generate(
    llm: Arc<dyn LlmClient>,
    prompts: &Prompts,
    catalog: &Catalog,
    existing: &ExampleRequests,
    options: &GenerateOptions,
    on_done: &(dyn Fn(usize) + Sync),
) -> Result<GenerateSummary, RetrieveError> {
    let mut todo = existing.missing(catalog);
    let mut summary = GenerateSummary {
        apis: catalog.api_count(),
        already: catalog.api_count() - todo.len(),
        ..GenerateSummary::default()
    };
    if let Some(limit) = options.limit {
        todo.truncate(limit);
    }
    if let Some(parent) = options.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| RetrieveError::io(parent, e))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&options.out)
        .map_err(|e| RetrieveError::io(&options.out, e))?;
    let model = llm.model_id();
    let mut jobs = Vec::with_capacity(todo.len());
    for (tool, api) in todo {
        jobs.push((tool, api, request_for(prompts, tool, api, options.per_api)?));
    }
    let mut done = futures::stream::iter(jobs)
        .map(|(tool, api, request)| {
            let llm = llm.clone();
            async move { (tool, api, llm.complete(&request).await) }
        })
        .buffer_unordered(options.concurrency.max(1));
    while let Some((tool, api, reply)) = done.next().await {
        let name = format!("{} / {}", tool.file.tool_name, api.name);
        let requests = match reply {
            Ok(c) => parse_requests(&c.content, options.per_api),
            Err(e) => {
                summary.failed.push(format!("{name}: {e}"));
                on_done(summary.written + summary.failed.len());
                continue;
            }
        };
        if requests.is_empty() {
            summary
                .failed
                .push(format!("{name}: the reply held no request"));
            on_done(summary.written + summary.failed.len());
            continue;
        }
        let line = ExampleLine {
            tool: tool.file.tool_name.clone(),
            api: api.name.clone(),
            key: api_key(tool, api),
            requests,
            model: model.clone(),
        };
        let mut text = serde_json::to_string(&line).unwrap_or_default();
        text.push('\n');
        file.write_all(text.as_bytes())
            .and_then(|_| file.flush())
            .map_err(|e| RetrieveError::io(&options.out, e))?;
        summary.written += 1;
        on_done(summary.written + summary.failed.len());
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sum2act_core::llm::scripted::{ScriptedLlm, reply};

    #[test]
    fn reply_lines_become_requests() {
        let text = "Sure, here are three:\n1. \"Find a joke about Naruto.\"\n- Find a joke about naruto.\n\n2) What's the weather in Paris today?\n   - Response: `/weather?q=Paris`\nok\n3. Give me 10 random quotes";
        assert_eq!(
            parse_requests(text, 3),
            [
                "Find a joke about Naruto.",
                "What's the weather in Paris today?",
                "Give me 10 random quotes"
            ]
        );
        assert_eq!(parse_requests(text, 1).len(), 1);
        assert!(parse_requests("Here are some:\n\n", 3).is_empty());
    }

    fn catalog() -> Catalog {
        let tool = |name: &str, apis: serde_json::Value| {
            let file =
                serde_json::from_value(serde_json::json!({"tool_name": name, "api_list": apis}))
                    .unwrap();
            Tool {
                category: "Movies".into(),
                standard_name: sum2act_core::toolbench::naming::standardize(name),
                file,
            }
        };
        Catalog::from_tools(vec![tool(
            "Quotes",
            serde_json::json!([{"name": "Random quote", "description": "A random quote", "required_parameters": [], "optional_parameters": []},
                                   {"name": "By year", "description": "", "required_parameters": [{"name": "year", "type": "NUMBER", "description": "", "default": "1999"}], "optional_parameters": []}]),
        )])
    }

    #[tokio::test]
    async fn a_pass_appends_lines_and_a_rerun_does_only_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("examples.jsonl");
        let catalog = catalog();
        let llm = Arc::new(ScriptedLlm::new(|r, _| {
            let user = &r.messages[1].content;
            Ok(reply(if user.contains("By year") {
                "Which films came out in 1999?\nList movie quotes from 1999"
            } else {
                "Tell me something a movie character said"
            }))
        }));
        let options = GenerateOptions {
            out: out.clone(),
            per_api: 2,
            concurrency: 2,
            limit: Some(1),
        };
        let prompts = Prompts::embedded();
        let first = generate(
            llm.clone(),
            &prompts,
            &catalog,
            &ExampleRequests::default(),
            &options,
            &|_| {},
        )
        .await
        .unwrap();
        assert_eq!((first.apis, first.already, first.written), (2, 0, 1));
        let loaded = ExampleRequests::load(&out).unwrap();
        assert_eq!(loaded.missing(&catalog).len(), 1);
        let options = GenerateOptions {
            limit: None,
            ..options
        };
        let second = generate(llm.clone(), &prompts, &catalog, &loaded, &options, &|_| {})
            .await
            .unwrap();
        assert_eq!((second.already, second.written), (1, 1));
        assert_eq!(llm.requests().len(), 2);
        let shown = &llm.requests()[1].messages[1].content;
        assert!(shown.contains("year (e.g. 1999)"), "{shown}");
        let loaded = ExampleRequests::load(&out).unwrap();
        let tool = &catalog.tools()[0];
        assert_eq!(
            loaded.for_api(tool, &tool.file.api_list[1]),
            [
                "Which films came out in 1999?",
                "List movie quotes from 1999"
            ]
        );
        // A changed doc makes its requests stale.
        let mut changed = tool.file.api_list[1].clone();
        changed.description = "Quotes of one year".into();
        assert!(loaded.for_api(tool, &changed).is_empty());
    }

    #[test]
    fn a_bad_line_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ex.jsonl");
        std::fs::write(
            &path,
            "{\"tool\":\"a\",\"api\":\"b\",\"key\":\"k\",\"requests\":[\"x y\"]}\nnot json\n",
        )
        .unwrap();
        let err = ExampleRequests::load(&path).unwrap_err().to_string();
        assert!(err.contains("ex.jsonl:2"), "{err}");
        assert!(
            ExampleRequests::load(&dir.path().join("none.jsonl"))
                .unwrap()
                .digest()
                .is_empty()
        );
    }
}
