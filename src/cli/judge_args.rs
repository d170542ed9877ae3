//! The judge's flags, shared by `eval`, `compare` and `calibrate`: which model, which mode (by default
//! the best-measured one in the calibration registry), votes, sampling, the log, and how much of the
//! observations one prompt may hold.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use super::exit::classify;
use super::llm_args::LlmArgs;
use super::values::named;
use crate::config::Config;
use sum2act_core::llm::{LlmClient, LlmError};
use sum2act_core::prompts::Prompts;
use sum2act_eval::calibration::{ModeChoice, Registry};
use sum2act_eval::judge::{
    DEFAULT_JUDGE_SEED as DEFAULT_SEED, DEFAULT_JUDGE_TEMPERATURE as DEFAULT_TEMPERATURE,
    DEFAULT_OBSERVATION_CHARS, DEFAULT_PROMPT_CHARS, prompt_chars_for_context, prompt_hashes,
};
use sum2act_eval::pass_rate::DEFAULT_JUDGE_CONCURRENCY;
pub use sum2act_eval::pass_rate::DEFAULT_VOTES;
use sum2act_eval::{Judge, JudgeCache, JudgeMode, JudgeOptions, PassRateOptions};

/// The most judge votes per query `--votes` accepts.
pub const MAX_VOTES: i64 = 15;
const DEFAULT_CONCURRENCY: u64 = DEFAULT_JUDGE_CONCURRENCY as u64;

/// How to build and run the judge (shared by `eval`, `compare` and `calibrate`).
#[derive(Debug, Clone, Args)]
pub struct JudgeArgs {
    /// Judge model: a model name at the endpoint, or a GGUF path (default: --model / the embedded model).
    #[arg(long, value_name = "MODEL")]
    pub judge: Option<String>,
    /// Which judge: `evidence` (rules, claim check, one question per part of the request) or
    /// `tooleval` (ToolEval-style holistic verdict). Default: the mode with the best agreement measured
    /// for this judge model in the calibration registry (else the best-measured mode of any model, else
    /// evidence); `eval` prints which and why.
    #[arg(long, value_name = "MODE", value_parser = named::<JudgeMode>(JudgeMode::NAMES), ignore_case = true)]
    pub judge_mode: Option<JudgeMode>,
    /// The registry of measured judge agreements (default: eval/judge_calibration.json as shipped).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Independent judge votes per query (pass rate).
    #[arg(long, default_value_t = DEFAULT_VOTES, value_parser = clap::value_parser!(u32).range(1..=MAX_VOTES))]
    pub votes: u32,
    /// Judge sampling temperature; votes differ by seed.
    #[arg(long, default_value_t = DEFAULT_TEMPERATURE)]
    pub judge_temperature: f32,
    /// Judge calls in flight at once.
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub judge_concurrency: u64,
    /// The judge log, which is also its cache (default: OUT/judge_log.jsonl).
    #[arg(long, value_name = "FILE")]
    pub judge_log: Option<PathBuf>,
    /// Seed of the judge's sampling, of answer-order shuffling and of the bootstrap.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Longest observation the judge reads, in characters: whole up to this (answer files keep
    /// ToolBench's 1,024-character cut; the judge reads our record's whole reply).
    #[arg(long, default_value_t = DEFAULT_OBSERVATION_CHARS, value_name = "CHARS")]
    pub judge_observation_chars: usize,
    /// Most characters of request, answer and observations in one judge prompt (default: 100000 for
    /// an endpoint; what the context holds for the embedded model).
    #[arg(long, value_name = "CHARS")]
    pub judge_prompt_chars: Option<usize>,
    #[command(flatten)]
    pub llm: LlmArgs,
}

impl JudgeArgs {
    /// The judge of `sum2act eval` given only `--votes`, `--judge` and the model flags `llm`, every
    /// other flag at its default (`batch --eval`'s judge).
    pub fn with_defaults(votes: u32, judge: Option<String>, llm: LlmArgs) -> Self {
        JudgeArgs {
            judge,
            judge_mode: None,
            calibration: None,
            votes,
            judge_temperature: DEFAULT_TEMPERATURE,
            judge_concurrency: DEFAULT_CONCURRENCY,
            judge_log: None,
            seed: DEFAULT_SEED,
            judge_observation_chars: DEFAULT_OBSERVATION_CHARS,
            judge_prompt_chars: None,
            llm,
        }
    }

