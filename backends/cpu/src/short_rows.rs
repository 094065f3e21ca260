//! Rows of C with few products, computed without an accumulator: the
//! products gathered into a small buffer, sorted by column (insertion sort,
//! stable, so that a column's products are summed in the order the
//! accumulators sum them: A's entries in order, then B's) and merged. On
//! products of low compression with many short rows (road networks,
//! meshes of low degree, hypersparse matrices) this replaces a dense
//! accumulator as wide as C, whose set-up and scattered accesses cost more
//! than the row's few products (the ESC method of Bell, Dalton and Olson,
//! "Exposing fine-grained parallelism in algebraic multigrid methods",
//! SIAM J. Sci. Comput. 34(4), 2012, §3, applied per row).

use crate::accumulator::Ops;
use spgemm_core::{CsrView, Scalar};
use std::mem::MaybeUninit;

/// Rows of at most this many products take the sorting path.
pub(crate) const SHORT_ROW: usize = 32;

/// Sorts `keys` (and `vals` with them) by key, stable.
#[inline]
fn insertion_sort<T: Copy>(keys: &mut [u32], vals: &mut [T]) {
    for i in 1..keys.len() {
        let (k, v) = (keys[i], vals[i]);
        let mut j = i;
        while j > 0 && keys[j - 1] > k {
            keys[j] = keys[j - 1];
            vals[j] = vals[j - 1];
            j -= 1;
        }
        keys[j] = k;
        vals[j] = v;
    }
}

/// Distinct columns of the row of A given by `acols` times B, whose
/// products number at most [`SHORT_ROW`].
pub(crate) fn count<T: Scalar>(acols: &[u32], b: &CsrView<'_, T>) -> usize {
    let mut keys = [0u32; SHORT_ROW];
    let mut n = 0;
    for &k in acols {
        for &j in b.row(k as usize).0 {
            keys[n] = j;
            n += 1;
        }
    }
    let keys = &mut keys[..n];
    insertion_sort(keys, &mut [(); SHORT_ROW][..n]);
    keys.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(n > 0)
}

/// Writes the sorted row `A(i,:) ⊕.⊗ B` (at most [`SHORT_ROW`] products)
/// into the front of `cols` / `vals`; returns its length.
pub(crate) fn fill<T: Scalar, O: Ops<T>>(
    ops: O,
    acols: &[u32],
    avals: &[T],
    b: &CsrView<'_, T>,
    cols: &mut [MaybeUninit<u32>],
    vals: &mut [MaybeUninit<T>],
) -> usize {
    let mut keys = [0u32; SHORT_ROW];
    let mut prods = [T::ZERO; SHORT_ROW];
    let mut n = 0;
    for (&k, &av) in acols.iter().zip(avals) {
        let (bc, bv) = b.row(k as usize);
        for (&j, &x) in bc.iter().zip(bv) {
            keys[n] = j;
            prods[n] = ops.times(av, x);
            n += 1;
        }
    }
    let (keys, prods) = (&mut keys[..n], &mut prods[..n]);
    insertion_sort(keys, prods);
    let mut p = 0;
    let mut i = 0;
    while i < n {
        let (j, mut sum) = (keys[i], prods[i]);
        i += 1;
        while i < n && keys[i] == j {
            sum = ops.plus(sum, prods[i]);
            i += 1;
        }
        cols[p].write(j);
        vals[p].write(sum);
        p += 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulator::PlusTimes;

    #[test]
    fn short_rows_equal_the_reference_row_by_row() {
        // Rows of 0 to 32 products with repeats, unsorted rows of B.
        let b = spgemm_core::CsrMatrix::new(
            4,
            6,
            vec![0, 3, 5, 5, 8],
            vec![5, 0, 2, 2, 1, 4, 0, 5],
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        )
        .unwrap();
        for acols in [
            &[][..],
            &[2][..],
            &[0, 1][..],
            &[3, 0, 1, 3][..],
            &[0; 10][..],
        ] {
            let avals: Vec<f64> = (0..acols.len()).map(|v| v as f64 + 0.5).collect();
            let a = spgemm_core::CsrMatrix::new(
                1,
                4,
                vec![0, acols.len()],
                acols.to_vec(),
                avals.clone(),
            )
            .unwrap();
            let want = spgemm_core::reference::multiply(&a, &b).unwrap();
            let bv = b.view();
            assert_eq!(count(acols, &bv), want.nnz(), "{acols:?}");
            let (mut c, mut v) = (
                vec![MaybeUninit::uninit(); SHORT_ROW],
                vec![MaybeUninit::uninit(); SHORT_ROW],
            );
            let n = fill(PlusTimes, acols, &avals, &bv, &mut c, &mut v);
            // SAFETY: `fill` wrote the first `n` of each.
            let (c, v): (Vec<u32>, Vec<f64>) = unsafe {
                (0..n)
                    .map(|p| (c[p].assume_init(), v[p].assume_init()))
                    .unzip()
            };
            assert_eq!(c, want.col_indices(), "{acols:?}");
            assert_eq!(v, want.values(), "{acols:?}");
        }
    }
}
