//! Contiguous blocks of rows (or columns) over ranks, known to every rank.

use crate::{Error, Result};
use serde::Serialize;

/// A split of `0..n` into `P` contiguous blocks: rank `r` owns
/// `offsets[r]..offsets[r + 1]`. Blocks may be empty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Partition {
    offsets: Vec<u64>,
}

impl Partition {
    /// `n` indices over `parts` blocks as equal as can be: the first
    /// `n % parts` blocks hold one more (PETSc's `PETSC_DECIDE` split).
    ///
    /// # Errors
    /// [`Error::Argument`] when `parts` is 0.
    pub fn even(n: u64, parts: usize) -> Result<Self> {
        if parts == 0 {
            return Err(Error::Argument(
                "a partition needs at least one part".into(),
            ));
        }
        let p = parts as u64;
        let offsets = (0..=p).map(|r| r * (n / p) + r.min(n % p)).collect();
        Ok(Self { offsets })
    }

    /// Contiguous blocks of about equal total `weights` (one weight per
    /// index, such as each row's products): block `r` ends at the first
    /// index where the running total reaches `(r + 1) / parts` of the sum.
    ///
    /// # Errors
    /// [`Error::Argument`] when `parts` is 0.
    pub fn balanced(weights: &[u64], parts: usize) -> Result<Self> {
        if parts == 0 {
            return Err(Error::Argument(
                "a partition needs at least one part".into(),
            ));
        }
        let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        let mut offsets = Vec::with_capacity(parts + 1);
        offsets.push(0u64);
        let mut running = 0u128;
        let mut i = 0usize;
        for r in 1..parts {
            let target = total * r as u128 / parts as u128;
            while i < weights.len() && running + u128::from(weights[i]) <= target {
                running += u128::from(weights[i]);
                i += 1;
            }
            offsets.push(i as u64);
        }
        offsets.push(weights.len() as u64);
        Ok(Self { offsets })
    }

    /// The partition whose block `r` holds `sizes[r]` indices.
    ///
    /// # Errors
    /// [`Error::Argument`] when `sizes` is empty or their sum overflows.
    pub fn from_sizes(sizes: &[u64]) -> Result<Self> {
        if sizes.is_empty() {
            return Err(Error::Argument(
                "a partition needs at least one part".into(),
            ));
        }
        let mut offsets = Vec::with_capacity(sizes.len() + 1);
        let mut at = 0u64;
        offsets.push(0);
        for &s in sizes {
            at = at
                .checked_add(s)
                .ok_or_else(|| Error::Argument("partition sizes overflow 64 bits".into()))?;
            offsets.push(at);
        }
        Ok(Self { offsets })
    }

    /// Number of blocks.
    pub fn parts(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The length of the whole range.
    pub fn len(&self) -> u64 {
        *self.offsets.last().expect("at least one part")
    }

    /// Whether the whole range is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block offsets (`parts() + 1`).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Block `r`'s range.
    pub fn range(&self, r: usize) -> std::ops::Range<u64> {
        self.offsets[r]..self.offsets[r + 1]
    }

    /// Block `r`'s size.
    pub fn size(&self, r: usize) -> u64 {
        self.offsets[r + 1] - self.offsets[r]
    }

    /// The block holding index `i` (`i < len()`); of empty blocks at the
    /// same offset, the last.
    pub fn owner(&self, i: u64) -> usize {
        self.offsets.partition_point(|&o| o <= i) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_split_and_owners() {
        let p = Partition::even(10, 4).unwrap();
        assert_eq!(p.offsets(), &[0, 3, 6, 8, 10]);
        let owners: Vec<usize> = (0..10).map(|i| p.owner(i)).collect();
        assert_eq!(owners, [0, 0, 0, 1, 1, 1, 2, 2, 3, 3]);
        let q = Partition::even(2, 4).unwrap();
        assert_eq!(q.offsets(), &[0, 1, 2, 2, 2]);
        assert_eq!((q.owner(0), q.owner(1)), (0, 1));
    }

    #[test]
    fn balanced_by_weights() {
        let p = Partition::balanced(&[8, 1, 1, 1, 1, 1, 1, 1, 1], 2).unwrap();
        assert_eq!(p.offsets(), &[0, 1, 9]);
        let q = Partition::balanced(&[1; 10], 3).unwrap();
        assert_eq!(q.offsets(), &[0, 3, 6, 10]);
        let e = Partition::balanced(&[], 3).unwrap();
        assert_eq!(e.offsets(), &[0, 0, 0, 0]);
    }

    #[test]
    fn sizes_with_empty_blocks() {
        let p = Partition::from_sizes(&[0, 3, 0, 2]).unwrap();
        assert_eq!(p.offsets(), &[0, 0, 3, 3, 5]);
        assert_eq!((p.owner(0), p.owner(2), p.owner(3)), (1, 1, 3));
        assert!(Partition::from_sizes(&[]).is_err());
        assert!(Partition::even(5, 0).is_err());
    }
}