    /// The judge model.
    pub async fn llm(&self, config: &Config) -> anyhow::Result<Arc<dyn LlmClient>> {
        async { sum2act_local::build(&self.llm_options(config)?).await }
            .await
            .context("building the judge model")
    }

    fn llm_options(&self, config: &Config) -> Result<sum2act_core::llm::LlmOptions, LlmError> {
        let mut llm_args = self.llm.clone();
        if let Some(j) = &self.judge {
            llm_args.model = Some(j.clone());
        }
        llm_args.resolve(config)
    }

    /// The calibration registry: `--calibration FILE`, else the shipped one.
    pub fn registry(&self) -> anyhow::Result<Registry> {
        match &self.calibration {
            Some(path) if !path.is_file() => Err(super::BadInput(format!(
                "--calibration {}: no such registry file",
                path.display()
            ))
            .into()),
            Some(path) => Registry::load(path).map_err(classify),
            None => Ok(Registry::shipped()),
        }
    }

    /// The judge on `llm` with its log at `log` plus any `extra_logs` preloaded, in `mode` (else
    /// `--judge-mode`, else the registry's choice for this model).
    pub fn judge(
        &self,
        config: &Config,
        llm: &Arc<dyn LlmClient>,
        logs: (&Path, &[PathBuf]),
        mode: Option<JudgeMode>,
    ) -> anyhow::Result<(Judge, ModeChoice)> {
        let (log, extra_logs) = logs;
        let prompts = Prompts::load()?;
        let choice = match mode.or(self.judge_mode) {
            Some(m) => ModeChoice {
                mode: m,
                chosen_by: "flag",
                entry: None,
                why: "--judge-mode".into(),
            },
            None => self
                .registry()?
                .choose(&llm.model_id(), &prompt_hashes(&prompts)),
        };
        let mut cache = JudgeCache::open(log).map_err(classify)?;
        for extra in extra_logs {
            cache.absorb(extra).map_err(classify)?;
        }
        let defaults = JudgeOptions::default();
        let max_prompt_chars = match self.judge_prompt_chars {
            Some(n) => n,
            None => {
                let llm_options = self.llm_options(config).map_err(classify)?;
                if sum2act_core::llm::uses_embedded_model(&llm_options) {
                    prompt_chars_for_context(llm_options.context, defaults.max_tokens)
                } else {
                    DEFAULT_PROMPT_CHARS
                }
            }
        };
        let options = JudgeOptions {
            temperature: self.judge_temperature,
            seed: self.seed,
            mode: choice.mode,
            max_observation_chars: self.judge_observation_chars,
            max_prompt_chars,
            ..defaults
        };
        let judge = Judge::new(Arc::clone(llm), prompts, cache, options);
        Ok((judge, choice))
    }

    /// The judge model and the judge on it (see [`JudgeArgs::judge`]).
    pub async fn build(
        &self,
        config: &Config,
        log: &Path,
        extra_logs: &[PathBuf],
    ) -> anyhow::Result<(Judge, ModeChoice)> {
        let llm = self.llm(config).await?;
        self.judge(config, &llm, (log, extra_logs), None)
    }

    pub fn concurrency(&self) -> usize {
        self.judge_concurrency as usize
    }

    /// Pass-rate options of these flags for a judge in `mode`.
    pub fn pass_options(&self, mode: JudgeMode) -> PassRateOptions {
        PassRateOptions {
            votes: self.votes,
            concurrency: self.concurrency(),
            mode,
            seed: self.seed,
        }
    }
}

/// The hashes of the judge prompts this binary uses (what a registry figure is checked against).
pub fn current_prompt_hashes() -> anyhow::Result<BTreeMap<String, String>> {
    Ok(prompt_hashes(&Prompts::load()?))
}
