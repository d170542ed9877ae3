//! `sum2act calibrate RUN_DIR... --labels FILE`: the judge's agreement with hand labels over many runs
//! (one per method and model), for both judge modes, on one half of the labels (`--split`), with each
//! method's judge pass rate beside its labelled rate; `--pairs` measures the preference (win-rate)
//! judge against paired labels; `--save` records the figures in a calibration registry.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use super::eval::{load_set, run_data};
use super::exit::classify;
use super::judge_args::{JudgeArgs, current_prompt_hashes};
use super::progress::Judging;
use super::values::named;
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_core::llm::LlmClient;
use sum2act_core::toolbench::io::write_json_atomic;
use sum2act_eval::calibration::measure::{
    Measurement, RunRows, in_split, labelled_only, pool, rows,
};
use sum2act_eval::calibration::pairs::{self, PairMeasurement};
use sum2act_eval::calibration::{Entry, Registry, Split, Verdicts, split_words};
use sum2act_eval::headline::MAX_UNUSABLE_SHARE;
use sum2act_eval::input::{AnswerSet, EVAL_DIR};
use sum2act_eval::labels::{self, LabelEntry};
use sum2act_eval::{Calibration, Judge, JudgeMode};

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Run directories whose answers were labelled (one per method and model).
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
    /// Hand labels (eval/labels/*.json); repeat the flag for several files.
    #[arg(long, value_name = "LABELS.json", required = true)]
    pub labels: Vec<PathBuf>,
    /// Which labels: `calibrate` (the half to choose and tune the judge on), `report` (the held-out
    /// half), or `all`. Halves are fixed by query: SHA-256 of `SUBSET/ID`, first byte even → calibrate.
    #[arg(long, default_value = "all", value_parser = named::<Split>(Split::NAMES), ignore_case = true)]
    pub split: Split,
    /// Paired labels (which of two answers a person prefers) to measure the preference judge.
    #[arg(long, value_name = "PAIRS.json")]
    pub pairs: Option<PathBuf>,
    /// Preference rounds per pair (the order of the two answers is shuffled in each).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=15))]
    pub rounds: u32,
    /// Folder for the judge logs (one per mode) and calibration.json.
    #[arg(long, default_value = "calibration", value_name = "DIR")]
    pub out: PathBuf,
    /// Record the figures in this registry (e.g. eval/judge_calibration.json), replacing earlier ones
    /// of the same judge model, mode, label set and split.
    #[arg(long, value_name = "REGISTRY.json")]
    pub save: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// The runs, their data directories and the judge logs `eval` already wrote for them.
struct Runs {
    sets: Vec<AnswerSet>,
    data: Vec<Option<PathBuf>>,
    logs: Vec<PathBuf>,
}

