//! `sum2act llm check`: answers a prompt with the configured model (the embedded one by default) and
//! shows tokens and speed, so a user can see the model works before starting a run.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::json;

use super::GlobalArgs;
use super::exit::classify;
use super::llm_args::LlmArgs;
use crate::config::Config;
use sum2act_core::llm::Purpose;
use sum2act_core::llm::{self, CompletionRequest, LlmClient, LlmOptions, Message, ToolChoice};

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
        } => {
            check(
                &llm_args.resolve(config).map_err(classify)?,
                &prompt,
                max_tokens,
                !no_tools,
                json,
            )
            .await
        }
        #[cfg(feature = "local-model")]
        LlmCommand::Bench {
            concurrency,
            tokens,
            out,
            quick,
            llm: llm_args,
        } => {
            let plan = super::llm_bench::BenchPlan {
                concurrency,
                tokens,
                out,
                quick,
            };
            super::llm_bench::bench(&llm_args.embedded(config), plan).await
        }
    }
}

async fn check(
    args: &LlmOptions,
    prompt: &str,
    max_tokens: u32,
    tools: bool,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let loading = Instant::now();
    let client: Arc<dyn LlmClient> = sum2act_local::build(args).await.map_err(classify)?;
    let load_ms = loading.elapsed().as_millis();
    let request =
        CompletionRequest::new("check", vec![Message::user(prompt)]).with_max_tokens(max_tokens);
    let (answer, stats) = complete(args, &client, &request).await?;
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
    if llm::uses_embedded_model(args) {
        report["wait_policy"] = json!(sum2act_local::wait::current().to_string());
        let cpu = sum2act_local::cpu::features();
        report["cpu"] = json!({
            "compiled": sum2act_local::cpu::compiled_level(&cpu),
            "unused": sum2act_local::cpu::unused(&cpu),
        });
    }
    if tools {
        report["tool_call"] = check_tool_call(args, &client).await?;
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_check(&report, &answer, load_ms);
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks for one call of a weather tool; the model must make it.
async fn check_tool_call(
    args: &LlmOptions,
    client: &Arc<dyn LlmClient>,
) -> anyhow::Result<serde_json::Value> {
    let weather = json!({
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    });
    let request = CompletionRequest::new(
        Purpose::Check,
        vec![Message::user("What is the weather in Paris right now?")],
    )
    .with_tools(vec![weather], ToolChoice::Required)
    .with_max_tokens(96);
    let (call, _) = complete(args, client, &request).await?;
    let first = call.tool_calls.first().with_context(|| {
        format!(
            "the model answered without calling the tool: {}",
            call.content
        )
    })?;
    Ok(json!({"name": first.name, "arguments": first.arguments}))
}

/// The text form of `llm check`'s report.
fn print_check(report: &serde_json::Value, answer: &llm::Completion, load_ms: u128) {
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

/// Completes through the embedded model's engine directly when that is the configured model, to
/// report prefill/decode speed; otherwise through the client.
async fn complete(
    args: &LlmOptions,
    client: &Arc<dyn LlmClient>,
    request: &CompletionRequest,
) -> anyhow::Result<(llm::Completion, serde_json::Value)> {
    #[cfg(feature = "local-model")]
    if llm::uses_embedded_model(args) && args.record.is_none() {
        let path = llm::resolve_model_path(args).map_err(classify)?;
        let model = sum2act_local::model::LocalModel::shared(&path, Default::default())
            .map_err(classify)?;
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
    let _ = args;
    let c = client.complete(request).await.map_err(classify)?;
    Ok((c, serde_json::Value::Null))
}
