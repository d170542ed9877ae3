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

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak, mpsc};
use std::time::Instant;

use async_trait::async_trait;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::openai::{tool_names, validate};
use super::{
    Completion, CompletionRequest, LlmClient, LlmError, Message, ResponseFormat, Role, ToolCall,
    ToolChoice, Usage,
};
use crate::prompts::Prompts;

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
            context: 8192,
            threads: None,
            parallel: 4,
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
        super::cpu::check(&super::cpu::features())?;
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

fn engine_main(
    path: &Path,
    options: &LocalOptions,
    switches: Arc<Switches>,
    ready: &mpsc::Sender<Result<ModelInfo, LlmError>>,
    rx: mpsc::Receiver<Job>,
) {
    let loaded = (|| {
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| {
                LlmError::Local(format!(
                    "cannot load {} as a GGUF model: {e}",
                    path.display()
                ))
            })?;
        Ok::<_, LlmError>((backend, model))
    })();
    let (backend, model) = match loaded {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let threads = options.threads.filter(|t| *t > 0).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(2)
    });
    let parallel = options.parallel.clamp(1, 64);
    let batch = options.batch.max(32);
    let n_ctx = options.context.max(512);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(batch)
        .with_n_ubatch(batch)
        .with_n_seq_max(parallel)
        .with_kv_unified(true)
        .with_n_threads(threads as i32)
        .with_n_threads_batch(threads as i32);
    let ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(LlmError::Local(format!(
                "cannot create a context of {n_ctx} tokens for {}: {e}",
                path.display()
            ))));
            return;
        }
    };
    // Qwen and most instruct GGUFs carry a ChatML-style template; fall back to ChatML when absent.
    let template = model
        .chat_template(None)
        .or_else(|_| LlamaChatTemplate::new("chatml"));
    let template = match template {
        Ok(t) => t,
        Err(e) => {
            let _ = ready.send(Err(LlmError::Local(format!("chat template: {e}"))));
            return;
        }
    };
    let prompts = match Prompts::load() {
        Ok(p) => p,
        Err(e) => {
            let _ = ready.send(Err(LlmError::Local(e.to_string())));
            return;
        }
    };
    let info = ModelInfo {
        path: path.to_path_buf(),
        id: model_id_of(path),
        context: ctx.n_ctx(),
        context_train: model.n_ctx_train(),
        parallel,
        threads,
        parameters: model.n_params(),
        size_bytes: model.size(),
    };
    let n_ctx = ctx.n_ctx() as usize;
    if ready.send(Ok(info.clone())).is_err() {
        return;
    }
    let mut engine = Engine {
        model: &model,
        ctx,
        template,
        prompts,
        slots: (0..parallel as i32).map(Slot::new).collect(),
        n_ctx,
        batch_size: batch as usize,
        switches,
        grammars: HashMap::new(),
        greedy: LlamaSampler::greedy(),
        clock: 0,
        model_id: info.id,
    };
    engine.run(rx);
}

/// How a finished generation is turned into a `Completion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    Text,
    Json,
    Action,
}

struct Active {
    reply: Reply,
    request: CompletionRequest,
    prompt: Vec<LlamaToken>,
    output: Output,
    grammar: Option<LlamaSampler>,
    max_new: usize,
    generated: Vec<LlamaToken>,
    /// A sampled token not yet in the KV cache.
    pending: Option<LlamaToken>,
    rng: StdRng,
    cached: usize,
    queue_ms: f64,
    admitted: Instant,
    first_token: Option<Instant>,
    /// Batch index of this sequence's logits after the current decode.
    logits_at: Option<i32>,
    /// Tokens added to the batch this step (committed to `kv` after a successful decode).
    staged: Vec<LlamaToken>,
}

struct Slot {
    id: i32,
    /// Tokens in this sequence's KV cache, in position order.
    kv: Vec<LlamaToken>,
    last_used: u64,
    active: Option<Box<Active>>,
}

impl Slot {
    fn new(id: i32) -> Self {
        Slot {
            id,
            kv: Vec::new(),
            last_used: 0,
            active: None,
        }
    }
}

