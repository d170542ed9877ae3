//! Choosing the next token: greedy or sampled at the request's temperature, checked against the
//! sequence's grammar (the top choice first, the whole vocabulary only when it is rejected).

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use rand::Rng;
use rand::rngs::StdRng;

use super::GrammarMode;

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

/// What choosing a sequence's next token needs of it: its request's temperature, its seeded sampler
/// and its grammar, if any.
pub(super) struct Sequence<'a> {
    pub temperature: f32,
    pub rng: &'a mut StdRng,
    pub grammar: Option<&'a mut LlamaSampler>,
}

/// Chooses the next token of one sequence: greedy (or sampled at its temperature), constrained by its
/// grammar. Returns `None` when the grammar allows no token at all.
pub(super) fn pick(
    ctx: &LlamaContext<'_>,
    greedy: &mut LlamaSampler,
    idx: i32,
    sequence: Sequence<'_>,
    mode: GrammarMode,
) -> Option<LlamaToken> {
    let logits = ctx.get_logits_ith(idx);
    let Sequence {
        temperature,
        rng,
        grammar,
    } = sequence;
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
        choose(&mut all, rng)?
    };
    let Some(grammar) = grammar else {
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
    let tok = LlamaToken(choose(&mut allowed, rng)? as i32);
    grammar.accept(tok);
    Some(tok)
}
