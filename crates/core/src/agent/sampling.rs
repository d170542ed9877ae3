//! Per-episode sampling for repeated runs (`batch --repeats`): repeat 0 leaves every request as the
//! solver built it (greedy where the solver is greedy), so its answers match a run without repeats;
//! repeat `r > 0` samples every call at least at [`REPEAT_TEMPERATURE`] with a seed derived from
//! (query id, repeat), so repeats differ from each other yet each one is reproducible.

use crate::llm::CompletionRequest;

/// The temperature repeats `r > 0` sample at when the solver asked for less (greedy decoding would
/// make every repeat identical, and the inference variance zero by construction).
pub(crate) const REPEAT_TEMPERATURE: f32 = 0.7;

/// The sampling of one episode: `None` for repeat 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sampling {
    /// Base seed of the episode: a stable hash of (query id, repeat).
    pub base_seed: u64,
}

impl Sampling {
    /// The sampling of repeat `repeat` of query `query_id`; `None` for repeat 0 (today's behaviour).
    pub(crate) fn for_repeat(query_id: u64, repeat: u32) -> Option<Self> {
        (repeat > 0).then(|| Sampling {
            base_seed: fnv1a(&[&query_id.to_le_bytes(), &repeat.to_le_bytes()]),
        })
    }

    /// Sets the seed (base seed mixed with the call's own seed or its index) and the temperature.
    pub(crate) fn apply(&self, request: &mut CompletionRequest, call_index: u64) {
        let own = request.seed.unwrap_or(call_index);
        request.seed = Some(fnv1a(&[&self.base_seed.to_le_bytes(), &own.to_le_bytes()]));
        if request.temperature < REPEAT_TEMPERATURE {
            request.temperature = REPEAT_TEMPERATURE;
        }
    }
}

/// FNV-1a over byte slices: stable across processes and machines (std's hasher is randomised).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.iter() {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    #[test]
    fn repeat_zero_changes_nothing_and_repeats_differ_reproducibly() {
        assert_eq!(Sampling::for_repeat(5, 0), None);
        let a = Sampling::for_repeat(5, 1).unwrap();
        let b = Sampling::for_repeat(5, 2).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, Sampling::for_repeat(6, 1).unwrap());
        assert_eq!(a, Sampling::for_repeat(5, 1).unwrap());
        let mut r = CompletionRequest::new("router", vec![Message::user("hi")]);
        let mut s = r.clone();
        a.apply(&mut r, 3);
        b.apply(&mut s, 3);
        assert!(r.temperature >= REPEAT_TEMPERATURE);
        assert!(r.seed.is_some() && r.seed != s.seed);
    }
}