struct Engine<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    prompts: Prompts,
    slots: Vec<Slot>,
    n_ctx: usize,
    batch_size: usize,
    switches: Arc<Switches>,
    /// Compiled grammars by GBNF text (compiling is slow for big tool lists).
    grammars: HashMap<String, LlamaSampler>,
    /// llama.cpp's greedy sampler: the argmax over the vocabulary in optimised C, where our own loop
    /// takes ~1.6 ms per token in a debug build (the demo's), 5% of a decode step on 2 cores.
    greedy: LlamaSampler,
    clock: u64,
    model_id: String,
}

/// A free slot as [`choose_slot`] sees it.
#[derive(Debug, Clone, Copy)]
struct SlotCandidate {
    index: usize,
    /// Tokens in its cache.
    cached: usize,
    /// Of those, the prefix the new prompt can reuse.
    reusable: usize,
    last_used: u64,
}

/// The free slot a new prompt goes to: the one whose cache loses the fewest tokens (what it holds beyond
/// the reusable prefix), then the one that reuses most, then the least recently used. A longer prefix
/// held elsewhere is shared into it afterwards, so reuse never needs to overwrite another prompt's
/// cache: every chat prompt shares its first template token, and preferring reuse alone let a
/// state-manager call overwrite the router's cached tool list while an empty slot was free.
fn choose_slot(free: &[SlotCandidate]) -> Option<usize> {
    free.iter()
        .min_by_key(|c| {
            (
                c.cached - c.reusable.min(c.cached),
                std::cmp::Reverse(c.reusable),
                c.last_used,
            )
        })
        .map(|c| c.index)
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Engine<'_> {
    fn run(&mut self, rx: mpsc::Receiver<Job>) {
        let mut queue: VecDeque<Job> = VecDeque::new();
        loop {
            let busy = self.slots.iter().any(|s| s.active.is_some());
            if !busy && queue.is_empty() {
                match rx.recv() {
                    Ok(job) => queue.push_back(job),
                    Err(_) => return,
                }
            }
            while let Ok(job) = rx.try_recv() {
                queue.push_back(job);
            }
            self.drop_abandoned(&mut queue);
            self.admit(&mut queue);
            if self.slots.iter().any(|s| s.active.is_some()) {
                self.step();
            }
        }
    }

    /// Drops the requests whose caller has gone (a `serve-llm` client that disconnected, a timed-out
    /// call): nothing is generated for nobody. The slot keeps its cache for prefix reuse.
    fn drop_abandoned(&mut self, queue: &mut VecDeque<Job>) {
        queue.retain(|job| !job.reply.is_closed());
        let clock = self.clock;
        for slot in &mut self.slots {
            if slot.active.as_ref().is_some_and(|a| a.reply.is_closed()) {
                slot.active = None;
                slot.last_used = clock;
                tracing::info!("embedded model: the caller went away; generation stopped");
            }
        }
    }

    /// Starts queued jobs while slots and cache room allow. A job that must wait keeps its prepared
    /// prompt, so it is not tokenized again at every step.
    fn admit(&mut self, queue: &mut VecDeque<Job>) {
        while let Some(mut job) = queue.pop_front() {
            if self.slots.iter().all(|s| s.active.is_some()) {
                queue.push_front(job);
                return;
            }
            let prepared = match job.prepared.take() {
                Some(p) => p,
                None => match self.prepare(&job.request) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = job.reply.send(Err(e));
                        continue;
                    }
                },
            };
            if !self.make_room(prepared.prompt.len() + prepared.max_new) {
                // Wait for running sequences to finish and free their cache.
                job.prepared = Some(prepared);
                queue.push_front(job);
                return;
            }
            self.start(job, prepared);
        }
    }

    /// Cells the cache may need: idle caches plus what each active sequence may still grow to.
    fn committed(&self) -> usize {
        self.slots
            .iter()
            .map(|s| match &s.active {
                Some(a) => s.kv.len().max(a.prompt.len() + a.max_new),
                None => s.kv.len(),
            })
            .sum()
    }

    /// Evicts idle caches (least recently used first) until `need` more cells fit.
    fn make_room(&mut self, need: usize) -> bool {
        while self.committed() + need > self.n_ctx {
            let victim = self
                .slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.active.is_none() && !s.kv.is_empty())
                .min_by_key(|(_, s)| s.last_used)
                .map(|(i, _)| i);
            match victim {
                Some(i) => self.clear_slot(i),
                None => return false,
            }
        }
        true
    }

    fn clear_slot(&mut self, i: usize) {
        let id = self.slots[i].id;
        let _ = self.ctx.clear_kv_cache_seq(Some(id as u32), None, None);
        self.slots[i].kv.clear();
    }

    /// Picks a free slot and the longest reusable cached prefix, then makes the job active there.
    fn start(&mut self, job: Job, prepared: Prepared) {
        let Prepared {
            prompt,
            output,
            grammar,
            max_new,
        } = prepared;
        self.clock += 1;
        // The last prompt token is always evaluated again: its logits start the generation.
        let reusable =
            |kv: &[LlamaToken]| common_prefix(kv, &prompt).min(prompt.len().saturating_sub(1));
        let free: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].active.is_none())
            .collect();
        let candidates: Vec<SlotCandidate> = free
            .iter()
            .map(|&i| SlotCandidate {
                index: i,
                cached: self.slots[i].kv.len(),
                reusable: reusable(&self.slots[i].kv),
                last_used: self.slots[i].last_used,
            })
            .collect();
        let dst = choose_slot(&candidates).unwrap_or(0);
        let use_cache = self.switches.prefix_cache.load(Ordering::Relaxed);
        let mut keep = if use_cache {
            reusable(&self.slots[dst].kv)
        } else {
            0
        };
        // Another slot (even a busy one) may hold a longer prefix: share its cells.
        if use_cache {
            let best_other = (0..self.slots.len())
                .filter(|&i| i != dst)
                .map(|i| (reusable(&self.slots[i].kv), i))
                .max();
            if let Some((n, src)) = best_other.filter(|(n, _)| *n > keep) {
                let (src_id, dst_id) = (self.slots[src].id, self.slots[dst].id);
                let _ = self.ctx.clear_kv_cache_seq(Some(dst_id as u32), None, None);
                if self
                    .ctx
                    .copy_kv_cache_seq(src_id, dst_id, Some(0), Some(n as u32))
                    .is_ok()
                {
                    let copied = self.slots[src].kv[..n].to_vec();
                    self.slots[dst].kv = copied;
                    keep = n;
                } else {
                    self.slots[dst].kv.clear();
                    keep = 0;
                }
            }
        }
        let slot_id = self.slots[dst].id;
        if self
            .ctx
            .clear_kv_cache_seq(Some(slot_id as u32), Some(keep as u32), None)
            .unwrap_or(false)
        {
            self.slots[dst].kv.truncate(keep);
        } else {
            // Partial removal is not supported by every cache type: start this sequence afresh.
            let _ = self
                .ctx
                .clear_kv_cache_seq(Some(slot_id as u32), None, None);
            self.slots[dst].kv.clear();
            keep = 0;
        }
        let seed = job.request.seed.unwrap_or(0);
        let slot = &mut self.slots[dst];
        slot.last_used = self.clock;
        slot.active = Some(Box::new(Active {
            reply: job.reply,
            queue_ms: job.queued.elapsed().as_secs_f64() * 1000.0,
            request: job.request,
            prompt,
            output,
            grammar,
            max_new,
            generated: Vec::new(),
            pending: None,
            rng: StdRng::seed_from_u64(seed),
            cached: keep,
            admitted: Instant::now(),
            first_token: None,
            logits_at: None,
            staged: Vec::new(),
        }));
    }

    /// One decode for every active sequence: a token for each generating one, prompt chunks for the rest.
    fn step(&mut self) {
        let mut batch = LlamaBatch::new(self.batch_size, 1);
        let mut budget = self.batch_size;
        // Generating sequences first, so a long prompt never stalls them.
        for slot in self.slots.iter_mut() {
            let Some(a) = slot.active.as_mut() else {
                continue;
            };
            a.logits_at = None;
            a.staged.clear();
            if let Some(tok) = a.pending {
                if budget == 0 {
                    continue;
                }
                let pos = slot.kv.len() as i32;
                if batch.add(tok, pos, &[slot.id], true).is_ok() {
                    a.logits_at = Some(batch.n_tokens() - 1);
                    a.staged.push(tok);
                    budget -= 1;
                }
            }
        }
        for slot in self.slots.iter_mut() {
            let Some(a) = slot.active.as_mut() else {
                continue;
            };
            if a.pending.is_some() || budget == 0 {
                continue;
            }
            let start = slot.kv.len();
            let end = a.prompt.len().min(start + budget);
            for (p, &tok) in a.prompt[start..end].iter().enumerate() {
                let pos = start + p;
                let last = pos + 1 == a.prompt.len();
                if batch.add(tok, pos as i32, &[slot.id], last).is_err() {
                    break;
                }
                a.staged.push(tok);
                budget -= 1;
                if last {
                    a.logits_at = Some(batch.n_tokens() - 1);
                }
            }
        }
        if batch.n_tokens() == 0 {
            return;
        }
        if let Err(e) = self.ctx.decode(&mut batch) {
            self.fail_all(&format!("decode failed: {e}"));
            return;
        }
        let now = Instant::now();
        let mode = if self.switches.grammar_full.load(Ordering::Relaxed) {
            GrammarMode::Full
        } else {
            GrammarMode::TopFirst
        };
        let mut finished = Vec::new();
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(a) = slot.active.as_mut() else {
                continue;
            };
            slot.kv.append(&mut a.staged);
            let Some(idx) = a.logits_at else { continue };
            let tok = match pick(&self.ctx, &mut self.greedy, idx, a, mode) {
                Some(t) => t,
                None => {
                    finished.push((i, Some("grammar allows no token")));
                    continue;
                }
            };
            if a.first_token.is_none() {
                a.first_token = Some(now);
            }
            if self.model.vocab().is_eog(tok) {
                a.pending = None;
                finished.push((i, None));
                continue;
            }
            a.generated.push(tok);
            a.pending = Some(tok);
            if a.generated.len() >= a.max_new {
                finished.push((i, None));
            }
        }
        for (i, error) in finished {
            self.finish(i, error);
        }
    }

    fn fail_all(&mut self, message: &str) {
        tracing::error!("embedded model: {message}");
        for i in 0..self.slots.len() {
            if let Some(a) = self.slots[i].active.take() {
                let _ = a.reply.send(Err(LlmError::Local(message.to_string())));
            }
            self.clear_slot(i);
        }
    }

    fn finish(&mut self, i: usize, error: Option<&str>) {
        let Some(a) = self.slots[i].active.take() else {
            return;
        };
        self.slots[i].last_used = self.clock;
        let now = Instant::now();
        let first = a.first_token.unwrap_or(now);
        let stats = GenStats {
            prompt_tokens: a.prompt.len() as u64,
            cached_tokens: a.cached as u64,
            generated_tokens: a.generated.len() as u64,
            queue_ms: a.queue_ms,
            prefill_ms: first.duration_since(a.admitted).as_secs_f64() * 1000.0,
            decode_ms: now.duration_since(first).as_secs_f64() * 1000.0,
        };
        // Where a run's tokens go (`RUST_LOG=sum2act::llm::local=debug`): evaluated vs cached prompt.
        tracing::debug!(
            purpose = %a.request.purpose,
            prompt = stats.prompt_tokens,
            cached = stats.cached_tokens,
            generated = stats.generated_tokens,
            prefill_ms = stats.prefill_ms as u64,
            decode_ms = stats.decode_ms as u64,
            "llm call"
        );
        let result = match error {
            Some(e) => Err(LlmError::InvalidResponse(e.to_string())),
            None => self.completion(&a, &stats),
        };
        let _ = a.reply.send(result.map(|c| (c, stats)));
    }

    fn completion(&self, a: &Active, stats: &GenStats) -> Result<Completion, LlmError> {
        let mut bytes = Vec::new();
        let vocab = self.model.vocab();
        for &t in &a.generated {
            vocab.token_to_piece_into(t, &mut bytes, false, None);
        }
        let text = String::from_utf8_lossy(&bytes).trim().to_string();
        let truncated = a.generated.len() >= a.max_new;
        let finish_reason = Some(if truncated { "length" } else { "stop" }.to_string());
        let usage = Usage {
            prompt_tokens: stats.prompt_tokens,
            completion_tokens: stats.generated_tokens,
        };
        let mut completion = Completion {
            content: text.clone(),
            tool_calls: Vec::new(),
            usage,
            model: self.model_id.clone(),
            finish_reason,
            elapsed_ms: (stats.queue_ms + stats.prefill_ms + stats.decode_ms) as u64,
            cost_usd: 0.0,
        };
        if a.output == Output::Action {
            let v: Value = serde_json::from_str(&text).map_err(|e| {
                if truncated {
                    return LlmError::Truncated {
                        max_tokens: a.max_new as u32,
                        content: text.clone(),
                    };
                }
                let preview: String = text.chars().take(200).collect();
                LlmError::InvalidResponse(format!("tool-call reply is not JSON ({e}): {preview}"))
            })?;
            let thought = v["thought"].as_str().unwrap_or_default().to_string();
            match v["name"].as_str() {
                Some(name) => {
                    completion.content = thought;
                    completion.tool_calls.push(ToolCall {
                        id: format!(
                            "call_{}",
                            stats.prompt_tokens ^ (stats.generated_tokens << 20)
                        ),
                        name: name.to_string(),
                        arguments: v
                            .get("arguments")
                            .map_or_else(|| "{}".to_string(), Value::to_string),
                    });
                    completion.finish_reason = Some("tool_calls".into());
                }
                None => completion.content = v["content"].as_str().unwrap_or(&thought).to_string(),
            }
        }
        validate(&completion, &a.request)?;
        Ok(completion)
    }

    /// Turns a request into prompt tokens, an output mode, an optional grammar and a token cap.
    fn prepare(&mut self, request: &CompletionRequest) -> Result<Prepared, LlmError> {
        let use_tools = !request.tools.is_empty() && request.tool_choice != ToolChoice::None;
        let (output, schema) = if use_tools {
            (Output::Action, Some(action_schema(request)?))
        } else {
            match &request.response_format {
                ResponseFormat::Text => (Output::Text, None),
                ResponseFormat::JsonObject => (Output::Json, Some(json!({"type": "object"}))),
                ResponseFormat::JsonSchema { schema, .. } => {
                    (Output::Json, Some(bounded_schema(schema)))
                }
            }
        };
        let text = self.render_prompt(request, use_tools)?;
        // The template already wrote the special tokens; parse them as such.
        let prompt = self.model.vocab().tokenize(text.as_bytes(), true, true);
        if prompt.is_empty() {
            return Err(LlmError::InvalidResponse("the prompt is empty".into()));
        }
        if prompt.len() + 1 > self.n_ctx {
            return Err(LlmError::ContextOverflow {
                prompt_tokens: prompt.len() as u64,
                context: self.n_ctx as u64,
            });
        }
        let max_new = (request.max_tokens.max(1) as usize).min(self.n_ctx - prompt.len());
        let grammar = match schema {
            Some(s) => Some(self.grammar(&s)?),
            None => None,
        };
        Ok(Prepared {
            prompt,
            output,
            grammar,
            max_new,
        })
    }

    fn grammar(&mut self, schema: &Value) -> Result<LlamaSampler, LlmError> {
        let gbnf = super::gbnf::grammar(schema)
            .map_err(|e| LlmError::Local(format!("no grammar for the requested output: {e}")))?;
        if let Some(g) = self.grammars.get(&gbnf) {
            return Ok(g.clone());
        }
        let sampler = LlamaSampler::grammar(self.model, &gbnf, "root")
            .map_err(|e| LlmError::Local(format!("invalid grammar from the JSON schema: {e}")))?;
        if self.grammars.len() > 64 {
            self.grammars.clear();
        }
        self.grammars.insert(gbnf, sampler.clone());
        Ok(sampler)
    }

    /// The chat prompt in the model's own template. Tool calls and results are written in our JSON
    /// action format, which small models follow more reliably than their native tool tags.
    fn render_prompt(
        &self,
        request: &CompletionRequest,
        use_tools: bool,
    ) -> Result<String, LlmError> {
        let prompt_err = |e: crate::prompts::PromptError| LlmError::Local(e.to_string());
        let mut messages: Vec<(String, String)> = Vec::new();
        let mut system: Vec<String> = Vec::new();
        for m in &request.messages {
            match m.role {
                Role::System => system.push(m.content.clone()),
                Role::User => messages.push(("user".into(), m.content.clone())),
                Role::Assistant => messages.push(("assistant".into(), assistant_text(m))),
                Role::Tool => {
                    let name = m.name.clone().unwrap_or_default();
                    let text = self
                        .prompts
                        .render(
                            "llm_local_tool_result",
                            &[("name", &name), ("content", &m.content)],
                        )
                        .map_err(prompt_err)?;
                    messages.push(("user".into(), text));
                }
            }
        }
        let mut system = system.join("\n\n");
        if use_tools && !request.tools_described {
            let tools: Vec<String> = request
                .tools
                .iter()
                .map(|t| t.get("function").unwrap_or(t).to_string())
                .collect();
            let format_name = if request.tool_choice == ToolChoice::Auto {
                "llm_local_format_call_or_reply"
            } else {
                "llm_local_format_call"
            };
            let format = self.prompts.render(format_name, &[]).map_err(prompt_err)?;
            system = self
                .prompts
                .render(
                    "llm_local_tools",
                    &[
                        ("system", &system),
                        ("tools", &tools.join("\n")),
                        ("format", &format),
                    ],
                )
                .map_err(prompt_err)?
                .trim()
                .to_string();
        }
        let mut chat = Vec::new();
        if !system.is_empty() {
            chat.push(("system".to_string(), system));
        }
        chat.extend(messages);
        let chat = chat
            .into_iter()
            .map(|(role, content)| LlamaChatMessage::new(role, content))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                LlmError::InvalidResponse(format!("a message cannot be sent to the model: {e}"))
            })?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| LlmError::Local(format!("chat template failed: {e}")))
    }
}

