//! `sum2act data stats`: what a data directory holds.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_core::toolbench::{Catalog, DataDir, SubsetStats};
use sum2act_server::simulate::{TemplateClass, parse_template};

#[derive(Debug, Args)]
pub struct DataArgs {
    #[command(subcommand)]
    pub command: DataCommand,
}

#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Counts per subset (queries, tools, APIs, categories, mean relevant APIs) and catalogue totals.
    Stats {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(global: &GlobalArgs, _config: &Config, args: DataArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        DataCommand::Stats { json } => stats(global, json),
    }
}

/// The catalogue's APIs by what their template says (with data, a recorded error reply, ...).
fn template_counts(catalog: &Catalog) -> Vec<(TemplateClass, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    for (_, doc) in catalog.api_docs() {
        *counts
            .entry(TemplateClass::of(parse_template(&doc).as_ref()))
            .or_insert(0) += 1;
    }
    counts.into_iter().collect()
}

fn stats(global: &GlobalArgs, json: bool) -> anyhow::Result<ExitCode> {
    let data = DataDir::open_or_default(global.data.as_deref())?;
    let subsets = data.subsets()?;
    if subsets.is_empty() {
        return Err(BadInput(format!(
            "{}: no query files (queries/*.json) to count",
            data.root().join("queries").display()
        ))
        .into());
    }
    let load = data.catalog()?;
    let catalog = &load.catalog;
    for broken in &load.broken {
        eprintln!("warning: skipped broken tool file: {broken}");
    }
    let mut rows = Vec::new();
    for subset in subsets {
        let queries = data.queries(&subset)?;
        super::warn_missing_tools(&subset, &queries, catalog);
        rows.push(SubsetStats::of(&subset, &queries));
    }
    let templates = template_counts(catalog);
    if json {
        let by_class: serde_json::Map<String, serde_json::Value> = templates
            .iter()
            .map(|(c, n)| (c.label().to_string(), (*n).into()))
            .collect();
        let out = serde_json::json!({
            "data": data.root(),
            "subsets": rows,
            "catalog": {
                "tools": catalog.tool_count(),
                "apis": catalog.api_count(),
                "categories": catalog.categories().len(),
                "broken_files": load.broken.len(),
                "templates": by_class,
            }
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_table(&data, &rows, catalog, &templates);
    }
    if !load.broken.is_empty() {
        // The counts above leave those files out: the data directory needs fixing (bad input).
        return Err(BadInput(format!(
            "{} tool file(s) could not be read (listed above)",
            load.broken.len()
        ))
        .into());
    }
    Ok(ExitCode::SUCCESS)
}

/// The counts as a table, with the catalogue's totals and its reply templates by class.
fn print_table(
    data: &DataDir,
    rows: &[SubsetStats],
    catalog: &Catalog,
    templates: &[(TemplateClass, usize)],
) {
    println!("data: {}", data.root().display());
    println!(
        "{:<16} {:>8} {:>6} {:>6} {:>11} {:>13} {:>13}",
        "subset", "queries", "tools", "apis", "categories", "mean api_list", "mean relevant"
    );
    for r in rows {
        println!(
            "{:<16} {:>8} {:>6} {:>6} {:>11} {:>13.2} {:>13.2}",
            r.subset, r.queries, r.tools, r.apis, r.categories, r.mean_api_list, r.mean_relevant
        );
    }
    let total: usize = rows.iter().map(|r| r.queries).sum();
    println!(
        "catalogue: {} tools, {} APIs, {} categories; {} queries in {} subsets",
        catalog.tool_count(),
        catalog.api_count(),
        catalog.categories().len(),
        total,
        rows.len()
    );
    let parts: Vec<String> = templates
        .iter()
        .map(|(c, n)| format!("{n} {}", c.label()))
        .collect();
    println!(
        "templates: {} (an error reply recorded as the template is treated as shape unknown)",
        parts.join(", ")
    );
}
