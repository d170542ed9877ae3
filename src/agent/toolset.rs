//! Which tools an episode gets: the query's own `api_list` ("oracle"), the whole catalogue, or the
//! retriever's top K (open-domain mode, `--tools retrieved:K`).

use std::str::FromStr;

use crate::retrieve::Retriever;
use crate::toolbench::{Catalog, DataError, Function, Query, Task};

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

/// Top K used when `retrieved` is given without a number, and for free-form instructions.
pub const DEFAULT_K: usize = 8;

/// Builds the task for a query with the chosen tools. `retriever` is needed for `Retrieved`.
pub fn task_for(
    subset: &str,
    query: &Query,
    set: ToolSet,
    catalog: &Catalog,
    retriever: Option<&Retriever>,
) -> Result<Task, DataError> {
    let mut task = Task::from_query(subset, query, catalog).or_else(|e| match set {
        // Open-domain queries have no api_list to resolve; their tools come from elsewhere.
        ToolSet::Oracle => Err(e),
        _ => Ok(Task {
            subset: subset.to_string(),
            query_id: query.query_id,
            query: query.query.clone(),
            functions: Vec::new(),
            relevant: query.relevant().to_vec(),
        }),
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

/// A task for a free-form instruction (no query file).
pub fn instruction_task(
    instruction: &str,
    set: ToolSet,
    catalog: &Catalog,
    retriever: Option<&Retriever>,
) -> Result<Task, DataError> {
    crate::toolbench::check_query_text(instruction).map_err(DataError::Other)?;
    let query = Query {
        query: instruction.to_string(),
        query_id: 0,
        api_list: None,
        relevant_apis: None,
    };
    let set = if set == ToolSet::Oracle {
        ToolSet::Retrieved(DEFAULT_K)
    } else {
        set
    };
    task_for("interactive", &query, set, catalog, retriever)
}

fn all_functions(catalog: &Catalog) -> Vec<Function> {
    catalog
        .api_docs()
        .map(|(tool, doc)| Function::from_doc(&doc, &tool.standard_name))
        .collect()
}

/// The retriever's top K as functions.
pub fn retrieved_functions(
    instruction: &str,
    k: usize,
    catalog: &Catalog,
    retriever: &Retriever,
) -> Result<Vec<Function>, DataError> {
    let hits = retriever
        .search(instruction, k)
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
}
