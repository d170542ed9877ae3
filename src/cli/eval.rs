//! `sum2act eval`: pass rate (judge votes), judge-free metrics and judge calibration of one run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::json;

pub use super::eval_input::load_set;
use super::exit::classify;
pub use super::judge_args::JudgeArgs;
use super::progress::Judging;
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_core::toolbench::io::write_json_atomic;
use sum2act_eval::calibration::{ModeChoice, Verdicts};
use sum2act_eval::headline::{self, judge_name};
use sum2act_eval::labels::{self, LabelEntry, Matching};
use sum2act_eval::report;
use sum2act_eval::{AnswerSet, Judge, PassRate};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Run directory (run.json + {subset}/{id}_{method}.json), or a folder of StableToolBench converted
    /// {subset}.json files.
    #[arg(value_name = "RUN_DIR", required_unless_present = "converted")]
    pub run_dir: Option<PathBuf>,
    /// A StableToolBench converted answer file ({qid: {query, available_tools, answer}}) to score instead.
    #[arg(long, value_name = "FILE", conflicts_with = "run_dir")]
    pub converted: Option<PathBuf>,
    /// StableToolBench id file ({"588": 0, ...}) or its `test_query_ids` folder ({subset}.json each): the
    /// queries to score; ids without an answer count as failures in ours, are dropped in StableToolBench's.
    #[arg(long, value_name = "IDS.json|DIR")]
    pub ids: Option<PathBuf>,
    /// Subset of --converted / --ids (default: the converted file's base name).
    #[arg(long, value_name = "NAME", value_parser = super::values::subset_name)]
    pub subset: Option<String>,
    /// Only these subsets (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES", value_parser = super::values::subset_name)]
    pub subsets: Vec<String>,
    /// Human labels (eval/labels/*.json) to measure the judge's agreement with people: agreement and
    /// Cohen's kappa on the labels of this run's subsets, method, model and unchanged answers.
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

impl EvalArgs {
    /// `sum2act eval RUN_DIR` with the judge `judge`, every other flag at its default.
    pub fn for_run(run_dir: PathBuf, judge: JudgeArgs) -> Self {
        EvalArgs {
            run_dir: Some(run_dir),
            converted: None,
            ids: None,
            subset: None,
            subsets: Vec::new(),
            labels: None,
            no_judge: false,
            out: None,
            json: false,
            judge,
        }
    }
}

pub async fn run(global: &GlobalArgs, config: &Config, args: EvalArgs) -> anyhow::Result<ExitCode> {
    let (input, set, out) = open_input(&args)?;
    // One evaluation at a time writes a report folder (and its judge log).
    let _lock = sum2act_core::batch::RunLock::acquire(&out, "eval", "--out").map_err(classify)?;
    let mut files: Vec<PathBuf> = Vec::new();
    if input.is_dir() && input.join("run.json").is_file() {
        files.extend(
            set.write_converted(&out.join("converted"))
                .map_err(classify)?,
        );
    }
    let (tool_metrics, tool_table) =
        super::eval_tools::report(global, &set, &out, run_data(&input))?;
    files.push(out.join("tool_metrics.json"));
    let tools = ToolReport {
        metrics: tool_metrics,
        table: tool_table,
    };
    if args.no_judge {
        return judge_free(&args, &set, &out, files, &tools);
    }
    // Bad labels must fail before any judge call is paid for.
    let labels = match &args.labels {
        Some(path) => Some((path.as_path(), load_labels(path, &input)?)),
        None => None,
    };
    let log = args
        .judge
        .judge_log
        .clone()
        .unwrap_or_else(|| out.join("judge_log.jsonl"));
    let (judge, choice) = args.judge.build(config, &log, &[]).await?;
    if !set.model.is_empty() && set.model == judge.model_id() {
        eprintln!(
            "warning: the judge ({}) is the model that produced these answers; its verdicts may favour them",
            judge.model_id()
        );
    }
    let pass_options = args.judge.pass_options(choice.mode);
    let progress = Judging::new("answers", &input, judge.model_id());
    let pr = sum2act_eval::pass_rate(&set, &judge, &pass_options, &progress)
        .await
        .map_err(classify)?;
    let spread = inference_spread(&input, &set, &pr, &judge, &args).await?;
    let known = Known {
        args: &args.judge,
        judge: &judge,
        out: &out,
    };
    let (calibration, matching) = calibrate(labels, &set, &input, &pr, &known, &mut files)?;
    let ms = sum2act_eval::metrics(&set, Some(&pr));
    let summary = summary_json(
        &set,
        &judge,
        &pr,
        &log,
        (calibration.as_ref(), &choice),
        &ms,
        &tools,
    );
    let judged = Judged {
        ms,
        summary,
        choice,
        calls: judge.cache_stats(),
        pr,
        spread,
        calibration,
        matching,
        log,
    };
    write_judged(&out, &judged, &mut files)?;
    if args.json {
        print_json(&judged, files)?;
    } else {
        print_text(&judged, &tools, &out);
    }
    Ok(unusable_exit(&judged.pr))
}

