//! Names for fieldless enums that users type (flag values, config values): one table per enum gives
//! its `Display`, `FromStr` and the list of accepted names, so the command line (which offers the list
//! as its possible values: `cli::values::named`) and the library cannot disagree. Every user-named
//! enum is parsed this one way, with one error shape ([`UnknownName`]); the command line names the
//! flag around it, a file's reader the field.

/// A name that is not one of an enum's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}` (expected one of: {})", expected.join(", "))]
pub struct UnknownName {
    /// What was being named ("method", "progress mode"...).
    pub kind: &'static str,
    pub value: String,
    pub expected: Vec<&'static str>,
}

/// Whether `typed` is `name` exactly (the default).
pub fn exact(typed: &str, name: &str) -> bool {
    typed == name
}

/// Whether `typed` is `name` up to surrounding spaces (names inside a list such as `a=1, b`).
pub fn trimmed(typed: &str, name: &str) -> bool {
    typed.trim() == name
}

/// Whether `typed` is `name` up to case and surrounding spaces (`named_values!(T, "kind", loose {..})`,
/// for enums whose names were always read that way).
pub fn loose(typed: &str, name: &str) -> bool {
    typed.trim().eq_ignore_ascii_case(name)
}

/// Implements `NAMES` (every accepted name with a one-line help, in the order `--help` lists them),
/// `name()`, `Display` and `FromStr` for a fieldless enum. A variant may have aliases after its
/// name (`React => "react" | "cot"`); `name()` and `Display` give the first. Names match exactly,
/// or with `loose` after the kind up to case and surrounding spaces (see [`loose`]). Exported for
/// the other crates' enums; reached as `names::named_values!`.
#[macro_export]
#[doc(hidden)]
macro_rules! __named_values {
    ($ty:ident, $kind:literal { $($body:tt)* }) => {
        $crate::names::named_values!($ty, $kind, exact { $($body)* });
    };
    ($ty:ident, $kind:literal, $matches:ident {
        $($variant:ident => $name:literal $(| $alias:literal)* : $help:literal),+ $(,)?
    }) => {
        impl $ty {
            /// Every accepted name and what it means, in the order `--help` lists them.
            pub const NAMES: &'static [(&'static str, &'static str)] =
                &[$(($name, $help), $(($alias, $help),)*)+];

            /// The canonical name.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::names::UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $(
                    if $crate::names::$matches(s, $name) $(|| $crate::names::$matches(s, $alias))* {
                        return Ok($ty::$variant);
                    }
                )+
                Err($crate::names::UnknownName {
                    kind: $kind,
                    value: s.to_string(),
                    expected: Self::NAMES.iter().map(|(n, _)| *n).collect(),
                })
            }
        }
    };
}
pub use __named_values as named_values;

#[cfg(test)]
mod tests {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Colour {
        Red,
        Blue,
    }
    super::named_values!(Colour, "colour" {
        Red => "red" | "crimson": "Warm.",
        Blue => "blue": "",
    });

    #[test]
    fn names_parse_print_and_list_in_order() {
        assert_eq!("crimson".parse::<Colour>(), Ok(Colour::Red));
        assert_eq!(Colour::Red.to_string(), "red");
        assert_eq!(
            Colour::NAMES,
            &[("red", "Warm."), ("crimson", "Warm."), ("blue", "")]
        );
        let e = "Blue".parse::<Colour>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown colour `Blue` (expected one of: red, crimson, blue)"
        );
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Size {
        Small,
    }
    super::named_values!(Size, "size", loose {
        Small => "small": "",
    });

    #[test]
    fn loose_names_match_up_to_case_and_spaces_and_fail_the_same_way() {
        assert_eq!(" Small ".parse::<Size>(), Ok(Size::Small));
        assert!("Small".parse::<Colour>().is_err());
        let e = "big".parse::<Size>().unwrap_err();
        assert_eq!(e.to_string(), "unknown size `big` (expected one of: small)");
    }
}