/// An assistant turn as the model would have written it.
fn assistant_text(m: &Message) -> String {
    match m.tool_calls.first() {
        Some(call) => {
            let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(json!({}));
            json!({"thought": m.content, "name": call.name, "arguments": arguments}).to_string()
        }
        None => m.content.clone(),
    }
}

/// Longest thought the grammar lets the model write in a tool call.
const THOUGHT_CHARS: u64 = 120;

/// Longest string the grammar lets the model write where the schema sets no limit: small models
/// otherwise loop forever inside a string.
const MAX_STRING: u64 = 600;

/// Copies a schema, adding `maxLength` to every string without one.
pub fn bounded_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                // Keys under `properties`/`$defs` are names, not schemas; recurse into their values.
                let v = if k == "properties"
                    || k == "$defs"
                    || k == "definitions"
                    || k == "patternProperties"
                {
                    match v {
                        Value::Object(props) => Value::Object(
                            props
                                .iter()
                                .map(|(n, s)| (n.clone(), bounded_schema(s)))
                                .collect(),
                        ),
                        other => other.clone(),
                    }
                } else if k == "enum"
                    || k == "const"
                    || k == "required"
                    || k == "examples"
                    || k == "default"
                {
                    v.clone()
                } else {
                    bounded_schema(v)
                };
                out.insert(k.clone(), v);
            }
            let is_string = out.get("type").is_some_and(|t| t == "string");
            if is_string && !out.contains_key("maxLength") && !out.contains_key("enum") {
                out.insert("maxLength".into(), json!(MAX_STRING));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(bounded_schema).collect()),
        other => other.clone(),
    }
}

