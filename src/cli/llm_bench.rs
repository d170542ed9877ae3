//! `sum2act llm bench`: the embedded model's speed (see `llm::bench` for what each phase measures).

use std::process::ExitCode;

use super::BadInput;
use super::exit::classify;
use sum2act_core::llm::{self, LlmOptions};

/// What `llm bench` was asked to measure.
pub struct BenchPlan {
    pub concurrency: Vec<usize>,
    pub tokens: u32,
    pub out: Option<std::path::PathBuf>,
    pub quick: bool,
}

pub async fn bench(args: &LlmOptions, plan: BenchPlan) -> anyhow::Result<ExitCode> {
    if plan.tokens == 0 {
        return Err(BadInput("--tokens must be at least 1".into()).into());
    }
    if plan.concurrency.is_empty() || plan.concurrency.contains(&0) {
        return Err(BadInput("--concurrency needs positive numbers, e.g. 1,2,4,8".into()).into());
    }
    let model = load(args, &plan).await?;
    if plan.quick {
        let report = sum2act_local::bench::speed(&model, plan.tokens)
            .await
            .map_err(classify)?;
        println!("{}", serde_json::to_string(&report)?);
        if let Some(path) = &plan.out {
            sum2act_core::toolbench::io::write_json_atomic(path, &report)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = sum2act_local::bench::run(
        &model,
        &sum2act_local::bench::BenchOptions {
            concurrency: plan.concurrency,
            tokens: plan.tokens,
        },
        &|line| eprintln!("{line}"),
    )
    .await
    .map_err(classify)?;
    print_report(&report);
    if let Some(path) = &plan.out {
        sum2act_core::toolbench::io::write_json_atomic(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The embedded model with as many sequences as the largest concurrency (one for `--quick`).
async fn load(
    args: &LlmOptions,
    plan: &BenchPlan,
) -> anyhow::Result<sum2act_local::model::LocalModel> {
    let path = llm::resolve_model_path(args).map_err(classify)?;
    let parallel = if plan.quick {
        1
    } else {
        plan.concurrency.iter().copied().max().unwrap_or(1) as u32
    };
    let options = sum2act_local::model::LocalOptions {
        context: args.context,
        threads: args.threads,
        parallel,
        ..Default::default()
    };
    tokio::task::spawn_blocking(move || sum2act_local::model::LocalModel::load(&path, options))
        .await?
        .map_err(classify)
}

fn print_report(report: &sum2act_local::bench::BenchReport) {
    println!(
        "model {} on {} threads, threads wait: {}",
        report.model,
        report.threads,
        sum2act_local::wait::current()
    );
    println!(
        "prefill {:.1} tok/s ({} tokens), decode {:.1} tok/s",
        report.prefill_tok_s, report.prefix.cold.prompt_tokens, report.decode_tok_s
    );
    println!(
        "prefix cache: router step prefill {:.0} ms cold -> {:.0} ms warm ({} of {} tokens cached): {:.1}x prefill, {:.1}x whole call",
        report.prefix.cold.prefill_ms,
        report.prefix.warm.prefill_ms,
        report.prefix.warm.cached_tokens,
        report.prefix.warm.prompt_tokens,
        report.prefix.prefill_speedup,
        report.prefix.total_speedup
    );
    println!(
        "grammar decode: plain {:.1} tok/s, top-first {:.1} tok/s, unconstrained {:.1} tok/s; identical output: {}",
        report.grammar.plain_decode_tok_s,
        report.grammar.top_first_decode_tok_s,
        report.grammar.unconstrained_decode_tok_s,
        report.grammar.identical_output
    );
    for c in &report.concurrency {
        println!(
            "concurrency {:>2}: {:>4} tokens in {:>7.0} ms = {:>5.1} tok/s overall, {:>5.1} tok/s decoding, {:>5.1} tok per CPU-second",
            c.sequences,
            c.generated_tokens,
            c.wall_ms,
            c.aggregate_tok_s,
            c.decode_aggregate_tok_s,
            c.tok_per_cpu_s.unwrap_or(0.0)
        );
    }
}
