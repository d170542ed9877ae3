//! The engine thread's start: the model file, a context sized from [`LocalOptions`], the chat template
//! and the prompts, reported back to [`LocalModel::load`](super::LocalModel::load) before serving.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::{Arc, mpsc};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;

use super::engine::{Engine, Slot};
use super::{Job, LocalOptions, ModelInfo, Switches, backend, model_id_of};
use sum2act_core::llm::LlmError;
use sum2act_core::prompts::Prompts;

/// The context's sizes after clamping the options to what llama.cpp accepts.
struct Sizes {
    threads: u32,
    parallel: u32,
    batch: u32,
    n_ctx: u32,
}

impl Sizes {
    fn of(options: &LocalOptions) -> Self {
        let threads = options.threads.filter(|t| *t > 0).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(2)
        });
        Sizes {
            threads,
            parallel: options.parallel.clamp(1, 64),
            batch: options.batch.max(32),
            n_ctx: options.context.max(512),
        }
    }
}

/// The engine thread: loads the model, sends its [`ModelInfo`] (or why it failed) on `ready`, then
/// serves the jobs from `rx` until every sender has gone.
pub(super) fn engine_main(
    path: &Path,
    options: &LocalOptions,
    switches: Arc<Switches>,
    ready: &mpsc::Sender<Result<ModelInfo, LlmError>>,
    rx: mpsc::Receiver<Job>,
) {
    let (backend, model) = match load_model(path) {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let sizes = Sizes::of(options);
    let (ctx, template, prompts) = match open(backend, &model, &sizes, path) {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let info = ModelInfo {
        path: path.to_path_buf(),
        id: model_id_of(path),
        context: ctx.n_ctx(),
        context_train: model.n_ctx_train(),
        parallel: sizes.parallel,
        threads: sizes.threads,
        parameters: model.n_params(),
        size_bytes: model.size(),
    };
    if ready.send(Ok(info.clone())).is_err() {
        return;
    }
    let mut engine = Engine {
        model: &model,
        n_ctx: ctx.n_ctx() as usize,
        ctx,
        template,
        prompts,
        slots: (0..sizes.parallel as i32).map(Slot::new).collect(),
        batch_size: sizes.batch as usize,
        switches,
        grammars: HashMap::new(),
        greedy: LlamaSampler::greedy(),
        clock: 0,
        model_id: info.id,
    };
    engine.run(rx);
}

fn load_model(path: &Path) -> Result<(&'static LlamaBackend, LlamaModel), LlmError> {
    let backend = backend()?;
    let model =
        LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()).map_err(|e| {
            LlmError::Local(format!(
                "cannot load {} as a GGUF model: {e}",
                path.display()
            ))
        })?;
    Ok((backend, model))
}

/// The context (one unified KV cache shared by `parallel` sequences), the chat template and the
/// prompts the engine renders with.
fn open<'m>(
    backend: &LlamaBackend,
    model: &'m LlamaModel,
    sizes: &Sizes,
    path: &Path,
) -> Result<(LlamaContext<'m>, LlamaChatTemplate, Prompts), LlmError> {
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(sizes.n_ctx))
        .with_n_batch(sizes.batch)
        .with_n_ubatch(sizes.batch)
        .with_n_seq_max(sizes.parallel)
        .with_kv_unified(true)
        .with_n_threads(sizes.threads as i32)
        .with_n_threads_batch(sizes.threads as i32);
    let ctx = model.new_context(backend, params).map_err(|e| {
        LlmError::Local(format!(
            "cannot create a context of {} tokens for {}: {e}",
            sizes.n_ctx,
            path.display()
        ))
    })?;
    // Qwen and most instruct GGUFs carry a ChatML-style template; fall back to ChatML when absent.
    let template = model
        .chat_template(None)
        .or_else(|_| LlamaChatTemplate::new("chatml"))
        .map_err(|e| LlmError::Local(format!("chat template: {e}")))?;
    let prompts = Prompts::load().map_err(|e| LlmError::Local(e.to_string()))?;
    Ok((ctx, template, prompts))
}
