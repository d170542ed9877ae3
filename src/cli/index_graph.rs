//! `sum2act index graph`: the tool graph of a data directory's catalogue (the one `--method graph`
//! searches), its size and a sample of its edges. The graph is cached under the index folder
//! (`graph/`), keyed by the catalogue's fingerprint; the output says whether it was loaded or built.
//! `run` and `batch` load the same cached graph once for `--method graph` over catalogue tools.

use std::process::ExitCode;
use std::time::Instant;

use super::GlobalArgs;
use sum2act_core::agent::Method;
use sum2act_core::agent::toolset::ToolSet;
use sum2act_core::toolbench::{Catalog, Function};
use sum2act_core::tools::graph::ToolGraph;
use sum2act_core::tools::graph_cache::{GraphSource, load_or_build};
use sum2act_core::tools::graph_catalogue::CatalogueGraph;
use sum2act_retrieve::{default_index_dir, fingerprint};

pub fn run(global: &GlobalArgs, json: bool, sample: usize) -> anyhow::Result<ExitCode> {
    let (_, catalog) = super::open_data(global)?;
    let (graph, source, ms) = catalogue_graph(&catalog);
    let verb = verb(source);
    let size = graph.size();
    let edges = graph.sample(sample);
    if json {
        let out =
            serde_json::json!({"size": size, "source": source, "build_ms": ms, "sample": edges});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "tool graph: {} APIs, {} resource kinds, {} edges ({verb} in {ms:.1} ms)",
        size.apis, size.resource_kinds, size.edges
    );
    println!(
        "outputs: {} from template_response, {} inferred from API names; {} parameters the request can fill; {} identifier parameters no API produces",
        size.template_outputs, size.inferred_outputs, size.request_inputs, size.orphan_ids
    );
    for e in edges {
        println!("  {e}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The catalogue's graph from the cache in the index folder (built and written when missing or
/// stale), where it came from, and the milliseconds it took.
fn catalogue_graph(catalog: &Catalog) -> (ToolGraph, GraphSource, f64) {
    let functions: Vec<Function> = catalog
        .api_docs()
        .map(|(tool, doc)| Function::from_doc(&doc, &tool.standard_name))
        .collect();
    let started = Instant::now();
    let (graph, source) = match default_index_dir() {
        Some(dir) => load_or_build(&dir.join("graph"), &fingerprint(catalog, None), &functions),
        None => (ToolGraph::build(&functions), GraphSource::Built),
    };
    (graph, source, started.elapsed().as_secs_f64() * 1000.0)
}

fn verb(source: GraphSource) -> &'static str {
    match source {
        GraphSource::Loaded => "loaded from cache",
        GraphSource::Built => "built",
    }
}

/// The catalogue graph for the agent options of `run` and `batch`: only `--method graph` with tools
/// drawn from the catalogue (`all`, `retrieved:K`) searches it; the oracle tool sets are small and
/// not all catalogue APIs, so their graphs are built per tool set as before.
pub fn for_agent(method: Method, tools: ToolSet, catalog: &Catalog) -> Option<CatalogueGraph> {
    if method != Method::Graph || tools == ToolSet::Oracle {
        return None;
    }
    let (graph, source, ms) = catalogue_graph(catalog);
    tracing::info!(
        "catalogue tool graph: {} APIs, {} edges ({} in {ms:.1} ms)",
        graph.apis.len(),
        graph.edges.len(),
        verb(source)
    );
    Some(CatalogueGraph::new(graph))
}
