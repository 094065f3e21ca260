//! `C⟨M⟩ = A ⊕.⊗ B` by dot products, for structural masks far sparser
//! than the product: each entry `(i, j)` of M is the sparse dot product
//! of A's row `i` and Bᵀ's row `j`, their sorted columns merged, so that
//! only M's entries are ever computed (SuiteSparse:GraphBLAS's masked
//! "dot3" method: Davis, "Algorithm 1000", ACM TOMS 45(4), 2019, §5;
//! Milaković et al., "Parallel algorithms for masked sparse matrix-matrix
//! products", ICPP 2022, found the mask's density decisive). Chosen over
//! the row-wise product when the merges' length, plus forming Bᵀ, is below
//! the row-wise products ([`worth_it`]).

use crate::rows;
use crate::semiring::{concatenate, Piece};
use rayon::prelude::*;
use spgemm_core::semiring::{Mask, ProductSpec};
use spgemm_core::{CsrMatrix, CsrView, Result, Scalar};

/// Chunks per thread.
const CHUNKS_PER_THREAD: usize = 8;

/// The merges' length for each row of `C⟨M⟩` (`Σ_j len A(i,:) + len
/// Bᵀ(j,:)` over M's row `i`), when they are shorter in all, with forming
/// Bᵀ, than the row-wise products `total_products`; `None` otherwise, or
/// when A's or B's rows are not sorted without repeats (the merges need
/// them so).
pub(crate) fn worth_it<T: Scalar>(
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    mask: &Mask<'_>,
    total_products: u64,
) -> Option<Vec<u64>> {
    if mask.complement() || (mask.nnz() as u64) >= total_products {
        return None;
    }
    let mut column_lengths = vec![0u64; b.ncols()];
    for &j in b.col_indices() {
        column_lengths[j as usize] += 1;
    }
    let merges: Vec<u64> = (0..a.nrows())
        .into_par_iter()
        .map(|i| {
            let arow = a.row(i).0.len() as u64;
            mask.row(i)
                .iter()
                .map(|&j| arow + column_lengths[j as usize])
                .sum()
        })
        .collect();
    let total: u64 = merges.par_iter().sum::<u64>() + b.nnz() as u64;
    let sorted = || a.check_sorted().is_ok() && b.check_sorted().is_ok();
    (total < total_products && sorted()).then_some(merges)
}

/// `C⟨M⟩ = A ⊕.⊗ B` pruned as `spec` says, by dot products; `merges` from
/// [`worth_it`].
pub(crate) fn multiply<T: Scalar>(
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    spec: &ProductSpec<'_, T>,
    mask: &Mask<'_>,
    merges: &[u64],
) -> Result<CsrMatrix<T>> {
    let bt = b.transpose()?;
    let bt = bt.view();
    let chunks = rows::split_by_work(merges, rayon::current_num_threads() * CHUNKS_PER_THREAD);
    let pieces: Vec<Piece<T>> = chunks
        .par_iter()
        .map(|r| chunk(a, bt, spec, mask, r.clone()))
        .collect();
    concatenate(a.nrows(), b.ncols(), pieces)
}

