//! The embedded model: a GGUF file run in-process by llama.cpp (`llama-cpp-2`).
//!
//! llama.cpp is blocking and its context is not thread-safe, so one engine thread owns the model and
//! the context; requests arrive over a channel. The engine keeps several sequences in one context
//! (a unified KV cache) and advances all active ones with a single decode per step, so concurrent
//! episodes share the cores instead of queueing. Each sequence slot remembers the tokens in its cache;
//! a new request reuses the longest cached prefix (copied from any slot, zero-copy in a unified cache),
//! so a router step only pays for the tokens after the shared system prompt and tool list.
//!
//! Structured output is enforced with a grammar built from a JSON schema. The grammar is consulted only
//! when the unconstrained top token is rejected, which keeps decoding at nearly full speed.

mod engine;
mod load;
mod output;
mod prompt;
mod sample;
mod schema;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak, mpsc};
use std::time::Instant;

use async_trait::async_trait;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use serde::Serialize;
use tokio::sync::oneshot;

use engine::Output;
use load::engine_main;
pub use schema::bounded_schema;
use sum2act_core::llm::{Completion, CompletionRequest, LlmClient, LlmError};

/// How grammar-constrained tokens are sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrammarMode {
    /// Check the unconstrained choice first; apply the grammar to the whole vocabulary only when it is
    /// rejected. Same output as `Full`, much faster.
    TopFirst,
    /// Apply the grammar to every candidate at every step (llama.cpp's plain grammar sampler).
    Full,
}

/// Settings of the embedded model.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Tokens of KV cache shared by all sequences.
    pub context: u32,
    /// CPU threads (default: all cores).
    pub threads: Option<u32>,
    /// Sequences decoded together.
    pub parallel: u32,
    /// Most tokens evaluated in one decode step (prompt chunks plus one token per generating sequence).
    pub batch: u32,
    pub grammar_mode: GrammarMode,
    /// Reuse cached prompt prefixes between requests.
    pub prefix_cache: bool,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            context: sum2act_core::llm::DEFAULT_CONTEXT,
            threads: None,
            parallel: sum2act_core::llm::DEFAULT_PARALLEL,
            batch: 256,
            grammar_mode: GrammarMode::TopFirst,
            prefix_cache: true,
        }
    }
}

/// What the engine reports about itself once loaded.
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    pub path: PathBuf,
    pub id: String,
    pub context: u32,
    pub context_train: u32,
    pub parallel: u32,
    pub threads: u32,
    pub parameters: u64,
    pub size_bytes: u64,
}

/// Timing of one generation, for benchmarks and `llm check`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GenStats {
    /// Prompt tokens, including those served from the cache.
    pub prompt_tokens: u64,
    /// Prompt tokens found in the KV cache (not evaluated again).
    pub cached_tokens: u64,
    pub generated_tokens: u64,
    /// Waiting for a free sequence slot.
    pub queue_ms: f64,
    /// From admission to the first sampled token.
    pub prefill_ms: f64,
    /// From the first sampled token to the end.
    pub decode_ms: f64,
}

impl GenStats {
    /// Evaluated (not cached) prompt tokens per second.
    pub fn prefill_tok_s(&self) -> f64 {
        per_second(self.prompt_tokens - self.cached_tokens, self.prefill_ms)
    }

    /// Generated tokens per second after the first.
    pub fn decode_tok_s(&self) -> f64 {
        per_second(self.generated_tokens.saturating_sub(1), self.decode_ms)
    }
}

fn per_second(n: u64, ms: f64) -> f64 {
    if ms > 0.0 {
        n as f64 * 1000.0 / ms
    } else {
        0.0
    }
}

type Reply = oneshot::Sender<Result<(Completion, GenStats), LlmError>>;

struct Job {
    request: CompletionRequest,
    reply: Reply,
    queued: Instant,
    prepared: Option<Prepared>,
}

/// A request turned into what the engine runs.
struct Prepared {
    prompt: Vec<LlamaToken>,
    output: Output,
    grammar: Option<LlamaSampler>,
    max_new: usize,
}

/// The embedded model. Cheap to share: clones of the `Arc` talk to the same engine thread.
pub struct LocalModel {
    tx: Mutex<mpsc::Sender<Job>>,
    info: ModelInfo,
    switches: Arc<Switches>,
}

