//! What every claim finder shares: compiling its patterns, recording a match as a claim, and masking
//! the match out of the text so the next kind does not read it again.

use regex::Regex;

use super::{Claim, ClaimKind};

pub(super) fn re(pattern: &str) -> Regex {
    // The patterns are constants of the finders: a typo is caught by every test that extracts claims.
    Regex::new(pattern).unwrap_or_else(|e| panic!("bad claim pattern {pattern}: {e}"))
}

pub(super) fn mask(text: &mut String, start: usize, end: usize) {
    text.replace_range(start..end, &" ".repeat(end - start));
}

pub(super) fn claim(kind: ClaimKind, text: &str, start: usize) -> Claim {
    Claim::new(kind, text, start)
}
