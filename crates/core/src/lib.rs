//! sum2act-core: what one episode passes through, and the batch runner that runs many.
//!
//! Layers, top to bottom (arrows point down only):
//! `batch` → `setup` → `agent` → `llm`, `tools` → `request`, `toolbench`.
//! - `toolbench`: the benchmark's data (queries, tools, answers) and the reading of a request into parts;
//! - `request`: the request model a method and a judge share: its parts, the facts found for each
//!   (with the call that returned them), and structural checks of a model's split in any language;
//! - `llm`: the one trait every method talks to ([`llm::LlmClient`]), the OpenAI-compatible client,
//!   record/replay, retries, limits, accounting;
//! - `tools`: the tool caller (the `/virtual` protocol under rate limits, MCP servers' tools) and the
//!   observations it returns;
//! - `agent`: the methods under one [`agent::Solver`] trait, a folder or file each (`agent::sum2act`);
//! - `setup`: what every episode of a run shares ([`setup::SolverEnv`]) and whose fault an episode
//!   that ended in error is;
//! - `batch`: runs a query set with resume, shards, a manifest and a summary.
//!
//! Beside them, shared by every layer: `prompts` (the templates of `prompts/*.md`, embedded and named
//! by `build.rs`), `names` (the names users type for enum values), `text` (cutting text to a length),
//! `terminal` (text made safe to print), `redact` (credentials masked wherever text is shown).
//!
//! The core never sees clap, anyhow, rustyline or indicatif, nor the config file: the binary resolves
//! every option and passes plain structs. The servers, simulators, evaluator, retriever and embedded
//! model are crates of their own above this one (`crates/`).
//!
//! Visibility: an item is `pub` only when another crate of the workspace (the binary, the servers, the
//! evaluator, the retriever, the local model, the tests and benches) uses it; everything else is
//! `pub(crate)` or private, so what is `pub` here is the core's interface and can be read as such.

pub mod agent;
pub mod batch;
pub mod llm;
pub mod names;
pub mod prompts;
pub mod redact;
pub mod request;
pub mod setup;
pub mod terminal;
pub mod text;
pub mod toolbench;
pub mod tools;
