//! The tool graph (ControlLLM's Thoughts-on-Graph, on ToolBench APIs): nodes are APIs and typed
//! resources; an edge links an API's output field (from its `template_response`, or inferred from
//! its name when there is none) to another API's parameter of the same resource kind (`movie_id`,
//! `symbol`, `city`, …). Identifiers (`id`, `*_id`) can only come from an output or from the request
//! itself, which is what makes a path necessary; other values (a city, a date) the request can give.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::toolbench::Function;

/// What a resource holds, as far as the docs tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceType {
    Text,
    Integer,
    Number,
    Boolean,
    List,
}

impl ResourceType {
    fn of_template(v: &Value) -> ResourceType {
        match v {
            Value::Array(_) => ResourceType::List,
            Value::Bool(_) => ResourceType::Boolean,
            Value::Number(n) if n.is_f64() => ResourceType::Number,
            Value::Number(_) => ResourceType::Integer,
            Value::String(s) => match s.as_str() {
                "int" | "integer" => ResourceType::Integer,
                "float" | "number" => ResourceType::Number,
                "bool" | "boolean" => ResourceType::Boolean,
                s if s.starts_with("list") => ResourceType::List,
                _ => ResourceType::Text,
            },
            _ => ResourceType::Text,
        }
    }

    fn of_schema(ty: &str) -> ResourceType {
        match ty {
            "integer" => ResourceType::Integer,
            "number" => ResourceType::Number,
            "boolean" => ResourceType::Boolean,
            "array" => ResourceType::List,
            _ => ResourceType::Text,
        }
    }

    /// ToolBench is loosely typed (ids as numbers or strings): scalars fit scalars, lists fit lists.
    pub(crate) fn fits(self, other: ResourceType) -> bool {
        (self == ResourceType::List) == (other == ResourceType::List)
    }
}

/// A parameter or an output field of an API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Port {
    /// The parameter name, or the output field's path (`results[0].movie_id`).
    pub name: String,
    pub kind: String,
    pub ty: ResourceType,
    /// The output was guessed from the API's name (no `template_response`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
}

/// One API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiNode {
    /// The function name the model sees.
    pub function: String,
    pub tool: String,
    pub inputs: Vec<Port>,
    /// Names of the required inputs.
    pub required: Vec<String>,
    pub outputs: Vec<Port>,
}

/// An output field feeding a parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub from: usize,
    /// The output field's path.
    pub output: String,
    pub to: usize,
    pub param: String,
    pub kind: String,
}

/// The graph over a set of functions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolGraph {
    pub apis: Vec<ApiNode>,
    pub edges: Vec<Edge>,
    /// Edge indices by the API they feed.
    #[serde(skip)]
    incoming: BTreeMap<usize, Vec<usize>>,
}

/// Its size, for `sum2act index graph` and the episode record.
#[derive(Debug, Clone, Serialize)]
pub struct GraphSize {
    pub apis: usize,
    pub resource_kinds: usize,
    pub edges: usize,
    /// Outputs read from `template_response` / guessed from names.
    pub template_outputs: usize,
    pub inferred_outputs: usize,
    /// Parameters the request itself can fill (not identifiers).
    pub request_inputs: usize,
    /// Identifier parameters no API of the set produces.
    pub orphan_ids: usize,
}

/// Output leaves read from one template, at most.
const MAX_OUTPUTS: usize = 64;

/// Kinds too generic to link different tools (every search API takes a `query`).
const GENERIC: &[&str] = &[
    "query",
    "q",
    "name",
    "type",
    "text",
    "limit",
    "page",
    "lang",
    "language",
    "format",
    "status",
    "message",
    "data",
    "result",
    "description",
    "title",
    "value",
    "count",
    "offset",
    "sort",
    "id",
];

