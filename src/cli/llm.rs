//! `sum2act llm check`: answers a prompt with the configured model (the embedded one by default) and
//! shows tokens and speed, so a user can see the model works before starting a run.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::json;

use super::{BadInput, GlobalArgs};
use crate::config::Config;
use crate::llm::{self, CompletionRequest, LlmArgs, LlmClient, LlmError, Message, ToolChoice};

#[derive(Debug, Args)]
pub struct LlmCmdArgs {
    #[command(subcommand)]
    pub command: LlmCommand,
}

#[derive(Debug, Subcommand)]
pub enum LlmCommand {
    /// Answer a prompt (and make one function call) with the configured model; print tokens and speed.
    Check {
        /// The prompt.
        #[arg(long, default_value = "In one sentence: what is an API?")]
        prompt: String,
        /// Most tokens of the answer.
        #[arg(long, default_value_t = 64)]
        max_tokens: u32,
        /// Skip the function-calling check.
        #[arg(long)]
        no_tools: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        llm: LlmArgs,
    },
    /// Measure the embedded model: prefill/decode tok/s, prefix-cache reuse, grammar cost, and aggregate
    /// throughput at several concurrencies.
    #[cfg(feature = "local-model")]
    Bench {
        /// Concurrent sequences to measure, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
        concurrency: Vec<usize>,
        /// Tokens each sequence generates in the throughput runs.
        #[arg(long, default_value_t = 48)]
        tokens: u32,
        /// Write the report as JSON to FILE as well.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
        /// Only prefill and decode rates, as one JSON line (what `scripts/bench-llm.sh --reference`
        /// compares with plain llama.cpp); decodes `--tokens` tokens.
        #[arg(long)]
        quick: bool,
        #[command(flatten)]
        llm: LlmArgs,
    },
}

/// Turns setup mistakes (missing model file, bad key, unknown model) into exit code 2.
pub fn classify(e: LlmError) -> anyhow::Error {
    if e.is_bad_input() {
        anyhow::Error::new(BadInput(e.to_string()))
    } else {
        anyhow::Error::new(e)
    }
}

pub async fn run(
    _global: &GlobalArgs,
    config: &Config,
    args: LlmCmdArgs,
) -> anyhow::Result<ExitCode> {
    match args.command {
        LlmCommand::Check {
            prompt,
            max_tokens,
            no_tools,
            json,
            llm: llm_args,
        } => check(config, &llm_args, &prompt, max_tokens, !no_tools, json).await,
        #[cfg(feature = "local-model")]
        LlmCommand::Bench {
            concurrency,
            tokens,
            out,
            quick,
            llm: llm_args,
        } => {
            let plan = BenchPlan {
                concurrency,
                tokens,
                out,
                quick,
            };
            bench(config, &llm_args, plan).await
        }
    }
}

