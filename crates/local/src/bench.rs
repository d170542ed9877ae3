//! Speed of the embedded model, measured the way the agent uses it: prefill and decode rates, the gain
//! from reusing a cached prompt prefix between router steps, the cost of grammar-constrained decoding
//! (plain vs top-token-first), and aggregate throughput when several episodes share the model.

use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use crate::model::{GenStats, GrammarMode, LocalModel};
use sum2act_core::llm::{CompletionRequest, LlmError, Message};
use sum2act_core::prompts::{PromptName, Prompts};

/// Which parts to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub concurrency: Vec<usize>,
    /// Tokens generated per sequence in the throughput runs.
    pub tokens: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct PrefixResult {
    pub cold: GenStats,
    pub warm: GenStats,
    /// Cold prefill time over warm prefill time.
    pub prefill_speedup: f64,
    /// Cold over warm time to the full reply.
    pub total_speedup: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct GrammarResult {
    pub plain_decode_tok_s: f64,
    pub top_first_decode_tok_s: f64,
    pub unconstrained_decode_tok_s: f64,
    /// Whether both grammar modes wrote the same reply (they must).
    pub identical_output: bool,
    pub reply: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConcurrencyResult {
    pub sequences: usize,
    pub generated_tokens: u64,
    pub wall_ms: f64,
    /// Generated tokens over wall time, prompt processing included.
    pub aggregate_tok_s: f64,
    /// Tokens after the first over the decoding phase: the batching gain itself.
    pub decode_aggregate_tok_s: f64,
    /// Generated tokens per CPU-second of this process (Linux): comparable across runs even when other
    /// processes share the cores, which wall-clock rates are not.
    pub tok_per_cpu_s: Option<f64>,
}

/// CPU time (user + system, all threads) of this process so far, from `/proc/self/stat` (Linux; the
/// kernel reports it in USER_HZ = 100 ticks per second on every architecture we build for).
fn process_cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10.0)
}

/// Prefill and decode rates alone, in the shape `scripts/bench-llm.sh --reference` compares with plain
/// llama.cpp: a router prompt evaluated cold, then a fresh short prompt decoded for up to `tokens`.
#[derive(Debug, Clone, Serialize)]
pub struct SpeedReport {
    pub model: String,
    pub threads: u32,
    /// How llama.cpp's threads wait between parallel regions.
    pub wait_policy: String,
    pub prompt_tokens: u64,
    pub prefill_tok_s: f64,
    /// Prompt tokens before the decoded ones (the reference evaluates as many before timing decode).
    pub decode_prompt_tokens: u64,
    pub generated_tokens: u64,
    pub decode_tok_s: f64,
}

/// Times each measurement of [`speed`] is repeated; the best run counts, since other processes on the
/// cores can only slow a run down.
const SPEED_RUNS: usize = 3;

