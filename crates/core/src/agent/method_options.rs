//! Options of the plan-and-execute (`plan`) and tool-graph (`graph`) methods, kept apart from the
//! options every method shares so that adding a method does not touch the others.

use crate::tools::graph_catalogue::CatalogueGraph;

/// Options of the two planning methods.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodOptions {
    /// Tool calls of one plan (or of independent subtasks) in flight at once; 1 runs them one by one.
    pub parallel: usize,
    /// How `graph` searches the tool graph.
    pub strategy: Strategy,
    /// Paths kept per step by the beam strategy.
    pub beam_width: usize,
    /// Relevance (0–1) a tool needs for the adaptive strategy to expand it.
    pub threshold: f32,
    /// Tools on one solution path at most.
    pub max_path: usize,
    /// `graph`: the catalogue's tool graph, loaded once by the caller (from the on-disk cache) and
    /// shared by every episode; tool sets drawn from the catalogue are cut out of it.
    pub catalogue_graph: Option<CatalogueGraph>,
}

impl Default for MethodOptions {
    fn default() -> Self {
        MethodOptions {
            parallel: 4,
            strategy: Strategy::Adaptive,
            beam_width: 2,
            threshold: 0.6,
            max_path: 3,
            catalogue_graph: None,
        }
    }
}

/// ControlLLM's four ways of searching the tool graph (adaptive is the paper's best trade-off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Follows the single most relevant tool at each step.
    Greedy,
    /// Keeps the best `beam_width` partial paths at each step.
    Beam,
    /// Expands every tool whose relevance reaches the threshold.
    Adaptive,
    /// Expands every executable tool up to the path-length limit.
    Exhaustive,
}

crate::names::named_values!(Strategy, "search strategy" {
    Greedy => "greedy": "",
    Beam => "beam": "",
    Adaptive => "adaptive": "",
    Exhaustive => "exhaustive": "",
});

impl Strategy {
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_strategies() {
        for (name, _) in Strategy::NAMES {
            let s: Strategy = name.parse().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.as_str(), *name);
        }
        assert!("dfs".parse::<Strategy>().is_err());
    }
}
