//! The batching engine: sequence slots in one unified KV cache, admission with prefix reuse, and the
//! decode step that advances every active sequence at once.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::sample::{Sequence, pick};
use super::{GenStats, GrammarMode, Job, Prepared, Reply, Switches};
use sum2act_core::llm::{CompletionRequest, LlmError};
use sum2act_core::prompts::Prompts;

/// How a finished generation is turned into a `Completion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Output {
    Text,
    Json,
    Action,
}

/// A request being generated in a slot.
pub(super) struct Active {
    pub(super) reply: Reply,
    pub(super) request: CompletionRequest,
    pub(super) prompt: Vec<LlamaToken>,
    pub(super) output: Output,
    pub(super) grammar: Option<LlamaSampler>,
    pub(super) max_new: usize,
    pub(super) generated: Vec<LlamaToken>,
    /// A sampled token not yet in the KV cache.
    pending: Option<LlamaToken>,
    pub(super) rng: StdRng,
    cached: usize,
    queue_ms: f64,
    admitted: Instant,
    first_token: Option<Instant>,
    /// Batch index of this sequence's logits after the current decode.
    logits_at: Option<i32>,
    /// Tokens added to the batch this step (committed to `kv` after a successful decode).
    staged: Vec<LlamaToken>,
}

pub(super) struct Slot {
    id: i32,
    /// Tokens in this sequence's KV cache, in position order.
    kv: Vec<LlamaToken>,
    last_used: u64,
    active: Option<Box<Active>>,
}

impl Slot {
    pub(super) fn new(id: i32) -> Self {
        Slot {
            id,
            kv: Vec::new(),
            last_used: 0,
            active: None,
        }
    }
}

pub(super) struct Engine<'m> {
    pub(super) model: &'m LlamaModel,
    pub(super) ctx: LlamaContext<'m>,
    pub(super) template: LlamaChatTemplate,
    pub(super) prompts: Prompts,
    pub(super) slots: Vec<Slot>,
    pub(super) n_ctx: usize,
    pub(super) batch_size: usize,
    pub(super) switches: Arc<Switches>,
    /// Compiled grammars by GBNF text (compiling is slow for big tool lists).
    pub(super) grammars: HashMap<String, LlamaSampler>,
    /// llama.cpp's greedy sampler: the argmax over the vocabulary in optimised C, where our own loop
    /// takes ~1.6 ms per token in a debug build (the demo's), 5% of a decode step on 2 cores.
    pub(super) greedy: LlamaSampler,
    pub(super) clock: u64,
    pub(super) model_id: String,
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

/// The cached tokens of `kv` that `prompt` can keep. The last prompt token is always evaluated again:
/// its logits start the generation.
fn reusable(kv: &[LlamaToken], prompt: &[LlamaToken]) -> usize {
    common_prefix(kv, prompt).min(prompt.len().saturating_sub(1))
}

