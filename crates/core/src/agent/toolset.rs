//! Which tools an episode gets: the query's own `api_list` ("oracle"), the whole catalogue, or the
//! retriever's top K (open-domain mode, `--tools retrieved:K`); and the MCP servers' tools, alone
//! (`--tools mcp`) or with one of those (`--tools oracle+mcp`).

use std::str::FromStr;

use crate::toolbench::{Catalog, DataError, Function, Query, Task};

/// A ranked search over the catalogue's APIs, for `--tools retrieved:K` (the `sum2act-retrieve`
/// crate's `Retriever` is one).
pub trait ToolSearch: Send + Sync {
    /// The `k` APIs that fit `instruction` best, best first.
    fn top_k(&self, instruction: &str, k: usize) -> Result<Vec<RankedApi>, String>;
}

/// One API a [`ToolSearch`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedApi {
    pub category: String,
    pub tool_name: String,
    pub api_name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSet {
    /// The query's api_list (ToolBench's default setting).
    Oracle,
    /// Every API of the catalogue (only sensible for small catalogues).
    All,
    /// The retriever's top K APIs for the instruction.
    Retrieved(usize),
}

impl FromStr for ToolSet {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "oracle" => Ok(ToolSet::Oracle),
            "all" => Ok(ToolSet::All),
            _ => match s.strip_prefix("retrieved:").map(str::parse::<usize>) {
                Some(Ok(k)) if k > 0 => Ok(ToolSet::Retrieved(k)),
                _ if s == "retrieved" => Ok(ToolSet::Retrieved(DEFAULT_K)),
                _ => Err(format!(
                    "`{s}` is not a tool set: use oracle, all or retrieved:K (K ≥ 1)"
                )),
            },
        }
    }
}

impl std::fmt::Display for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSet::Oracle => write!(f, "oracle"),
            ToolSet::All => write!(f, "all"),
            ToolSet::Retrieved(k) => write!(f, "retrieved:{k}"),
        }
    }
}

/// `--tools`: a catalogue tool set, the MCP servers' tools, or both, joined by `+` (`oracle+mcp`,
/// `retrieved:5+mcp`, `mcp`); `query` is another name for `oracle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolChoice {
    /// Tools from the catalogue; `None` for MCP tools alone.
    pub catalogue: Option<ToolSet>,
    pub mcp: bool,
}

impl ToolChoice {
    pub fn set(set: ToolSet) -> Self {
        ToolChoice {
            catalogue: Some(set),
            mcp: false,
        }
    }

    /// The same catalogue set with the MCP tools added.
    pub fn with_mcp(self) -> Self {
        ToolChoice { mcp: true, ..self }
    }
}

impl FromStr for ToolChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut choice = ToolChoice {
            catalogue: None,
            mcp: false,
        };
        for part in s.split('+').map(str::trim) {
            match part {
                "mcp" if !choice.mcp => choice.mcp = true,
                _ if part != "mcp" && choice.catalogue.is_none() => {
                    let part = if part == "query" { "oracle" } else { part };
                    choice.catalogue = Some(
                        part.parse::<ToolSet>()
                            .map_err(|e| format!("{e}, optionally with +mcp (or mcp alone)"))?,
                    );
                }
                _ => {
                    return Err(format!(
                        "`{s}`: name one catalogue set (oracle, all, retrieved:K) and mcp at most once each"
                    ));
                }
            }
        }
        Ok(choice)
    }
}

impl std::fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.catalogue, self.mcp) {
            (Some(set), true) => write!(f, "{set}+mcp"),
            (Some(set), false) => write!(f, "{set}"),
            (None, _) => write!(f, "mcp"),
        }
    }
}

/// Top K used when `retrieved` is given without a number, and for free-form instructions.
pub const DEFAULT_K: usize = 8;

/// Builds the task for a query with the chosen tools. `retriever` is needed for `Retrieved`.
pub(crate) fn task_for(
    subset: &str,
    query: &Query,
    set: ToolSet,
    catalog: &Catalog,
    retriever: Option<&dyn ToolSearch>,
) -> Result<Task, DataError> {
    let mut task = Task::from_query(subset, query, catalog).or_else(|e| match set {
        // Open-domain queries have no api_list to resolve; their tools come from elsewhere.
        ToolSet::Oracle => Err(e),
        _ => Ok(bare_task(subset, query)),
    })?;
    match set {
        ToolSet::Oracle => {}
        ToolSet::All => task.functions = all_functions(catalog),
        ToolSet::Retrieved(k) => {
            let retriever = retriever
                .ok_or_else(|| DataError::Other("retrieved tools need an index".into()))?;
            task.functions = retrieved_functions(&query.query, k, catalog, retriever)?;
        }
    }
    Ok(task)
}