/// The tool metrics' JSON and their printed table.
struct ToolReport {
    metrics: Vec<sum2act_eval::tool_metrics::ToolMetrics>,
    table: String,
}

/// What a judged evaluation produced.
struct Judged {
    pr: PassRate,
    ms: Vec<sum2act_eval::Metrics>,
    summary: serde_json::Value,
    spread: Option<sum2act_eval::repeats::InferenceSpread>,
    /// How the judge mode was chosen.
    choice: ModeChoice,
    calibration: Option<sum2act_eval::Calibration>,
    matching: Option<Matching>,
    /// (calls logged, calls answered from the log this time).
    calls: (usize, u64),
    log: PathBuf,
}

/// The run (or converted file) to score, its answers and the output folder (created).
fn open_input(args: &EvalArgs) -> anyhow::Result<(PathBuf, AnswerSet, PathBuf)> {
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
        None => input.join(sum2act_eval::input::EVAL_DIR),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    Ok((input, set, out))
}

/// `--no-judge`: the rules, the evidence check and the judge-free metrics only.
fn judge_free(
    args: &EvalArgs,
    set: &AnswerSet,
    out: &Path,
    mut files: Vec<PathBuf>,
    tools: &ToolReport,
) -> anyhow::Result<ExitCode> {
    let ms = sum2act_eval::metrics(set, None);
    let evidence = sum2act_eval::pass_rate::evidence_only(set);
    report::write_metrics_csv(&out.join("metrics.csv"), &ms).map_err(classify)?;
    write_json_atomic(&out.join("metrics.json"), &ms)?;
    write_json_atomic(&out.join("evidence.json"), &evidence.queries)?;
    files.extend([out.join("metrics.csv"), out.join("evidence.json")]);
    if args.json {
        let groups = json!({"subsets": evidence.subsets, "overall": evidence.overall});
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"metrics": ms, "evidence": groups, "tool_metrics": tools.metrics, "files": files})
            )?
        );
    } else {
        let mut table = String::new();
        headline::judge_free_table(&mut table, &evidence);
        println!("{table}");
        print!("{}", report::metrics_table(&ms));
        println!();
        print!("{}", tools.table);
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Where an earlier measured agreement may be found.
struct Known<'a> {
    args: &'a JudgeArgs,
    judge: &'a Judge,
    out: &'a Path,
}

impl Known<'_> {
    /// This run's own measurement (`calibration.json` of an earlier `--labels`), else the registry's
    /// held-out figure for the judge model and mode, with the label set it was measured on.
    fn figure(&self, name: &str) -> anyhow::Result<Option<sum2act_eval::Calibration>> {
        let own = sum2act_core::toolbench::io::read_json::<sum2act_eval::Calibration>(
            &self.out.join("calibration.json"),
        )
        .ok()
        .filter(|c| c.judge == name);
        if own.is_some() {
            return Ok(own);
        }
        let prompts = super::judge_args::current_prompt_hashes()?;
        let mode = Verdicts::from(self.judge.options().mode);
        Ok(self
            .args
            .registry()?
            .figure(self.judge.model_id(), mode, &prompts)
            .map(|e| e.calibration()))
    }
}