/// Keeps only the JSON-schema keywords llama.cpp's converter understands, lower-cases types, and
/// drops what would make a tool's grammar fail (ToolBench parameter schemas are often loose).
fn clean_parameters(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return json!({"type": "object"});
    };
    let mut props = serde_json::Map::new();
    if let Some(p) = obj.get("properties").and_then(Value::as_object) {
        for (name, s) in p {
            let ty = s
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_lowercase)
                .unwrap_or_else(|| "string".into());
            let ty = match ty.as_str() {
                "string" | "number" | "integer" | "boolean" | "array" | "object" => ty,
                "float" | "double" => "number".into(),
                "int" => "integer".into(),
                "bool" => "boolean".into(),
                _ => "string".into(),
            };
            let mut clean = serde_json::Map::new();
            clean.insert("type".into(), json!(ty));
            if let Some(e) = s.get("enum").filter(|e| e.is_array()) {
                clean.insert("enum".into(), e.clone());
            }
            props.insert(name.clone(), Value::Object(clean));
        }
    }
    let required: Vec<Value> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter(|n| n.as_str().is_some_and(|n| props.contains_key(n)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    bounded_schema(&json!({"type": "object", "properties": props, "required": required}))
}

/// The JSON action the model must write when tools are offered: one branch per tool (its own
/// arguments schema), plus a plain reply when the tool choice is `auto`.
fn action_schema(request: &CompletionRequest) -> Result<Value, LlmError> {
    let names = tool_names(request);
    let forced = match &request.tool_choice {
        ToolChoice::Function(f) => {
            if !names.contains(f) {
                return Err(LlmError::UnknownTool(f.clone()));
            }
            Some(f.clone())
        }
        _ => None,
    };
    // The thought is written after the call is chosen, so it cannot inform it; uncapped, small models
    // fill it with guessed results (a 0.5B router averaged ~60 tokens of it per call, ~40% of all the
    // tokens it wrote). One short sentence is all the trajectory needs.
    let thought = json!({"type": "string", "maxLength": THOUGHT_CHARS});
    let mut branches = Vec::new();
    for t in &request.tools {
        let f = t.get("function").unwrap_or(t);
        let Some(name) = f["name"].as_str() else {
            continue;
        };
        if forced.as_deref().is_some_and(|n| n != name) {
            continue;
        }
        branches.push(json!({
            "type": "object",
            "properties": {
                "thought": thought,
                "name": {"const": name},
                "arguments": clean_parameters(&f["parameters"]),
            },
            // Name first, so the arguments follow the chosen tool; the thought comes last because small
            // models asked for it first tend to open with a refusal and then give up.
            "required": ["name", "arguments", "thought"],
        }));
    }
    if request.tool_choice == ToolChoice::Auto {
        branches.push(json!({
            "type": "object",
            "properties": {"thought": thought, "content": {"type": "string", "maxLength": 2000}},
            "required": ["content", "thought"],
        }));
    }
    if branches.is_empty() {
        return Err(LlmError::Config(
            "tools were given but none has a name".into(),
        ));
    }
    Ok(if branches.len() == 1 {
        branches.remove(0)
    } else {
        json!({"oneOf": branches})
    })
}

fn argmax(logits: &[f32]) -> usize {
    let mut best = 0;
    for (i, &l) in logits.iter().enumerate() {
        if l > logits[best] {
            best = i;
        }
    }
    best
}

/// Samples from the `candidates` (id, logit) at `temperature` among the 40 most likely.
fn sample_from(candidates: &mut [(usize, f32)], temperature: f32, rng: &mut StdRng) -> usize {
    candidates.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top = &candidates[..candidates.len().min(40)];
    let max = top.first().map_or(0.0, |c| c.1);
    let weights: Vec<f64> = top
        .iter()
        .map(|c| (((c.1 - max) / temperature) as f64).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut r = rng.gen_range(0.0..total.max(f64::MIN_POSITIVE));
    for (c, w) in top.iter().zip(&weights) {
        if r < *w {
            return c.0;
        }
        r -= w;
    }
    top.first().map_or(0, |c| c.0)
}

/// Chooses the next token of one sequence: greedy (or sampled at its temperature), constrained by its
/// grammar. Returns `None` when the grammar allows no token at all.
fn pick(
    ctx: &LlamaContext<'_>,
    greedy: &mut LlamaSampler,
    idx: i32,
    a: &mut Active,
    mode: GrammarMode,
) -> Option<LlamaToken> {
    let logits = ctx.get_logits_ith(idx);
    let temperature = a.request.temperature;
    let choose = |cands: &mut Vec<(usize, f32)>, rng: &mut StdRng| -> Option<usize> {
        if cands.is_empty() {
            None
        } else if temperature <= 0.0 {
            cands.iter().max_by(|x, y| x.1.total_cmp(&y.1)).map(|c| c.0)
        } else {
            Some(sample_from(cands, temperature, rng))
        }
    };
    let first = if temperature <= 0.0 {
        usize::try_from(greedy.sample(ctx, idx).0).unwrap_or_else(|_| argmax(logits))
    } else {
        let mut all: Vec<(usize, f32)> = logits.iter().copied().enumerate().collect();
        choose(&mut all, &mut a.rng)?
    };
    let Some(grammar) = a.grammar.as_mut() else {
        return Some(LlamaToken(first as i32));
    };
    if mode == GrammarMode::TopFirst {
        let mut one = LlamaTokenDataArray::new(
            vec![LlamaTokenData::new(
                LlamaToken(first as i32),
                logits[first],
                0.0,
            )],
            false,
        );
        grammar.apply(&mut one);
        if one.data.first().is_some_and(|d| d.logit().is_finite()) {
            grammar.accept(LlamaToken(first as i32));
            return Some(LlamaToken(first as i32));
        }
    }
    let mut all = LlamaTokenDataArray::new(
        logits
            .iter()
            .enumerate()
            .map(|(i, &l)| LlamaTokenData::new(LlamaToken(i as i32), l, 0.0))
            .collect(),
        false,
    );
    grammar.apply(&mut all);
    let mut allowed: Vec<(usize, f32)> = all
        .data
        .iter()
        .filter(|d| d.logit().is_finite())
        .map(|d| (d.id().0 as usize, d.logit()))
        .collect();
    let tok = LlamaToken(choose(&mut allowed, &mut a.rng)? as i32);
    grammar.accept(tok);
    Some(tok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_get_a_length_cap() {
        let s = bounded_schema(&json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string", "maxLength": 5}, "type": {"type": "string", "enum": ["x"]}},
        }));
        assert_eq!(s["properties"]["a"]["maxLength"], MAX_STRING);
        assert_eq!(s["properties"]["b"]["maxLength"], 5);
        assert!(s["properties"]["type"].get("maxLength").is_none());
    }

    #[test]
    fn a_new_prompt_keeps_other_prompts_caches() {
        let slot = |index, cached, reusable, last_used| SlotCandidate {
            index,
            cached,
            reusable,
            last_used,
        };
        // A state-manager prompt shares one template token with the router's cached 550 tokens: the
        // empty slot is taken, not the router's.
        assert_eq!(
            choose_slot(&[slot(0, 550, 1, 5), slot(1, 0, 0, 0)]),
            Some(1)
        );
        // The router's next step takes an empty slot (its prefix is shared in from slot 0); without
        // one, its own slot, where it loses only its old last message.
        assert_eq!(
            choose_slot(&[slot(0, 550, 450, 5), slot(1, 300, 1, 6), slot(2, 0, 0, 0)]),
            Some(2)
        );
        assert_eq!(
            choose_slot(&[slot(0, 550, 450, 5), slot(1, 300, 1, 6)]),
            Some(0)
        );
        // All full and nothing reusable: the least recently used of the cheapest.
        assert_eq!(
            choose_slot(&[slot(0, 300, 0, 9), slot(1, 300, 0, 2), slot(2, 900, 0, 1)]),
            Some(1)
        );
        assert_eq!(choose_slot(&[]), None);
    }

    #[test]
    fn action_schema_has_a_branch_per_tool_and_a_reply() {
        let req = CompletionRequest::new("t", vec![]).with_tools(
            vec![
                json!({"name": "a", "parameters": {"type": "object", "properties": {"q": {"type": "STRING"}}, "required": ["q", "zz"]}}),
                json!({"name": "b", "parameters": {}}),
            ],
            ToolChoice::Auto,
        );
        let s = action_schema(&req).unwrap();
        let branches = s["oneOf"].as_array().unwrap();
        assert_eq!(branches.len(), 3);
        assert_eq!(
            branches[0]["properties"]["arguments"]["properties"]["q"]["type"],
            "string"
        );
        assert_eq!(
            branches[0]["properties"]["arguments"]["required"],
            json!(["q"])
        );
        let forced = CompletionRequest::new("t", vec![])
            .with_tools(req.tools.clone(), ToolChoice::Function("b".into()));
        assert_eq!(
            action_schema(&forced).unwrap()["properties"]["name"]["const"],
            "b"
        );
    }
}