impl ToolGraph {
    pub fn build(functions: &[Function]) -> ToolGraph {
        let apis: Vec<ApiNode> = functions.iter().map(api_node).collect();
        let mut consumers: BTreeMap<&str, Vec<(usize, &Port)>> = BTreeMap::new();
        for (i, a) in apis.iter().enumerate() {
            for p in &a.inputs {
                consumers.entry(p.kind.as_str()).or_default().push((i, p));
            }
        }
        let mut edges = Vec::new();
        for (from, a) in apis.iter().enumerate() {
            for out in &a.outputs {
                let mut targets: Vec<(usize, &Port)> = consumers
                    .get(out.kind.as_str())
                    .cloned()
                    .unwrap_or_default();
                if out.kind == "id" {
                    // A bare `id` may feed the same tool's `*_id` parameters.
                    targets.extend(
                        apis.iter()
                            .enumerate()
                            .filter(|(_, b)| b.tool == a.tool)
                            .flat_map(|(i, b)| {
                                b.inputs
                                    .iter()
                                    .filter(|p| is_id_kind(&p.kind) && p.kind != "id")
                                    .map(move |p| (i, p))
                            }),
                    );
                } else if is_id_kind(&out.kind) {
                    targets.extend(consumers.get("id").cloned().unwrap_or_default());
                }
                for (to, p) in targets {
                    if to != from && links(a, out, &apis[to], p) {
                        edges.push(Edge {
                            from,
                            output: out.name.clone(),
                            to,
                            param: p.name.clone(),
                            kind: p.kind.clone(),
                        });
                    }
                }
            }
        }
        ToolGraph::from_parts(apis, edges)
    }

    /// A graph from its nodes and edges (a built or a cached one), with the edge index rebuilt.
    pub(crate) fn from_parts(apis: Vec<ApiNode>, edges: Vec<Edge>) -> ToolGraph {
        let mut incoming: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, e) in edges.iter().enumerate() {
            incoming.entry(e.to).or_default().push(i);
        }
        ToolGraph {
            apis,
            edges,
            incoming,
        }
    }

    pub(crate) fn index(&self, function: &str) -> Option<usize> {
        self.apis.iter().position(|a| a.function == function)
    }

    /// Whether an edge from one of `from` feeds parameter `param` of `to`.
    pub(crate) fn fed_by(&self, to: usize, param: &str, from: &[usize]) -> bool {
        self.incoming.get(&to).is_some_and(|es| {
            es.iter()
                .any(|&i| self.edges[i].param == param && from.contains(&self.edges[i].from))
        })
    }

    /// Whether any API of the graph can feed parameter `param` of `to`. An identifier none produces
    /// can only come from the request or the model, so it does not make its API unreachable.
    pub(crate) fn fed_at_all(&self, to: usize, param: &str) -> bool {
        self.incoming
            .get(&to)
            .is_some_and(|es| es.iter().any(|&i| self.edges[i].param == param))
    }

    /// Edges from `from` into `to`.
    pub(crate) fn edges_between(&self, from: usize, to: usize) -> impl Iterator<Item = &Edge> {
        self.edges
            .iter()
            .filter(move |e| e.from == from && e.to == to)
    }

    pub fn size(&self) -> GraphSize {
        let outputs = self.apis.iter().flat_map(|a| &a.outputs);
        let kinds: BTreeSet<&str> = self
            .apis
            .iter()
            .flat_map(|a| a.inputs.iter().chain(&a.outputs))
            .map(|p| p.kind.as_str())
            .collect();
        let inputs = self.apis.iter().flat_map(|a| &a.inputs);
        let fed: BTreeSet<(usize, &str)> = self
            .edges
            .iter()
            .map(|e| (e.to, e.param.as_str()))
            .collect();
        let orphan_ids = self
            .apis
            .iter()
            .enumerate()
            .flat_map(|(i, a)| a.inputs.iter().map(move |p| (i, p)))
            .filter(|(i, p)| is_id_kind(&p.kind) && !fed.contains(&(*i, p.name.as_str())))
            .count();
        GraphSize {
            apis: self.apis.len(),
            resource_kinds: kinds.len(),
            edges: self.edges.len(),
            template_outputs: outputs.clone().filter(|p| !p.inferred).count(),
            inferred_outputs: outputs.filter(|p| p.inferred).count(),
            request_inputs: inputs.filter(|p| !is_id_kind(&p.kind)).count(),
            orphan_ids,
        }
    }

    /// Up to `n` edges as text (`a.results[0].movie_id -> b(movie_id)`), spread over the graph.
    pub fn sample(&self, n: usize) -> Vec<String> {
        let step = (self.edges.len() / n.max(1)).max(1);
        self.edges
            .iter()
            .step_by(step)
            .take(n)
            .map(|e| {
                format!(
                    "{}.{} -> {}({}) [{}]",
                    self.apis[e.from].function, e.output, self.apis[e.to].function, e.param, e.kind
                )
            })
            .collect()
    }
}

