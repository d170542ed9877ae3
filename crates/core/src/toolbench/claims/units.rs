//! Units and scale words of numbers, so a value written in one unit is found in evidence written in
//! another: `5 Gwei` is `5000000000` wei, `101 min` is `6060` s, `21.4 °C` is `294.55` K, `$274.5
//! billion` is `274515000000`. Conversions keep the precision the answer wrote: the tolerance is
//! converted with the value.

/// What a unit measures; values convert only within one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// Ether and its denominations, in wei.
    Ether,
    /// Bitcoin, in satoshi.
    Bitcoin,
    /// Seconds.
    Time,
    /// Bytes (decimal and binary prefixes).
    Data,
    /// Metres.
    Length,
    /// Grams.
    Mass,
    /// Metres per second.
    Speed,
    /// Degrees Celsius (affine: converted apart).
    Temperature,
}

/// A unit: its dimension and how many base units one of it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub dimension: Dimension,
    pub factor: f64,
}

/// Written unit names (lower case) and their units. Temperature factors: 0 Celsius, 1 Fahrenheit,
/// 2 Kelvin.
const UNITS: &[(&str, Dimension, f64)] = &[
    ("wei", Dimension::Ether, 1.0),
    ("kwei", Dimension::Ether, 1e3),
    ("mwei", Dimension::Ether, 1e6),
    ("gwei", Dimension::Ether, 1e9),
    ("szabo", Dimension::Ether, 1e12),
    ("finney", Dimension::Ether, 1e15),
    ("eth", Dimension::Ether, 1e18),
    ("ether", Dimension::Ether, 1e18),
    ("sats", Dimension::Bitcoin, 1.0),
    ("satoshi", Dimension::Bitcoin, 1.0),
    ("satoshis", Dimension::Bitcoin, 1.0),
    ("btc", Dimension::Bitcoin, 1e8),
    ("ms", Dimension::Time, 1e-3),
    ("s", Dimension::Time, 1.0),
    ("sec", Dimension::Time, 1.0),
    ("secs", Dimension::Time, 1.0),
    ("second", Dimension::Time, 1.0),
    ("seconds", Dimension::Time, 1.0),
    ("min", Dimension::Time, 60.0),
    ("mins", Dimension::Time, 60.0),
    ("minute", Dimension::Time, 60.0),
    ("minutes", Dimension::Time, 60.0),
    ("h", Dimension::Time, 3600.0),
    ("hr", Dimension::Time, 3600.0),
    ("hrs", Dimension::Time, 3600.0),
    ("hour", Dimension::Time, 3600.0),
    ("hours", Dimension::Time, 3600.0),
    ("day", Dimension::Time, 86400.0),
    ("days", Dimension::Time, 86400.0),
    ("week", Dimension::Time, 604_800.0),
    ("weeks", Dimension::Time, 604_800.0),
    ("bytes", Dimension::Data, 1.0),
    ("kb", Dimension::Data, 1e3),
    ("mb", Dimension::Data, 1e6),
    ("gb", Dimension::Data, 1e9),
    ("tb", Dimension::Data, 1e12),
    ("kib", Dimension::Data, 1024.0),
    ("mib", Dimension::Data, 1_048_576.0),
    ("gib", Dimension::Data, 1_073_741_824.0),
    ("tib", Dimension::Data, 1_099_511_627_776.0),
    ("mm", Dimension::Length, 1e-3),
    ("cm", Dimension::Length, 1e-2),
    ("m", Dimension::Length, 1.0),
    ("meter", Dimension::Length, 1.0),
    ("meters", Dimension::Length, 1.0),
    ("metre", Dimension::Length, 1.0),
    ("metres", Dimension::Length, 1.0),
    ("km", Dimension::Length, 1e3),
    ("kilometer", Dimension::Length, 1e3),
    ("kilometers", Dimension::Length, 1e3),
    ("kilometres", Dimension::Length, 1e3),
    ("ft", Dimension::Length, 0.3048),
    ("feet", Dimension::Length, 0.3048),
    ("mi", Dimension::Length, 1609.344),
    ("mile", Dimension::Length, 1609.344),
    ("miles", Dimension::Length, 1609.344),
    ("mg", Dimension::Mass, 1e-3),
    ("g", Dimension::Mass, 1.0),
    ("grams", Dimension::Mass, 1.0),
    ("kg", Dimension::Mass, 1e3),
    ("lb", Dimension::Mass, 453.592_37),
    ("lbs", Dimension::Mass, 453.592_37),
    ("m/s", Dimension::Speed, 1.0),
    ("km/h", Dimension::Speed, 1.0 / 3.6),
    ("kmh", Dimension::Speed, 1.0 / 3.6),
    ("kph", Dimension::Speed, 1.0 / 3.6),
    ("mph", Dimension::Speed, 0.447_04),
    ("knots", Dimension::Speed, 0.514_444),
    ("°c", Dimension::Temperature, 0.0),
    ("celsius", Dimension::Temperature, 0.0),
    ("degrees celsius", Dimension::Temperature, 0.0),
    ("°f", Dimension::Temperature, 1.0),
    ("fahrenheit", Dimension::Temperature, 1.0),
    ("degrees fahrenheit", Dimension::Temperature, 1.0),
    ("k", Dimension::Temperature, 2.0),
    ("kelvin", Dimension::Temperature, 2.0),
];

