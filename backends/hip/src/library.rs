//! Libraries loaded at run time, declared one way: [`dynamic_library!`]
//! gives a struct with one typed function pointer per C symbol, the list
//! of symbols (which `tests/declarations.rs` resolves against the
//! installed libraries) and a loader that tries the library names in
//! order. The HIP runtime, hiprtc and rocSPARSE are all declared with it.

/// Declares `$name`, the entry points of a C library loaded at run time:
/// a field per symbol (`field = "symbol": fn(args) -> ret;`), the const
/// `SYMBOLS`, and `load()`, which opens the first of `$libraries` that
/// loads and looks up every symbol with the signature declared here (the
/// library's header's; the library is kept open with the pointers).
macro_rules! dynamic_library {
    (
        $(#[$doc:meta])*
        $vis:vis struct $name:ident from $libraries:expr;
        $($field:ident = $symbol:literal : fn($($arg:ty),* $(,)?) -> $ret:ty;)*
    ) => {
        $(#[$doc])*
        $vis struct $name {
            _lib: libloading::Library,
            $(
                #[doc = concat!("`", $symbol, "`.")]
                pub $field: unsafe extern "C" fn($($arg),*) -> $ret,
            )*
        }

        impl $name {
            /// Every symbol loaded, in declaration order.
            pub const SYMBOLS: &'static [&'static str] = &[$($symbol),*];

            /// Opens the library and looks up every symbol.
            ///
            /// # Errors
            /// A message naming the libraries tried or the missing symbol.
            fn load() -> Result<Self, String> {
                let libraries: &[&str] = &$libraries;
                // SAFETY: loading the library runs its initialisers only.
                let lib = libraries
                    .iter()
                    .find_map(|l| unsafe { libloading::Library::new(l) }.ok())
                    .ok_or_else(|| format!("none of {libraries:?} could be loaded"))?;
                // SAFETY: each symbol is looked up by its C name with the
                // signature its header declares (the one above); the
                // pointers are stored with the library, which outlives them.
                unsafe {
                    Ok(Self {
                        $(
                            $field: *lib
                                .get::<unsafe extern "C" fn($($arg),*) -> $ret>($symbol.as_bytes())
                                .map_err(|e| format!("{}: {e}", $symbol))?,
                        )*
                        _lib: lib,
                    })
                }
            }
        }
    };
}

pub(crate) use dynamic_library;
