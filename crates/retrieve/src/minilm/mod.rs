//! A small BERT sentence encoder (all-MiniLM-L6-v2: 6 layers, 384 wide) run in-process on the
//! CPU, for the retriever's optional dense relevance. Mean of the last layer over the tokens,
//! scaled to unit length, as sentence-transformers does. Weights come from
//! `scripts/fetch-model.sh minilm`; nothing is fetched at run time.

mod layers;
mod math;
mod safetensors;
#[cfg(test)]
mod tests;
mod wordpiece;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::RetrieveError;
use super::dense::TextEncoder;
use layers::{Layer, LayerNorm, Store};
use math::{Mat, add, gelu, gemm, softmax};
use safetensors::Tensor;
use wordpiece::WordPiece;

/// The folder name under the model cache that `scripts/fetch-model.sh minilm` fills.
pub const MODEL_DIR_NAME: &str = "all-MiniLM-L6-v2";

/// Bumped whenever tokenization or the forward pass changes, so cached embeddings are redone.
const IMPL_VERSION: u32 = 1;

/// sentence-transformers cuts all-MiniLM-L6-v2's input at 256 tokens (`max_seq_length`).
const MAX_TOKENS: usize = 256;

/// The fields of a BERT `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub vocab_size: usize,
    #[serde(default = "default_type_vocab_size")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f32,
}

fn default_eps() -> f32 {
    1e-12
}

fn default_type_vocab_size() -> usize {
    2
}

/// The encoder: tokenizer plus weights.
pub struct MiniLm {
    name: String,
    config: BertConfig,
    vocab: WordPiece,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    max_tokens: usize,
}

