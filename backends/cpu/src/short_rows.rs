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
    each_product(ops, acols, avals, b, |j, v| {
        keys[n] = j;
        prods[n] = v;
        n += 1;
    });
    let (keys, prods) = (&mut keys[..n], &mut prods[..n]);
    insertion_sort(keys, prods);
    write_runs(ops, n, |i| (keys[i], prods[i]), cols, vals)
}

/// Calls `f(j, a_ik ⊗ b_kj)` for each product of the row of A given by
/// `acols` / `avals` with B, in the accumulators' order: A's entries in
/// turn, each row of B in its order.
#[inline(always)]
fn each_product<T: Scalar, O: Ops<T>>(
    ops: O,
    acols: &[u32],
    avals: &[T],
    b: &CsrView<'_, T>,
    mut f: impl FnMut(u32, T),
) {
    for (&k, &av) in acols.iter().zip(avals) {
        let (bc, bv) = b.row(k as usize);
        for (&j, &x) in bc.iter().zip(bv) {
            f(j, ops.times(av, x));
        }
    }
}

/// Writes `n` products given in column order by `entry(i)` (column,
/// product) to the front of `cols` / `vals`, each run of one column
/// summed in that order; returns the row's length.
#[inline(always)]
fn write_runs<T: Scalar, O: Ops<T>>(
    ops: O,
    n: usize,
    entry: impl Fn(usize) -> (u32, T),
    cols: &mut [MaybeUninit<u32>],
    vals: &mut [MaybeUninit<T>],
) -> usize {
    let (mut p, mut i) = (0, 0);
    while i < n {
        let (j, mut sum) = entry(i);
        i += 1;
        while i < n {
            let (k, v) = entry(i);
            if k != j {
                break;
            }
            sum = ops.plus(sum, v);
            i += 1;
        }
        cols[p].write(j);
        vals[p].write(sum);
        p += 1;
    }
    p
}

/// Rows of up to a thousand products by the same method with buffers on
/// the heap: each product's column and position packed into one `u64`
/// (column high, position low), the keys sorted as plain integers (ties
/// kept in the products' order, so sums are added in the accumulators'
/// order) and merged. Used where C is wide and its columns scattered and
/// few products share a column (random graphs: compression near 1), in
/// place of a hash table whose probes and sorted copy cost more.
pub(crate) struct Sorting<T> {
    keys: Vec<u64>,
    prods: Vec<T>,
}

impl<T: Scalar> Sorting<T> {
    pub(crate) fn new() -> Self {
        Self {
            keys: Vec::new(),
            prods: Vec::new(),
        }
    }

    /// As [`fill`], for rows of fewer than 2³² products.
    pub(crate) fn fill<O: Ops<T>>(
        &mut self,
        ops: O,
        acols: &[u32],
        avals: &[T],
        b: &CsrView<'_, T>,
        cols: &mut [MaybeUninit<u32>],
        vals: &mut [MaybeUninit<T>],
    ) -> usize {
        let (keys, prods) = (&mut self.keys, &mut self.prods);
        keys.clear();
        prods.clear();
        each_product(ops, acols, avals, b, |j, v| {
            keys.push((u64::from(j) << 32) | prods.len() as u64);
            prods.push(v);
        });
        keys.sort_unstable();
        let entry = |i: usize| ((keys[i] >> 32) as u32, prods[keys[i] as u32 as usize]);
        write_runs(ops, keys.len(), entry, cols, vals)
    }
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
            // Magnitudes far apart: sums in another order round otherwise.
            let avals: Vec<f64> = (0..acols.len())
                .map(|v| (v as f64 + 0.1) * 1e8f64.powi(v as i32 % 3))
                .collect();
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
            // The heap-buffered sort adds a column's products in the same
            // order: bit for bit the same row.
            let (mut c2, mut v2) = (
                vec![MaybeUninit::uninit(); SHORT_ROW],
                vec![MaybeUninit::uninit(); SHORT_ROW],
            );
            let n2 = Sorting::new().fill(PlusTimes, acols, &avals, &bv, &mut c2, &mut v2);
            assert_eq!(n2, n, "{acols:?}");
            for p in 0..n {
                // SAFETY: both fills wrote their first `n` entries.
                let (j, x) = unsafe { (c2[p].assume_init(), v2[p].assume_init()) };
                assert_eq!((j, x.to_bits()), (c[p], v[p].to_bits()), "{acols:?}");
            }
        }
    }
}