/// Measures [`SpeedReport`] on `model`: a warm-up, the router prompt without the prefix cache, and a
/// counting prompt that keeps the model writing for `tokens` tokens; each [`SPEED_RUNS`] times.
pub async fn speed(model: &LocalModel, tokens: u32) -> Result<SpeedReport, LlmError> {
    let prompts = Prompts::load().map_err(prompt_err)?;
    let system = prompts
        .render(PromptName::LlmBenchRouter, &[])
        .map_err(prompt_err)?;
    let user = prompts
        .render(
            PromptName::LlmBenchStep,
            &[("step", "1"), ("facts", "none yet")],
        )
        .map_err(prompt_err)?;
    let count = prompts
        .render(PromptName::LlmBenchCount, &[("start", "1"), ("end", "500")])
        .map_err(prompt_err)?;
    let router =
        CompletionRequest::new("bench", vec![Message::system(system), Message::user(user)])
            .with_max_tokens(1);
    let counting =
        CompletionRequest::new("bench", vec![Message::user(count)]).with_max_tokens(tokens);
    let _ = model
        .complete_with_stats(
            &CompletionRequest::new("bench", vec![Message::user("hi")]).with_max_tokens(2),
        )
        .await?;
    let was = model.prefix_cache();
    model.set_prefix_cache(false);
    let runs = async {
        let mut prefill: Option<GenStats> = None;
        let mut decode: Option<GenStats> = None;
        for _ in 0..SPEED_RUNS {
            let (_, p) = model.complete_with_stats(&router).await?;
            let (_, d) = model.complete_with_stats(&counting).await?;
            if prefill
                .as_ref()
                .is_none_or(|b| p.prefill_tok_s() > b.prefill_tok_s())
            {
                prefill = Some(p);
            }
            if decode
                .as_ref()
                .is_none_or(|b| d.decode_tok_s() > b.decode_tok_s())
            {
                decode = Some(d);
            }
        }
        Ok::<_, LlmError>((prefill.unwrap_or_default(), decode.unwrap_or_default()))
    }
    .await;
    model.set_prefix_cache(was);
    let (prefill, decode) = runs?;
    Ok(SpeedReport {
        model: model.info().id.clone(),
        threads: model.info().threads,
        wait_policy: crate::wait::current().to_string(),
        prompt_tokens: prefill.prompt_tokens,
        prefill_tok_s: prefill.prefill_tok_s(),
        decode_prompt_tokens: decode.prompt_tokens,
        generated_tokens: decode.generated_tokens,
        decode_tok_s: decode.decode_tok_s(),
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub model: String,
    pub threads: u32,
    pub prefill_tok_s: f64,
    pub decode_tok_s: f64,
    pub prefix: PrefixResult,
    pub grammar: GrammarResult,
    pub concurrency: Vec<ConcurrencyResult>,
}

fn prompt_err(e: sum2act_core::prompts::PromptError) -> LlmError {
    LlmError::Config(e.to_string())
}

fn ms(s: &GenStats) -> f64 {
    s.prefill_ms + s.decode_ms
}

fn ms_total(s: &GenStats) -> f64 {
    s.queue_ms + s.prefill_ms + s.decode_ms
}

/// Runs every measurement on `model` (which needs at least `max(concurrency)` parallel sequences);
/// `note` hears about each phase as it ends (the whole run takes minutes on 2 cores).
pub async fn run(
    model: &LocalModel,
    options: &BenchOptions,
    note: &dyn Fn(String),
) -> Result<BenchReport, LlmError> {
    let prompts = Prompts::load().map_err(prompt_err)?;
    warm_up(model).await?;
    let prefix = measure_prefix(model, &prompts, note).await?;
    let grammar = measure_grammar(model, &prompts, note).await?;
    let mut concurrency = Vec::new();
    for &n in &options.concurrency {
        concurrency.push(measure_concurrency(model, &prompts, n, options.tokens, note).await?);
    }
    Ok(BenchReport {
        model: model.info().id.clone(),
        threads: model.info().threads,
        prefill_tok_s: prefix.cold.prefill_tok_s(),
        decode_tok_s: grammar.unconstrained_decode_tok_s,
        prefix,
        grammar,
        concurrency,
    })
}

/// Pages the weights in.
async fn warm_up(model: &LocalModel) -> Result<(), LlmError> {
    let _ = model
        .complete_with_stats(
            &CompletionRequest::new("bench", vec![Message::user("hi")]).with_max_tokens(2),
        )
        .await?;
    Ok(())
}

/// Prefix reuse: the same system prompt, a new last message, as between two router steps.
async fn measure_prefix(
    model: &LocalModel,
    prompts: &Prompts,
    note: &dyn Fn(String),
) -> Result<PrefixResult, LlmError> {
    let system = prompts
        .render(PromptName::LlmBenchRouter, &[])
        .map_err(prompt_err)?;
    let router = |n: &str, facts: &str| {
        prompts
            .render(PromptName::LlmBenchStep, &[("step", n), ("facts", facts)])
            .map_err(prompt_err)
            .map(|user| {
                CompletionRequest::new(
                    "bench",
                    vec![Message::system(system.clone()), Message::user(user)],
                )
                .with_max_tokens(48)
            })
    };
    model.set_prefix_cache(false);
    let (_, cold) = model.complete_with_stats(&router("1", "none yet")?).await?;
    model.set_prefix_cache(true);
    let (_, warm) = model
        .complete_with_stats(&router("2", "recipe 8812, lentil dal, 4 servings")?)
        .await?;
    note(format!(
        "prefix cache: prefill {:.0} ms cold ({} tokens) -> {:.0} ms warm ({} cached)",
        cold.prefill_ms, cold.prompt_tokens, warm.prefill_ms, warm.cached_tokens
    ));
    Ok(PrefixResult {
        prefill_speedup: cold.prefill_ms / warm.prefill_ms.max(1e-3),
        total_speedup: ms(&cold) / ms(&warm).max(1e-3),
        cold,
        warm,
    })
}

/// Grammar: identical JSON request, prompt already cached, so the difference is decoding alone.
async fn measure_grammar(
    model: &LocalModel,
    prompts: &Prompts,
    note: &dyn Fn(String),
) -> Result<GrammarResult, LlmError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 60},
            "country": {"type": "string", "maxLength": 60},
            "population": {"type": "integer"},
            "summary": {"type": "string", "maxLength": 300},
        },
        "required": ["name", "country", "population", "summary"],
    });
    let city = prompts
        .render(PromptName::LlmBenchJson, &[("city", "Lyon")])
        .map_err(prompt_err)?;
    let json_req = CompletionRequest::new("bench", vec![Message::user(city.clone())])
        .with_json_schema("city", schema)
        .with_max_tokens(120);
    let text_req = CompletionRequest::new("bench", vec![Message::user(city)]).with_max_tokens(120);
    model.set_grammar_mode(GrammarMode::TopFirst);
    let _ = model.complete_with_stats(&json_req).await?;
    let (fast, fast_stats) = model.complete_with_stats(&json_req).await?;
    model.set_grammar_mode(GrammarMode::Full);
    let (plain, plain_stats) = model.complete_with_stats(&json_req).await?;
    model.set_grammar_mode(GrammarMode::TopFirst);
    let (_, free_stats) = model.complete_with_stats(&text_req).await?;
    note(format!(
        "grammar decode tok/s: plain {:.1}, top-first {:.1}, none {:.1}",
        plain_stats.decode_tok_s(),
        fast_stats.decode_tok_s(),
        free_stats.decode_tok_s()
    ));
    Ok(GrammarResult {
        plain_decode_tok_s: plain_stats.decode_tok_s(),
        top_first_decode_tok_s: fast_stats.decode_tok_s(),
        unconstrained_decode_tok_s: free_stats.decode_tok_s(),
        identical_output: fast.content == plain.content,
        reply: fast.content,
    })
}

