//! Solution search on the tool graph for one subtask (ControlLLM's four strategies). A path is a
//! sequence of APIs, each executable with what the request and the APIs before it provide; it is a
//! solution when its last API is relevant enough to the subtask (score ≥ `goal`). Relevance comes
//! from a [`Scorer`] (the model in the product, a table in tests); strategies differ in how many
//! candidates they score and expand, which is the paper's cost/quality trade-off.

use std::collections::BTreeSet;

use async_trait::async_trait;
use serde::Serialize;

use crate::agent::Strategy;
use crate::tools::graph::{ToolGraph, gives, is_id_kind};

/// Rates how relevant APIs are to the subtask being searched, from 0 to 1.
#[async_trait]
pub(crate) trait Scorer: Send + Sync {
    async fn scores(&self, candidates: &[usize]) -> Vec<f32>;

    /// The candidates worth scoring at all (a large catalogue is cut down cheaply first).
    fn shortlist(&self, candidates: Vec<usize>) -> Vec<usize> {
        candidates
    }
}

/// Search limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SearchOptions {
    pub strategy: Strategy,
    pub beam_width: usize,
    /// Adaptive: the relevance a candidate needs to be expanded.
    pub threshold: f32,
    pub max_path: usize,
    /// The relevance that makes a path's last API a solution.
    pub goal: f32,
    /// Solutions kept at most (exhaustive keeps all).
    pub max_solutions: usize,
}

/// Below this a candidate is never followed.
const MIN_SCORE: f32 = 0.2;

/// A path that solves the subtask.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Solution {
    pub path: Vec<usize>,
    pub scores: Vec<f32>,
}

impl Solution {
    /// Ranks solutions: the last API's relevance, then the path's mean, shorter first.
    pub(crate) fn value(&self) -> f32 {
        let last = self.scores.last().copied().unwrap_or(0.0);
        let mean = self.scores.iter().sum::<f32>() / self.scores.len().max(1) as f32;
        last + 0.1 * mean - 0.05 * self.scores.len() as f32
    }
}

/// What a search did.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct SearchResult {
    /// Best first.
    pub solutions: Vec<Solution>,
    /// Paths extended by one API.
    pub expansions: usize,
    /// The best path seen when none reached the goal (a fallback).
    pub best_partial: Option<Solution>,
}

/// Searches from the request's resources (`given` kinds) with the chosen strategy.
pub(crate) async fn search(
    graph: &ToolGraph,
    given: &BTreeSet<String>,
    scorer: &dyn Scorer,
    o: &SearchOptions,
) -> SearchResult {
    let mut s = Search {
        graph,
        given,
        scorer,
        o,
        result: SearchResult::default(),
    };
    match o.strategy {
        Strategy::Greedy => s.greedy().await,
        Strategy::Beam => s.beam().await,
        Strategy::Adaptive | Strategy::Exhaustive => s.depth_first().await,
    }
    let mut result = s.result;
    result
        .solutions
        .sort_by(|a, b| b.value().total_cmp(&a.value()));
    if o.strategy != Strategy::Exhaustive {
        result.solutions.truncate(o.max_solutions.max(1));
    }
    result
}

struct Search<'a> {
    graph: &'a ToolGraph,
    given: &'a BTreeSet<String>,
    scorer: &'a dyn Scorer,
    o: &'a SearchOptions,
    result: SearchResult,
}

