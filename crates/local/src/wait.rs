//! How llama.cpp's OpenMP threads wait between the parallel regions of a decode: spinning or asleep.
//!
//! Spinning is ~1.6x faster decoding on an idle machine; on a busy one the spinning thread starves the
//! one it waits for and decoding gets 3-4x slower (measured: 2.5 vs 10.8 tok/s for the 0.5B model on a
//! busy 2-core machine). `--llm-spin auto` (the default) spins only when the machine looks idle.
//!
//! libgomp reads `OMP_WAIT_POLICY` when it is loaded, before `main`, so the only way to choose from
//! inside is to re-execute the binary once with it set: [`ensure_openmp_wait_policy`] does that first
//! thing in `main`, before the arguments are parsed, which is why it reads `--llm-spin` itself.

use std::fmt;
use std::sync::OnceLock;

/// `--llm-spin`: the user's setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SpinSetting {
    /// Spin when the 1-minute load average shows the cores free, else wait passively.
    #[default]
    Auto,
    /// Always spin (libgomp's default policy).
    On,
    /// Always wait passively (`OMP_WAIT_POLICY=PASSIVE`).
    Off,
}

sum2act_core::names::named_values!(SpinSetting, "spin setting" {
    Auto => "auto": "Spin when the 1-minute load average shows the cores free, else wait passively",
    On => "on": "Always spin (libgomp's default policy)",
    Off => "off": "Always wait passively (`OMP_WAIT_POLICY=PASSIVE`)",
});

impl SpinSetting {
    fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(Self::Auto),
            "on" => Some(Self::On),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// The policy in force in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Threads spin a while (libgomp's default spin count) before sleeping.
    Spin,
    /// Threads sleep at once.
    Passive,
}

/// The policy and why it was chosen, for `llm check` and bench reports.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitChoice {
    pub policy: WaitPolicy,
    pub reason: String,
}

impl fmt::Display for WaitChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.policy {
            WaitPolicy::Spin => "spin",
            WaitPolicy::Passive => "passive",
        };
        write!(f, "{name} ({})", self.reason)
    }
}

/// Passes the reason to the re-executed process.
const REASON_VAR: &str = "SUM2ACT_LLM_WAIT_REASON";
/// Below this 1-minute load average the cores count as free: llama.cpp uses every core by default,
/// so any steadily busy process would be starved by spinning threads.
const IDLE_LOAD: f64 = 0.5;

static CHOICE: OnceLock<WaitChoice> = OnceLock::new();

/// The `--llm-spin` value on a command line (`--llm-spin X` or `--llm-spin=X`), else
/// `SUM2ACT_LLM_SPIN`, else auto. A value the command line would reject counts as auto here; the parser reports it.
pub fn setting_from(args: &[String], env: Option<&str>) -> SpinSetting {
    let mut found = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        if a == "--llm-spin" {
            found = it.next().map(String::as_str);
        } else if let Some(v) = a.strip_prefix("--llm-spin=") {
            found = Some(v);
        }
    }
    found
        .or(env)
        .and_then(SpinSetting::parse)
        .unwrap_or_default()
}

/// What auto looked at: the 1-minute load average and, when that says busy, how many cores were busy
/// over a short sample just now (the average lags a finished job by a minute or more).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    pub average: f64,
    pub busy_now: Option<f64>,
    pub cores: usize,
}

/// Decides the policy from the setting and, for auto, the load (`None`: unknown, which counts as
/// busy: passive waiting is the safe side).
pub fn decide(setting: SpinSetting, load: Option<Load>) -> WaitChoice {
    match setting {
        SpinSetting::On => WaitChoice {
            policy: WaitPolicy::Spin,
            reason: "--llm-spin on".into(),
        },
        SpinSetting::Off => WaitChoice {
            policy: WaitPolicy::Passive,
            reason: "--llm-spin off".into(),
        },
        SpinSetting::Auto => match load {
            Some(l) => {
                let busy = l.busy_now.map_or(l.average, |now| now.min(l.average));
                let now = l
                    .busy_now
                    .map(|b| format!(", {b:.2} busy now"))
                    .unwrap_or_default();
                WaitChoice {
                    policy: if busy < IDLE_LOAD {
                        WaitPolicy::Spin
                    } else {
                        WaitPolicy::Passive
                    },
                    reason: format!("auto: load {:.2}{now} on {} cores", l.average, l.cores),
                }
            }
            None => WaitChoice {
                policy: WaitPolicy::Passive,
                reason: "auto: load unknown".into(),
            },
        },
    }
}

