//! The encoder on a tiny random model, the kernels against textbook forms, and the published
//! model when installed.

use super::math::{dot, erf};
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
