//! Dense similarity: a sentence encoder embeds every API once (cached beside the lexical index)
//! and each query at search time. It catches paraphrases the lexical index misses ("movie" for
//! "film"); the ranking blends it in as one more relevance signal.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::{RetrieveError, le_f32s};
use sum2act_core::toolbench::io::write_atomic;
use sum2act_core::toolbench::{Tool, ToolApi};

/// Turns texts into unit-length vectors of one fixed dimension.
pub trait TextEncoder: Send + Sync {
    /// Names the model: embeddings cached under one name are reused only by the same model.
    fn name(&self) -> &str;
    fn dim(&self) -> usize;
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, RetrieveError>;
}

/// The texts an API is embedded as: its documentation as one short sentence (the encoder was
/// trained on short sentences), then each example request on its own. An API is as near to a
/// query as its nearest text, so a request phrased like one of its examples finds it even when
/// the documentation uses other words.
pub fn api_texts(tool: &Tool, api: &ToolApi, examples: &[String]) -> Vec<String> {
    let doc = format!("{}: {}. {}", tool.file.tool_name, api.name, api.description);
    std::iter::once(doc.trim().to_string())
        .chain(examples.iter().map(|e| e.trim().to_string()))
        .filter(|t| !t.is_empty())
        .collect()
}

/// Every API's embeddings, row by row in document order; `owner` names each row's API.
pub struct DenseIndex {
    encoder: Arc<dyn TextEncoder>,
    dim: usize,
    rows: Vec<f32>,
    owner: Vec<u32>,
    apis: usize,
}

/// How many of the nearest APIs get a dense relevance above zero.
const NEAREST: usize = 100;

impl DenseIndex {
    /// Embeds every API's texts, or reads the embeddings from `cache` (a folder) when an
    /// earlier run of the same encoder over the same texts left them there. Embedding a
    /// catalogue takes a while on a CPU; reading it back takes milliseconds.
    pub fn build(
        encoder: Arc<dyn TextEncoder>,
        texts: &[Vec<String>],
        cache: Option<&Path>,
        on_embed: Option<&(dyn Fn(usize) + Send + Sync)>,
    ) -> Result<Self, RetrieveError> {
        let dim = encoder.dim();
        let owner: Vec<u32> = texts
            .iter()
            .enumerate()
            .flat_map(|(i, t)| std::iter::repeat_n(i as u32, t.len()))
            .collect();
        let sentences: Vec<&str> = texts.iter().flatten().map(String::as_str).collect();
        let apis = texts.len();
        let file = cache.map(|dir| dir.join(format!("{}.f32", cache_key(encoder.name(), texts))));
        if let Some(rows) = file
            .as_deref()
            .and_then(|f| read_rows(f, sentences.len() * dim))
        {
            return Ok(DenseIndex {
                encoder,
                dim,
                rows,
                owner,
                apis,
            });
        }
        if let Some(tell) = on_embed {
            tell(sentences.len());
        }
        let mut rows = Vec::with_capacity(sentences.len() * dim);
        for v in encoder.encode(&sentences)? {
            if v.len() != dim {
                return Err(RetrieveError::BadInput(format!(
                    "encoder {} returned {} values, expected {dim}",
                    encoder.name(),
                    v.len()
                )));
            }
            rows.extend(v);
        }
        if rows.len() != sentences.len() * dim {
            return Err(RetrieveError::BadInput(format!(
                "encoder {} returned {} vectors for {} sentences",
                encoder.name(),
                rows.len() / dim.max(1),
                sentences.len()
            )));
        }
        if let Some(f) = &file {
            write_rows(f, &rows)?;
        }
        Ok(DenseIndex {
            encoder,
            dim,
            rows,
            owner,
            apis,
        })
    }

    fn len(&self) -> usize {
        self.apis
    }

    /// Per query and API, 0..1: cosine similarity, scaled so the nearest API scores 1 and the
    /// `NEAREST`-th and beyond 0 (raw cosines of unrelated texts sit well above zero). The
    /// queries are encoded together, so the encoder can spread them over cores.
    pub fn relevance(&self, queries: &[&str]) -> Result<Vec<Vec<f32>>, RetrieveError> {
        let vectors = self.encoder.encode(queries)?;
        Ok((0..queries.len())
            .map(|i| match vectors.get(i).filter(|q| q.len() == self.dim) {
                Some(q) => self.scaled(q),
                None => vec![0.0; self.len()],
            })
            .collect())
    }