async fn check(
    config: &Config,
    args: &LlmArgs,
    prompt: &str,
    max_tokens: u32,
    tools: bool,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let loading = Instant::now();
    let client: Arc<dyn LlmClient> = llm::build(args, config).await.map_err(classify)?;
    let load_ms = loading.elapsed().as_millis();
    let request =
        CompletionRequest::new("check", vec![Message::user(prompt)]).with_max_tokens(max_tokens);
    let (answer, stats) = complete(config, args, &client, &request).await?;
    let mut report = json!({
        "model": client.model_id(),
        "load_ms": load_ms,
        "answer": answer.content,
        "finish_reason": answer.finish_reason,
        "prompt_tokens": answer.usage.prompt_tokens,
        "completion_tokens": answer.usage.completion_tokens,
        "elapsed_ms": answer.elapsed_ms,
        "cost_usd": answer.cost_usd,
        "speed": stats,
    });
    #[cfg(feature = "local-model")]
    if llm::uses_embedded_model(args, config) {
        report["wait_policy"] = json!(llm::wait::current().to_string());
        let cpu = llm::cpu::features();
        report["cpu"] = json!({
            "compiled": llm::cpu::compiled_level(&cpu),
            "unused": llm::cpu::unused(&cpu),
        });
    }
    if tools {
        let weather = json!({
            "name": "get_weather",
            "description": "Current weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        });
        let request = CompletionRequest::new(
            "check",
            vec![Message::user("What is the weather in Paris right now?")],
        )
        .with_tools(vec![weather], ToolChoice::Required)
        .with_max_tokens(96);
        let (call, _) = complete(config, args, &client, &request).await?;
        let first = call.tool_calls.first().with_context(|| {
            format!(
                "the model answered without calling the tool: {}",
                call.content
            )
        })?;
        report["tool_call"] = json!({"name": first.name, "arguments": first.arguments});
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("model: {}", report["model"].as_str().unwrap_or_default());
        println!("answer: {}", answer.content.trim());
        println!(
            "tokens: {} prompt + {} completion in {} ms (load {load_ms} ms)",
            answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.elapsed_ms
        );
        if let Some(s) = report["speed"].as_object() {
            let f = |k: &str| s.get(k).and_then(|v| v.as_f64()).unwrap_or(0.0);
            println!(
                "speed: prefill {:.1} tok/s, decode {:.1} tok/s",
                f("prefill_tok_s"),
                f("decode_tok_s")
            );
        }
        if let Some(w) = report.get("wait_policy").and_then(|w| w.as_str()) {
            println!("threads wait: {w}");
        }
        if let Some(cpu) = report.get("cpu") {
            let unused: Vec<&str> = cpu["unused"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            let hint = if unused.is_empty() {
                String::new()
            } else {
                format!(
                    " (this CPU also has {}: see docs/models.md for a faster build)",
                    unused.join(", ")
                )
            };
            println!(
                "llama.cpp built for: {}{hint}",
                cpu["compiled"].as_str().unwrap_or_default()
            );
        }
        if let Some(call) = report.get("tool_call") {
            println!(
                "tool call: {}({})",
                call["name"].as_str().unwrap_or_default(),
                call["arguments"].as_str().unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Completes through the embedded model's engine directly when that is the configured model, to
/// report prefill/decode speed; otherwise through the client.
async fn complete(
    config: &Config,
    args: &LlmArgs,
    client: &Arc<dyn LlmClient>,
    request: &CompletionRequest,
) -> anyhow::Result<(llm::Completion, serde_json::Value)> {
    #[cfg(feature = "local-model")]
    if llm::uses_embedded_model(args, config) && args.record.is_none() {
        let path = llm::resolve_model_path(args, config).map_err(classify)?;
        let model = llm::local::LocalModel::shared(&path, Default::default()).map_err(classify)?;
        let (c, s) = model.complete_with_stats(request).await.map_err(classify)?;
        let speed = json!({
            "prompt_tokens": s.prompt_tokens,
            "cached_tokens": s.cached_tokens,
            "generated_tokens": s.generated_tokens,
            "prefill_ms": s.prefill_ms,
            "decode_ms": s.decode_ms,
            "prefill_tok_s": s.prefill_tok_s(),
            "decode_tok_s": s.decode_tok_s(),
        });
        return Ok((c, speed));
    }
    let _ = (config, args);
    let c = client.complete(request).await.map_err(classify)?;
    Ok((c, serde_json::Value::Null))
}

/// What `llm bench` was asked to measure.
#[cfg(feature = "local-model")]
struct BenchPlan {
    concurrency: Vec<usize>,
    tokens: u32,
    out: Option<std::path::PathBuf>,
    quick: bool,
}

#[cfg(feature = "local-model")]
async fn bench(config: &Config, args: &LlmArgs, plan: BenchPlan) -> anyhow::Result<ExitCode> {
    let BenchPlan {
        concurrency,
        tokens,
        out,
        quick,
    } = plan;
    if tokens == 0 {
        return Err(BadInput("--tokens must be at least 1".into()).into());
    }
    if concurrency.is_empty() || concurrency.contains(&0) {
        return Err(BadInput("--concurrency needs positive numbers, e.g. 1,2,4,8".into()).into());
    }
    let path = llm::resolve_model_path(args, config).map_err(classify)?;
    let parallel = if quick {
        1
    } else {
        concurrency.iter().copied().max().unwrap_or(1) as u32
    };
    let options = llm::local::LocalOptions {
        context: args.llm_context.unwrap_or(config.llm.context),
        threads: args.llm_threads.or(config.llm.threads),
        parallel,
        ..Default::default()
    };
    let model = tokio::task::spawn_blocking(move || llm::local::LocalModel::load(&path, options))
        .await?
        .map_err(classify)?;
    if quick {
        let report = llm::bench::speed(&model, tokens).await.map_err(classify)?;
        println!("{}", serde_json::to_string(&report)?);
        if let Some(path) = &out {
            crate::toolbench::io::write_json_atomic(path, &report)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = llm::bench::run(
        &model,
        &llm::bench::BenchOptions {
            concurrency,
            tokens,
        },
        &|line| eprintln!("{line}"),
    )
    .await
    .map_err(classify)?;
    println!(
        "model {} on {} threads, threads wait: {}",
        report.model,
        report.threads,
        llm::wait::current()
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
    if let Some(path) = &out {
        crate::toolbench::io::write_json_atomic(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}
