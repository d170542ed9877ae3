//! The budget flags of `run`, `chat` and `batch`: one budget for every method (agent::Budget). Flags
//! win over the config file's `[budget]` section, which wins over the preset.

use clap::Args;

use super::agent_args::at_least_one;
use super::values::named;
use sum2act_core::agent::budget::{BudgetSection, RetryPrompt};
use sum2act_core::agent::{Budget, Preset};

#[derive(Debug, Clone, Default, Args)]
pub struct BudgetArgs {
    /// The budget every method runs under: `equal` (whole replies up to 16,384 characters, 30 steps,
    /// 30 tool calls, 64 model calls, missing inputs assumed) or `toolbench` (ToolBench's published
    /// baseline settings: 1,024-character cut, chains of 12 tree levels, 200 model calls).
    #[arg(long = "budget", value_name = "NAME", value_parser = named::<Preset>(Preset::NAMES))]
    pub preset: Option<Preset>,
    /// Characters of each tool reply the model may read, for every method.
    #[arg(long, visible_alias = "max-observation-length", alias = "observation-read-chars", value_name = "CHARS", value_parser = clap::value_parser!(u64).range(1..))]
    pub observation_chars: Option<u64>,
    /// Model decisions per chain (Sum2Act's router steps, a ReAct try's actions, the actions on one
    /// DFSDT path).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one())]
    pub max_steps: Option<u32>,
    /// Tool calls per episode, all of DFSDT's branches and a plan's rounds together.
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub max_tool_calls: Option<u32>,
    /// Model calls per episode, of every kind (DFSDT's max_query_count).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one())]
    pub max_llm_calls: Option<u32>,
    /// ToolBench's chain limit in tree levels (single_chain_max_step), for ReAct and DFSDT.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one())]
    pub max_depth: Option<u32>,
    /// Tell every method's model to call a tool with an assumed value where the request lacks one
    /// (on) or not (off).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub assume_missing: Option<bool>,
    /// DFSDT: what the model is told when it expands a node again (`toolbench`: do something
    /// different or give up; `answerable`: or answer from the earlier attempts).
    #[arg(long, value_name = "NAME", value_parser = named::<RetryPrompt>(RetryPrompt::NAMES))]
    pub retry_prompt: Option<RetryPrompt>,
}

fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}` is not `on` or `off`")),
    }
}

impl BudgetArgs {
    /// The budget: a preset named by the flag (the config file's values then do not apply), else the
    /// config file's `[budget]`; then these flags.
    pub fn resolve(&self, section: &BudgetSection) -> Budget {
        let mut b = match self.preset {
            Some(p) => Budget::preset(p),
            None => section.resolve(),
        };
        self.section().overlay(&mut b);
        b
    }

    /// The values these flags give (the preset is the base, not a value: see `resolve`).
    fn section(&self) -> BudgetSection {
        BudgetSection {
            preset: None,
            observation_chars: self.observation_chars.map(|n| n as usize),
            max_steps: self.max_steps,
            max_tool_calls: self.max_tool_calls.map(Some),
            max_llm_calls: self.max_llm_calls,
            max_depth: self.max_depth.map(Some),
            assume_missing: self.assume_missing,
            retry_prompt: self.retry_prompt,
        }
    }
}
