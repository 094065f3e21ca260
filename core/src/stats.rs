//! Work statistics of a product: products per row (`nprod`), their 64-bit
//! total, longest rows, compression ratio and GFLOPS.

use crate::csr_view::CsrView;
use crate::error::Result;
use crate::reference::check_dimensions;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// Work statistics of `C = A·B`, known before C is computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProductStats {
    /// `nprod(i) = Σ_{k ∈ A(i,:)} nnz(B(k,:))` for every row `i` of A.
    pub nprod: Vec<u64>,
    /// `Σ nprod(i)`, the number of scalar multiply-adds (64-bit: it passes
    /// 2^31 on real graphs).
    pub total_nprod: u64,
    /// Largest `nprod(i)`.
    pub max_nprod: u64,
    /// Longest row of A.
    pub max_row_nnz_a: usize,
    /// Longest row of B (chooses the thread-group size G, DCU §5.1).
    pub max_row_nnz_b: usize,
}

/// Bytes a product `C = A·B` must move at least: A and B read once and C's
/// row offsets, column indices and values written once (8-byte offsets,
/// 4-byte columns, `value_bytes`-byte values); each matrix is given as
/// `(rows, nnz)`. Divided by the device's
/// memory bandwidth it is the product's bandwidth floor (`spgemm bench`).
pub fn bandwidth_floor_bytes(
    a: (usize, usize),
    b: (usize, usize),
    c: (usize, usize),
    value_bytes: usize,
) -> u128 {
    let matrix = |(rows, nnz): (usize, usize)| {
        (rows as u128 + 1) * 8 + nnz as u128 * (4 + value_bytes as u128)
    };
    matrix(a) + matrix(b) + matrix(c)
}

/// Rows of A per parallel task of [`nprod_per_row`].
const STATS_ROWS: usize = 4096;
/// Entries of A between the prefetch of a row offset of B and its use.
const STATS_AHEAD: usize = 32;

/// `nprod(i)` for every row of A, on all cores, with their total, the
/// largest and A's longest row, found in the same pass. The offsets of the
/// rows of B that A's columns select are prefetched [`STATS_AHEAD`]
/// entries ahead: on random and hypersparse matrices each is a cache miss,
/// and rows of A a few entries long leave the core too few loads in flight
/// to hide them otherwise (Ainsworth and Jones, "Software prefetching for
/// indirect memory accesses", CGO 2017, §3).
fn nprod_per_row<T: Scalar>(
    a: CsrView<'_, T>,
    boff: &[usize],
) -> Result<(Vec<u64>, u64, u64, usize)> {
    let (aoff, acol) = (a.row_offsets(), a.col_indices());
    let mut nprod = crate::error::try_zeroed::<u64>(a.nrows(), "products per row")?;
    let (total, max, longest) = nprod
        .par_chunks_mut(STATS_ROWS)
        .enumerate()
        .map(|(c, out)| {
            let first = c * STATS_ROWS;
            let end = aoff[first + out.len()];
            let (mut total, mut max, mut longest) = (0u64, 0u64, 0usize);
            for (i, o) in (first..).zip(out) {
                let r = aoff[i]..aoff[i + 1];
                let ahead = (r.start + STATS_AHEAD).min(end)..(r.end + STATS_AHEAD).min(end);
                for &k in &acol[ahead] {
                    crate::prefetch::read(&boff[k as usize]);
                }
                longest = longest.max(r.len());
                let p = acol[r]
                    .iter()
                    .map(|&k| (boff[k as usize + 1] - boff[k as usize]) as u64)
                    .sum();
                *o = p;
                total += p;
                max = max.max(p);
            }
            (total, max, longest)
        })
        .reduce(|| (0, 0, 0), |x, y| (x.0 + y.0, x.1.max(y.1), x.2.max(y.2)));
    Ok((nprod, total, max, longest))
}

/// Computes [`ProductStats`] in parallel.
///
/// # Errors
/// [`crate::Error::DimensionMismatch`].
pub fn product_stats<'a, 'b, T: Scalar>(
    a: impl Into<CsrView<'a, T>>,
    b: impl Into<CsrView<'b, T>>,
) -> Result<ProductStats> {
    let (a, b) = (a.into(), b.into());
    check_dimensions(a.shape(), b.shape())?;
    let (nprod, total_nprod, max_nprod, max_row_nnz_a) = nprod_per_row(a, b.row_offsets())?;
    Ok(ProductStats {
        nprod,
        total_nprod,
        max_nprod,
        max_row_nnz_a,
        max_row_nnz_b: b.max_row_nnz(),
    })
}

/// Compression ratio `Σ nprod / nnz(C)` (0 when C is empty).
pub fn compression_ratio(total_nprod: u64, nnz_c: usize) -> f64 {
    if nnz_c == 0 {
        0.0
    } else {
        total_nprod as f64 / nnz_c as f64
    }
}

/// GFLOPS `= 2·Σ nprod / seconds / 10^9` (0 for a non-positive time).
pub fn gflops(total_nprod: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        2.0 * total_nprod as f64 / seconds / 1e9
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CsrMatrix;

    #[test]
    fn the_floor_counts_offsets_columns_and_values_of_all_three() {
        // A 2x3 with 3 entries, B 3x3 with 6, C 2x3 with 5, f64.
        let bytes = bandwidth_floor_bytes((2, 3), (3, 6), (2, 5), 8);
        assert_eq!(
            bytes,
            (3 * 8 + 3 * 12) + (4 * 8 + 6 * 12) + (3 * 8 + 5 * 12)
        );
    }

    #[test]
    fn nprod_by_hand() {
        // A = [x x 0; 0 0 x], B rows have 2, 1, 3 entries.
        let a = CsrMatrix::new(2, 3, vec![0, 2, 3], vec![0, 1, 2], vec![1.0f64; 3]).unwrap();
        let b =
            CsrMatrix::new(3, 3, vec![0, 2, 3, 6], vec![0, 1, 2, 0, 1, 2], vec![1.0; 6]).unwrap();
        let s = product_stats(&a, &b).unwrap();
        assert_eq!(s.nprod, vec![3, 3]);
        assert_eq!(
            (s.total_nprod, s.max_nprod, s.max_row_nnz_a, s.max_row_nnz_b),
            (6, 3, 2, 3)
        );
        assert_eq!(compression_ratio(6, 4), 1.5);
        assert_eq!(gflops(500_000_000, 1.0), 1.0);
    }
}