impl Engine<'_> {
    pub(super) fn run(&mut self, rx: mpsc::Receiver<Job>) {
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
        self.clock += 1;
        let dst = self.free_slot_for(&prepared.prompt);
        let keep = if self.switches.prefix_cache.load(Ordering::Relaxed) {
            self.share_longest_prefix(dst, &prepared.prompt)
        } else {
            0
        };
        let keep = self.trim_to(dst, keep);
        self.activate(dst, job, prepared, keep);
    }

    /// The free slot the prompt goes to (see [`choose_slot`]).
    fn free_slot_for(&self, prompt: &[LlamaToken]) -> usize {
        let candidates: Vec<SlotCandidate> = (0..self.slots.len())
            .filter(|&i| self.slots[i].active.is_none())
            .map(|i| SlotCandidate {
                index: i,
                cached: self.slots[i].kv.len(),
                reusable: reusable(&self.slots[i].kv, prompt),
                last_used: self.slots[i].last_used,
            })
            .collect();
        choose_slot(&candidates).unwrap_or(0)
    }

    /// The prompt prefix slot `dst` can keep: its own, or a longer one another slot (even a busy one)
    /// holds, whose cells are shared into `dst`.
    fn share_longest_prefix(&mut self, dst: usize, prompt: &[LlamaToken]) -> usize {
        let keep = reusable(&self.slots[dst].kv, prompt);
        let best_other = (0..self.slots.len())
            .filter(|&i| i != dst)
            .map(|i| (reusable(&self.slots[i].kv, prompt), i))
            .max();
        let Some((n, src)) = best_other.filter(|(n, _)| *n > keep) else {
            return keep;
        };
        let (src_id, dst_id) = (self.slots[src].id, self.slots[dst].id);
        let _ = self.ctx.clear_kv_cache_seq(Some(dst_id as u32), None, None);
        if self
            .ctx
            .copy_kv_cache_seq(src_id, dst_id, Some(0), Some(n as u32))
            .is_ok()
        {
            let copied = self.slots[src].kv[..n].to_vec();
            self.slots[dst].kv = copied;
            n
        } else {
            self.slots[dst].kv.clear();
            0
        }
    }

    /// Removes what slot `dst` caches beyond its first `keep` tokens; returns what is kept.
    fn trim_to(&mut self, dst: usize, keep: usize) -> usize {
        let slot_id = self.slots[dst].id;
        if self
            .ctx
            .clear_kv_cache_seq(Some(slot_id as u32), Some(keep as u32), None)
            .unwrap_or(false)
        {
            self.slots[dst].kv.truncate(keep);
            keep
        } else {
            // Partial removal is not supported by every cache type: start this sequence afresh.
            let _ = self
                .ctx
                .clear_kv_cache_seq(Some(slot_id as u32), None, None);
            self.slots[dst].kv.clear();
            0
        }
    }

    fn activate(&mut self, dst: usize, job: Job, prepared: Prepared, cached: usize) {
        let seed = job.request.seed.unwrap_or(0);
        let slot = &mut self.slots[dst];
        slot.last_used = self.clock;
        slot.active = Some(Box::new(Active {
            reply: job.reply,
            queue_ms: job.queued.elapsed().as_secs_f64() * 1000.0,
            request: job.request,
            prompt: prepared.prompt,
            output: prepared.output,
            grammar: prepared.grammar,
            max_new: prepared.max_new,
            generated: Vec::new(),
            pending: None,
            rng: StdRng::seed_from_u64(seed),
            cached,
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
        self.stage_pending(&mut batch, &mut budget);
        self.stage_prompts(&mut batch, &mut budget);
        if batch.n_tokens() == 0 {
            return;
        }
        if let Err(e) = self.ctx.decode(&mut batch) {
            self.fail_all(&format!("decode failed: {e}"));
            return;
        }
        for (i, error) in self.sample_next() {
            self.finish(i, error);
        }
    }

    /// Adds each generating sequence's last sampled token to the batch.
    fn stage_pending(&mut self, batch: &mut LlamaBatch, budget: &mut usize) {
        for slot in self.slots.iter_mut() {
            let Some(a) = slot.active.as_mut() else {
                continue;
            };
            a.logits_at = None;
            a.staged.clear();
            if let Some(tok) = a.pending {
                if *budget == 0 {
                    continue;
                }
                let pos = slot.kv.len() as i32;
                if batch.add(tok, pos, &[slot.id], true).is_ok() {
                    a.logits_at = Some(batch.n_tokens() - 1);
                    a.staged.push(tok);
                    *budget -= 1;
                }
            }
        }
    }

    /// Fills the rest of the batch with the next chunks of the prompts still being read.
    fn stage_prompts(&mut self, batch: &mut LlamaBatch, budget: &mut usize) {
        for slot in self.slots.iter_mut() {
            let Some(a) = slot.active.as_mut() else {
                continue;
            };
            if a.pending.is_some() || *budget == 0 {
                continue;
            }
            let start = slot.kv.len();
            let end = a.prompt.len().min(start + *budget);
            for (p, &tok) in a.prompt[start..end].iter().enumerate() {
                let pos = start + p;
                let last = pos + 1 == a.prompt.len();
                if batch.add(tok, pos as i32, &[slot.id], last).is_err() {
                    break;
                }
                a.staged.push(tok);
                *budget -= 1;
                if last {
                    a.logits_at = Some(batch.n_tokens() - 1);
                }
            }
        }
    }

    /// After a decode: commits the staged tokens and samples a token for each sequence with logits.
    /// Returns the slots whose generation ended (with the error, if any).
    fn sample_next(&mut self) -> Vec<(usize, Option<&'static str>)> {
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
            let sequence = Sequence {
                temperature: a.request.temperature,
                rng: &mut a.rng,
                grammar: a.grammar.as_mut(),
            };
            let tok = match pick(&self.ctx, &mut self.greedy, idx, sequence, mode) {
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
        finished
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
