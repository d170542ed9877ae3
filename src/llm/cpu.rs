//! The instruction sets the embedded llama.cpp was compiled for, checked against this CPU before a
//! model is loaded: a build for a newer CPU than the one it runs on would otherwise die of an illegal
//! instruction in the middle of a run.
//!
//! The default build uses AVX2/FMA/F16C/BMI2 (llama-cpp-sys-2 builds ggml without `GGML_NATIVE`, and
//! ggml turns those four on). Setting `GGML_AVX512=ON` (and `GGML_AVX512_VBMI`, `_VNNI`, `_BF16`) in
//! the environment of `cargo build` adds AVX-512, which prefills ~1.6x faster on CPUs that have it
//! (docs/models.md); this check then refuses CPUs without it, naming what is missing.

use super::LlmError;

/// One instruction set: its name in messages, whether ggml was compiled to use it, whether this CPU
/// has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    pub name: &'static str,
    pub compiled: bool,
    pub present: bool,
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::os::raw::c_int;

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
            f("AVX", ggml_cpu_has_avx(), is_x86_feature_detected!("avx")),
            f(
                "AVX2",
                ggml_cpu_has_avx2(),
                is_x86_feature_detected!("avx2"),
            ),
            f("FMA", ggml_cpu_has_fma(), is_x86_feature_detected!("fma")),
            f(
                "F16C",
                ggml_cpu_has_f16c(),
                is_x86_feature_detected!("f16c"),
            ),
            f(
                "BMI2",
                ggml_cpu_has_bmi2(),
                is_x86_feature_detected!("bmi2"),
            ),
            f(
                "AVX-VNNI",
                ggml_cpu_has_avx_vnni(),
                is_x86_feature_detected!("avxvnni"),
            ),
            f(
                "AVX-512",
                ggml_cpu_has_avx512(),
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512cd")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx512dq")
                    && is_x86_feature_detected!("avx512bw"),
            ),
            f(
                "AVX-512 VBMI",
                ggml_cpu_has_avx512_vbmi(),
                is_x86_feature_detected!("avx512vbmi"),
            ),
            f(
                "AVX-512 VNNI",
                ggml_cpu_has_avx512_vnni(),
                is_x86_feature_detected!("avx512vnni"),
            ),
            f(
                "AVX-512 BF16",
                ggml_cpu_has_avx512_bf16(),
                is_x86_feature_detected!("avx512bf16"),
            ),
        ]
    }
}

/// The instruction sets that matter to llama.cpp on this architecture (none are checked elsewhere).
pub fn features() -> Vec<Feature> {
    #[cfg(target_arch = "x86_64")]
    {
        x86::features()
    }
    #[cfg(not(target_arch = "x86_64"))]
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
         without the GGML_AVX512* variables (see docs/models.md), or use a remote model with --base-url",
        compiled_level(features),
        missing.join(", ")
    )))
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
        // The bindings link and report the default build's level, which this machine runs.
        let f = features();
        assert!(check(&f).is_ok(), "{:?}", f);
        #[cfg(target_arch = "x86_64")]
        assert!(
            compiled_level(&f).contains("AVX2"),
            "{}",
            compiled_level(&f)
        );
    }
}
