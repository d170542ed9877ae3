//! `sum2act eval`: pass rate (judge votes), judge-free metrics and judge calibration of one run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use super::{BadInput, GlobalArgs};
use crate::config::Config;
use crate::eval::report::{self, agreement_line, calibration_registry, known_calibration};
use crate::eval::{AnswerSet, EvalError, Judge, JudgeCache, JudgeOptions, PassRateOptions};
use crate::llm::LlmArgs;
use crate::prompts::Prompts;
use crate::toolbench::io::write_json_atomic;
use crate::toolbench::load_id_file;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Run directory (run.json + {subset}/{id}_{method}.json), or a folder of StableToolBench converted
    /// {subset}.json files.
    #[arg(value_name = "RUN_DIR", required_unless_present = "converted")]
    pub run_dir: Option<PathBuf>,
    /// A StableToolBench converted answer file ({qid: {query, available_tools, answer}}) to score instead.
    #[arg(long, value_name = "FILE", conflicts_with = "run_dir")]
    pub converted: Option<PathBuf>,
    /// StableToolBench id file ({"588": 0, ...}): the queries to score; ids without an answer count as failures.
    #[arg(long, value_name = "IDS.json")]
    pub ids: Option<PathBuf>,
    /// Subset of --converted / --ids (default: the converted file's base name).
    #[arg(long, value_name = "NAME")]
    pub subset: Option<String>,
    /// Only these subsets (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub subsets: Vec<String>,
    /// Human labels (JSON: query id → "Solved"/"Unsolved") to measure the judge's agreement with people.
    #[arg(long, value_name = "LABELS.json")]
    pub labels: Option<PathBuf>,
    /// No judge: judge-free metrics only.
    #[arg(long, conflicts_with = "labels")]
    pub no_judge: bool,
    /// Folder for the reports (default: RUN_DIR/eval, or FILE's folder/eval_{name} for --converted).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// How to build and run the judge (shared by `eval` and `compare`).
#[derive(Debug, Clone, Args)]
pub struct JudgeArgs {
    /// Judge model: a model name at the endpoint, or a GGUF path (default: --model / the embedded model).
    #[arg(long, value_name = "MODEL")]
    pub judge: Option<String>,
    /// Independent judge votes per query (pass rate).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=15))]
    pub votes: u32,
    /// Judge sampling temperature; votes differ by seed.
    #[arg(long, default_value_t = 0.2)]
    pub judge_temperature: f32,
    /// Judge calls in flight at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub judge_concurrency: u64,
    /// The judge log, which is also its cache (default: OUT/judge_log.jsonl).
    #[arg(long, value_name = "FILE")]
    pub judge_log: Option<PathBuf>,
    /// Seed of the judge's sampling, of answer-order shuffling and of the bootstrap.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub llm: LlmArgs,
}

impl JudgeArgs {
    /// Builds the judge on the configured model, with its log at `log` plus any `extra_logs` preloaded.
    pub async fn build(
        &self,
        config: &Config,
        log: &Path,
        extra_logs: &[PathBuf],
    ) -> anyhow::Result<Judge> {
        let mut llm_args = self.llm.clone();
        if let Some(j) = &self.judge {
            llm_args.model = Some(j.clone());
        }
        let llm = crate::llm::build(&llm_args, config)
            .await
            .context("building the judge model")?;
        let mut cache = JudgeCache::open(log).map_err(bad)?;
        for extra in extra_logs {
            cache.absorb(extra).map_err(bad)?;
        }
        let options = JudgeOptions {
            temperature: self.judge_temperature,
            seed: self.seed,
            ..JudgeOptions::default()
        };
        Ok(Judge::new(
            Arc::clone(&llm),
            Prompts::load()?,
            cache,
            options,
        ))
    }

    pub fn concurrency(&self) -> usize {
        self.judge_concurrency as usize
    }
}

/// Maps evaluator errors to exit codes: bad input → 2.
pub fn bad(e: EvalError) -> anyhow::Error {
    if e.is_bad_input() {
        anyhow::Error::new(BadInput(e.to_string()))
    } else {
        anyhow::Error::new(e)
    }
}

/// Loads what `eval`/`compare` score: a run directory, a converted folder, or a converted file.
pub fn load_set(
    path: &Path,
    subset: Option<&str>,
    ids: Option<&Path>,
    subsets: &[String],
) -> anyhow::Result<AnswerSet> {
    let mut set = match (path.is_file(), subset) {
        (true, Some(s)) => crate::eval::input::load_converted_file(path, s),
        _ => crate::eval::load_answers(path),
    }
    .map_err(bad)?;
    if let Some(ids_path) = ids {
        let ids = load_id_file(ids_path).map_err(|e| BadInput(e.to_string()))?;
        let name = match subset {
            Some(s) => s.to_string(),
            None => match set.subsets().as_slice() {
                [one] => one.clone(),
                many => {
                    return Err(BadInput(format!(
                        "--ids {}: the answers span {} subsets ({}); name one with --subset",
                        ids_path.display(),
                        many.len(),
                        many.join(", ")
                    ))
                    .into());
                }
            },
        };
        set.expect_ids(&name, &ids);
    }
    set.restrict(subsets);
    if set.expected.is_empty() {
        return Err(BadInput(format!(
            "{}: no answers to evaluate{}",
            path.display(),
            if subsets.is_empty() {
                String::new()
            } else {
                format!(" in subsets {}", subsets.join(","))
            }
        ))
        .into());
    }
    Ok(set)
}

