//! Fault injection: ToolBench's error kinds at a configured rate, for testing how agents and the harness
//! cope. Decisions are a pure function of (seed, request, how many times that request was seen), so a
//! rerun meets the same faults whatever the interleaving of concurrent episodes, and a retry can succeed.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use super::simulate::stable_hash;

/// The kinds of fault, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// `Rate limit per minute error...` (code 10).
    RateLimit,
    /// `Too many requests error...` (code 9).
    TooManyRequests,
    /// `Unauthorized error...` (code 7).
    Unauthorized,
    /// `Unsubscribed error...` (code 8).
    Unsubscribed,
    /// `API not working error...` (code 6).
    NotWorking,
    /// No answer before the client gives up (code 5 at the caller).
    Timeout,
    /// HTTP 503 (code 12 after the caller's retries).
    ServerError,
    /// A normal answer with a huge body (tests truncation and size caps).
    Huge,
}

impl FaultKind {
    pub const ALL: [FaultKind; 8] = [
        FaultKind::RateLimit,
        FaultKind::TooManyRequests,
        FaultKind::Unauthorized,
        FaultKind::Unsubscribed,
        FaultKind::NotWorking,
        FaultKind::Timeout,
        FaultKind::ServerError,
        FaultKind::Huge,
    ];
}

sum2act_core::names::named_values!(FaultKind, "fault kind", trimmed {
    RateLimit => "rate-limit": "",
    TooManyRequests => "too-many-requests": "",
    Unauthorized => "unauthorized": "",
    Unsubscribed => "unsubscribed": "",
    NotWorking => "not-working": "",
    Timeout => "timeout": "",
    ServerError => "server-error": "",
    Huge => "huge": "",
});

/// Relative weights of fault kinds, e.g. `rate-limit=2,unauthorized=1,timeout`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultMix(pub Vec<(FaultKind, u32)>);

impl Default for FaultMix {
    /// The four kinds the ToolBench environment shows most: rate limits, unauthorized, not working, timeouts.
    fn default() -> Self {
        FaultMix(vec![
            (FaultKind::RateLimit, 1),
            (FaultKind::Unauthorized, 1),
            (FaultKind::NotWorking, 1),
            (FaultKind::Timeout, 1),
        ])
    }
}

impl FromStr for FaultMix {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = match part.split_once('=') {
                Some((n, w)) => (
                    n,
                    w.trim().parse::<u32>().map_err(|_| {
                        format!("fault weight `{w}` of `{n}` is not a whole number")
                    })?,
                ),
                None => (part, 1),
            };
            out.push((
                name.parse::<FaultKind>().map_err(|e| e.to_string())?,
                weight,
            ));
        }
        if out.iter().all(|(_, w)| *w == 0) {
            return Err("the fault mix needs at least one kind with a positive weight".to_string());
        }
        Ok(FaultMix(out))
    }
}

impl std::fmt::Display for FaultMix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(k, w)| format!("{}={w}", k.name()))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// What to inject.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultConfig {
    /// Probability in `[0, 1]` that a request fails.
    pub rate: f64,
    pub mix: FaultMix,
    pub seed: u64,
    /// Added to every answer.
    pub latency: Duration,
    /// How long a `timeout` fault holds the request (longer than the client's timeout).
    pub timeout_delay: Duration,
    /// Body size of a `huge` fault.
    pub huge_bytes: usize,
}

/// How long a `timeout` fault holds the request (`--fault-timeout-ms`), in milliseconds.
pub const DEFAULT_TIMEOUT_DELAY_MS: u64 = 30_000;

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            rate: 0.0,
            mix: FaultMix::default(),
            seed: 0,
            latency: Duration::ZERO,
            timeout_delay: Duration::from_millis(DEFAULT_TIMEOUT_DELAY_MS),
            huge_bytes: 2 * 1024 * 1024,
        }
    }
}

/// The injector: decides per request.
#[derive(Debug)]
pub struct Faults {
    pub config: FaultConfig,
    seen: Mutex<HashMap<u64, u32>>,
}

impl Faults {
    pub fn new(config: FaultConfig) -> Self {
        Faults {
            config,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The fault for this request, if any; `request_key` identifies the call (API + arguments).
    pub fn decide(&self, request_key: &str) -> Option<FaultKind> {
        if self.config.rate <= 0.0 {
            return None;
        }
        let id = stable_hash(&[request_key]);
        let occurrence = match self.seen.lock() {
            Ok(mut m) => {
                let n = m.entry(id).or_insert(0);
                *n += 1;
                *n
            }
            Err(_) => 1,
        };
        let seed = self.config.seed.to_string();
        let occ = occurrence.to_string();
        let h = stable_hash(&[&seed, request_key, &occ]);
        let u = (h >> 11) as f64 / (1u64 << 53) as f64;
        if u >= self.config.rate {
            return None;
        }
        let total: u64 = self.config.mix.0.iter().map(|(_, w)| u64::from(*w)).sum();
        if total == 0 {
            return None;
        }
        let mut pick = stable_hash(&[&occ, request_key, &seed]) % total;
        for (kind, w) in &self.config.mix.0 {
            let w = u64::from(*w);
            if pick < w {
                return Some(*kind);
            }
            pick -= w;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mix() {
        let m: FaultMix = "rate-limit=2, timeout".parse().unwrap();
        assert_eq!(
            m.0,
            vec![(FaultKind::RateLimit, 2), (FaultKind::Timeout, 1)]
        );
        assert!(
            "nope=1"
                .parse::<FaultMix>()
                .unwrap_err()
                .contains("expected one of: rate-limit,")
        );
        assert!("timeout=0".parse::<FaultMix>().is_err());
        assert_eq!(m.to_string(), "rate-limit=2,timeout=1");
    }

    #[test]
    fn rate_and_mix_hold_and_repeat() {
        let f = Faults::new(FaultConfig {
            rate: 0.3,
            seed: 7,
            ..FaultConfig::default()
        });
        let decisions: Vec<Option<FaultKind>> =
            (0..2000).map(|i| f.decide(&format!("call {i}"))).collect();
        let faults = decisions.iter().flatten().count();
        assert!((500..700).contains(&faults), "{faults}");
        for kind in [
            FaultKind::RateLimit,
            FaultKind::Unauthorized,
            FaultKind::NotWorking,
            FaultKind::Timeout,
        ] {
            let n = decisions.iter().flatten().filter(|k| **k == kind).count();
            assert!((100..200).contains(&n), "{kind:?} {n}");
        }
        let again = Faults::new(f.config.clone());
        let replay: Vec<Option<FaultKind>> = (0..2000)
            .map(|i| again.decide(&format!("call {i}")))
            .collect();
        assert_eq!(decisions, replay);
    }
}