/// The rows `rows` of C into a piece.
fn chunk<T: Scalar>(
    a: CsrView<'_, T>,
    bt: CsrView<'_, T>,
    spec: &ProductSpec<'_, T>,
    mask: &Mask<'_>,
    rows: std::ops::Range<usize>,
) -> Piece<T> {
    let ring = spec.semiring;
    let mut piece = Piece::with_rows(rows.len());
    let (mut out, mut wanted) = (Vec::new(), Vec::new());
    for i in rows {
        out.clear();
        let (acols, avals) = a.row(i);
        let m = mask.row(i);
        if acols.is_empty() || m.is_empty() {
            piece.push_row(&mut out);
            continue;
        }
        let columns = if m.windows(2).all(|w| w[0] < w[1]) {
            m
        } else {
            wanted.clear();
            wanted.extend_from_slice(m);
            wanted.sort_unstable();
            wanted.dedup();
            &wanted[..]
        };
        for &j in columns {
            let (bcols, bvals) = bt.row(j as usize);
            let (mut p, mut q) = (0, 0);
            let mut sum: Option<T> = None;
            while p < acols.len() && q < bcols.len() {
                match acols[p].cmp(&bcols[q]) {
                    std::cmp::Ordering::Less => p += 1,
                    std::cmp::Ordering::Greater => q += 1,
                    std::cmp::Ordering::Equal => {
                        let v = ring.times(avals[p], bvals[q]);
                        sum = Some(sum.map_or(v, |s| ring.plus(s, v)));
                        p += 1;
                        q += 1;
                    }
                }
            }
            if let Some(s) = sum {
                out.push((j, s));
            }
        }
        spec.prune.row(&mut out);
        piece.push_row(&mut out);
    }
    piece
}

#[cfg(test)]
mod tests {
    use super::*;
    use spgemm_core::generate;
    use spgemm_core::semiring::Semiring;

    #[test]
    fn sparse_masks_take_dot_products_equal_to_the_reference() {
        let a = generate::erdos_renyi::<f64>(400, 30, 1).unwrap();
        let b = generate::erdos_renyi::<f64>(400, 30, 2).unwrap();
        // One mask entry a row.
        let cols: Vec<u32> = (0..400u32).map(|i| (i * 7919) % 400).collect();
        let m = CsrMatrix::new(400, 400, (0..=400).collect(), cols, vec![1.0; 400]).unwrap();
        let mask = Mask::of(m.view(), false);
        let total = 400 * 30 * 30;
        assert!(worth_it(a.view(), b.view(), &mask, total).is_some());
        for ring in Semiring::ALL {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
            let want = spgemm_core::reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
            let got = crate::CpuBackend::new()
                .multiply_spec(&a, &b, &spec)
                .unwrap();
            assert_eq!(got, want, "{ring}");
        }
        let spec = ProductSpec::new().mask(m.view(), false).keep(0);
        assert_eq!(
            crate::CpuBackend::new()
                .multiply_spec(&a, &b, &spec)
                .unwrap()
                .nnz(),
            0
        );
    }

    #[test]
    fn unsorted_mask_rows_and_dense_masks_and_repeats() {
        let a = generate::erdos_renyi::<f64>(100, 20, 3).unwrap();
        // Mask rows unsorted and with a repeated column.
        let m = CsrMatrix::new(
            100,
            100,
            (0..=100).map(|i| 3 * i).collect(),
            (0..300u32)
                .map(|k| {
                    if k % 3 == 2 {
                        (k / 3 * 13) % 100
                    } else {
                        (k * 31) % 100
                    }
                })
                .collect(),
            vec![1.0; 300],
        )
        .unwrap();
        let mask = Mask::of(m.view(), false);
        let spec = ProductSpec::new()
            .semiring(Semiring::MinPlus)
            .mask(m.view(), false);
        let want = spgemm_core::reference::multiply_spec(a.view(), a.view(), &spec).unwrap();
        assert!(worth_it(a.view(), a.view(), &mask, 100 * 400).is_some());
        assert_eq!(
            crate::CpuBackend::new()
                .multiply_spec(&a, &a, &spec)
                .unwrap(),
            want
        );
        // A mask as dense as the products, or complemented: row-wise.
        assert!(worth_it(a.view(), a.view(), &Mask::of(m.view(), true), 100 * 400).is_none());
        assert!(worth_it(a.view(), a.view(), &mask, 300).is_none());
        // B with a repeated column in a row: row-wise.
        let rep = CsrMatrix::new(2, 2, vec![0, 2, 2], vec![1, 1], vec![1.0, 2.0]).unwrap();
        let one = CsrMatrix::new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, 1.0]).unwrap();
        assert!(worth_it(one.view(), rep.view(), &Mask::of(one.view(), false), 1000).is_none());
    }
}