/// Settings the engine reads at every request, so a benchmark can compare them on one loaded model.
struct Switches {
    grammar_full: AtomicBool,
    prefix_cache: AtomicBool,
}

fn backend() -> Result<&'static LlamaBackend, LlmError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp is chatty (and warns about harmless quirks of the Qwen vocabulary): its log
            // lines only show at -vv.
            let enabled = tracing::enabled!(tracing::Level::DEBUG);
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(enabled),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlmError::Local(format!("cannot initialise llama.cpp: {e}")))
}

impl LocalModel {
    /// Loads `path` on a new engine thread; errors (missing or bad file) come back here.
    pub fn load(path: &Path, options: LocalOptions) -> Result<Self, LlmError> {
        if !path.is_file() {
            return Err(LlmError::ModelFileMissing {
                path: path.to_path_buf(),
            });
        }
        crate::cpu::check(&crate::cpu::features())?;
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let owned = path.to_path_buf();
        let switches = Arc::new(Switches {
            grammar_full: AtomicBool::new(options.grammar_mode == GrammarMode::Full),
            prefix_cache: AtomicBool::new(options.prefix_cache),
        });
        let engine_switches = switches.clone();
        std::thread::Builder::new()
            .name("llm-engine".into())
            .spawn(move || engine_main(&owned, &options, engine_switches, &ready_tx, rx))
            .map_err(|e| LlmError::Local(format!("cannot start the model thread: {e}")))?;
        let info = ready_rx
            .recv()
            .map_err(|_| LlmError::Local("the model thread stopped while loading".into()))??;
        tracing::info!(model = %info.id, context = info.context, parallel = info.parallel, threads = info.threads, "embedded model loaded");
        Ok(LocalModel {
            tx: Mutex::new(tx),
            info,
            switches,
        })
    }

    /// Changes how grammars are applied for requests admitted from now on.
    pub fn set_grammar_mode(&self, mode: GrammarMode) {
        self.switches
            .grammar_full
            .store(mode == GrammarMode::Full, Ordering::Relaxed);
    }

    /// Turns prefix KV-cache reuse on or off for requests admitted from now on.
    pub fn set_prefix_cache(&self, on: bool) {
        self.switches.prefix_cache.store(on, Ordering::Relaxed);
    }

    /// Whether prefix KV-cache reuse is on.
    pub fn prefix_cache(&self) -> bool {
        self.switches.prefix_cache.load(Ordering::Relaxed)
    }

    /// One engine per model file per process, so a judge and an agent built separately share it.
    pub fn shared(path: &Path, options: LocalOptions) -> Result<Arc<Self>, LlmError> {
        static LOADED: OnceLock<Mutex<HashMap<PathBuf, Weak<LocalModel>>>> = OnceLock::new();
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let registry = LOADED.get_or_init(|| Mutex::new(HashMap::new()));
        let mut loaded = registry
            .lock()
            .map_err(|_| LlmError::Local("model registry lock poisoned".into()))?;
        if let Some(model) = loaded.get(&key).and_then(Weak::upgrade) {
            return Ok(model);
        }
        let model = Arc::new(Self::load(path, options)?);
        loaded.insert(key, Arc::downgrade(&model));
        Ok(model)
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Completes `request` and reports how long prefill and decoding took.
    pub async fn complete_with_stats(
        &self,
        request: &CompletionRequest,
    ) -> Result<(Completion, GenStats), LlmError> {
        let (reply, rx) = oneshot::channel();
        let job = Job {
            request: request.clone(),
            reply,
            queued: Instant::now(),
            prepared: None,
        };
        self.tx
            .lock()
            .map_err(|_| LlmError::Local("model channel lock poisoned".into()))?
            .send(job)
            .map_err(|_| LlmError::Local("the model thread has stopped".into()))?;
        rx.await
            .map_err(|_| LlmError::Local("the model thread stopped during the request".into()))?
    }
}

#[async_trait]
impl LlmClient for LocalModel {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        self.complete_with_stats(request).await.map(|(c, _)| c)
    }

    fn model_id(&self) -> String {
        self.info.id.clone()
    }
}

/// The id recorded in manifests: the file name without `.gguf`.
fn model_id_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "local".into())
}
