//! sum2act: a harness for LLM agents on ToolBench. This package is the binary: the command line
//! (`cli`), the interactive session (`session`) and the one entry that builds a solver and its
//! environment (`harness`); the library crates under `crates/` do the work.
//!
//! Crates, top to bottom (arrows point down only):
//! `sum2act` (this: `cli` → `session` → `harness`) → `sum2act-eval`, `sum2act-server`,
//! `sum2act-retrieve`, `sum2act-local` → `sum2act-core`.
//! - `sum2act-core`: what one episode passes through (`toolbench`, `llm`, `tools`, `agent` with a
//!   folder or file per method, the Sum2Act loop in `agent::sum2act`) and the batch runner;
//! - `sum2act-eval`: pass and win rates, the judges, statistics, calibration, the HTML report;
//! - `sum2act-server`: the virtual API server (cache → simulation, one simulated world), the MCP
//!   and media servers, `serve-llm` and the by-hand model;
//! - `sum2act-retrieve`: the tool retriever (BM25, optional dense encoder);
//! - `sum2act-local`: the embedded llama.cpp model, and `build`, the factory every command reaches
//!   a model through.
//!
//! Only `cli` knows clap and reads the config file (`config`): each subcommand's flags are clap
//! structs there that turn into the plain option structs of the crates below
//! (`sum2act_core::llm::LlmOptions`, `sum2act_server::ToolOptions`,
//! `sum2act_core::agent::AgentOptions`, together `harness::SolverOptions`), resolved once (flags >
//! env > file > defaults): no crate below merges. Typed values travel down, not strings: `Method`,
//! `llm::Purpose`, `tools::ObservationCode`, `prompts::PromptName` (one variant per `prompts/*.md`,
//! made by the core's `build.rs`). Every enum a user names is parsed one way
//! (`sum2act_core::names::named_values!`). A newcomer's path through one episode:
//! `docs/development.md`.

pub mod cli;
pub mod config;
#[cfg(test)]
mod fuzz;
pub mod harness;
pub mod logging;
pub mod session;
