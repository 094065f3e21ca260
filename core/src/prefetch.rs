//! A software prefetch hint, for the gathers of rows of B that A's columns
//! select (the CPU backend's phases and [`crate::stats::product_stats`]).

/// Hints that the cache line holding `p` will be read soon (x86-64's
/// `prefetcht0`); no effect on other targets. Reads nothing, faults on
/// nothing, changes no result.
#[inline(always)]
pub fn read<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and faults on nothing; `p` is a
    // valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((p as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