/// Every unit name (lower case).
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    UNITS.iter().map(|(name, _, _)| *name)
}

/// The unit a number was written with (`gwei`, `min`, `°C`, `km/h`), if it is one we convert.
pub(crate) fn unit(written: &str) -> Option<Unit> {
    let key: String = written
        .trim()
        .to_lowercase()
        .replace("° ", "°")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    UNITS
        .iter()
        .find(|(name, _, _)| *name == key)
        .map(|(_, dimension, factor)| Unit {
            dimension: *dimension,
            factor: *factor,
        })
}

/// Units whose values are specific even when small (`5 Gwei`, `2 GB`): a magnitude, not a count.
pub(crate) fn is_magnitude(u: Unit) -> bool {
    matches!(
        u.dimension,
        Dimension::Ether | Dimension::Bitcoin | Dimension::Data | Dimension::Temperature
    )
}

/// The value (with its tolerance) expressed in every other unit of its dimension.
pub(crate) fn conversions(value: f64, tolerance: f64, u: Unit) -> Vec<(f64, f64)> {
    if u.dimension == Dimension::Temperature {
        return temperatures(value, tolerance, u.factor as u8);
    }
    let base = value * u.factor;
    UNITS
        .iter()
        .filter(|(_, d, f)| *d == u.dimension && (*f - u.factor).abs() > f64::EPSILON * u.factor)
        .map(|(_, _, f)| (base / f, tolerance * u.factor / f))
        .collect()
}

/// Celsius (0), Fahrenheit (1) and Kelvin (2) of a temperature written in scale `from`.
fn temperatures(value: f64, tolerance: f64, from: u8) -> Vec<(f64, f64)> {
    let celsius = match from {
        1 => (value - 32.0) * 5.0 / 9.0,
        2 => value - 273.15,
        _ => value,
    };
    let c_tol = if from == 1 {
        tolerance * 5.0 / 9.0
    } else {
        tolerance
    };
    [
        (celsius, c_tol),
        (celsius * 9.0 / 5.0 + 32.0, c_tol * 9.0 / 5.0),
        (celsius + 273.15, c_tol),
    ]
    .into_iter()
    .enumerate()
    .filter(|(i, _)| *i as u8 != from)
    .map(|(_, v)| v)
    .collect()
}

/// The factor of a scale word (`thousand`, `million`, `billion`, `trillion`, `bn`, `mn`) or of a
/// single letter written against the number (`5K`, `1.2M`, `$274.5B`, `3T`).
pub(crate) fn scale(word: &str) -> Option<f64> {
    let w = word.trim();
    let lower = w.to_ascii_lowercase();
    let lower = lower.strip_suffix('s').unwrap_or(&lower);
    match lower {
        "thousand" | "k" => Some(1e3),
        "million" | "mn" => Some(1e6),
        "billion" | "bn" => Some(1e9),
        "trillion" | "tn" => Some(1e12),
        _ => match w {
            "M" => Some(1e6),
            "B" => Some(1e9),
            "T" => Some(1e12),
            _ => None,
        },
    }
}

/// Scale factors an answer may leave out when it says the scale once for many values ("revenue, in
/// billions: $274.5"): tried only when the answer mentions a scale somewhere.
pub(crate) const ELIDED_SCALES: [f64; 4] = [1e3, 1e6, 1e9, 1e12];

/// Whether an answer mentions a scale anywhere (so a bare `$274.5` may be in billions).
pub(crate) fn mentions_scale(answer: &str) -> bool {
    let lower = answer.to_lowercase();
    ["thousand", "million", "billion", "trillion"]
        .iter()
        .any(|w| lower.contains(w))
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| matches!(w, "bn" | "mn" | "tn"))
}