/// Whether output `out` of `a` can feed parameter `p` of `b`.
fn links(a: &ApiNode, out: &Port, b: &ApiNode, p: &Port) -> bool {
    if !out.ty.fits(p.ty) {
        return false;
    }
    let same_tool = a.tool == b.tool;
    if out.kind == p.kind {
        return same_tool || !GENERIC.contains(&p.kind.as_str());
    }
    // A bare `id` matches the tool's own `*_id` fields, and the other way round.
    same_tool
        && ((p.kind == "id" && out.kind.ends_with("_id"))
            || (out.kind == "id" && p.kind.ends_with("_id")))
}

fn api_node(f: &Function) -> ApiNode {
    let props = &f.schema["parameters"]["properties"];
    let inputs: Vec<Port> = f
        .params
        .iter()
        .map(|p| Port {
            name: p.clone(),
            kind: kind_of(p),
            ty: ResourceType::of_schema(props[p.as_str()]["type"].as_str().unwrap_or("string")),
            inferred: false,
        })
        .collect();
    let outputs = match f.doc.template() {
        Some(t) if t.is_object() || t.is_array() => template_outputs(&t),
        _ => inferred_outputs(&f.doc.api_name),
    };
    ApiNode {
        function: f.name.clone(),
        tool: f.tool.clone(),
        inputs,
        required: f.required.clone(),
        outputs,
    }
}

/// The leaves of a template response, with paths (`_list_length` markers skipped).
pub(crate) fn template_outputs(t: &Value) -> Vec<Port> {
    let mut out = Vec::new();
    walk(t, String::new(), "", &mut out);
    out
}

fn walk(v: &Value, path: String, parent: &str, out: &mut Vec<Port>) {
    if out.len() >= MAX_OUTPUTS {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if k == "_list_length" {
                    continue;
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(child, p, k, out);
            }
        }
        Value::Array(a) if a.first().is_some_and(|x| x.is_object()) => {
            if let Some(first) = a.first() {
                walk(first, format!("{path}[0]"), parent, out);
            }
        }
        leaf => {
            let key = path.rsplit(['.', ']']).next().unwrap_or(&path);
            let mut kind = kind_of(key);
            if kind == "id" {
                kind = entity_id(parent).unwrap_or(kind);
            }
            out.push(Port {
                name: path.clone(),
                kind,
                ty: ResourceType::of_template(leaf),
                inferred: false,
            });
        }
    }
}

/// `movies` → `movie_id`, for an `id` field inside a list of movies.
pub(crate) fn entity_id(parent: &str) -> Option<String> {
    let p = kind_of(parent);
    if p.is_empty() || ["results", "data", "items", "response", "list", "id"].contains(&p.as_str())
    {
        return None;
    }
    Some(format!("{}_id", singular(&p)))
}

/// With no template: a search/list/find API is assumed to return ids of what it finds
/// ("Search hotels" → `hotel_id`).
fn inferred_outputs(api_name: &str) -> Vec<Port> {
    let words: Vec<String> = api_name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let finds = words
        .first()
        .is_some_and(|w| ["search", "list", "find", "get", "top", "all"].contains(&w.as_str()));
    match (finds, words.last()) {
        (true, Some(noun)) if words.len() > 1 => vec![Port {
            name: format!("{}[0].id", noun),
            kind: format!("{}_id", singular(noun)),
            ty: ResourceType::Text,
            inferred: true,
        }],
        _ => Vec::new(),
    }
}

