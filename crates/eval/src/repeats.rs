//! The inference variance of a `batch --repeats N` run: each repeat is scored on its own (the same
//! judge and votes), and the spread of the per-repeat pass rates is reported apart from the spread
//! over judge votes and the bootstrap interval over queries, which describe other variances.

use serde::Serialize;

use super::input::AnswerSet;
use super::stats::{mean, std_dev};

/// Per-repeat overall pass rates (percent) and their mean and population std.
#[derive(Debug, Clone, Serialize)]
pub struct InferenceSpread {
    pub pass_rates: Vec<f64>,
    pub mean: f64,
    pub std: f64,
}

impl InferenceSpread {
    pub fn new(pass_rates: Vec<f64>) -> Self {
        InferenceSpread {
            mean: mean(&pass_rates),
            std: std_dev(&pass_rates),
            pass_rates,
        }
    }

    /// One line that names the variance its ± is.
    pub fn line(&self) -> String {
        let each: Vec<String> = self.pass_rates.iter().map(|p| format!("{p:.1}")).collect();
        format!(
            "pass rate over {} inference repeats: {:.1} ± {:.1} (± = std over inference repeats; per repeat: {})",
            self.pass_rates.len(),
            self.mean,
            self.std,
            each.join(", ")
        )
    }
}

/// Restricts repeat `r`'s answers to the queries repeat 0 is scored on, so a repeat that is missing
/// an answer counts it as a failure, like a missing answer in repeat 0.
pub fn align(repeat: &mut AnswerSet, first: &AnswerSet) {
    repeat.answers.retain(|k, _| first.expected.contains(k));
    repeat.expected = first.expected.clone();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_the_std_over_repeats_and_says_so() {
        let s = InferenceSpread::new(vec![50.0, 70.0, 60.0]);
        assert!((s.mean - 60.0).abs() < 1e-9);
        assert!((s.std - (200.0f64 / 3.0).sqrt()).abs() < 1e-9);
        let line = s.line();
        assert!(line.contains("std over inference repeats"), "{line}");
        assert!(line.contains("60.0 ± 8.2"), "{line}");
    }
}