/// The 1-minute load average and the core count (Linux); when the average says busy, a 100 ms sample
/// of `/proc/stat` too, so a job that just ended does not count (a short delay, on busy machines only).
#[cfg_attr(not(all(unix, feature = "local-model")), allow(dead_code))]
fn load_average() -> Option<Load> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let average = text.split_whitespace().next()?.parse().ok()?;
    let cores = std::thread::available_parallelism().ok()?.get();
    let busy_now = (average >= IDLE_LOAD)
        .then(|| busy_share_now().map(|share| share * cores as f64))
        .flatten();
    Some(Load {
        average,
        busy_now,
        cores,
    })
}

/// The busy share of all cores over the next 100 ms, from the aggregate `cpu` line of `/proc/stat`.
#[cfg_attr(not(all(unix, feature = "local-model")), allow(dead_code))]
fn busy_share_now() -> Option<f64> {
    let before = cpu_ticks()?;
    std::thread::sleep(std::time::Duration::from_millis(100));
    busy_share(before, cpu_ticks()?)
}

/// (busy, total) jiffies of all cores; idle and iowait count as not busy.
fn cpu_ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_line(text.lines().next()?)
}

fn parse_cpu_line(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let ticks: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let total: u64 = ticks.iter().sum();
    let idle = ticks.get(3)? + ticks.get(4)?;
    Some((total - idle, total))
}

/// The busy share of all cores between two samples (`None` when no tick passed).
fn busy_share(before: (u64, u64), after: (u64, u64)) -> Option<f64> {
    let total = after.1.checked_sub(before.1)?;
    let busy = after.0.checked_sub(before.0)?;
    (total > 0).then(|| busy as f64 / total as f64)
}

/// The policy of this process: what [`ensure_openmp_wait_policy`] chose, else what the environment
/// says (`OMP_WAIT_POLICY` unset is libgomp's spinning default).
pub fn current() -> WaitChoice {
    if let Some(c) = CHOICE.get() {
        return c.clone();
    }
    from_env(
        std::env::var("OMP_WAIT_POLICY").ok().as_deref(),
        std::env::var(REASON_VAR).ok(),
    )
}

fn from_env(policy: Option<&str>, reason: Option<String>) -> WaitChoice {
    match policy {
        Some(p) => WaitChoice {
            policy: if p.eq_ignore_ascii_case("passive") {
                WaitPolicy::Passive
            } else {
                WaitPolicy::Spin
            },
            reason: reason.unwrap_or_else(|| format!("OMP_WAIT_POLICY={p} in the environment")),
        },
        None => WaitChoice {
            policy: WaitPolicy::Spin,
            reason: "libgomp default".into(),
        },
    }
}