/// The judge's agreement with human labels: measured now against `--labels`, else what was measured
/// earlier on this run's answers or, for this judge model and mode, in the calibration registry.
fn calibrate(
    labels: Option<(&Path, Vec<LabelEntry>)>,
    set: &AnswerSet,
    input: &Path,
    pr: &PassRate,
    known: &Known<'_>,
    files: &mut Vec<PathBuf>,
) -> anyhow::Result<(Option<sum2act_eval::Calibration>, Option<Matching>)> {
    let name = judge_name(pr);
    let Some((path, entries)) = labels else {
        return Ok((known.figure(&name)?, None));
    };
    let m = labels::match_run(&entries, set, run_data(input).as_deref(), pr)
        .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    let c = labels::calibrate(&name, &m);
    if let Some(c) = &c {
        write_json_atomic(&known.out.join("calibration.json"), c)?;
        files.push(known.out.join("calibration.json"));
    }
    write_json_atomic(&known.out.join("label_matching.json"), &m)?;
    files.push(known.out.join("label_matching.json"));
    Ok((c, Some(m)))
}

/// The evaluation's summary: the run, the judge (and how far to trust it), the pass rate and metrics.
fn summary_json(
    set: &AnswerSet,
    judge: &Judge,
    pr: &PassRate,
    log: &Path,
    (calibration, choice): (Option<&sum2act_eval::Calibration>, &ModeChoice),
    ms: &[sum2act_eval::Metrics],
    tools: &ToolReport,
) -> serde_json::Value {
    json!({
        "source": set.source,
        "method": set.method,
        "agent_model": set.model,
        "judge": {
            "model": judge.model_id(),
            "mode": pr.mode,
            "mode_chosen_by": choice.chosen_by,
            "mode_why": choice.why,
            "name": judge_name(pr),
            "votes": pr.votes,
            "temperature": judge.options().temperature,
            "seed": judge.options().seed,
            "prompts": judge.prompt_hashes().into_iter().collect::<std::collections::BTreeMap<_, _>>(),
            "log": log,
            "agreement": calibration,
            "trusted": headline::trusted(calibration),
            "trust_threshold": headline::TRUSTED_AGREEMENT,
        },
        "variance": "pass_rate ± std: population std over the judge votes (judge variance); ci: bootstrap 95% over queries",
        "note": sum2act_eval::headline::MISSING_NOTE,
        "valid": headline::valid(&pr.overall),
        "invalid_reason": headline::invalid_reason(&pr.overall),
        "pass_rate": {"subsets": pr.subsets, "overall": pr.overall},
        "metrics": ms,
        "tool_metrics": tools.metrics,
    })
}

/// pass_rate.json (the summary and every query's verdict), the CSV tables.
fn write_judged(out: &Path, j: &Judged, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut full = j.summary.clone();
    full["queries"] = serde_json::to_value(&j.pr.queries)?;
    write_json_atomic(&out.join("pass_rate.json"), &full)?;
    report::write_pass_rate_csv(out, &j.pr).map_err(classify)?;
    report::write_metrics_csv(&out.join("metrics.csv"), &j.ms).map_err(classify)?;
    files.extend([
        out.join("pass_rate.json"),
        out.join("pass_rate.csv"),
        out.join("verdicts.csv"),
        out.join("metrics.csv"),
        j.log.clone(),
    ]);
    Ok(())
}

fn print_json(j: &Judged, files: Vec<PathBuf>) -> anyhow::Result<()> {
    let mut s = j.summary.clone();
    s["files"] = json!(files);
    s["judge"]["calls"] = json!({"logged": j.calls.0, "from_cache": j.calls.1});
    if let Some(spread) = &j.spread {
        s["inference_repeats"] = json!(spread);
    }
    println!("{}", serde_json::to_string_pretty(&s)?);
    Ok(())
}

fn print_text(j: &Judged, tools: &ToolReport, out: &Path) {
    println!("{}", headline::mode_line(&j.pr, &j.choice));
    print!(
        "{}",
        headline::pass_rate_report(&j.pr, j.calibration.as_ref())
    );
    if let Some(spread) = &j.spread {
        println!("{}", spread.line());
    }
    println!();
    print!("{}", report::metrics_table(&j.ms));
    println!();
    print!("{}", tools.table);
    if let Some(m) = &j.matching {
        println!();
        print_labels(m, j.calibration.as_ref());
    }
    println!(
        "judge log: {} ({} calls logged, {} answered from the log this time)",
        j.log.display(),
        j.calls.0,
        j.calls.1
    );
    println!("wrote {}", out.display());
}

