//! The part of a [`Prune`] that the one pass (`one_pass.cuh`) and the
//! numeric bins' pruned kernels (`row_prune.cuh`) apply as they write C's
//! rows, and the threshold's bits as every pruning kernel reads them.

use super::kernels::DevicePtr;
use crate::scalar::Scalar;
use crate::semiring::Prune;

/// What the one pass and the numeric bins apply of a [`Prune`] as they
/// write C's rows: the threshold's bits, and `keep` when it is per row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct InPass {
    /// The threshold's bits ([`bits`]), if any.
    pub(super) below: Option<u64>,
    /// At most this many entries a row (`u32::MAX`: no limit).
    pub(super) keep: u32,
    /// A zeroed bitmap of one bit a row of C, where the numeric bins'
    /// pruned kernels mark the rows they pruned (null: the numeric bins
    /// do not prune; the one pass prunes every row and marks none).
    pub(super) pruned_rows: DevicePtr,
}

impl InPass {
    /// The part of `prune` the one pass applies; `None` when that is
    /// nothing. A `keep` past `u32::MAX - 1` is no limit: no row of the
    /// one pass is that long.
    pub(super) fn of<T: Scalar>(prune: &Prune<T>) -> Option<Self> {
        let keep = match prune.keep {
            Some(k) if !prune.columns => k.min(u32::MAX as usize - 1) as u32,
            _ => u32::MAX,
        };
        let in_pass = InPass {
            below: prune.below.map(bits),
            keep,
            pruned_rows: DevicePtr(0),
        };
        (in_pass.below.is_some() || keep != u32::MAX).then_some(in_pass)
    }
}

/// The bits of `t` in a `u64` (the low bytes for a 32-bit type), as the
/// kernel reads its threshold.
pub(super) fn bits<T: Scalar>(t: T) -> u64 {
    let mut b = [0u8; 8];
    let bytes = bytemuck::bytes_of(&t);
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pass_takes_thresholds_and_row_keeps_and_leaves_column_keeps() {
        assert_eq!(InPass::of(&Prune::<f64>::default()), None);
        let rows = Prune {
            below: Some(0.5),
            keep: Some(3),
            columns: false,
        };
        let in_pass = InPass::of(&rows).unwrap();
        assert_eq!(in_pass.below, Some(0.5f64.to_bits()));
        assert_eq!(in_pass.keep, 3);
        let columns = Prune::<f64> {
            below: None,
            keep: Some(3),
            columns: true,
        };
        assert_eq!(InPass::of(&columns), None);
        // 32-bit values: their bits in the low half.
        assert_eq!(bits(-1i32), 0xffff_ffff);
        let huge = Prune::<i64> {
            keep: Some(usize::MAX),
            ..Prune::default()
        };
        assert_eq!(InPass::of(&huge).unwrap().keep, u32::MAX - 1);
    }
}
