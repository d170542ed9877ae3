//! A tantivy index whose documents are pre-tokenized by [`Analyzer`](super::tokenize::Analyzer),
//! scored one query term at a time so the ranker can see how much each term contributes to each
//! document (BM25, tantivy's k1 = 1.2, b = 0.75, per-field boosts).

use std::collections::HashMap;
use std::path::Path;

use tantivy::query::{EnableScoring, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{Index, IndexReader, Searcher, TantivyDocument, Term};

use super::RetrieveError;

/// Name of the field holding a document's position in the build order.
const ORD: &str = "ord";

/// A document: for each field (by position in the field list), its tokens.
pub type TokenDoc = Vec<Vec<String>>;

/// One tantivy index over a fixed list of text fields.
pub struct TermIndex {
    _index: Index,
    reader: IndexReader,
    fields: Vec<Field>,
    /// Per segment: doc id → build order.
    ords: Vec<Vec<u32>>,
    len: usize,
}

fn schema(field_names: &[&str]) -> (Schema, Vec<Field>) {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer("raw")
        .set_index_option(IndexRecordOption::WithFreqs);
    let options = TextOptions::default().set_indexing_options(indexing);
    let fields = field_names
        .iter()
        .map(|n| builder.add_text_field(n, options.clone()))
        .collect();
    builder.add_u64_field(ORD, NumericOptions::default().set_fast());
    (builder.build(), fields)
}

fn pre_tokenized(tokens: &[String]) -> PreTokenizedString {
    let mut offset = 0;
    let tokens = tokens
        .iter()
        .enumerate()
        .map(|(position, t)| {
            let token = Token {
                offset_from: offset,
                offset_to: offset + t.len(),
                position,
                text: t.clone(),
                position_length: 1,
            };
            offset += t.len() + 1;
            token
        })
        .collect();
    PreTokenizedString {
        text: String::new(),
        tokens,
    }
}

impl TermIndex {
    /// Indexes `docs` in memory, or in `dir` (an empty folder) when given.
    pub fn build(
        field_names: &[&str],
        docs: &[TokenDoc],
        dir: Option<&Path>,
    ) -> Result<Self, RetrieveError> {
        let (schema, fields) = schema(field_names);
        let index = match dir {
            Some(d) => Index::create_in_dir(d, schema.clone())?,
            None => Index::create_in_ram(schema.clone()),
        };
        let ord_field = schema.get_field(ORD)?;
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 30_000_000)?;
        for (i, doc) in docs.iter().enumerate() {
            let mut d = TantivyDocument::default();
            for (field, tokens) in fields.iter().zip(doc) {
                if !tokens.is_empty() {
                    d.add_pre_tokenized_text(*field, pre_tokenized(tokens));
                }
            }
            d.add_u64(ord_field, i as u64);
            writer.add_document(d)?;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        Self::from_index(index, field_names)
    }

    /// Opens an index written by [`TermIndex::build`].
    pub fn open(field_names: &[&str], dir: &Path) -> Result<Self, RetrieveError> {
        let index = Index::open_in_dir(dir)?;
        Self::from_index(index, field_names)
    }

    fn from_index(index: Index, field_names: &[&str]) -> Result<Self, RetrieveError> {
        let schema = index.schema();
        let fields = field_names
            .iter()
            .map(|n| schema.get_field(n))
            .collect::<Result<Vec<_>, _>>()?;
        let reader = index.reader()?;
        reader.reload()?;
        let searcher = reader.searcher();
        let mut ords = Vec::new();
        let mut len = 0;
        for segment in searcher.segment_readers() {
            let column = segment.fast_fields().u64(ORD)?;
            let map: Vec<u32> = (0..segment.max_doc())
                .map(|d| column.first(d).unwrap_or(u64::from(u32::MAX)) as u32)
                .collect();
            len += segment.num_docs() as usize;
            ords.push(map);
        }
        Ok(TermIndex {
            _index: index,
            reader,
            fields,
            ords,
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    /// Adds `boost` × BM25(`term` in field `field`) to `out[doc]` for every document holding it.
    pub fn score_term(
        &self,
        searcher: &Searcher,
        field: usize,
        term: &str,
        boost: f32,
        out: &mut HashMap<u32, f32>,
    ) -> Result<(), RetrieveError> {
        self.for_each_score(searcher, field, term, boost, |d, x| {
            *out.entry(d).or_insert(0.0) += x;
        })
    }

    /// Calls `f(doc, boost × BM25)` once for every document whose field `field` holds `term`.
    pub fn for_each_score(
        &self,
        searcher: &Searcher,
        field: usize,
        term: &str,
        boost: f32,
        mut f: impl FnMut(u32, f32),
    ) -> Result<(), RetrieveError> {
        if boost == 0.0 {
            return Ok(());
        }
        let Some(&field) = self.fields.get(field) else {
            return Ok(());
        };
        let term = Term::from_field_text(field, term);
        if searcher.doc_freq(&term)? == 0 {
            return Ok(());
        }
        let query = TermQuery::new(term, IndexRecordOption::WithFreqs);
        let weight = query.weight(EnableScoring::enabled_from_searcher(searcher))?;
        for (seg, reader) in searcher.segment_readers().iter().enumerate() {
            let ords = &self.ords[seg];
            weight.for_each(reader, &mut |doc, score| {
                if let Some(&ord) = ords.get(doc as usize) {
                    f(ord, boost * score);
                }
            })?;
        }
        Ok(())
    }
}
