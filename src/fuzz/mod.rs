//! A small generation-and-mutation fuzzer for the parsers that read model or network input, on the
//! stable toolchain and without extra crates. Each target runs a bounded number of seeded cases in the
//! normal test suite; `scripts/fuzz.sh` runs them for a time budget instead:
//!
//! - `SUM2ACT_FUZZ_SECS`: run each target this long (instead of its default case count);
//! - `SUM2ACT_FUZZ_CASES`: or this many cases;
//! - `SUM2ACT_FUZZ_SEED`: the seed (default fixed, so the test suite is deterministic);
//! - `SUM2ACT_FUZZ_REPORT`: append one line per target (`name cases crashes seconds seed slowest_ms`);
//! - `SUM2ACT_FUZZ_DIR`: write each crashing input there, to replay or keep as a regression case.
//!
//! A crash is a panic or a broken property (a case returns `Err`); the target then fails, naming the
//! seed and case index (rerun with that seed to reproduce it) and showing the input.

mod gen_input;
mod targets;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

pub use gen_input::Gen;

/// How long or how many cases a target runs.
struct Budget {
    cases: u64,
    time: Option<Duration>,
    seed: u64,
}

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn budget(default_cases: u64) -> Budget {
    let time = env_number::<f64>("SUM2ACT_FUZZ_SECS")
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64);
    let cases = match time {
        Some(_) => u64::MAX,
        None => env_number("SUM2ACT_FUZZ_CASES").unwrap_or(default_cases),
    };
    Budget {
        cases,
        time,
        seed: std::env::var("SUM2ACT_FUZZ_SEED")
            .ok()
            .and_then(|v| parse_seed(v.trim()))
            .unwrap_or(0x5EED_2026),
    }
}

/// A seed in decimal or as printed in reports (`0x…`).
fn parse_seed(v: &str) -> Option<u64> {
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Crashes kept (with their inputs) before the target stops early.
const MAX_CRASHES: usize = 5;

/// Runs `case` on fresh seeded generators until the budget is spent; panics if any case crashed.
pub fn fuzz(name: &str, default_cases: u64, mut case: impl FnMut(&mut Gen) -> Result<(), String>) {
    let b = budget(default_cases);
    let started = Instant::now();
    let mut crashes: Vec<String> = Vec::new();
    let mut slowest = Duration::ZERO;
    let mut n = 0u64;
    while n < b.cases && b.time.is_none_or(|t| started.elapsed() < t) {
        let mut g = Gen::new(b.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| case(&mut g)));
        slowest = slowest.max(t0.elapsed());
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(property)) => Some(format!("property broken: {property}")),
            Err(panic) => Some(format!("panic: {}", panic_text(&panic))),
        };
        if let Some(f) = failure {
            let report = format!(
                "{name}: case {n} of seed {:#x}: {f}\ninput: {:?}",
                b.seed,
                g.input()
            );
            save_crash(name, b.seed, n, g.input());
            crashes.push(report);
            if crashes.len() >= MAX_CRASHES {
                n += 1;
                break;
            }
        }
        n += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    let line = format!(
        "{name}\t{n}\t{}\t{secs:.1}\t{:#x}\t{:.1}",
        crashes.len(),
        b.seed,
        slowest.as_secs_f64() * 1000.0
    );
    eprintln!("fuzz {line}");
    if let Ok(path) = std::env::var("SUM2ACT_FUZZ_REPORT") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
    assert!(
        crashes.is_empty(),
        "{} crash(es) in {n} cases:\n{}",
        crashes.len(),
        crashes.join("\n\n")
    );
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

fn save_crash(name: &str, seed: u64, case: u64, input: &str) {
    let Ok(dir) = std::env::var("SUM2ACT_FUZZ_DIR") else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join(format!("{name}-{seed:x}-{case}.txt")), input);
}
