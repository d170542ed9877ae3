//! The instruction sets the embedded llama.cpp was compiled for, checked against this CPU before a
//! model is loaded: a build for a newer CPU than the one it runs on would otherwise die of an illegal
//! instruction in the middle of a run.
//!
//! The default build is for the machine it is built on (`.cargo/config.toml`: `-C target-cpu=native`, so
//! llama-cpp-sys-2 builds ggml with `GGML_NATIVE=ON`, as llama.cpp does by default); a portable build
//! (`RUSTFLAGS="-C target-cpu=x86-64-v3"`) uses AVX2/FMA/F16C/BMI2. A native binary copied to an older
//! CPU is refused at start ([`check_binary`]) and before a model is loaded ([`check`]), naming what is
//! missing, instead of dying of an illegal instruction.

use sum2act_core::llm::LlmError;

#[cfg(target_arch = "x86_64")]
mod cpuid;

/// One instruction set: its name in messages, whether ggml was compiled to use it, whether this CPU
/// has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    pub name: &'static str,
    pub compiled: bool,
    pub present: bool,
}

#[cfg(all(target_arch = "x86_64", feature = "local-model"))]
mod x86 {
    use std::os::raw::c_int;

    use super::cpuid::{X86::*, has};

    // ggml reports the instruction sets its CPU backend was compiled with (compile-time constants).
    unsafe extern "C" {
        safe fn ggml_cpu_has_avx() -> c_int;
        safe fn ggml_cpu_has_avx2() -> c_int;
        safe fn ggml_cpu_has_fma() -> c_int;
        safe fn ggml_cpu_has_f16c() -> c_int;
        safe fn ggml_cpu_has_bmi2() -> c_int;
        safe fn ggml_cpu_has_avx_vnni() -> c_int;
        safe fn ggml_cpu_has_avx512() -> c_int;
        safe fn ggml_cpu_has_avx512_vbmi() -> c_int;
        safe fn ggml_cpu_has_avx512_vnni() -> c_int;
        safe fn ggml_cpu_has_avx512_bf16() -> c_int;
    }

    pub fn features() -> Vec<super::Feature> {
        let f = |name, compiled: c_int, present| super::Feature {
            name,
            compiled: compiled != 0,
            present,
        };
        vec![
            f("AVX", ggml_cpu_has_avx(), has(Avx)),
            f("AVX2", ggml_cpu_has_avx2(), has(Avx2)),
            f("FMA", ggml_cpu_has_fma(), has(Fma)),
            f("F16C", ggml_cpu_has_f16c(), has(F16c)),
            f("BMI2", ggml_cpu_has_bmi2(), has(Bmi2)),
            f("AVX-VNNI", ggml_cpu_has_avx_vnni(), has(AvxVnni)),
            f(
                "AVX-512",
                ggml_cpu_has_avx512(),
                has(Avx512f) && has(Avx512cd) && has(Avx512vl) && has(Avx512dq) && has(Avx512bw),
            ),
            f("AVX-512 VBMI", ggml_cpu_has_avx512_vbmi(), has(Avx512vbmi)),
            f("AVX-512 VNNI", ggml_cpu_has_avx512_vnni(), has(Avx512vnni)),
            f("AVX-512 BF16", ggml_cpu_has_avx512_bf16(), has(Avx512bf16)),
        ]
    }
}

/// The instruction sets that matter to llama.cpp on this architecture (none are checked elsewhere;
/// none without the embedded model).
pub fn features() -> Vec<Feature> {
    #[cfg(all(target_arch = "x86_64", feature = "local-model"))]
    {
        x86::features()
    }
    #[cfg(not(all(target_arch = "x86_64", feature = "local-model")))]
    {
        Vec::new()
    }
}

/// What llama.cpp was compiled to use, e.g. "AVX, AVX2, FMA, F16C, BMI2".
pub fn compiled_level(features: &[Feature]) -> String {
    let names: Vec<&str> = features
        .iter()
        .filter(|f| f.compiled)
        .map(|f| f.name)
        .collect();
    if names.is_empty() {
        "baseline".into()
    } else {
        names.join(", ")
    }
}

/// Instruction sets this CPU has that the build does not use: a rebuild with them would be faster.
pub fn unused(features: &[Feature]) -> Vec<&'static str> {
    let compiled = |name: &str| features.iter().any(|f| f.name == name && f.compiled);
    features
        .iter()
        .filter(|f| f.present && !f.compiled)
        // AVX-VNNI is the 256-bit form of AVX-512 VNNI: nothing to gain once that is in.
        .filter(|f| !(f.name == "AVX-VNNI" && compiled("AVX-512 VNNI")))
        .map(|f| f.name)
        .collect()
}

/// Fails, naming what is missing, when llama.cpp was compiled for instructions this CPU lacks.
pub fn check(features: &[Feature]) -> Result<(), LlmError> {
    let missing: Vec<&str> = features
        .iter()
        .filter(|f| f.compiled && !f.present)
        .map(|f| f.name)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(LlmError::Local(format!(
        "this binary's llama.cpp was built for {} but this CPU lacks {}; rebuild on this machine \
         (`cargo build`) or build a portable binary with RUSTFLAGS=\"-C target-cpu=x86-64-v3\" \
         (docs/models.md), or use a remote model with --base-url",
        compiled_level(features),
        missing.join(", ")
    )))
}

