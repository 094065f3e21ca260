//! The argument structs of the one-pass kernels
//! ([`Kernel::NumericOnePass`](super::Kernel::NumericOnePass) and
//! [`Kernel::OnePassSample`](super::Kernel::OnePassSample)), as the rest
//! of the catalogue declares them.

use super::{ArgValue, DevicePtr, KernelArg, KernelArgs, Param};

kernel_args! {
    /// What both one-pass kernels start with: A and B, A's `m` rows.
    OnePassOperands {
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        aval: DevicePtr = "const value_t*",
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        bval: DevicePtr = "const value_t*",
        m: u32 = "u32",
    }
    /// [`Kernel::NumericOnePass`](super::Kernel::NumericOnePass): all of
    /// A's rows; C's arrays with room for `room` entries (entries placed
    /// past it are not written), its row offsets written whatever the
    /// room; `tiles` a zeroed word per tile and the ticket; each row
    /// pruned as it is written: below the threshold whose bits are
    /// `below` (a `value_t`; with `has_below`), then past the `keep`
    /// largest (`u32::MAX`: no limit).
    NumericOnePassArgs [ops: OnePassOperands] {
        crpt: DevicePtr = "u64*",
        ccol: DevicePtr = "u32*",
        cval: DevicePtr = "value_t*",
        tiles: DevicePtr = "u64*",
        room: u64 = "u64",
        below: u64 = "u64",
        has_below: u32 = "u32",
        keep: u32 = "u32",
    }
    /// [`Kernel::OnePassSample`](super::Kernel::OnePassSample): `nsample`
    /// rows spread over A's (those of at most the one pass's products,
    /// by `nprod`, setup's products per row; none when setup's `stats`
    /// leave no choice, unless `every` is nonzero); their products and
    /// entries added to `totals` (two zeroed words).
    OnePassSampleArgs [ops: OnePassOperands] {
        nprod: DevicePtr = "const u64*",
        stats: DevicePtr = "const u64*",
        nsample: u32 = "u32",
        totals: DevicePtr = "u64*",
        every: u32 = "u32",
    }
}