impl MiniLm {
    /// Loads `config.json`, `vocab.txt` and `model.safetensors` from a folder.
    pub fn load(dir: &Path) -> Result<Self, RetrieveError> {
        let config_path = dir.join("config.json");
        let text = std::fs::read_to_string(&config_path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                RetrieveError::BadInput(format!(
                    "{}: no sentence encoder there (run scripts/fetch-model.sh minilm)",
                    dir.display()
                ))
            } else {
                RetrieveError::io(&config_path, e)
            }
        })?;
        let config: BertConfig = serde_json::from_str(&text)
            .map_err(|e| RetrieveError::BadInput(format!("{}: {e}", config_path.display())))?;
        let vocab = WordPiece::load(&dir.join("vocab.txt"))?;
        let weights_path = dir.join("model.safetensors");
        let tensors = safetensors::read(&weights_path)?;
        let name = format!(
            "{}-{}-v{IMPL_VERSION}",
            dir.file_name()
                .map_or_else(|| "bert".into(), |n| n.to_string_lossy().to_string()),
            std::fs::metadata(&weights_path).map_or(0, |m| m.len())
        );
        Self::from_parts(name, config, vocab, tensors)
            .map_err(|e| RetrieveError::BadInput(format!("{}: {e}", weights_path.display())))
    }

    fn from_parts(
        name: String,
        config: BertConfig,
        vocab: WordPiece,
        tensors: HashMap<String, Tensor>,
    ) -> Result<Self, String> {
        let h = config.hidden_size;
        if h == 0
            || config.num_attention_heads == 0
            || !h.is_multiple_of(config.num_attention_heads)
        {
            return Err(format!(
                "hidden_size {h} is not a multiple of num_attention_heads {}",
                config.num_attention_heads
            ));
        }
        if vocab.vocab_size() > config.vocab_size {
            return Err(format!(
                "vocab.txt has {} tokens, the model {}",
                vocab.vocab_size(),
                config.vocab_size
            ));
        }
        let mut store = Store {
            tensors,
            h,
            eps: config.layer_norm_eps,
        };
        let inter = config.intermediate_size;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            layers.push(Layer {
                query: store.linear(&format!("{p}.attention.self.query"), h, h)?,
                key: store.linear(&format!("{p}.attention.self.key"), h, h)?,
                value: store.linear(&format!("{p}.attention.self.value"), h, h)?,
                attn_out: store.linear(&format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: store.norm(&format!("{p}.attention.output.LayerNorm"))?,
                up: store.linear(&format!("{p}.intermediate.dense"), h, inter)?,
                down: store.linear(&format!("{p}.output.dense"), inter, h)?,
                out_norm: store.norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        let embed_norm = store.norm("embeddings.LayerNorm")?;
        let word = store.take("embeddings.word_embeddings.weight", &[config.vocab_size, h])?;
        let position = store.take(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        // Every token is of type 0: only the first row is used.
        let mut token_type = store.take(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        token_type.truncate(h);
        Ok(MiniLm {
            name,
            max_tokens: config.max_position_embeddings.min(MAX_TOKENS),
            config,
            vocab,
            word,
            position,
            token_type,
            embed_norm,
            layers,
        })
    }

    /// One text's embedding: the mean of the last layer over its tokens, unit length.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let h = self.config.hidden_size;
        let ids = self.vocab.encode(text, self.max_tokens);
        let n = ids.len();
        let mut x = vec![0.0f32; n * h];
        for (i, (&id, row)) in ids.iter().zip(x.chunks_exact_mut(h)).enumerate() {
            let w = &self.word[id as usize * h..(id as usize + 1) * h];
            let p = &self.position[i * h..(i + 1) * h];
            for (j, v) in row.iter_mut().enumerate() {
                *v = w[j] + p[j] + self.token_type[j];
            }
        }
        self.embed_norm.apply(&mut x);
        for layer in &self.layers {
            let ctx = self.attention(layer, &x, n);
            let mut a = layer.attn_out.apply(&ctx, n);
            add(&mut a, &x);
            layer.attn_norm.apply(&mut a);
            let mut up = layer.up.apply(&a, n);
            up.iter_mut().for_each(|v| *v = gelu(*v));
            let mut out = layer.down.apply(&up, n);
            add(&mut out, &a);
            layer.out_norm.apply(&mut out);
            x = out;
        }
        let mut pooled = vec![0.0f32; h];
        for row in x.chunks_exact(h) {
            add(&mut pooled, row);
        }
        let len = pooled.iter().map(|v| v * v).sum::<f32>().sqrt();
        if len > 0.0 {
            pooled.iter_mut().for_each(|v| *v /= len);
        }
        pooled
    }

    /// Multi-head self-attention over all `n` tokens (one text, so no padding mask). Both products
    /// of each head go through the optimised kernel: per-element loops in our own code would
    /// dominate an unoptimised (debug) build.
    fn attention(&self, layer: &Layer, x: &[f32], n: usize) -> Vec<f32> {
        let h = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let (q, k, v) = (
            layer.query.apply(x, n),
            layer.key.apply(x, n),
            layer.value.apply(x, n),
        );
        let scale = 1.0 / (d as f32).sqrt();
        let mut ctx = vec![0.0f32; n * h];
        let mut scores = vec![0.0f32; n * n];
        for head in 0..heads {
            let off = head * d;
            // scores (n × n) = Q_h (n × d) · K_hᵀ, heads interleaved in rows of width h.
            gemm(
                (n, d, n),
                Mat {
                    data: &q[off..],
                    rs: h,
                    cs: 1,
                },
                Mat {
                    data: &k[off..],
                    rs: 1,
                    cs: h,
                },
                &mut scores,
                (n, 1),
            );
            for row in scores.chunks_exact_mut(n) {
                row.iter_mut().for_each(|s| *s *= scale);
                softmax(row);
            }
            // ctx_h (n × d) = P (n × n) · V_h (n × d), written into its columns of ctx.
            gemm(
                (n, n, d),
                Mat {
                    data: &scores,
                    rs: n,
                    cs: 1,
                },
                Mat {
                    data: &v[off..],
                    rs: h,
                    cs: 1,
                },
                &mut ctx[off..],
                (h, 1),
            );
        }
        ctx
    }
}

impl TextEncoder for MiniLm {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.config.hidden_size
    }

    /// Texts are spread over the machine's cores.
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, RetrieveError> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(texts.len());
        if threads <= 1 {
            return Ok(texts.iter().map(|t| self.embed(t)).collect());
        }
        let per = texts.len().div_ceil(threads);
        let parts: Vec<Vec<Vec<f32>>> = std::thread::scope(|s| {
            let handles: Vec<_> = texts
                .chunks(per)
                .map(|chunk| s.spawn(move || chunk.iter().map(|t| self.embed(t)).collect()))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let out: Vec<Vec<f32>> = parts.into_iter().flatten().collect();
        if out.len() != texts.len() {
            return Err(RetrieveError::BadInput(
                "the sentence encoder failed on a worker thread".into(),
            ));
        }
        Ok(out)
    }
}

/// Where `scripts/fetch-model.sh minilm` puts the encoder: `$SUM2ACT_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/sum2act/models`, else `~/.cache/sum2act/models`; then `all-MiniLM-L6-v2`.
pub fn default_model_dir() -> Option<PathBuf> {
    let base = std::env::var_os("SUM2ACT_MODEL_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("sum2act/models"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/sum2act/models"))
        })?;
    Some(base.join(MODEL_DIR_NAME))
}