/// The x86 instruction sets the Rust code of this binary was compiled to assume (`-C target-cpu`), each
/// with whether this CPU has it: `cfg!` says what the compiler may emit anywhere, so this is checked
/// first thing in `main`, before any other code of ours runs.
#[cfg(target_arch = "x86_64")]
pub fn binary_features() -> Vec<Feature> {
    use cpuid::{X86::*, has};
    macro_rules! feats {
        ($($name:literal => $feature:tt $id:ident),* $(,)?) => {
            vec![$(Feature {
                name: $name,
                compiled: cfg!(target_feature = $feature),
                present: has($id),
            }),*]
        };
    }
    feats![
        "SSE4.2" => "sse4.2" Sse42,
        "AVX" => "avx" Avx,
        "AVX2" => "avx2" Avx2,
        "FMA" => "fma" Fma,
        "F16C" => "f16c" F16c,
        "BMI2" => "bmi2" Bmi2,
        "AVX-VNNI" => "avxvnni" AvxVnni,
        "AVX-512" => "avx512f" Avx512f,
        "AVX-512 BW" => "avx512bw" Avx512bw,
        "AVX-512 VL" => "avx512vl" Avx512vl,
        "AVX-512 DQ" => "avx512dq" Avx512dq,
        "AVX-512 CD" => "avx512cd" Avx512cd,
        "AVX-512 VBMI" => "avx512vbmi" Avx512vbmi,
        "AVX-512 VNNI" => "avx512vnni" Avx512vnni,
        "AVX-512 BF16" => "avx512bf16" Avx512bf16,
    ]
}

#[cfg(not(target_arch = "x86_64"))]
pub fn binary_features() -> Vec<Feature> {
    Vec::new()
}

/// Fails, naming what is missing, when this binary was compiled for instructions this CPU lacks (a
/// native build copied to another machine).
pub fn check_binary(features: &[Feature]) -> Result<(), String> {
    let missing: Vec<&str> = features
        .iter()
        .filter(|f| f.compiled && !f.present)
        .map(|f| f.name)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "this binary was built for a CPU with {} (`-C target-cpu=native` on the machine that built it) \
         but this CPU lacks {}; build it on this machine (`cargo build`), or build a portable binary with \
         RUSTFLAGS=\"-C target-cpu=x86-64-v3\" (docs/models.md)",
        compiled_level(features),
        missing.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feat(name: &'static str, compiled: bool, present: bool) -> Feature {
        Feature {
            name,
            compiled,
            present,
        }
    }

    #[test]
    fn a_build_for_missing_instructions_is_refused_by_name() {
        let f = [
            feat("AVX2", true, true),
            feat("AVX-512", true, false),
            feat("AVX-512 VNNI", true, false),
            feat("AVX-VNNI", false, true),
        ];
        let err = check(&f).expect_err("must refuse").to_string();
        assert!(err.contains("lacks AVX-512, AVX-512 VNNI"), "{err}");
        assert!(
            err.contains("built for AVX2, AVX-512, AVX-512 VNNI"),
            "{err}"
        );
        assert!(check(&f[..1]).is_ok());
        // An instruction the CPU has but the build does not use is fine.
        assert!(check(&[feat("AVX-512", false, true)]).is_ok());
    }

    #[test]
    fn unused_instruction_sets_are_named_unless_covered() {
        let portable = [
            feat("AVX2", true, true),
            feat("AVX-VNNI", false, true),
            feat("AVX-512", false, true),
            feat("AVX-512 VNNI", false, true),
        ];
        assert_eq!(unused(&portable), ["AVX-VNNI", "AVX-512", "AVX-512 VNNI"]);
        let wide = [
            feat("AVX-VNNI", false, true),
            feat("AVX-512", true, true),
            feat("AVX-512 VNNI", true, true),
        ];
        assert!(unused(&wide).is_empty());
    }

    #[test]
    fn this_test_binary_runs_on_this_cpu() {
        // The bindings link and report at least the portable build's level, which this machine runs.
        let f = features();
        assert!(check(&f).is_ok(), "{:?}", f);
        #[cfg(target_arch = "x86_64")]
        assert!(
            compiled_level(&f).contains("AVX2"),
            "{}",
            compiled_level(&f)
        );
        assert_eq!(check_binary(&binary_features()), Ok(()));
    }

    #[test]
    fn a_native_binary_on_an_older_cpu_is_refused_by_name() {
        let f = [
            feat("AVX2", true, true),
            feat("AVX-512", true, false),
            feat("AVX-512 BF16", false, false),
        ];
        let err = check_binary(&f).expect_err("must refuse");
        assert!(err.contains("built for a CPU with AVX2, AVX-512"), "{err}");
        assert!(err.contains("this CPU lacks AVX-512;"), "{err}");
        assert!(err.contains("target-cpu=x86-64-v3"), "{err}");
        assert!(check_binary(&f[..1]).is_ok());
    }
}
