//! The embedded model's run settings: `--llm-spin` (how llama.cpp's threads wait), the instruction sets
//! `llm check` reports, and `llm bench --quick`'s input checks. The runs that load a model use the
//! fetched 0.5B model when it is in the cache and are skipped otherwise.

use std::path::PathBuf;

use crate::common::Test;

fn fetched_model() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let path =
        PathBuf::from(home).join(".cache/sum2act/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    path.is_file().then_some(path)
}

#[test]
fn an_unknown_spin_setting_is_bad_input() {
    Test::new()
        .args(["llm", "check", "--llm-spin", "fast"])
        .run()
        .failure(2)
        .stderr_has("--llm-spin")
        .no_panic();
}

#[test]
fn bench_needs_at_least_one_token() {
    Test::new()
        .args(["llm", "bench", "--quick", "--tokens", "0"])
        .run()
        .failure(2)
        .stderr_has("--tokens must be at least 1")
        .no_panic();
}

#[test]
fn check_shows_the_wait_policy_and_the_instruction_sets() {
    let Some(model) = fetched_model() else {
        eprintln!("skipped: no fetched 0.5B model (scripts/fetch-model.sh)");
        return;
    };
    for (setting, shown) in [
        ("off", "passive (--llm-spin off)"),
        ("on", "spin (--llm-spin on)"),
    ] {
        Test::new()
            .args(["llm", "check", "--no-tools", "--max-tokens", "2", "--model"])
            .arg(&model)
            .args(["--llm-threads", "1", "--llm-spin", setting])
            .run()
            .success()
            .stdout_has(&format!("threads wait: {shown}"))
            .stdout_has("llama.cpp built for: AVX");
    }
}
