//! `sum2act compare`: win rate of RUN_B (candidate) against RUN_A (reference), with paired A/B statistics.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::GlobalArgs;
use super::eval::{JudgeArgs, load_set};
use super::exit::classify;
use super::progress::Judging;
use crate::config::Config;
use sum2act_core::toolbench::io::write_json_atomic;
use sum2act_eval::CompareOptions;
use sum2act_eval::calibration::Verdicts;
use sum2act_eval::input::AnswerSet;
use sum2act_eval::input::EVAL_DIR;
use sum2act_eval::report;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference run (run directory, converted folder or converted file).
    #[arg(value_name = "RUN_A")]
    pub run_a: PathBuf,
    /// The candidate run.
    #[arg(value_name = "RUN_B")]
    pub run_b: PathBuf,
    /// Only these subsets (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES", value_parser = super::values::subset_name)]
    pub subsets: Vec<String>,
    /// Judge rounds per query (the answer order is shuffled in each).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=15))]
    pub rounds: u32,
    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Folder for the reports (default: RUN_B/eval/compare_{RUN_A name}).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Compare runs made under different settings (budget, tools, prompts, a method's options),
    /// which are otherwise refused; the differences are still named.
    #[arg(long)]
    pub allow_differences: bool,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

pub async fn run(
    _global: &GlobalArgs,
    config: &Config,
    args: CompareArgs,
) -> anyhow::Result<ExitCode> {
    super::settings_check::check_runs(
        &[args.run_a.clone(), args.run_b.clone()],
        args.allow_differences,
    )?;
    let reference = load_set(&args.run_a, None, None, &args.subsets)?;
    let candidate = load_set(&args.run_b, None, None, &args.subsets)?;
    let out = out_dir(&args);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let log = args
        .judge
        .judge_log
        .clone()
        .unwrap_or_else(|| out.join("judge_log.jsonl"));
    // Verdicts `eval` already paid for are reused.
    let earlier: Vec<PathBuf> = [&args.run_a, &args.run_b]
        .iter()
        .filter(|p| p.is_dir())
        .map(|p| p.join(EVAL_DIR).join("judge_log.jsonl"))
        .collect();
    let (judge, choice) = args.judge.build(config, &log, &earlier).await?;
    let pass_options = args.judge.pass_options(choice.mode);
    let model = judge.model_id();
    let ref_pr = sum2act_eval::pass_rate(
        &reference,
        &judge,
        &pass_options,
        &Judging::new("answers", &args.run_a, model),
    )
    .await
    .map_err(classify)?;
    let cand_pr = sum2act_eval::pass_rate(
        &candidate,
        &judge,
        &pass_options,
        &Judging::new("answers", &args.run_b, model),
    )
    .await
    .map_err(classify)?;
    let options = CompareOptions {
        rounds: args.rounds,
        seed: args.judge.seed,
        resamples: args.resamples,
        concurrency: args.judge.concurrency(),
    };
    let comparison = sum2act_eval::compare(
        (&reference, &ref_pr),
        (&candidate, &cand_pr),
        &judge,
        &options,
        &rounds_of(&args.run_b, &args.run_a, None, model),
    )
    .await
    .map_err(classify)?;
    let mut repeats = vec![comparison.overall.clone()];
    repeats.extend(compare_repeats(&args, (&reference, &candidate), &judge, &options).await?);
    let (logged, hits) = judge.cache_stats();
    write_json_atomic(&out.join("compare.json"), &comparison)?;
    report::write_comparison_csv(&out, &comparison).map_err(classify)?;
    if args.json {
        let summary = serde_json::json!({
            "reference": comparison.reference,
            "candidate": comparison.candidate,
            "judge": comparison.judge,
            "rounds": comparison.rounds,
            "subsets": comparison.subsets,
            "overall": comparison.overall,
            "repeats": repeats,
            "out": out,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_text(&args, &judge, &comparison, &repeats, [&ref_pr, &cand_pr])?;
        println!(
            "judge log: {} ({logged} calls logged, {hits} answered from the log this time)",
            log.display()
        );
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The progress of judging the preference rounds of `candidate` against `reference` (of one repeat).
fn rounds_of(candidate: &Path, reference: &Path, repeat: Option<u32>, model: &str) -> Judging {
    let repeat = repeat.map(|r| format!(" (repeat {r})")).unwrap_or_default();
    let what = format!(
        "{} against {}{repeat}",
        candidate.display(),
        reference.display()
    );
    Judging::of("preference rounds", &what, model)
}

/// `--out`, else `compare_<run A>` in run B's evaluation folder.
fn out_dir(args: &CompareArgs) -> PathBuf {
    if let Some(o) = &args.out {
        return o.clone();
    }
    let a_name = args
        .run_a
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        .unwrap_or_else(|| "reference".into());
    let base = if args.run_b.is_dir() {
        args.run_b.join(EVAL_DIR)
    } else {
        args.run_b
            .parent()
            .map(|p| p.join(EVAL_DIR))
            .unwrap_or_else(|| PathBuf::from(EVAL_DIR))
    };
    base.join(format!(
        "compare_{}",
        sum2act_core::toolbench::naming::standardize(&a_name)
    ))
}

/// The comparison's tables, the repeats' win rates and both pass rates, with the measured agreement of
/// the pass-rate judge and of the preference judge (the calibration registry's held-out figures).
fn print_text(
    args: &CompareArgs,
    judge: &sum2act_eval::Judge,
    comparison: &sum2act_eval::Comparison,
    repeats: &[sum2act_eval::win_rate::GroupComparison],
    pass_rates: [&sum2act_eval::PassRate; 2],
) -> anyhow::Result<()> {
    let model = judge.model_id();
    let registry = args.judge.registry()?;
    let prompts = super::judge_args::current_prompt_hashes()?;
    // The candidate run's own `eval --labels` measurement first, as `eval` shows it.
    let own = sum2act_core::toolbench::io::read_json::<sum2act_eval::Calibration>(
        &args.run_b.join(EVAL_DIR).join("calibration.json"),
    )
    .ok();
    for verdicts in [Verdicts::from(judge.options().mode), Verdicts::Preference] {
        let name = format!("{model} ({} judge)", verdicts.as_str());
        let known = own.clone().filter(|c| c.judge == name).or_else(|| {
            registry
                .figure(model, verdicts, &prompts)
                .map(|e| e.calibration())
        });
        println!("{}", report::agreement_line(&name, known.as_ref()));
    }
    print!("{}", report::comparison_table(comparison));
    for (r, g) in repeats.iter().enumerate().skip(1) {
        println!(
            "repeat {r} (query q repeat {r} of one run against q repeat {r} of the other): win rate {:.1}% [{:.1}, {:.1}] over {} queries, {} wins {} losses {} ties",
            g.win_rate.estimate,
            g.win_rate.low,
            g.win_rate.high,
            g.queries,
            g.wins,
            g.losses,
            g.ties
        );
    }
    for (name, pr) in ["reference", "candidate"].into_iter().zip(pass_rates) {
        println!(
            "{name} pass rate: ours {:.1}% (missing = failure) · {:.1}% with missing answers dropped (StableToolBench's denominator; our judge)",
            pr.overall.pass_rate, pr.overall.pass_rate_without_missing
        );
    }
    Ok(())
}

/// Pairs the runs by query and repeat: repeat `r` of each query in one run against repeat `r` of the
/// same query in the other, for every repeat `r >= 1` both runs hold (repeat 0 is the comparison
/// `compare` reports in full). Returns the overall comparison of each, in repeat order.
async fn compare_repeats(
    args: &CompareArgs,
    (reference, candidate): (&AnswerSet, &AnswerSet),
    judge: &sum2act_eval::Judge,
    options: &CompareOptions,
) -> anyhow::Result<Vec<sum2act_eval::win_rate::GroupComparison>> {
    let n = sum2act_eval::input::repeats_in(&args.run_a)
        .min(sum2act_eval::input::repeats_in(&args.run_b));
    let mut out = Vec::new();
    for r in 1..n {
        let mut a = sum2act_eval::input::load_answers_repeat(&args.run_a, r).map_err(classify)?;
        let mut b = sum2act_eval::input::load_answers_repeat(&args.run_b, r).map_err(classify)?;
        sum2act_eval::repeats::align(&mut a, reference);
        sum2act_eval::repeats::align(&mut b, candidate);
        let pass_options = args.judge.pass_options(judge.options().mode);
        let model = judge.model_id();
        let mut prs = Vec::new();
        for (set, run) in [(&a, &args.run_a), (&b, &args.run_b)] {
            let what = format!("{} (repeat {r})", run.display());
            let progress = Judging::of("answers", &what, model);
            let pr = sum2act_eval::pass_rate(set, judge, &pass_options, &progress).await;
            prs.push(pr.map_err(classify)?);
        }
        let progress = rounds_of(&args.run_b, &args.run_a, Some(r), model);
        let c = sum2act_eval::compare((&a, &prs[0]), (&b, &prs[1]), judge, options, &progress)
            .await
            .map_err(classify)?;
        out.push(c.overall);
    }
    Ok(out)
}
