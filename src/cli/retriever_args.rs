//! Retriever flags shared by every command that ranks APIs (`retrieve`, `index build`, and
//! `run`/`batch`/`chat` with `--tools retrieved:K`).

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use sum2act_retrieve::dense::TextEncoder;
use sum2act_retrieve::examples::ExampleRequests;
use sum2act_retrieve::minilm::{self, MiniLm};
use sum2act_retrieve::{RetrieveOptions, default_index_dir};

#[derive(Debug, Clone, Args)]
pub struct RetrieverArgs {
    /// Blend in dense relevance from the in-process sentence encoder (all-MiniLM-L6-v2, fetched by
    /// `scripts/fetch-model.sh minilm`). The catalogue's embeddings are computed once (under two
    /// minutes for 2,490 APIs on 2 cores; each example request of `--examples` is one more
    /// sentence) and cached in the index folder.
    #[arg(long, global = true)]
    pub dense: bool,
    /// Folder of the sentence encoder (config.json, vocab.txt, model.safetensors)
    /// [default: the model cache's all-MiniLM-L6-v2].
    #[arg(
        long,
        global = true,
        env = "SUM2ACT_DENSE_MODEL",
        value_name = "DIR",
        requires = "dense"
    )]
    pub dense_model: Option<PathBuf>,
    /// Example requests per API (JSON Lines written by `sum2act index expand`), indexed with each
    /// API's description and, under `--dense`, embedded one by one.
    #[arg(long, global = true, env = "SUM2ACT_EXAMPLES", value_name = "FILE")]
    pub examples: Option<PathBuf>,
}

impl RetrieverArgs {
    /// The sentence encoder, loaded, when `--dense` is given.
    fn encoder(&self) -> anyhow::Result<Option<Arc<dyn TextEncoder>>> {
        if !self.dense {
            return Ok(None);
        }
        let dir = self
            .dense_model
            .clone()
            .or_else(minilm::default_model_dir)
            .ok_or_else(|| {
                super::BadInput("--dense: no model folder; pass --dense-model".into())
            })?;
        let model = MiniLm::load(&dir).map_err(|e| super::BadInput(format!("--dense: {e}")))?;
        Ok(Some(Arc::new(model)))
    }

    /// The example requests of `--examples`, loaded; a missing file is bad input (an empty set
    /// would silently index nothing).
    fn examples(&self) -> anyhow::Result<Option<Arc<ExampleRequests>>> {
        let Some(path) = &self.examples else {
            return Ok(None);
        };
        if !path.is_file() {
            return Err(super::BadInput(format!(
                "--examples: {} is not a file (write one with `sum2act index expand --out {0}`)",
                path.display()
            ))
            .into());
        }
        let loaded =
            ExampleRequests::load(path).map_err(|e| super::BadInput(format!("--examples: {e}")))?;
        Ok(Some(Arc::new(loaded)))
    }

    /// `base` with the sentence encoder when `--dense` is given, the example requests of
    /// `--examples`, and a notice on stderr when the catalogue has to be embedded.
    pub fn apply(&self, base: RetrieveOptions) -> anyhow::Result<RetrieveOptions> {
        Ok(RetrieveOptions {
            encoder: self.encoder()?,
            examples: self.examples()?,
            on_embed: Some(Arc::new(tell_embedding)),
            ..base
        })
    }

    /// Options for the retriever of `run`, `batch` and `chat`: in memory, except that dense
    /// embeddings are cached in the default index folder.
    pub fn options(&self) -> anyhow::Result<RetrieveOptions> {
        let index_dir = if self.dense {
            default_index_dir()
        } else {
            None
        };
        self.apply(RetrieveOptions {
            index_dir,
            ..RetrieveOptions::default()
        })
    }
}

/// Says why the first `--dense` run over a catalogue pauses.
fn tell_embedding(sentences: usize) {
    eprintln!(
        "dense: embedding {sentences} sentences (API docs and example requests) with the sentence encoder (once per catalogue; cached in the index folder)"
    );
}
