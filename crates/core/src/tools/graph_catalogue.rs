//! The catalogue's tool graph, loaded (or built) once per process and shared by every episode of a
//! run: `--tools all` searches it as it is, `--tools retrieved:K` searches its restriction to the
//! retrieved functions. An edge only depends on the two APIs it links, so the restriction has the
//! same edges as a graph built from those functions alone, without walking their docs again.

use std::collections::HashMap;
use std::sync::Arc;

use super::graph::{ApiNode, Edge, ToolGraph};
use crate::toolbench::Function;

/// The whole-catalogue graph with an index by function name. Cloning shares it; equality is
/// identity (comparing 35,000 edges to compare options would be pointless).
#[derive(Clone)]
pub struct CatalogueGraph {
    graph: Arc<ToolGraph>,
    by_name: Arc<HashMap<String, usize>>,
}

impl CatalogueGraph {
    pub fn new(graph: ToolGraph) -> Self {
        let by_name = graph
            .apis
            .iter()
            .enumerate()
            .map(|(i, a)| (a.function.clone(), i))
            .collect();
        CatalogueGraph {
            graph: Arc::new(graph),
            by_name: Arc::new(by_name),
        }
    }

    pub(crate) fn graph(&self) -> &Arc<ToolGraph> {
        &self.graph
    }

    /// Whether `functions` are the catalogue itself, in its order (`--tools all`).
    pub(crate) fn is_whole(&self, functions: &[Function]) -> bool {
        functions.len() == self.graph.apis.len()
            && functions
                .iter()
                .zip(&self.graph.apis)
                .all(|(f, a)| same_api(a, f))
    }

    /// The graph over `functions` (in their order), cut out of the catalogue's; `None` when one of
    /// them is not a catalogue API as the graph knows it (another doc under the same name, say, or
    /// a function listed twice), so the caller builds that graph itself.
    pub(crate) fn restrict_to(&self, functions: &[Function]) -> Option<ToolGraph> {
        let mut new_index: HashMap<usize, usize> = HashMap::with_capacity(functions.len());
        for (k, f) in functions.iter().enumerate() {
            let i = *self.by_name.get(&f.name)?;
            if !same_api(&self.graph.apis[i], f) || new_index.insert(i, k).is_some() {
                return None;
            }
        }
        let apis = functions
            .iter()
            .filter_map(|f| self.by_name.get(&f.name))
            .map(|&i| self.graph.apis[i].clone())
            .collect();
        let edges = self
            .graph
            .edges
            .iter()
            .filter_map(|e| {
                let (from, to) = (*new_index.get(&e.from)?, *new_index.get(&e.to)?);
                Some(Edge {
                    from,
                    to,
                    ..e.clone()
                })
            })
            .collect();
        Some(ToolGraph::from_parts(apis, edges))
    }
}

/// Whether a graph node describes this function (same name, tool and parameters).
fn same_api(node: &ApiNode, f: &Function) -> bool {
    node.function == f.name
        && node.tool == f.tool
        && node.required == f.required
        && node.inputs.len() == f.params.len()
        && node.inputs.iter().zip(&f.params).all(|(p, q)| &p.name == q)
}

impl PartialEq for CatalogueGraph {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.graph, &other.graph)
    }
}

impl std::fmt::Debug for CatalogueGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CatalogueGraph({} APIs, {} edges)",
            self.graph.apis.len(),
            self.graph.edges.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::toolbench::fixture::movie_function as function;

    fn catalogue() -> Vec<Function> {
        vec![
            function(
                "cinebase",
                "Search movies",
                &["title"],
                Some(json!({"results": [{"movie_id": "str", "city": "str"}]})),
            ),
            function("cinebase", "Movie details", &["movie_id"], None),
            function("weather", "Forecast", &["city"], None),
            function(
                "cinebase",
                "Top rated",
                &["page"],
                Some(json!({"movies": [{"id": "str"}]})),
            ),
            function("cinebase", "Movie cast", &["movie_id"], None),
        ]
    }

    /// Edges as comparable tuples, by function name.
    fn named_edges(g: &ToolGraph) -> Vec<(String, String, String, String)> {
        let mut v: Vec<_> = g
            .edges
            .iter()
            .map(|e| {
                (
                    g.apis[e.from].function.clone(),
                    e.output.clone(),
                    g.apis[e.to].function.clone(),
                    e.param.clone(),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_restriction_equals_a_graph_built_from_the_subset() {
        let all = catalogue();
        let cat = CatalogueGraph::new(ToolGraph::build(&all));
        assert!(cat.is_whole(&all));
        // Out of catalogue order, as a retriever ranks them.
        let subset = vec![
            all[4].clone(),
            all[2].clone(),
            all[0].clone(),
            all[3].clone(),
        ];
        assert!(!cat.is_whole(&subset));
        let cut = cat
            .restrict_to(&subset)
            .unwrap_or_else(|| panic!("not restricted"));
        let built = ToolGraph::build(&subset);
        assert_eq!(cut.apis, built.apis);
        assert_eq!(named_edges(&cut), named_edges(&built));
        assert!(!cut.edges.is_empty());
        assert!(named_edges(&cut).len() < named_edges(cat.graph()).len());
        // Same edges per pair in the same order, and the incoming index rebuilt.
        for a in 0..subset.len() {
            for b in 0..subset.len() {
                let x: Vec<_> = cut.edges_between(a, b).collect();
                let y: Vec<_> = built.edges_between(a, b).collect();
                assert_eq!(x, y);
            }
        }
        assert!(cut.fed_by(0, "movie_id", &[2, 3]));
        assert_eq!(cut.size().orphan_ids, built.size().orphan_ids);
    }

    #[test]
    fn a_function_the_graph_does_not_know_is_refused() {
        let all = catalogue();
        let cat = CatalogueGraph::new(ToolGraph::build(&all));
        let stranger = function("other", "Lookup", &["q"], None);
        assert!(cat.restrict_to(&[all[0].clone(), stranger]).is_none());
        // Same name, other parameters: the graph's node does not describe it.
        let mut changed = all[1].clone();
        changed.params.push("language".into());
        assert!(cat.restrict_to(&[changed.clone()]).is_none());
        let mut whole = all.clone();
        whole[1] = changed;
        assert!(!cat.is_whole(&whole));
        assert!(cat.restrict_to(&[all[0].clone(), all[0].clone()]).is_none());
        assert!(cat.restrict_to(&[]).is_some_and(|g| g.apis.is_empty()));
    }

    #[test]
    fn clones_are_equal_and_other_graphs_are_not() {
        let a = CatalogueGraph::new(ToolGraph::build(&catalogue()));
        let b = CatalogueGraph::new(ToolGraph::build(&catalogue()));
        assert_eq!(a.clone(), a);
        assert_ne!(a, b);
        assert_eq!(
            format!("{a:?}"),
            format!("CatalogueGraph(5 APIs, {} edges)", a.graph().edges.len())
        );
    }
}
