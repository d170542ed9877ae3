//! A small BERT sentence encoder (all-MiniLM-L6-v2: 6 layers, 384 wide) run in-process on the
//! CPU, for the retriever's optional dense relevance. Mean of the last layer over the tokens,
//! scaled to unit length, as sentence-transformers does. Weights come from
//! `scripts/fetch-model.sh minilm`; nothing is fetched at run time.

mod safetensors;
mod wordpiece;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::RetrieveError;
use super::dense::TextEncoder;
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

/// The loaded tensors, taken out one by one with their shapes checked.
struct Store {
    tensors: HashMap<String, Tensor>,
    h: usize,
    eps: f32,
}

impl Store {
    /// A tensor by name (also under a `bert.` prefix) with exactly this shape.
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let t = self
            .tensors
            .remove(name)
            .or_else(|| self.tensors.remove(&format!("bert.{name}")))
            .ok_or_else(|| format!("tensor {name} is missing"))?;
        if t.shape != shape {
            return Err(format!(
                "tensor {name} has shape {:?}, expected {shape:?}",
                t.shape
            ));
        }
        Ok(t.data)
    }

    fn linear(&mut self, prefix: &str, inp: usize, out: usize) -> Result<Linear, String> {
        Ok(Linear {
            w: self.take(&format!("{prefix}.weight"), &[out, inp])?,
            b: self.take(&format!("{prefix}.bias"), &[out])?,
            inp,
            out,
        })
    }

    fn norm(&mut self, prefix: &str) -> Result<LayerNorm, String> {
        Ok(LayerNorm {
            gamma: self.take(&format!("{prefix}.weight"), &[self.h])?,
            beta: self.take(&format!("{prefix}.bias"), &[self.h])?,
            eps: self.eps,
        })
    }
}

/// A dense layer, `y = x Wᵀ + b`, with `W` stored as PyTorch does (out × in).
struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

impl Linear {
    fn apply(&self, x: &[f32], rows: usize) -> Vec<f32> {
        let mut y = vec![0.0f32; rows * self.out];
        let (k, n) = (self.inp, self.out);
        // y (rows × out) = x (rows × in) · Wᵀ, W stored out × in.
        gemm(
            (rows, k, n),
            Mat {
                data: x,
                rs: k,
                cs: 1,
            },
            Mat {
                data: &self.w,
                rs: 1,
                cs: k,
            },
            &mut y,
            (n, 1),
        );
        for row in y.chunks_exact_mut(self.out) {
            for (v, b) in row.iter_mut().zip(&self.b) {
                *v += b;
            }
        }
        y
    }
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl LayerNorm {
    fn apply(&self, x: &mut [f32]) {
        let n = self.gamma.len();
        for row in x.chunks_exact_mut(n) {
            let mean = row.iter().sum::<f32>() / n as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
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

/// A read-only matrix view: element (i, j) is `data[i * rs + j * cs]`.
struct Mat<'a> {
    data: &'a [f32],
    rs: usize,
    cs: usize,
}

impl Mat<'_> {
    /// Whether every element of a `rows × cols` view lies inside `data`.
    fn covers(&self, rows: usize, cols: usize) -> bool {
        rows == 0 || cols == 0 || (rows - 1) * self.rs + (cols - 1) * self.cs < self.data.len()
    }
}

/// `c (m × n) = a (m × k) · b (k × n)`, any strides; `c` is overwritten.
fn gemm(
    (m, k, n): (usize, usize, usize),
    a: Mat,
    b: Mat,
    c: &mut [f32],
    (rsc, csc): (usize, usize),
) {
    let c_view = Mat {
        data: c,
        rs: rsc,
        cs: csc,
    };
    assert!(a.covers(m, k) && b.covers(k, n) && c_view.covers(m, n));
    // SAFETY: the asserts above keep every element matrixmultiply reads from a and b, and writes
    // to c, inside its slice.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.data.as_ptr(),
            a.rs as isize,
            a.cs as isize,
            b.data.as_ptr(),
            b.rs as isize,
            b.cs as isize,
            0.0,
            c.as_mut_ptr(),
            rsc as isize,
            csc as isize,
        );
    }
}

fn add(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

#[cfg(test)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    if sum > 0.0 {
        x.iter_mut().for_each(|v| *v /= sum);
    }
}

