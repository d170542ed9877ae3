//! What this CPU can run, read with `cpuid` and `xgetbv` directly. `is_x86_feature_detected!` cannot
//! tell: it answers `true` without asking the CPU for every feature the binary was compiled with, which
//! in a native build is exactly the set to check.

use std::arch::x86_64::{__cpuid, __cpuid_count};

/// An x86 instruction set, as the checks name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum X86 {
    Sse42,
    Avx,
    Avx2,
    Fma,
    F16c,
    Bmi2,
    AvxVnni,
    Avx512f,
    Avx512bw,
    Avx512vl,
    Avx512dq,
    Avx512cd,
    Avx512vbmi,
    Avx512vnni,
    Avx512bf16,
}

/// Whether this CPU (and the OS, which must save the wider registers) supports `feature`.
pub fn has(feature: X86) -> bool {
    let regs = Regs::read();
    let bit = |word: u32, n: u32| word & (1 << n) != 0;
    use X86::*;
    match feature {
        Sse42 => bit(regs.l1_ecx, 20),
        Avx => regs.avx_state() && bit(regs.l1_ecx, 28),
        Fma => regs.avx_state() && bit(regs.l1_ecx, 12),
        F16c => regs.avx_state() && bit(regs.l1_ecx, 29),
        Avx2 => regs.avx_state() && bit(regs.l7_ebx, 5),
        Bmi2 => bit(regs.l7_ebx, 8),
        AvxVnni => regs.avx_state() && bit(regs.l7s1_eax, 4),
        Avx512f => regs.avx512_state() && bit(regs.l7_ebx, 16),
        Avx512dq => regs.avx512_state() && bit(regs.l7_ebx, 17),
        Avx512cd => regs.avx512_state() && bit(regs.l7_ebx, 28),
        Avx512bw => regs.avx512_state() && bit(regs.l7_ebx, 30),
        Avx512vl => regs.avx512_state() && bit(regs.l7_ebx, 31),
        Avx512vbmi => regs.avx512_state() && bit(regs.l7_ecx, 1),
        Avx512vnni => regs.avx512_state() && bit(regs.l7_ecx, 11),
        Avx512bf16 => regs.avx512_state() && bit(regs.l7s1_eax, 5),
    }
}

/// The `cpuid` words the features live in, and the OS-enabled register state (XCR0).
struct Regs {
    l1_ecx: u32,
    l7_ebx: u32,
    l7_ecx: u32,
    l7s1_eax: u32,
    xcr0: u64,
}

impl Regs {
    fn read() -> Regs {
        let max_leaf = __cpuid(0).eax;
        let l1 = __cpuid(1);
        let (l7, l7s1_eax) = if max_leaf >= 7 {
            (__cpuid_count(7, 0), __cpuid_count(7, 1).eax)
        } else {
            (__cpuid(0), 0)
        };
        let osxsave = l1.ecx & (1 << 27) != 0;
        Regs {
            l1_ecx: l1.ecx,
            l7_ebx: if max_leaf >= 7 { l7.ebx } else { 0 },
            l7_ecx: if max_leaf >= 7 { l7.ecx } else { 0 },
            l7s1_eax,
            // SAFETY: `xgetbv` exists whenever the OS has enabled XSAVE (`osxsave`), checked first.
            xcr0: if osxsave { unsafe { xgetbv0() } } else { 0 },
        }
    }

    /// The OS saves the SSE and AVX registers.
    fn avx_state(&self) -> bool {
        self.xcr0 & 0b110 == 0b110
    }

    /// The OS saves the AVX-512 registers as well (opmask, upper halves, upper 16 registers).
    fn avx512_state(&self) -> bool {
        self.avx_state() && self.xcr0 & 0b1110_0000 == 0b1110_0000
    }
}

#[target_feature(enable = "xsave")]
unsafe fn xgetbv0() -> u64 {
    // SAFETY: the caller checked OSXSAVE, so the instruction exists and XCR0 is readable.
    unsafe { std::arch::x86_64::_xgetbv(0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_std_where_std_asks_the_cpu() {
        // Features the test binary was not compiled with are detected at run time by std too.
        macro_rules! same {
            ($($f:ident => $name:tt),*) => {$(
                if !cfg!(target_feature = $name) {
                    assert_eq!(has(X86::$f), is_x86_feature_detected!($name), $name);
                }
            )*};
        }
        same!(Sse42 => "sse4.2", Avx => "avx", Avx2 => "avx2", Fma => "fma", F16c => "f16c",
              Bmi2 => "bmi2", AvxVnni => "avxvnni", Avx512f => "avx512f", Avx512bw => "avx512bw",
              Avx512vl => "avx512vl", Avx512dq => "avx512dq", Avx512cd => "avx512cd",
              Avx512vbmi => "avx512vbmi", Avx512vnni => "avx512vnni", Avx512bf16 => "avx512bf16");
        // Every x86-64 CPU this project runs on has SSE4.2.
        assert!(has(X86::Sse42));
    }
}
