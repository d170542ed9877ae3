//! Tools that queries name but the catalogue lacks. Such a query is not an error (its other tools
//! may be there, and a remote tool server may know the tool), but it must not pass silently: the
//! commands warn once per missing tool, naming it and the queries that use it.

use std::collections::BTreeMap;

use super::{Catalog, Query};

/// A tool named in `api_list`s that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingTool {
    pub category: String,
    pub tool: String,
    /// The first query (in file order) naming it.
    pub first_query: u64,
    /// How many queries name it.
    pub queries: usize,
}

impl std::fmt::Display for MissingTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool `{}` (category `{}`) named by query {}",
            self.tool, self.category, self.first_query
        )?;
        if self.queries > 1 {
            write!(f, " and {} more", self.queries - 1)?;
        }
        write!(f, " is not in the tools catalogue")
    }
}

/// Each tool named by `queries` and absent from `catalog`, once, in order of first appearance.
pub fn missing_tools(queries: &[Query], catalog: &Catalog) -> Vec<MissingTool> {
    let mut found: BTreeMap<(String, String), MissingTool> = BTreeMap::new();
    let mut order = Vec::new();
    for q in queries {
        let mut seen_here = std::collections::BTreeSet::new();
        for doc in q.apis() {
            if catalog.tool(&doc.category_name, &doc.tool_name).is_some() {
                continue;
            }
            let key = (doc.category_name.clone(), doc.tool_name.clone());
            if !seen_here.insert(key.clone()) {
                continue;
            }
            match found.get_mut(&key) {
                Some(m) => m.queries += 1,
                None => {
                    order.push(key.clone());
                    found.insert(
                        key,
                        MissingTool {
                            category: doc.category_name.clone(),
                            tool: doc.tool_name.clone(),
                            first_query: q.query_id,
                            queries: 1,
                        },
                    );
                }
            }
        }
    }
    order.into_iter().filter_map(|k| found.remove(&k)).collect()
}
