//! The distinct columns of a range that a rank's rows use, marked in a
//! bitmap of the range in parallel: each marked column's position among
//! them is a popcount after a prefix sum over words. Both the compaction
//! of a rank's columns and B̂'s assembly in the 1D algorithm use it where
//! the columns are not far sparser than their range (otherwise a sort).

use std::sync::atomic::{AtomicU64, Ordering};

/// Whether a bitmap of `ncols` columns pays for `n` column indices (else
/// sort them): at most about four words per index.
pub(crate) fn bitmap_pays(ncols: u64, n: usize) -> bool {
    ncols.div_ceil(64) <= 4 * n as u64 + 4096
}

/// Columns of `0..ncols` being marked, from any thread.
pub(crate) struct Marks(Vec<AtomicU64>);

impl Marks {
    /// No column of `0..ncols` marked.
    pub(crate) fn new(ncols: u64) -> Self {
        Self((0..ncols.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    /// Marks column `c` (below `ncols`): an atomic OR only when the bit
    /// is not yet seen set (a column met again, the common case in a
    /// product's C, costs a plain load).
    pub(crate) fn mark(&self, c: u64) {
        let (word, bit) = (&self.0[(c / 64) as usize], 1u64 << (c % 64));
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// The marked columns.
    pub(crate) fn finish(self) -> ColumnSet {
        ColumnSet::of_bits(self.0.into_iter().map(AtomicU64::into_inner).collect())
    }
}

/// A set of columns, each with its position among them.
pub(crate) struct ColumnSet {
    bits: Vec<u64>,
    /// Columns in the words before each word.
    before: Vec<u64>,
    len: u64,
}

impl ColumnSet {
    /// The set whose columns are the set bits of `bits` (bit `c % 64` of
    /// word `c / 64` for column `c`).
    pub(crate) fn of_bits(bits: Vec<u64>) -> ColumnSet {
        let mut before = Vec::with_capacity(bits.len());
        let mut len = 0u64;
        for w in &bits {
            before.push(len);
            len += u64::from(w.count_ones());
        }
        ColumnSet { bits, before, len }
    }

    /// Columns in the set.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The columns, ascending.
    pub(crate) fn columns(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len as usize);
        for (i, &w) in self.bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                out.push(i as u64 * 64 + u64::from(w.trailing_zeros()));
                w &= w - 1;
            }
        }
        out
    }

    /// The position of column `c` (in the set, whose length fits a `u32`)
    /// among the set's columns.
    pub(crate) fn position(&self, c: u64) -> u32 {
        let (i, bit) = ((c / 64) as usize, c % 64);
        (self.before[i] + u64::from((self.bits[i] & ((1u64 << bit) - 1)).count_ones())) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_the_marked_columns_before() {
        let marks = Marks::new(200);
        for c in [199, 3, 64, 3, 127, 0] {
            marks.mark(c);
        }
        let set = marks.finish();
        assert_eq!(set.len(), 5);
        assert_eq!(set.columns(), [0, 3, 64, 127, 199]);
        let positions: Vec<u32> = set.columns().iter().map(|&c| set.position(c)).collect();
        assert_eq!(positions, [0, 1, 2, 3, 4]);
        assert!(bitmap_pays(1 << 18, 0) && !bitmap_pays(1 << 30, 10));
    }
}