fn singular(w: &str) -> String {
    if let Some(s) = w.strip_suffix("ies") {
        format!("{s}y")
    } else if w.ends_with("ss") {
        w.to_string()
    } else {
        w.strip_suffix('s').unwrap_or(w).to_string()
    }
}

/// The resource kind of a parameter or field name: lower snake case, with common synonyms merged.
pub(crate) fn kind_of(name: &str) -> String {
    let mut k = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            k.push('_');
        }
        if c.is_alphanumeric() {
            k.extend(c.to_lowercase());
        } else if !k.ends_with('_') {
            k.push('_');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    let k = k.trim_matches('_').to_string();
    let synonym = match k.as_str() {
        "ticker" | "coin" | "coin_symbol" | "stock_symbol" => "symbol",
        "town" | "city_name" | "location_city" => "city",
        "mail" | "email_address" => "email",
        "link" | "uri" | "website" => "url",
        "iata" | "iata_code" | "airport_code" | "airport" => "iata_code",
        "zip" | "zipcode" | "postal_code" => "zip_code",
        // ToolBench renames a parameter `id` to `is_id` (a reserved word, `naming::change_name`).
        "is_id" => "id",
        _ => return k,
    };
    synonym.to_string()
}

/// Identifiers cannot be made up: only an output or the request can provide one.
pub(crate) fn is_id_kind(kind: &str) -> bool {
    kind == "id" || kind.ends_with("_id") || kind.ends_with("_ids")
}

/// Whether a value of kind `given` (a request's input) fills a parameter of kind `param`: the same
/// kind, or an identifier named by what it identifies (`video_id`, "fund ID") for a bare `id`
/// parameter (`id`, `ID`), and the other way round.
pub(crate) fn gives(given: &str, param: &str) -> bool {
    given == param || (is_id_kind(given) && is_id_kind(param) && (given == "id" || param == "id"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::toolbench::fixture::movie_function as function;

    #[test]
    fn kinds_normalise_names_and_synonyms() {
        assert_eq!(kind_of("movieId"), "movie_id");
        assert_eq!(kind_of("Ticker"), "symbol");
        assert_eq!(kind_of("city-name"), "city");
        assert_eq!(kind_of("is_id"), "id");
        assert!(is_id_kind("hotel_id"));
        assert!(!is_id_kind("city"));
    }

    #[test]
    fn edges_link_outputs_to_parameters_of_the_same_kind() {
        let fs = vec![
            function(
                "cinebase",
                "Search movies",
                &["title"],
                Some(json!({"results": [{"movie_id": "str", "title": "str", "_list_length": 3}]})),
            ),
            function(
                "cinebase",
                "Movie cast",
                &["movie_id"],
                Some(json!({"cast": [{"actor": "str"}]})),
            ),
            function("streams", "Where to watch", &["movie_id"], None),
            function("hotels", "Search hotels", &["city"], None),
            function("reviews", "Hotel reviews", &["hotel_id"], None),
        ];
        let g = ToolGraph::build(&fs);
        let pairs: Vec<(usize, usize, &str)> = g
            .edges
            .iter()
            .map(|e| (e.from, e.to, e.output.as_str()))
            .collect();
        assert!(pairs.contains(&(0, 1, "results[0].movie_id")), "{pairs:?}");
        assert!(pairs.contains(&(0, 2, "results[0].movie_id")), "{pairs:?}");
        // The inferred output of "Search hotels" feeds the reviews.
        assert!(pairs.contains(&(3, 4, "hotels[0].id")), "{pairs:?}");
        // A title is generic across tools: no edge from the title field.
        assert!(!g.edges.iter().any(|e| e.kind == "title"));
        let size = g.size();
        assert_eq!(size.apis, 5);
        assert_eq!(size.inferred_outputs, 1);
        assert_eq!(size.orphan_ids, 0);
        assert!(!g.sample(3).is_empty());
    }
}