/// GELU with the exact (erf) form BERT was trained with.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// erf to about 1e-7 (Abramowitz and Stegun 7.1.26), enough for f32 activations.
fn erf(x: f32) -> f32 {
    let s = x.signum();
    let x = x.abs() as f64;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    s * (1.0 - poly * (-x * x).exp()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    const WORDS: [&str; 10] = [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "weather", "in", "paris", "buy", "flights",
    ];

    fn config() -> BertConfig {
        BertConfig {
            hidden_size: 8,
            num_attention_heads: 2,
            num_hidden_layers: 2,
            intermediate_size: 16,
            max_position_embeddings: 16,
            vocab_size: WORDS.len(),
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
        }
    }

    /// Random weights of the right shapes, by name.
    fn tensors(c: &BertConfig) -> HashMap<String, Tensor> {
        let mut rng = StdRng::seed_from_u64(7);
        let mut out = HashMap::new();
        let mut add = |name: String, shape: Vec<usize>| {
            let n = shape.iter().product();
            let data = (0..n).map(|_| rng.gen_range(-0.5f32..0.5)).collect();
            out.insert(name, Tensor { shape, data });
        };
        let (h, i) = (c.hidden_size, c.intermediate_size);
        add(
            "embeddings.word_embeddings.weight".into(),
            vec![c.vocab_size, h],
        );
        add(
            "embeddings.position_embeddings.weight".into(),
            vec![c.max_position_embeddings, h],
        );
        add("embeddings.token_type_embeddings.weight".into(), vec![2, h]);
        add("embeddings.LayerNorm.weight".into(), vec![h]);
        add("embeddings.LayerNorm.bias".into(), vec![h]);
        for l in 0..c.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            for (m, out_dim, in_dim) in [
                ("attention.self.query", h, h),
                ("attention.self.key", h, h),
                ("attention.self.value", h, h),
                ("attention.output.dense", h, h),
                ("intermediate.dense", i, h),
                ("output.dense", h, i),
            ] {
                add(format!("{p}.{m}.weight"), vec![out_dim, in_dim]);
                add(format!("{p}.{m}.bias"), vec![out_dim]);
            }
            for m in ["attention.output.LayerNorm", "output.LayerNorm"] {
                add(format!("{p}.{m}.weight"), vec![h]);
                add(format!("{p}.{m}.bias"), vec![h]);
            }
        }
        out
    }

    fn model(t: HashMap<String, Tensor>) -> Result<MiniLm, String> {
        let vocab = WordPiece::from_vocab(WORDS)?;
        MiniLm::from_parts("tiny".into(), config(), vocab, t)
    }

    #[test]
    fn a_tiny_model_embeds_texts_to_distinct_unit_vectors_deterministically() {
        let m = model(tensors(&config())).unwrap();
        let a = m.embed("The weather in Paris");
        assert_eq!(a.len(), 8);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert_eq!(a, m.embed("The weather in Paris"));
        let b = m.embed("buy flights");
        assert!(dot(&a, &b) < 0.999, "different texts, different vectors");
        // Batched encoding on threads gives the same vectors in order.
        let both = m.encode(&["The weather in Paris", "buy flights"]).unwrap();
        assert_eq!(both, vec![a, b]);
    }

    #[test]
    fn a_missing_or_misshapen_tensor_is_named() {
        let mut t = tensors(&config());
        t.remove("encoder.layer.1.output.dense.bias");
        let err = model(t).err().unwrap();
        assert!(err.contains("encoder.layer.1.output.dense.bias"), "{err}");
        let mut t = tensors(&config());
        t.get_mut("embeddings.LayerNorm.weight").unwrap().shape = vec![4, 2];
        let err = model(t).err().unwrap();
        assert!(
            err.contains("embeddings.LayerNorm.weight") && err.contains("[4, 2]"),
            "{err}"
        );
        // Tensors under a `bert.` prefix are found too.
        let t = tensors(&config())
            .into_iter()
            .map(|(k, v)| (format!("bert.{k}"), v))
            .collect();
        assert!(model(t).is_ok());
    }

    #[test]
    fn a_model_folder_without_weights_says_how_to_fetch_them() {
        let dir = tempfile::tempdir().unwrap();
        let err = MiniLm::load(dir.path()).err().unwrap().to_string();
        assert!(err.contains("fetch-model.sh minilm"), "{err}");
        std::fs::write(dir.path().join("config.json"), "{\"hidden_size\": 8}").unwrap();
        let err = MiniLm::load(dir.path()).err().unwrap().to_string();
        assert!(err.contains("config.json"), "{err}");
    }

    #[test]
    fn gemm_matches_the_textbook_product() {
        let mut rng = StdRng::seed_from_u64(1);
        let (m, k, n) = (5, 7, 3);
        let a: Vec<f32> = (0..m * k).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..n * k).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let mut c = vec![0.0; m * n];
        // b is stored n × k and used transposed, as in a linear layer.
        gemm(
            (m, k, n),
            Mat {
                data: &a,
                rs: k,
                cs: 1,
            },
            Mat {
                data: &b,
                rs: 1,
                cs: k,
            },
            &mut c,
            (n, 1),
        );
        for i in 0..m {
            for j in 0..n {
                let want = dot(&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
                assert!((c[i * n + j] - want).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn erf_and_gelu_are_accurate() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (-1.0, -0.842_700_8),
            (2.0, 0.995_322_3),
        ] {
            assert!((erf(x) - want).abs() < 1e-6, "erf({x}) = {}", erf(x));
        }
        assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-6);
    }

    /// Against all-MiniLM-L6-v2 as sentence-transformers computes it (values from a NumPy
    /// re-implementation checked against the reference tokenizer); runs only where the weights
    /// were fetched.
    #[test]
    fn matches_the_published_model_when_installed() {
        let Some(dir) = default_model_dir().filter(|d| d.join("model.safetensors").exists()) else {
            eprintln!("skipped: no all-MiniLM-L6-v2 (scripts/fetch-model.sh minilm)");
            return;
        };
        let m = MiniLm::load(&dir).unwrap();
        let e = m
            .encode(&[
                "How is the weather in Paris?",
                "weather forecast for a city",
                "Buy cheap flights",
            ])
            .unwrap();
        for (got, want) in e[0]
            .iter()
            .zip([0.043_806_86, 0.006_321_16, 0.102_317_91, 0.018_103_91])
        {
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
        assert!((dot(&e[0], &e[1]) - 0.566_160_8).abs() < 1e-3);
        assert!((dot(&e[0], &e[2]) - 0.071_990_5).abs() < 1e-3);
    }
}