impl Search<'_> {
    /// APIs not on the path whose required identifiers are given, produced by the path, or produced
    /// by no API at all (then only the request or the model can give them).
    fn candidates(&self, path: &[usize]) -> Vec<usize> {
        (0..self.graph.apis.len())
            .filter(|i| !path.contains(i))
            .filter(|i| self.executable(*i, path))
            .collect()
    }

    fn executable(&self, api: usize, path: &[usize]) -> bool {
        let node = &self.graph.apis[api];
        node.inputs
            .iter()
            .filter(|p| node.required.contains(&p.name) && is_id_kind(&p.kind))
            .all(|p| {
                self.given.iter().any(|g| gives(g, &p.kind))
                    || self.graph.fed_by(api, &p.name, path)
                    || !self.graph.fed_at_all(api, &p.name)
            })
    }

    async fn scored(&mut self, path: &[usize]) -> Vec<(usize, f32)> {
        let cands = self.scorer.shortlist(self.candidates(path));
        if cands.is_empty() {
            return Vec::new();
        }
        let scores = self.scorer.scores(&cands).await;
        let mut out: Vec<(usize, f32)> = cands
            .into_iter()
            .zip(scores.into_iter().chain(std::iter::repeat(0.0)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    fn extend(&mut self, path: &Solution, api: usize, score: f32) -> Solution {
        self.result.expansions += 1;
        let mut next = path.clone();
        next.path.push(api);
        next.scores.push(score);
        if self
            .result
            .best_partial
            .as_ref()
            .is_none_or(|b| next.value() > b.value())
        {
            self.result.best_partial = Some(next.clone());
        }
        next
    }

    fn add_solution(&mut self, s: Solution) {
        if !self.result.solutions.contains(&s) {
            self.result.solutions.push(s);
        }
    }

    /// Follows the most relevant candidate until the goal or the length limit.
    async fn greedy(&mut self) {
        let mut path = Solution {
            path: Vec::new(),
            scores: Vec::new(),
        };
        while path.path.len() < self.o.max_path {
            let Some(&(api, score)) = self.scored(&path.path).await.first() else {
                return;
            };
            if score < MIN_SCORE {
                return;
            }
            path = self.extend(&path, api, score);
            if score >= self.o.goal {
                self.add_solution(path);
                return;
            }
        }
    }

    /// Keeps the `beam_width` best partial paths at each length.
    async fn beam(&mut self) {
        let mut beams = vec![Solution {
            path: Vec::new(),
            scores: Vec::new(),
        }];
        for _ in 0..self.o.max_path {
            let mut next = Vec::new();
            for b in &beams {
                for (api, score) in self.scored(&b.path).await {
                    if score < MIN_SCORE {
                        continue;
                    }
                    let p = self.extend(b, api, score);
                    if score >= self.o.goal {
                        self.add_solution(p);
                    } else {
                        next.push(p);
                    }
                }
            }
            next.sort_by(|a, b| b.value().total_cmp(&a.value()));
            next.truncate(self.o.beam_width.max(1));
            if next.is_empty() {
                return;
            }
            beams = next;
        }
    }

    /// Adaptive: expands every candidate at or above the threshold. Exhaustive: every candidate.
    async fn depth_first(&mut self) {
        let exhaustive = self.o.strategy == Strategy::Exhaustive;
        let floor = if exhaustive { 0.0 } else { self.o.threshold };
        let mut stack = vec![Solution {
            path: Vec::new(),
            scores: Vec::new(),
        }];
        while let Some(p) = stack.pop() {
            if !exhaustive && self.result.solutions.len() >= self.o.max_solutions.max(1) {
                return;
            }
            if p.path.len() >= self.o.max_path {
                continue;
            }
            let mut children = Vec::new();
            for (api, score) in self.scored(&p.path).await {
                if score < floor || (!exhaustive && score < MIN_SCORE) {
                    continue;
                }
                let c = self.extend(&p, api, score);
                if score >= self.o.goal {
                    self.add_solution(c);
                } else {
                    children.push(c);
                }
            }
            // Best child on top of the stack.
            children.reverse();
            stack.extend(children);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::fixture::{api_doc, string_params};
    use crate::toolbench::{ApiDoc, Function};
    use serde_json::{Value, json};
    use std::sync::Mutex;

    fn function(api: &str, params: &[&str], template: Value) -> Function {
        let doc = ApiDoc {
            api_description: Some(api.into()),
            template_response: Some(template),
            ..api_doc(
                "Movies",
                "cinebase",
                api,
                string_params(params, &Value::Null),
            )
        };
        Function::from_doc(&doc, "cinebase")
    }

    /// search(title) → movie_id; top(genre) → movie_id; details(movie_id); cast(movie_id);
    /// weather(city): cast is reachable by two paths, weather by none of them.
    fn graph() -> ToolGraph {
        ToolGraph::build(&[
            function(
                "search",
                &["title"],
                json!({"results": [{"movie_id": "str"}]}),
            ),
            function("top", &["genre"], json!({"movies": [{"movie_id": "str"}]})),
            function("details", &["movie_id"], json!({"plot": "str"})),
            function("cast", &["movie_id"], json!({"cast": [{"actor": "str"}]})),
            function("weather", &["city"], json!({"temp": "float"})),
        ])
    }

    /// Fixed relevance per API, counting how many were asked for.
    struct Table(Vec<f32>, Mutex<usize>);

    #[async_trait]
    impl Scorer for Table {
        async fn scores(&self, candidates: &[usize]) -> Vec<f32> {
            if let Ok(mut n) = self.1.lock() {
                *n += candidates.len();
            }
            candidates.iter().map(|c| self.0[*c]).collect()
        }
    }

    fn table() -> Table {
        // "Who is in the cast of The Matrix?"
        Table(vec![0.6, 0.4, 0.3, 1.0, 0.0], Mutex::new(0))
    }

    fn options(strategy: Strategy) -> SearchOptions {
        SearchOptions {
            strategy,
            beam_width: 2,
            threshold: 0.5,
            max_path: 3,
            goal: 0.8,
            max_solutions: 3,
        }
    }

    fn run(strategy: Strategy, t: &Table) -> SearchResult {
        let given = BTreeSet::new();
        let rt = tokio::runtime::Builder::new_current_thread().build();
        match rt {
            Ok(rt) => rt.block_on(search(&graph(), &given, t, &options(strategy))),
            Err(e) => panic!("runtime: {e}"),
        }
    }

    /// The APIs of `g` executable after `path` with the request's `given` kinds.
    fn candidates(g: &ToolGraph, given: &[&str], path: &[usize]) -> Vec<usize> {
        let given: BTreeSet<String> = given.iter().map(|k| k.to_string()).collect();
        let s = Search {
            graph: g,
            given: &given,
            scorer: &table(),
            o: &options(Strategy::Greedy),
            result: SearchResult::default(),
        };
        s.candidates(path)
    }

    #[test]
    fn identifiers_make_paths_necessary() {
        let g = graph();
        assert_eq!(candidates(&g, &[], &[]), vec![0, 1, 4]);
        assert_eq!(candidates(&g, &[], &[0]), vec![1, 2, 3, 4]);
        assert_eq!(candidates(&g, &["movie_id"], &[]), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn identifiers_nothing_produces_or_the_request_names_do_not_hide_a_tool() {
        use crate::toolbench::fixture::movie_function as of;
        // Agent requests 389/412/530: the subtask gave "fund ID" / "video id", the API takes `ID` /
        // `id`; 156: Flixbus's search-trips needs `from_id`, which no API of the set produces.
        let g = ToolGraph::build(&[
            of(
                "tube",
                "search_videos",
                &["q"],
                Some(json!({"items": [{"id": "str"}]})),
            ),
            of("tube", "stream", &["id"], Some(json!({"url": "str"}))),
            of("funds", "nav", &["ID"], None),
            of("bus", "search_trips", &["from_id", "date"], None),
        ]);
        // `stream` needs an id the search provides; `nav` and `search_trips` need ids nothing provides.
        assert_eq!(candidates(&g, &[], &[]), vec![0, 2, 3]);
        assert_eq!(candidates(&g, &[], &[0]), vec![1, 2, 3]);
        assert_eq!(candidates(&g, &["video_id"], &[]), vec![0, 1, 2, 3]);
    }

    #[test]
    fn greedy_follows_the_most_relevant_tool() {
        let r = run(Strategy::Greedy, &table());
        assert_eq!(r.solutions.len(), 1);
        assert_eq!(r.solutions[0].path, vec![0, 3]);
    }

    #[test]
    fn beam_finds_a_path_and_keeps_alternatives() {
        let r = run(Strategy::Beam, &table());
        let paths: Vec<Vec<usize>> = r.solutions.iter().map(|s| s.path.clone()).collect();
        assert_eq!(paths[0], vec![0, 3]);
        assert!(paths.contains(&vec![1, 3]), "{paths:?}");
    }

    #[test]
    fn adaptive_expands_only_above_the_threshold() {
        let t = table();
        let r = run(Strategy::Adaptive, &t);
        let paths: Vec<Vec<usize>> = r.solutions.iter().map(|s| s.path.clone()).collect();
        // `top` (0.4) is below the threshold, so only the path through `search` is found.
        assert_eq!(paths, vec![vec![0, 3]]);
    }

    #[test]
    fn exhaustive_finds_every_path() {
        let t = table();
        let r = run(Strategy::Exhaustive, &t);
        let mut paths: Vec<Vec<usize>> = r.solutions.iter().map(|s| s.path.clone()).collect();
        paths.sort();
        assert_eq!(paths, all_paths_to_cast());
        assert_eq!(paths.len(), 10);
        // The best solution is the short one through the most relevant search.
        assert_eq!(r.solutions[0].path, vec![0, 3]);
        // Exhaustive scores more candidates than greedy.
        let g = table();
        run(Strategy::Greedy, &g);
        let asked = |t: &Table| t.1.lock().map(|n| *n).unwrap_or(0);
        assert!(asked(&t) > asked(&g));
    }

    /// Brute force: every sequence of distinct APIs (length ≤ 3) ending at `cast`, where `details`
    /// and `cast` only come after `search` or `top` produced a movie id.
    fn all_paths_to_cast() -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let mut seqs: Vec<Vec<usize>> = vec![vec![]];
        for _ in 0..3 {
            let mut longer = Vec::new();
            for s in &seqs {
                for a in 0..5 {
                    if !s.contains(&a) && !s.contains(&3) {
                        let mut n = s.clone();
                        n.push(a);
                        longer.push(n);
                    }
                }
            }
            out.extend(
                longer
                    .iter()
                    .filter(|p| p.last() == Some(&3) && valid(p))
                    .cloned(),
            );
            seqs = longer;
        }
        out.sort();
        out
    }

    fn valid(p: &[usize]) -> bool {
        let mut have = false;
        for a in p {
            if (*a == 2 || *a == 3) && !have {
                return false;
            }
            if *a == 0 || *a == 1 {
                have = true;
            }
        }
        true
    }
}
