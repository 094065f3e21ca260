//! Option enums named on the command line and in configuration: one macro
//! gives each its list of choices, its names, `FromStr` (an error listing
//! the choices) and `Display`, so that the engine, the facade and the CLI
//! (clap parses through `FromStr`) spell them the same way.

/// Implements `ALL`, `name`, [`std::str::FromStr`] and [`std::fmt::Display`]
/// for an enum from its variants' names: `named_choices!(Type, "what it
/// is", { Variant => "name", ... })`.
macro_rules! named_choices {
    ($ty:ident, $what:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every choice, in the order of the names' list.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];
            #[doc = concat!("Name on the command line: ", $("`", $name, "` "),+)]
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;
            /// The choice called `s`, or an error naming `s` and the choices.
            fn from_str(s: &str) -> Result<Self, String> {
                Self::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
                    format!(
                        "unknown {} '{s}' (one of: {})",
                        $what,
                        Self::ALL.map(|c| c.name()).join(", ")
                    )
                })
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub(crate) use named_choices;
