//! Results that follow from the arguments by a formula, for the calculators common in ToolBench (a
//! BMI from weight and height), so the answer agrees with the question.

use super::context::Ctx;
use super::rng::round;
use super::words::has;

impl Ctx<'_> {
    /// The computed result of the call, when the API is a calculator this module knows.
    pub fn computed(&self) -> Option<f64> {
        if has(&self.purpose.words, &["bmi"]) {
            return self.bmi();
        }
        None
    }

    /// Body-mass index: kg / m², or 703 · lb / in² for imperial inputs.
    fn bmi(&self) -> Option<f64> {
        let find = |part: &str| {
            self.arg_names()
                .iter()
                .find(|n| n.to_lowercase().contains(part))
                .and_then(|n| self.arg_text(&[n.as_str()]))
                .and_then(|t| t.trim().parse::<f64>().ok())
                .filter(|x| *x > 0.0)
        };
        let (w, h) = (find("weight")?, find("height")?);
        let imperial = self.arg_names().iter().any(|n| {
            let n = n.to_lowercase();
            n.contains("lb") || n.contains("pound") || n.contains("inch") || n.contains("feet")
        }) || self
            .arg_text(&["system", "units", "unit"])
            .is_some_and(|u| u.to_lowercase().starts_with("imp"));
        let bmi = if imperial {
            703.0 * w / (h * h)
        } else {
            let m = if h > 3.0 { h / 100.0 } else { h };
            w / (m * m)
        };
        (bmi.is_finite() && bmi > 5.0 && bmi < 100.0).then(|| round(bmi, 1))
    }
}
