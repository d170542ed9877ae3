//! Flag values that name a library enum: the enum's own list of names becomes clap's possible values
//! (shown in `--help` and in the error for a wrong value), and `FromStr` turns the accepted name into
//! the value, so the library stays free of clap.

use std::str::FromStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// The value parser of a flag taking one of `names` (name, one-line help), parsed as `T`.
pub fn named<T>(names: &'static [(&'static str, &'static str)]) -> impl TypedValueParser<Value = T>
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    PossibleValuesParser::new(names.iter().map(|&(name, help)| {
        let value = PossibleValue::new(name);
        if help.is_empty() {
            value
        } else {
            value.help(help)
        }
    }))
    .try_map(|s| s.parse::<T>())
}

/// The value parser of a flag naming a subset: a plain name, never a path (see
/// [`sum2act_core::toolbench::check_subset_name`]); clap names the flag in its error (exit 2).
pub fn subset_name(s: &str) -> Result<String, String> {
    sum2act_core::toolbench::check_subset_name(s).map(|()| s.to_string())
}

/// A non-empty environment variable that stands for a flag under another tool's name (read after the
/// flag and our own variable, which clap reads).
pub fn env_alias(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