pub async fn run(global: &GlobalArgs, config: &Config, args: EvalArgs) -> anyhow::Result<ExitCode> {
    let input = args
        .converted
        .clone()
        .or(args.run_dir.clone())
        .ok_or_else(|| BadInput("give RUN_DIR or --converted FILE".into()))?;
    let subset = args.subset.clone().or_else(|| {
        args.converted
            .as_ref()
            .and_then(|c| c.file_stem().map(|s| s.to_string_lossy().to_string()))
    });
    let set = load_set(
        &input,
        subset.as_deref(),
        args.ids.as_deref(),
        &args.subsets,
    )?;
    let out = match &args.out {
        Some(o) => o.clone(),
        None if input.is_file() => {
            let stem = input
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            input
                .parent()
                .unwrap_or(Path::new("."))
                .join(format!("eval_{stem}"))
        }
        None => input.join(crate::eval::input::EVAL_DIR),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut files: Vec<PathBuf> = Vec::new();
    if input.is_dir() && input.join("run.json").is_file() {
        files.extend(set.write_converted(&out.join("converted")).map_err(bad)?);
    }

    let (tool_metrics, tool_table) = super::eval_tools::report(global, &set, &out)?;
    files.push(out.join("tool_metrics.json"));
    if args.no_judge {
        let ms = crate::eval::metrics(&set, None);
        report::write_metrics_csv(&out.join("metrics.csv"), &ms).map_err(bad)?;
        write_json_atomic(&out.join("metrics.json"), &ms)?;
        files.push(out.join("metrics.csv"));
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &json!({"metrics": ms, "tool_metrics": tool_metrics, "files": files})
                )?
            );
        } else {
            print!("{}", report::metrics_table(&ms));
            println!();
            print!("{tool_table}");
            println!("wrote {}", out.display());
        }
        return Ok(ExitCode::SUCCESS);
    }

    // Bad labels must fail before any judge call is paid for.
    let labels = match &args.labels {
        Some(path) => Some((path, report::load_labels(path).map_err(bad)?)),
        None => None,
    };
    let log = args
        .judge
        .judge_log
        .clone()
        .unwrap_or_else(|| out.join("judge_log.jsonl"));
    let judge = args.judge.build(config, &log, &[]).await?;
    if !set.model.is_empty() && set.model == judge.model_id() {
        eprintln!(
            "warning: the judge ({}) is the model that produced these answers; its verdicts may favour them",
            judge.model_id()
        );
    }
    let options = PassRateOptions {
        votes: args.judge.votes,
        concurrency: args.judge.concurrency(),
    };
    let pr = crate::eval::pass_rate(&set, &judge, &options)
        .await
        .map_err(bad)?;
    let (logged, hits) = judge.cache_stats();
    let ms = crate::eval::metrics(&set, Some(&pr));

    let calibration = match &labels {
        Some((path, labels)) => {
            let c = report::calibrate(&pr, labels, path).map_err(bad)?;
            write_json_atomic(&out.join("calibration.json"), &c)?;
            files.push(out.join("calibration.json"));
            Some(c)
        }
        None => known_calibration(
            judge.model_id(),
            &[out.join("calibration.json"), calibration_registry()],
        ),
    };
    let agreement = agreement_line(judge.model_id(), calibration.as_ref());
    let summary = json!({
        "source": set.source,
        "method": set.method,
        "agent_model": set.model,
        "judge": {
            "model": judge.model_id(),
            "votes": pr.votes,
            "temperature": judge.options().temperature,
            "seed": judge.options().seed,
            "prompts": judge.prompt_hashes().into_iter().collect::<std::collections::BTreeMap<_, _>>(),
            "log": log,
            "agreement": calibration,
        },
        "note": report::MISSING_NOTE,
        "pass_rate": {"subsets": pr.subsets, "overall": pr.overall},
        "metrics": ms,
        "tool_metrics": tool_metrics,
    });
    let mut full = summary.clone();
    full["queries"] = serde_json::to_value(&pr.queries)?;
    write_json_atomic(&out.join("pass_rate.json"), &full)?;
    report::write_pass_rate_csv(&out, &pr).map_err(bad)?;
    report::write_metrics_csv(&out.join("metrics.csv"), &ms).map_err(bad)?;
    files.extend([
        out.join("pass_rate.json"),
        out.join("pass_rate.csv"),
        out.join("verdicts.csv"),
        out.join("metrics.csv"),
        log.clone(),
    ]);
    if args.json {
        let mut s = summary;
        s["files"] = json!(files);
        s["judge"]["calls"] = json!({"logged": logged, "from_cache": hits});
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", report::pass_rate_table(&pr, &agreement));
        println!();
        print!("{}", report::metrics_table(&ms));
        println!();
        print!("{tool_table}");
        if let Some(c) = calibration.as_ref().filter(|_| args.labels.is_some()) {
            println!();
            print!("{}", report::calibration_table(c));
        }
        println!(
            "judge log: {} ({} calls logged, {} answered from the log this time)",
            log.display(),
            logged,
            hits
        );
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