    fn scaled(&self, q: &[f32]) -> Vec<f32> {
        let mut sims = vec![f32::NEG_INFINITY; self.apis];
        for (r, &api) in self.rows.chunks_exact(self.dim).zip(&self.owner) {
            let s: f32 = r.iter().zip(q).map(|(a, b)| a * b).sum();
            let best = &mut sims[api as usize];
            *best = best.max(s);
        }
        // An API with no texts is as far from the query as a vector can be.
        for s in &mut sims {
            if !s.is_finite() {
                *s = -1.0;
            }
        }
        let mut sorted = sims.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        let top = sorted.first().copied().unwrap_or(0.0);
        let floor = sorted
            .get(NEAREST.min(sorted.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0);
        let span = top - floor;
        sims.iter()
            .map(|s| {
                if span > 0.0 {
                    ((s - floor) / span).max(0.0)
                } else {
                    0.0
                }
            })
            .collect()
    }
}

/// Names the cache file: the encoder and every API's texts, in order.
fn cache_key(encoder: &str, texts: &[Vec<String>]) -> String {
    let mut h = Sha256::new();
    h.update(encoder.as_bytes());
    for api in texts {
        h.update([1]);
        for s in api {
            h.update([0]);
            h.update(s.as_bytes());
        }
    }
    hex::encode(&h.finalize()[..12])
}

fn read_rows(file: &Path, count: usize) -> Option<Vec<f32>> {
    let bytes = std::fs::read(file).ok()?;
    (bytes.len() == count * 4).then(|| le_f32s(&bytes))
}

/// Written atomically, so a crash never leaves a short file behind.
fn write_rows(file: &Path, rows: &[f32]) -> Result<(), RetrieveError> {
    let bytes: Vec<u8> = rows.iter().flat_map(|x| x.to_le_bytes()).collect();
    Ok(write_atomic(file, &bytes)?)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A test encoder: fixed vectors by exact text (zero for unknown texts), counting calls.
    pub(crate) struct Fixed {
        pub rows: HashMap<String, Vec<f32>>,
        pub dim: usize,
        pub calls: AtomicUsize,
    }

    impl Fixed {
        pub(crate) fn new(dim: usize, rows: &[(&str, Vec<f32>)]) -> Self {
            Fixed {
                rows: rows
                    .iter()
                    .map(|(t, v)| (t.to_string(), v.clone()))
                    .collect(),
                dim,
                calls: AtomicUsize::new(0),
            }
        }
    }

    impl TextEncoder for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn dim(&self) -> usize {
            self.dim
        }
        fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, RetrieveError> {
            self.calls.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts
                .iter()
                .map(|t| {
                    self.rows
                        .get(*t)
                        .cloned()
                        .unwrap_or_else(|| vec![0.0; self.dim])
                })
                .collect())
        }
    }

    fn sentences() -> Vec<Vec<String>> {
        vec![vec!["a".into()], vec!["b".into()], vec!["c".into()]]
    }

    fn encoder() -> Arc<Fixed> {
        Arc::new(Fixed::new(
            2,
            &[
                ("a", vec![1.0, 0.0]),
                ("b", vec![0.6, 0.8]),
                ("c", vec![0.0, 1.0]),
                ("query", vec![1.0, 0.0]),
            ],
        ))
    }

    #[test]
    fn nearest_scores_one_and_the_far_end_zero() {
        let index = DenseIndex::build(encoder(), &sentences(), None, None).unwrap();
        let r = index.relevance(&["query"]).unwrap().remove(0);
        assert_eq!(r.len(), 3);
        assert!((r[0] - 1.0).abs() < 1e-6, "{r:?}");
        assert!(r[1] > 0.0 && r[1] < 1.0, "{r:?}");
        assert_eq!(r[2], 0.0);
    }

    #[test]
    fn an_api_is_as_near_as_its_nearest_text() {
        // API 1's documentation "c" is far from the query, but its example request "a" is not.
        let texts = vec![
            vec!["b".to_string()],
            vec!["c".to_string(), "a".to_string()],
            vec!["c".to_string()],
        ];
        let index = DenseIndex::build(encoder(), &texts, None, None).unwrap();
        let r = index.relevance(&["query"]).unwrap().remove(0);
        assert_eq!(r.len(), 3, "one relevance per API, not per text");
        assert!((r[1] - 1.0).abs() < 1e-6, "{r:?}");
        assert!(r[0] > 0.0 && r[0] < 1.0, "{r:?}");
        assert_eq!(r[2], 0.0);
    }

    #[test]
    fn embeddings_are_cached_and_reused_only_for_the_same_sentences() {
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder();
        DenseIndex::build(enc.clone(), &sentences(), Some(dir.path()), None).unwrap();
        assert_eq!(enc.calls.load(Ordering::SeqCst), 3);
        let again = DenseIndex::build(enc.clone(), &sentences(), Some(dir.path()), None).unwrap();
        assert_eq!(enc.calls.load(Ordering::SeqCst), 3, "read from the cache");
        assert_eq!(again.len(), 3);
        let other = vec![vec!["a".to_string()], vec!["c".to_string()]];
        DenseIndex::build(enc.clone(), &other, Some(dir.path()), None).unwrap();
        assert_eq!(
            enc.calls.load(Ordering::SeqCst),
            5,
            "other sentences are embedded anew"
        );
    }

    #[test]
    fn an_encoder_of_the_wrong_width_is_an_error() {
        struct Wrong;
        impl TextEncoder for Wrong {
            fn name(&self) -> &str {
                "wrong"
            }
            fn dim(&self) -> usize {
                4
            }
            fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, RetrieveError> {
                Ok(texts.iter().map(|_| vec![0.0; 3]).collect())
            }
        }
        let err = DenseIndex::build(Arc::new(Wrong), &sentences(), None, None)
            .err()
            .unwrap();
        assert!(err.to_string().contains("expected 4"), "{err}");
    }
}