/// The task for a query with a tool choice's catalogue part (no functions for `mcp` alone: the
/// caller adds the MCP functions with [`add_mcp`] once the servers are connected).
pub fn task_with(
    subset: &str,
    query: &Query,
    choice: ToolChoice,
    catalog: &Catalog,
    retriever: Option<&dyn ToolSearch>,
) -> Result<Task, DataError> {
    match choice.catalogue {
        Some(set) => task_for(subset, query, set, catalog, retriever),
        None => Ok(bare_task(subset, query)),
    }
}

/// Adds the MCP servers' functions after the task's own (none when the choice has no `mcp`).
pub fn add_mcp(task: &mut Task, choice: ToolChoice, mcp: &[Function]) {
    if choice.mcp {
        task.functions.extend(mcp.iter().cloned());
    }
}

fn bare_task(subset: &str, query: &Query) -> Task {
    Task {
        subset: subset.to_string(),
        query_id: query.query_id,
        query: query.query.clone(),
        functions: Vec::new(),
        relevant: query.relevant().to_vec(),
    }
}

/// A task for a free-form instruction (no query file): an oracle set becomes the retriever's top K
/// (the instruction has no api_list).
pub fn instruction_task(
    instruction: &str,
    choice: ToolChoice,
    catalog: &Catalog,
    retriever: Option<&dyn ToolSearch>,
) -> Result<Task, DataError> {
    crate::toolbench::check_query_text(instruction).map_err(DataError::Other)?;
    let query = Query {
        query: instruction.to_string(),
        query_id: 0,
        api_list: None,
        relevant_apis: None,
    };
    let choice = ToolChoice {
        catalogue: choice.catalogue.map(|set| match set {
            ToolSet::Oracle => ToolSet::Retrieved(DEFAULT_K),
            other => other,
        }),
        ..choice
    };
    task_with("interactive", &query, choice, catalog, retriever)
}

fn all_functions(catalog: &Catalog) -> Vec<Function> {
    catalog
        .api_docs()
        .map(|(tool, doc)| Function::from_doc(&doc, &tool.standard_name))
        .collect()
}

/// The retriever's top K as functions.
pub(crate) fn retrieved_functions(
    instruction: &str,
    k: usize,
    catalog: &Catalog,
    retriever: &dyn ToolSearch,
) -> Result<Vec<Function>, DataError> {
    let hits = retriever
        .top_k(instruction, k)
        .map_err(|e| DataError::Other(format!("retrieval failed: {e}")))?;
    Ok(hits
        .iter()
        .filter_map(|h| {
            let tool = catalog.tool(&h.category, &h.tool_name)?;
            let api = catalog.api(tool, &h.api_name)?;
            Some(Function::from_doc(&tool.api_doc(api), &tool.standard_name))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tool_sets() {
        assert_eq!("oracle".parse(), Ok(ToolSet::Oracle));
        assert_eq!("retrieved:5".parse(), Ok(ToolSet::Retrieved(5)));
        assert_eq!("retrieved".parse(), Ok(ToolSet::Retrieved(DEFAULT_K)));
        assert!("retrieved:0".parse::<ToolSet>().is_err());
        assert!("some".parse::<ToolSet>().is_err());
        assert_eq!(ToolSet::Retrieved(3).to_string(), "retrieved:3");
    }

    #[test]
    fn parses_tool_choices_with_mcp() {
        let c: ToolChoice = "oracle+mcp".parse().unwrap();
        assert_eq!(c, ToolChoice::set(ToolSet::Oracle).with_mcp());
        assert_eq!(c.to_string(), "oracle+mcp");
        assert_eq!("query+mcp".parse::<ToolChoice>(), Ok(c));
        let m: ToolChoice = "mcp".parse().unwrap();
        assert_eq!((m.catalogue, m.mcp), (None, true));
        assert_eq!(m.to_string(), "mcp");
        assert_eq!(
            "mcp+retrieved:4"
                .parse::<ToolChoice>()
                .map(|c| c.to_string()),
            Ok("retrieved:4+mcp".to_string())
        );
        assert_eq!("all".parse(), Ok(ToolChoice::set(ToolSet::All)));
        for bad in ["mcp+mcp", "oracle+all", "", "oracle+", "web"] {
            assert!(bad.parse::<ToolChoice>().is_err(), "{bad}");
        }
    }
}