/// Throughput: `n` sequences at once, each asked to count for a long time from its own start.
async fn measure_concurrency(
    model: &LocalModel,
    prompts: &Prompts,
    n: usize,
    tokens: u32,
    note: &dyn Fn(String),
) -> Result<ConcurrencyResult, LlmError> {
    let requests = (0..n)
        .map(|i| {
            let first = i * 1000 + n * 7 + 3;
            let (start, end) = (first.to_string(), (first + 500).to_string());
            prompts
                .render(
                    PromptName::LlmBenchCount,
                    &[("start", &start), ("end", &end)],
                )
                .map(|p| {
                    CompletionRequest::new("bench", vec![Message::user(p)]).with_max_tokens(tokens)
                })
                .map_err(prompt_err)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let started = Instant::now();
    let cpu_before = process_cpu_ms();
    let results =
        futures::future::join_all(requests.iter().map(|r| model.complete_with_stats(r))).await;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let cpu_ms = process_cpu_ms()
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    let stats = results
        .into_iter()
        .map(|r| r.map(|(_, s)| s))
        .collect::<Result<Vec<_>, _>>()?;
    let generated: u64 = stats.iter().map(|s| s.generated_tokens).sum();
    let decode_aggregate_tok_s = decode_aggregate(&stats);
    note(format!(
        "concurrency {n}: {generated} tokens in {wall_ms:.0} ms, decoding {decode_aggregate_tok_s:.1} tok/s aggregate, cpu {:.0} ms",
        cpu_ms.unwrap_or(0.0)
    ));
    Ok(ConcurrencyResult {
        sequences: n,
        generated_tokens: generated,
        wall_ms,
        aggregate_tok_s: generated as f64 * 1000.0 / wall_ms.max(1e-3),
        decode_aggregate_tok_s,
        tok_per_cpu_s: cpu_ms.map(|ms| generated as f64 * 1000.0 / ms.max(1.0)),
    })
}

/// Tokens after the first over the decoding phase alone: from the first sequence's first token to the
/// last sequence's end (all were submitted together, so their offsets share an origin).
fn decode_aggregate(stats: &[GenStats]) -> f64 {
    let first = stats
        .iter()
        .map(|s| s.queue_ms + s.prefill_ms)
        .fold(f64::MAX, f64::min);
    let end = stats.iter().map(ms_total).fold(0.0, f64::max);
    let after_first: u64 = stats
        .iter()
        .map(|s| s.generated_tokens.saturating_sub(1))
        .sum();
    after_first as f64 * 1000.0 / (end - first).max(1e-3)
}