/// Exit 1, loudly, when more than 5% of the judge's votes were unusable: such a pass rate is not a result.
fn unusable_exit(pr: &PassRate) -> ExitCode {
    let Some(reason) = headline::invalid_reason(&pr.overall) else {
        return ExitCode::SUCCESS;
    };
    let raw = pr
        .queries
        .iter()
        .flat_map(|q| q.unusable_replies.iter().map(move |r| (q.key(), r)))
        .next();
    eprintln!(
        "error: {reason} from {}: the pass rate is not valid (pass_rate.csv marks it `valid = no`)",
        judge_name(pr),
    );
    if let Some((key, raw)) = raw {
        eprintln!("first unusable reply ({key}): {raw}");
    }
    ExitCode::from(1)
}

/// The data directory a run was made from (its manifest's `data`), when known.
pub(super) fn run_data(input: &Path) -> Option<PathBuf> {
    sum2act_core::toolbench::io::read_json::<serde_json::Value>(&input.join("run.json"))
        .ok()
        .and_then(|m| m["data"].as_str().map(PathBuf::from))
}

/// Loads a label file; ids are checked against the run's data when its queries can be read.
fn load_labels(path: &Path, input: &Path) -> anyhow::Result<Vec<LabelEntry>> {
    let entries = labels::load(path).map_err(classify)?;
    if let Some(dir) = run_data(input)
        && let Ok(data) = sum2act_core::toolbench::DataDir::open(&dir)
    {
        let mut known = std::collections::BTreeMap::new();
        for e in &entries {
            if known.contains_key(&e.subset) {
                continue;
            }
            if let Ok(qs) = data.queries(&e.subset) {
                known.insert(e.subset.clone(), qs.iter().map(|q| q.query_id).collect());
            }
        }
        labels::check_ids(path, &entries, Some(&dir), &known).map_err(classify)?;
    }
    Ok(entries)
}

fn print_labels(m: &Matching, calibration: Option<&sum2act_eval::Calibration>) {
    match calibration {
        Some(c) => print!("{}", report::calibration_table(c)),
        None => println!("no human label applies to this run's answers"),
    }
    if !m.stale.is_empty() {
        println!(
            "  {} labels are stale (the answer changed since it was labelled; not used): {}",
            m.stale.len(),
            m.stale.join(", ")
        );
    }
    if !m.human_unsure.is_empty() {
        println!(
            "  {} labels are Unsure (not scored): {}",
            m.human_unsure.len(),
            m.human_unsure.join(", ")
        );
    }
}

/// For a `batch --repeats N` run (N > 1): scores repeats 1..N-1 with the same judge and options and
/// returns the spread of the per-repeat pass rates (repeat 0 is `pr`). `None` without repeats.
async fn inference_spread(
    input: &Path,
    set: &AnswerSet,
    pr: &sum2act_eval::PassRate,
    judge: &sum2act_eval::Judge,
    args: &EvalArgs,
) -> anyhow::Result<Option<sum2act_eval::repeats::InferenceSpread>> {
    let n = sum2act_eval::input::repeats_in(input);
    if n <= 1 || !input.is_dir() {
        return Ok(None);
    }
    let mut rates = vec![pr.overall.pass_rate];
    for r in 1..n {
        let mut repeat = sum2act_eval::input::load_answers_repeat(input, r).map_err(classify)?;
        sum2act_eval::repeats::align(&mut repeat, set);
        let options = args.judge.pass_options(judge.options().mode);
        let what = format!("{} (repeat {r})", input.display());
        let progress = Judging::of("answers", &what, judge.model_id());
        let scored = sum2act_eval::pass_rate(&repeat, judge, &options, &progress)
            .await
            .map_err(classify)?;
        rates.push(scored.overall.pass_rate);
    }
    Ok(Some(sum2act_eval::repeats::InferenceSpread::new(rates)))
}
