//! sum2act: a harness for LLM agents on ToolBench.
//!
//! Layers, top to bottom (arrows point down only):
//! `cli` → `batch` / `session` → `setup` → `agent` / `eval` → `llm`, `tools`, `server`, `retrieve` →
//! `toolbench` (`setup`: the one entry that builds a solver and its environment from resolved
//! options for `run`, `batch` and `chat`, and says whose fault an episode that ended in error is)
//! (`net`: serving under connection limits, used by `server` and `llm`; `terminal`: text made safe
//! to print; `names`: the names users type for enum values, shared by every layer; `redact`:
//! credentials in URLs, masked wherever text is shown or written; `text`: cutting text to a length,
//! one module for every layer).
//!
//! Only `cli` knows clap: each subcommand's flags are clap structs there that turn into the plain
//! option structs of the layers below (`llm::LlmOptions`, `server::ToolOptions`,
//! `agent::AgentOptions`, together `setup::SolverOptions`), and enum-valued flags take the library
//! enum's own list of names (`toolbench::method::Method::NAMES` for `--method`).
//!
//! Only `cli` reads the config file (`config`): it is made of the sections the layers define
//! (`llm::settings`, `tools::settings`, `tools::mcp::spec::McpEntry`), and `cli` resolves every
//! option once (flags > env > file > defaults) into those resolved structs: no layer below merges.
//! Typed values travel down, not strings: `Method`, `llm::Purpose`, `tools::ObservationCode`,
//! `prompts::PromptName` (one variant per `prompts/*.md`, made by `build.rs`: a misspelt prompt name
//! does not compile). Every enum a user names is parsed one way (`names::named_values!`).
//! A newcomer's path through one episode: `docs/development.md`; the Sum2Act loop:
//! `agent::sum2act` (its `mod.rs`).

pub mod agent;
pub mod batch;
pub mod cli;
pub mod config;
pub mod eval;
#[cfg(test)]
mod fuzz;
pub mod llm;
pub mod logging;
pub mod media;
pub mod names;
pub mod net;
pub mod prompts;
pub mod redact;
pub mod retrieve;
pub mod server;
pub mod session;
pub mod setup;
pub mod terminal;
pub mod text;
pub mod toolbench;
pub mod tools;