/// Chooses the wait policy (see the module doc) and, for passive waiting, re-executes the binary once
/// with `OMP_WAIT_POLICY=PASSIVE`. Call first thing in `main`; returns when no re-execution happened
/// (spinning was chosen, the variable is already set, or exec failed).
pub fn ensure_openmp_wait_policy() {
    #[cfg(all(unix, feature = "local-model"))]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os("OMP_WAIT_POLICY").is_some() {
            return;
        }
        let args: Vec<String> = std::env::args().skip(1).collect();
        let env = std::env::var("SUM2ACT_LLM_SPIN").ok();
        let setting = setting_from(&args, env.as_deref());
        let load = match setting {
            SpinSetting::Auto => load_average(),
            _ => None,
        };
        let choice = decide(setting, load);
        if choice.policy == WaitPolicy::Spin {
            let _ = CHOICE.set(choice);
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        // `exec` only returns on failure; then we run on with the default policy.
        let _ = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("OMP_WAIT_POLICY", "PASSIVE")
            .env(REASON_VAR, &choice.reason)
            .exec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_flag_wins_over_the_environment_and_bad_values_mean_auto() {
        assert_eq!(
            setting_from(&args(&["llm", "check", "--llm-spin", "on"]), Some("off")),
            SpinSetting::On
        );
        assert_eq!(
            setting_from(&args(&["run", "--llm-spin=OFF"]), None),
            SpinSetting::Off
        );
        assert_eq!(setting_from(&args(&["run"]), Some("on")), SpinSetting::On);
        assert_eq!(
            setting_from(&args(&["run", "--llm-spin", "fast"]), None),
            SpinSetting::Auto
        );
        // After `--` it is someone else's argument.
        assert_eq!(
            setting_from(&args(&["run", "--", "--llm-spin", "on"]), None),
            SpinSetting::Auto
        );
    }

    fn load(average: f64, busy_now: Option<f64>) -> Option<Load> {
        Some(Load {
            average,
            busy_now,
            cores: 2,
        })
    }

    #[test]
    fn auto_spins_only_on_an_idle_machine() {
        let idle = decide(SpinSetting::Auto, load(0.1, None));
        assert_eq!(idle.policy, WaitPolicy::Spin);
        assert_eq!(idle.to_string(), "spin (auto: load 0.10 on 2 cores)");
        assert_eq!(
            decide(SpinSetting::Auto, load(1.7, None)).policy,
            WaitPolicy::Passive
        );
        assert_eq!(decide(SpinSetting::Auto, None).policy, WaitPolicy::Passive);
        assert_eq!(
            decide(SpinSetting::On, load(9.0, None)).policy,
            WaitPolicy::Spin
        );
        assert_eq!(
            decide(SpinSetting::Off, load(0.0, None)).policy,
            WaitPolicy::Passive
        );
    }

    #[test]
    fn a_job_that_just_ended_does_not_make_the_machine_busy() {
        // The average still remembers it; the cores are free now.
        let after_job = decide(SpinSetting::Auto, load(1.2, Some(0.05)));
        assert_eq!(after_job.policy, WaitPolicy::Spin);
        assert_eq!(
            after_job.to_string(),
            "spin (auto: load 1.20, 0.05 busy now on 2 cores)"
        );
        // Busy now and on average: passive.
        assert_eq!(
            decide(SpinSetting::Auto, load(1.2, Some(1.9))).policy,
            WaitPolicy::Passive
        );
        // A burst now on a machine idle on average: the average decides (it was never sampled).
        assert_eq!(
            decide(SpinSetting::Auto, load(0.2, Some(1.9))).policy,
            WaitPolicy::Spin
        );
    }

    #[test]
    fn busy_share_comes_from_the_cpu_line() {
        let a = parse_cpu_line("cpu  100 0 50 800 50 0 0 0 0 0").unwrap();
        assert_eq!(a, (150, 1000));
        let b = parse_cpu_line("cpu  160 0 90 860 50 0 0 0 0 0").unwrap();
        assert_eq!(busy_share(a, b), Some(100.0 / 160.0));
        assert_eq!(busy_share(a, a), None);
        assert_eq!(parse_cpu_line("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(parse_cpu_line("cpu 1 2 x"), None);
    }

    #[test]
    fn the_environment_tells_a_re_executed_process_its_policy() {
        let c = from_env(Some("PASSIVE"), Some("auto: load 1.20 on 2 cores".into()));
        assert_eq!(c.to_string(), "passive (auto: load 1.20 on 2 cores)");
        let user = from_env(Some("ACTIVE"), None);
        assert_eq!(user.policy, WaitPolicy::Spin);
        assert!(user.reason.contains("OMP_WAIT_POLICY=ACTIVE"));
        assert_eq!(from_env(None, None).policy, WaitPolicy::Spin);
    }
}