pub async fn run(
    _global: &GlobalArgs,
    config: &Config,
    args: CalibrateArgs,
) -> anyhow::Result<ExitCode> {
    let entries = load_labels(&args.labels)?;
    let label_set = label_set_name(&args.labels);
    let entries = in_split(&entries, args.split);
    let pair_labels = match &args.pairs {
        Some(p) => Some(pairs::load(p).map_err(classify)?),
        None => None,
    };
    let runs = load_runs(&args.runs)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let llm = args.judge.llm(config).await?;
    let (measurements, unusable) = measure_modes(&args, config, &llm, &runs, &entries).await?;
    if measurements.is_empty() {
        return Err(BadInput(format!(
            "no label of {label_set} ({}) applies to the answers of these runs",
            split_words(args.split)
        ))
        .into());
    }
    let pairs = match &pair_labels {
        Some(labels) => {
            let judge = judge_for(&args, config, &llm, &runs, Verdicts::Preference)?;
            let labels: Vec<_> = labels
                .iter()
                .filter(|p| args.split.holds(&p.key()))
                .cloned()
                .collect();
            pairs::measure(&judge, &labels, &runs.sets, args.rounds, args.judge.seed)
                .await
                .map_err(classify)?
        }
        None => None,
    };
    let outcome = Outcome {
        model: llm.model_id(),
        label_set,
        measurements,
        pairs,
    };
    report(&args, &outcome)?;
    if let Some(path) = &args.save {
        save(path, &args, &outcome)?;
    }
    let share = unusable.0 as f64 / unusable.1.max(1) as f64;
    if share > MAX_UNUSABLE_SHARE {
        eprintln!(
            "error: {} of {} judge votes got no usable verdict (limit {:.0}%): the figures are not valid",
            unusable.0,
            unusable.1,
            MAX_UNUSABLE_SHARE * 100.0
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Each judge mode's measurement over the runs' labelled answers, and the votes that got no usable
/// verdict (of all judged).
async fn measure_modes(
    args: &CalibrateArgs,
    config: &Config,
    llm: &std::sync::Arc<dyn LlmClient>,
    runs: &Runs,
    entries: &[LabelEntry],
) -> anyhow::Result<(Vec<Measurement>, (u64, u64))> {
    let modes = match args.judge.judge_mode {
        Some(m) => vec![m],
        None => vec![JudgeMode::Evidence, JudgeMode::Tooleval],
    };
    let mut measurements = Vec::new();
    let mut unusable = (0u64, 0u64);
    for mode in modes {
        let judge = judge_for(args, config, llm, runs, Verdicts::from(mode))?;
        let mut per_run: Vec<RunRows> = Vec::new();
        for (set, data) in runs.sets.iter().zip(&runs.data) {
            let sub = labelled_only(set, entries, data.as_deref());
            if sub.expected.is_empty() {
                continue;
            }
            let options = args.judge.pass_options(mode);
            let progress = Judging::new("labelled answers", &set.source, judge.model_id());
            let pr = sum2act_eval::pass_rate(&sub, &judge, &options, &progress)
                .await
                .map_err(classify)?;
            unusable.0 += pr.overall.unusable_votes;
            unusable.1 += pr.overall.judged_votes;
            let r = rows(entries, &sub, data.as_deref(), &pr)
                .map_err(|e| BadInput(format!("{}: {e}", set.source.display())))?;
            per_run.push(r);
        }
        if let Some(m) = pool(judge.model_id(), mode.into(), args.split, &per_run) {
            measurements.push(m);
        }
    }
    Ok((measurements, unusable))
}

/// Every label of the files, checked (bad input names the file and entry).
fn load_labels(paths: &[PathBuf]) -> anyhow::Result<Vec<LabelEntry>> {
    let mut all = Vec::new();
    for p in paths {
        all.extend(labels::load(p).map_err(classify)?);
    }
    Ok(all)
}

/// The label files as one name (`eval/labels/a.json + eval/labels/b.json`).
fn label_set_name(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ")
}

fn load_runs(dirs: &[PathBuf]) -> anyhow::Result<Runs> {
    let mut runs = Runs {
        sets: Vec::new(),
        data: Vec::new(),
        logs: Vec::new(),
    };
    for dir in dirs {
        runs.sets.push(load_set(dir, None, None, &[])?);
        runs.data.push(run_data(dir));
        let log = dir.join(EVAL_DIR).join("judge_log.jsonl");
        if log.is_file() {
            runs.logs.push(log);
        }
    }
    Ok(runs)
}

/// The judge of one measurement, with its own log (`OUT/judge_log_MODE.jsonl`) and the runs' `eval`
/// logs preloaded, so votes already paid for are reused.
fn judge_for(
    args: &CalibrateArgs,
    config: &Config,
    llm: &std::sync::Arc<dyn LlmClient>,
    runs: &Runs,
    verdicts: Verdicts,
) -> anyhow::Result<Judge> {
    let log = args
        .out
        .join(format!("judge_log_{}.jsonl", verdicts.as_str()));
    // The preference judge decides no pass rate: its judge is built with the default mode's
    // settings, which its pairwise calls do not use.
    let mode = verdicts.judge_mode().unwrap_or_default();
    let (judge, _) = args
        .judge
        .judge(config, llm, (&log, &runs.logs), Some(mode))?;
    Ok(judge)
}

/// What a calibration measured.
struct Outcome {
    model: String,
    label_set: String,
    measurements: Vec<Measurement>,
    pairs: Option<PairMeasurement>,
}

fn report(args: &CalibrateArgs, o: &Outcome) -> anyhow::Result<()> {
    let (model, label_set, ms, pairs) = (&o.model, &o.label_set, &o.measurements, o.pairs.as_ref());
    let summary = json!({
        "judge": model,
        "label_set": label_set,
        "split": args.split,
        "votes": args.judge.votes,
        "measurements": ms,
        "pairs": pairs,
    });
    let file = args.out.join("calibration.json");
    write_json_atomic(&file, &summary)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    print!(
        "{}",
        sum2act_eval::calibration::measure::table(model, label_set, ms)
    );
    match pairs {
        Some(p) => println!("{}", pairs_line(p)),
        None if args.pairs.is_some() => {
            println!("preference judge: no paired label applies to these runs' answers")
        }
        None => {}
    }
    println!("wrote {}", file.display());
    Ok(())
}

fn pairs_line(p: &PairMeasurement) -> String {
    let c = &p.calibration;
    format!(
        "preference judge on {} paired labels: agreement {:.1}%, kappa {}, confusion (labels A/B × judge A/B/tie) {:?}; {} labelled ties, {} stale and {} missing pairs left out",
        c.n,
        c.accuracy * 100.0,
        c.kappa_text(2),
        c.confusion,
        p.ties.len(),
        p.stale.len(),
        p.missing.len()
    )
}

/// Records each measurement in the registry at `path`.
fn save(path: &Path, args: &CalibrateArgs, o: &Outcome) -> anyhow::Result<()> {
    let (model, label_set) = (&o.model, &o.label_set);
    let mut registry = Registry::load(path).map_err(classify)?;
    let prompts = current_prompt_hashes()?;
    let command = std::iter::once("sum2act".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let measured = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let entry = |mode: Verdicts, c: &Calibration| Entry {
        judge_model: model.to_string(),
        mode,
        label_set: label_set.to_string(),
        split: args.split,
        n: c.n,
        agreement: c.accuracy,
        kappa: c.kappa,
        confusion: c.confusion.iter().map(|r| r.to_vec()).collect(),
        prompts: prompts
            .iter()
            .filter(|(name, _)| mode.prompts().iter().any(|p| p.as_str() == name.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        votes: if mode == Verdicts::Preference {
            args.rounds
        } else {
            args.judge.votes
        },
        measured: measured.clone(),
        command: command.clone(),
    };
    for m in &o.measurements {
        registry.record(entry(m.mode, &m.calibration));
    }
    if let Some(p) = &o.pairs {
        registry.record(entry(Verdicts::Preference, &p.calibration));
    }
    registry.save(path).map_err(classify)?;
    println!("recorded in {}", path.display());
    Ok(())
}
