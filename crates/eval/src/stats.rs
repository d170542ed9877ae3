//! Statistics for A/B comparisons (paired bootstrap intervals, the sign test) and for judge calibration
//! (accuracy, Cohen's kappa, confusion matrix). Resampling uses a seeded RNG so reports reproduce.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::Label;

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Population standard deviation (as StableToolBench reports over evaluation runs).
pub fn std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// A point estimate with a 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// Percentile bootstrap 95% interval of the mean of per-query values. For paired A/B data pass the
/// per-query differences (or per-query win indicators): resampling queries keeps the pairs together.
pub fn bootstrap_mean(values: &[f64], resamples: usize, seed: u64) -> Interval {
    let estimate = mean(values);
    if values.is_empty() || resamples == 0 {
        return Interval {
            estimate,
            low: estimate,
            high: estimate,
        };
    }
    let n = values.len();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.gen_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    Interval {
        estimate,
        low: percentile(&means, 0.025),
        high: percentile(&means, 0.975),
    }
}

/// Linear-interpolated percentile of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Two-sided exact sign test: `plus` queries where B beat A, `minus` where A beat B (ties dropped).
/// Returns 1.0 when there is nothing to test.
pub fn sign_test(plus: u64, minus: u64) -> f64 {
    let n = plus + minus;
    if n == 0 {
        return 1.0;
    }
    let k = plus.min(minus);
    // P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so large n neither under- nor overflows.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_c = 0.0f64;
    let mut tail = 0.0f64;
    for i in 0..=k {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_c + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// Agreement of the judge with human labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub judge: String,
    pub n: usize,
    /// Share of queries where the judge's majority label equals the person's.
    pub accuracy: f64,
    pub kappa: f64,
    /// Rows: human Solved, Unsolved. Columns: judge Solved, Unsolved, Unsure.
    pub confusion: [[u64; 3]; 2],
    /// Labelled queries the evaluation did not contain.
    #[serde(default)]
    pub unmatched: Vec<String>,
    /// The label file(s) it was measured on (empty: this run's `--labels`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label_set: String,
    /// `calibrate`, `report` or `all` (empty: every label that applied).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub split: String,
}

impl Calibration {
    /// Whether kappa means anything. When every label and every verdict is the same class, chance
    /// agreement is 1 and kappa is 0/0: `kappa` then holds 1.0 (for readers of older files), which
    /// must not be shown as perfect agreement beyond chance.
    pub fn kappa_defined(&self) -> bool {
        let n = self.n as u64;
        n > 0 && self.confusion[0][0] != n && self.confusion[1][1] != n
    }

    /// Kappa to `digits` decimals, or why there is none.
    pub fn kappa_text(&self, digits: usize) -> String {
        if self.kappa_defined() {
            format!("{:.digits$}", self.kappa)
        } else if self.n == 0 {
            "-".into()
        } else {
            "undefined (labels and verdicts all alike)".into()
        }
    }
}

/// Accuracy, Cohen's kappa and the confusion matrix of (human, judge) label pairs. Humans label Solved
/// or Unsolved; a judge Unsure always disagrees.
pub fn calibration(judge: &str, pairs: &[(Label, Label)]) -> Calibration {
    let mut confusion = [[0u64; 3]; 2];
    for (human, judged) in pairs {
        let row = if *human == Label::Solved { 0 } else { 1 };
        let col = match judged {
            Label::Solved => 0,
            Label::Unsolved => 1,
            Label::Unsure => 2,
        };
        confusion[row][col] += 1;
    }
    from_confusion(judge, confusion)
}

/// Accuracy and Cohen's kappa of a confusion matrix (rows: human Solved, Unsolved; columns: judge
/// Solved, Unsolved, Unsure), n its total. Separate from [`calibration`] so that matrices added up
/// over several label sets get the very same figures.
pub fn from_confusion(judge: &str, confusion: [[u64; 3]; 2]) -> Calibration {
    let n = confusion.iter().flatten().sum::<u64>() as usize;
    let nf = n.max(1) as f64;
    let agree = (confusion[0][0] + confusion[1][1]) as f64;
    let po = agree / nf;
    let human_solved = (confusion[0].iter().sum::<u64>()) as f64 / nf;
    let human_unsolved = (confusion[1].iter().sum::<u64>()) as f64 / nf;
    let judge_solved = (confusion[0][0] + confusion[1][0]) as f64 / nf;
    let judge_unsolved = (confusion[0][1] + confusion[1][1]) as f64 / nf;
    let pe = human_solved * judge_solved + human_unsolved * judge_unsolved;
    let kappa = if (1.0 - pe).abs() < 1e-12 {
        if (po - 1.0).abs() < 1e-12 { 1.0 } else { 0.0 }
    } else {
        (po - pe) / (1.0 - pe)
    };
    Calibration {
        judge: judge.to_string(),
        n,
        accuracy: po,
        kappa,
        confusion,
        unmatched: Vec::new(),
        label_set: String::new(),
        split: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_population_std() {
        assert_eq!(mean(&[]), 0.0);
        assert!((mean(&[1.0, 0.0, 0.5]) - 0.5).abs() < 1e-12);
        // Population std of {2,4,4,4,5,5,7,9} is exactly 2.
        assert!((std_dev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) - 2.0).abs() < 1e-12);
        assert_eq!(std_dev(&[0.7]), 0.0);
    }

    #[test]
    fn bootstrap_of_a_constant_is_that_constant() {
        let ci = bootstrap_mean(&[0.25; 40], 2000, 1);
        assert_eq!((ci.estimate, ci.low, ci.high), (0.25, 0.25, 0.25));
    }

    #[test]
    fn bootstrap_known_case_matches_normal_theory_and_is_seeded() {
        // 100 paired differences: 30 × +1, 10 × −1, 60 × 0. Mean 0.2, sd 0.6 (pop), se ≈ 0.06,
        // so the 95% interval is about 0.2 ± 0.118.
        let mut d = vec![1.0; 30];
        d.extend(vec![-1.0; 10]);
        d.extend(vec![0.0; 60]);
        let ci = bootstrap_mean(&d, 10_000, 7);
        assert!((ci.estimate - 0.2).abs() < 1e-12);
        assert!((ci.low - (0.2 - 0.118)).abs() < 0.02, "{ci:?}");
        assert!((ci.high - (0.2 + 0.118)).abs() < 0.02, "{ci:?}");
        assert_eq!(
            ci,
            bootstrap_mean(&d, 10_000, 7),
            "same seed, same interval"
        );
        assert_ne!(ci, bootstrap_mean(&d, 10_000, 8));
    }

    #[test]
    fn sign_test_exact_values() {
        // 9 of 10 in one direction: 2 × (1 + 10)/1024.
        assert!((sign_test(9, 1) - 22.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test(5, 5), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        // Large n does not underflow: 600 vs 400 is far from chance but finite.
        let p = sign_test(600, 400);
        assert!(p > 0.0 && p < 1e-9, "{p}");
    }

    #[test]
    fn kappa_and_confusion() {
        use Label::*;
        let pairs = [
            (Solved, Solved),
            (Solved, Solved),
            (Solved, Unsolved),
            (Unsolved, Unsolved),
            (Unsolved, Unsolved),
            (Unsolved, Unsure),
        ];
        let c = calibration("j", &pairs);
        assert_eq!(c.confusion, [[2, 1, 0], [0, 2, 1]]);
        assert!((c.accuracy - 4.0 / 6.0).abs() < 1e-12);
        // pe = 0.5·(2/6) + 0.5·(3/6) = 5/12; kappa = (8/12 − 5/12)/(7/12) = 3/7.
        assert!((c.kappa - 3.0 / 7.0).abs() < 1e-12, "{}", c.kappa);
        let perfect = calibration("j", &[(Solved, Solved), (Unsolved, Unsolved)]);
        assert_eq!((perfect.accuracy, perfect.kappa), (1.0, 1.0));
        assert_eq!(perfect.kappa_text(2), "1.00");
        // All alike: chance agreement is 1, kappa is 0/0, never shown as 1.00.
        let alike = calibration("j", &[(Solved, Solved); 6]);
        assert!(!alike.kappa_defined());
        assert!(alike.kappa_text(2).starts_with("undefined"));
    }
}
