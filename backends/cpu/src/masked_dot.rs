//! `C⟨M⟩ = A ⊕.⊗ B` by dot products, for structural masks far sparser
//! than the product: each entry `(i, j)` of M is the sparse dot product
//! of A's row `i` and Bᵀ's row `j`, their sorted columns merged, so that
//! only M's entries are ever computed (SuiteSparse:GraphBLAS's masked
//! "dot3" method: Davis, "Algorithm 1000", ACM TOMS 45(4), 2019, §5;
//! Milaković et al., "Parallel algorithms for masked sparse matrix-matrix
//! products", ICPP 2022, found the mask's density decisive). Chosen over
//! the row-wise product when the dot products' cost, plus forming Bᵀ, is
//! below the row-wise products ([`worth_it`]); a dot product merges the two
//! rows, or searches the longer for the shorter's columns when that is
//! cheaper ([`dot_cost`]).

use crate::intersect;
use crate::prefetch;
use crate::rows;
use crate::semiring::{concatenate, Piece};
use rayon::prelude::*;
use spgemm_core::semiring::{Mask, ProductSpec, Semiring};
use spgemm_core::{CsrMatrix, CsrView, Result, Scalar};

/// Chunks per thread.
const CHUNKS_PER_THREAD: usize = 8;

/// Where the dot products find B's columns.
#[derive(Clone, Copy)]
pub(crate) enum Columns<'b, T> {
    /// B itself (`K×N`): its transpose is formed first, which costs about
    /// B's entries.
    Of(CsrView<'b, T>),
    /// Bᵀ (`N×K`) as the caller gave it (`A ⊕.⊗ Bᵀ` asked for), read as
    /// it is.
    Given(CsrView<'b, T>),
}

impl<T: Scalar> Columns<'_, T> {
    /// N, C's columns.
    fn n(&self) -> usize {
        match self {
            Columns::Of(b) => b.ncols(),
            Columns::Given(bt) => bt.nrows(),
        }
    }
}

/// How many entries each of `m`'s columns holds: blocks of its entries
/// counted by one task each into counts of their own (no atomics), then
/// summed by columns. Blocks cost a count per column each: at most about
/// four columns' worth of entries per block, as the transpose does.
pub(crate) fn column_counts<T: Scalar>(m: CsrView<'_, T>) -> Vec<u64> {
    let (cols, ncols) = (m.col_indices(), m.ncols());
    let per_block = u32::MAX as usize;
    let blocks = rayon::current_num_threads()
        .min(1 + 4 * cols.len() / (ncols + 1))
        .max(cols.len().div_ceil(per_block))
        .max(1);
    let size = cols.len().div_ceil(blocks).max(1);
    let counts: Vec<Vec<u32>> = cols
        .par_chunks(size)
        .map(|block| {
            let mut count = vec![0u32; ncols];
            for &j in block {
                count[j as usize] += 1;
            }
            count
        })
        .collect();
    (0..ncols)
        .into_par_iter()
        .with_min_len(4096)
        .map(|j| counts.iter().map(|c| u64::from(c[j])).sum())
        .collect()
}

/// The dot products' cost for each row of `C⟨M⟩` (`Σ_j` [`dot_cost`] of
/// A's row `i` and Bᵀ's row `j` over M's row `i`, for `ring`), when they
/// cost less in all, with forming Bᵀ where it is not given, than the
/// row-wise products; `None` otherwise, or when A's or Bᵀ's rows are not
/// sorted without repeats (the merges and searches need them so). The
/// products are known to be at least `at_least`; `products` counts them
/// exactly, called only when the bound does not decide.
pub(crate) fn worth_it<T: Scalar>(
    a: CsrView<'_, T>,
    b: Columns<'_, T>,
    mask: &Mask<'_>,
    ring: Semiring,
    at_least: u64,
    products: impl FnOnce() -> u64,
) -> Option<Vec<u64>> {
    if mask.complement() {
        return None;
    }
    let (mut known, mut products) = (at_least, Some(products));
    let mut below = |cost: u64| {
        if cost >= known {
            if let Some(count) = products.take() {
                known = count();
            }
        }
        cost < known
    };
    if !below(mask.nnz() as u64) {
        return None;
    }
    let counted = !ring.reads_values();
    let counts = match b {
        Columns::Of(b) => column_counts(b),
        Columns::Given(_) => Vec::new(),
    };
    let column_length = |j: u32| match b {
        Columns::Of(_) => counts[j as usize],
        Columns::Given(bt) => bt.row_nnz(j as usize) as u64,
    };
    let merges: Vec<u64> = (0..a.nrows())
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let arow = a.row(i).0.len() as u64;
            mask.row(i)
                .iter()
                .map(|&j| dot_cost(arow, column_length(j), counted))
                .sum()
        })
        .collect();
    let transpose = match b {
        Columns::Of(b) => b.nnz() as u64,
        Columns::Given(_) => 0,
    };
    let total: u64 = merges.par_iter().with_min_len(1 << 14).sum::<u64>() + transpose;
    let sorted = || {
        a.check_sorted().is_ok()
            && match b {
                Columns::Of(b) => b.check_sorted().is_ok(),
                // A·Aᵀ (triangle counting): A's rows, checked once.
                Columns::Given(bt) => a.same_arrays(&bt) || bt.check_sorted().is_ok(),
            }
    };
    (below(total) && sorted()).then_some(merges)
}

/// The steps of merging sorted rows of `x` and `y` entries: `x + y`, or
/// a third of that when only their common columns are counted (`counted`:
/// semirings that read no values), which compares blocks of four against
/// four ([`intersect::common`]). Measured on two cores: triangle counting
/// on an Erdős–Rényi graph of 2¹⁸ vertices (8 columns a row of L) took 212
/// ms by counted merges against 233 ms row by row, where the merges' steps
/// are twice the products. Merges that find positions to multiply
/// ([`intersect::each_common`]) gained less: `C⟨A⟩ = A·A` of that graph
/// took 147 ms by dot products (185 ms merged a column at a time) against
/// 140 ms row by row, and R-MAT 16 624 (829) against 519 ms.
fn merge_cost(x: u64, y: u64, counted: bool) -> u64 {
    if counted {
        (x + y).div_ceil(3)
    } else {
        x + y
    }
}

/// The steps of searching the longer of rows of `x` and `y` entries for
/// each entry of the shorter: `min · (1 + log₂ max)` (a hub's row met by
/// short rows in power-law graphs).
fn search_cost(x: u64, y: u64) -> u64 {
    let (short, long) = (x.min(y), x.max(y));
    short * (1 + u64::from((long + 1).ilog2()))
}

/// The steps of one sparse dot product of sorted rows of `x` and `y`
/// entries: the cheaper of a merge and a search ([`merge_cost`],
/// [`search_cost`]).
fn dot_cost(x: u64, y: u64, counted: bool) -> u64 {
    merge_cost(x, y, counted).min(search_cost(x, y))
}

/// `Σ_k a_k ⊗ b_k` over the columns `k` in both sorted rows (`None` when
/// none is), in increasing `k` whichever way it is found ([`dot_cost`]),
/// so that the sum does not depend on the way.
fn dot<T: Scalar>(
    ring: Semiring,
    (acols, avals): (&[u32], &[T]),
    (bcols, bvals): (&[u32], &[T]),
) -> Option<T> {
    let (x, y) = (acols.len() as u64, bcols.len() as u64);
    let counted = !ring.reads_values();
    if counted && merge_cost(x, y, true) <= search_cost(x, y) {
        // Only the common columns count: four at a time.
        let n = intersect::common(acols, bcols);
        return (n > 0).then(|| match ring {
            Semiring::PlusPair => T::from_f64(n as f64),
            _ => T::ONE,
        });
    }
    let mut sum: Option<T> = None;
    let mut add = |x: T, y: T| {
        let v = ring.times(x, y);
        sum = Some(sum.map_or(v, |s| ring.plus(s, v)));
    };
    if search_cost(x, y) < merge_cost(x, y, counted) {
        // Each column of the shorter row searched in the rest of the
        // longer (both sorted: each search starts where the last ended).
        let a_short = x <= y;
        let (scols, lcols) = if a_short {
            (acols, bcols)
        } else {
            (bcols, acols)
        };
        let mut from = 0;
        for (p, &k) in scols.iter().enumerate() {
            from += lcols[from..].partition_point(|&c| c < k);
            if from == lcols.len() {
                break;
            }
            if lcols[from] == k {
                if a_short {
                    add(avals[p], bvals[from]);
                } else {
                    add(avals[from], bvals[p]);
                }
            }
        }
        return sum;
    }
    intersect::each_common(acols, bcols, |p, q| add(avals[p], bvals[q]));
    sum
}

/// `C⟨M⟩ = A ⊕.⊗ B` pruned as `spec` says, by dot products; `merges` from
/// [`worth_it`].
pub(crate) fn multiply<T: Scalar>(
    a: CsrView<'_, T>,
    b: Columns<'_, T>,
    spec: &ProductSpec<'_, T>,
    mask: &Mask<'_>,
    merges: &[u64],
) -> Result<CsrMatrix<T>> {
    let formed;
    let bt = match b {
        Columns::Of(b) => {
            formed = b.transpose()?;
            formed.view()
        }
        Columns::Given(bt) => bt,
    };
    let chunks = rows::split_by_work(merges, rayon::current_num_threads() * CHUNKS_PER_THREAD);
    // The rows of Bᵀ that the mask's entries select are fetched ahead when
    // they lie far apart (random graphs), as the row-wise product does:
    // triangles of an Erdős–Rényi graph of 2¹⁸ vertices on two cores in
    // 83–89 ms against 114–116 ms without; R-MAT 16's unchanged.
    let ahead = prefetch::scattered(&mask.structure());
    let pieces: Vec<Piece<T>> = chunks
        .par_iter()
        .map(|r| chunk(a, bt, spec, mask, r.clone(), ahead))
        .collect();
    concatenate(a.nrows(), b.n(), pieces)
}

/// The rows `rows` of C into a piece (`ahead`: rows of Bᵀ prefetched).
fn chunk<T: Scalar>(
    a: CsrView<'_, T>,
    bt: CsrView<'_, T>,
    spec: &ProductSpec<'_, T>,
    mask: &Mask<'_>,
    rows: std::ops::Range<usize>,
    ahead: bool,
) -> Piece<T> {
    let ring = spec.semiring;
    let mut piece = Piece::with_rows(rows.len());
    let (mut out, mut wanted) = (Vec::new(), Vec::new());
    let structure = mask.structure();
    let (moff, mcol) = (structure.row_offsets, structure.col_indices);
    let end = moff[rows.end];
    for i in rows {
        if ahead {
            prefetch::selected_ahead(mcol, &bt, moff[i]..moff[i + 1], end, ring.reads_values());
        }
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
            if let Some(s) = dot(ring, (acols, avals), bt.row(j as usize)) {
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

    /// [`worth_it`] with the products known exactly.
    fn rule<T: Scalar>(
        a: CsrView<'_, T>,
        b: Columns<'_, T>,
        mask: &Mask<'_>,
        ring: Semiring,
        products: u64,
    ) -> Option<Vec<u64>> {
        worth_it(a, b, mask, ring, products, || products)
    }

    #[test]
    fn sparse_masks_take_dot_products_equal_to_the_reference() {
        let a = generate::erdos_renyi::<f64>(400, 30, 1).unwrap();
        let b = generate::erdos_renyi::<f64>(400, 30, 2).unwrap();
        // One mask entry a row.
        let cols: Vec<u32> = (0..400u32).map(|i| (i * 7919) % 400).collect();
        let m = CsrMatrix::new(400, 400, (0..=400).collect(), cols, vec![1.0; 400]).unwrap();
        let mask = Mask::of(m.view(), false);
        let total = 400 * 30 * 30;
        assert!(rule(
            a.view(),
            Columns::Of(b.view()),
            &mask,
            Semiring::PlusTimes,
            total
        )
        .is_some());
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
    fn a_given_transpose_is_read_as_it_lies() {
        // Bᵀ given: the dot products cost no transpose, so a mask whose
        // merges alone fit under the products takes them where forming Bᵀ
        // would not; C as the reference's from B.
        let a = generate::erdos_renyi::<f64>(500, 6, 11).unwrap();
        let bt = generate::erdos_renyi::<f64>(500, 6, 12).unwrap();
        let b = bt.transpose().unwrap();
        let mask = Mask::of(a.view(), false);
        let cost: u64 = (0..500)
            .map(|i| {
                let n = a.row(i).0.len() as u64;
                mask.row(i)
                    .iter()
                    .map(|&j| dot_cost(n, bt.row(j as usize).0.len() as u64, true))
                    .sum::<u64>()
            })
            .sum();
        let total = cost + 1;
        let columns = Columns::Given(bt.view());
        let merges = rule(a.view(), columns, &mask, Semiring::PlusPair, total).unwrap();
        assert!(rule(
            a.view(),
            Columns::Of(b.view()),
            &mask,
            Semiring::PlusPair,
            total
        )
        .is_none());
        for ring in Semiring::ALL {
            let spec = ProductSpec::new().semiring(ring).mask(a.view(), false);
            let want = spgemm_core::reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
            assert_eq!(
                multiply(a.view(), columns, &spec, &mask, &merges).unwrap(),
                want,
                "{ring}"
            );
        }
    }

    #[test]
    fn products_are_counted_only_when_their_bound_does_not_decide() {
        let a = generate::erdos_renyi::<f64>(300, 5, 21).unwrap();
        let mask = Mask::of(a.view(), false);
        let columns = Columns::Given(a.view());
        let ring = Semiring::PlusPair;
        let counted = std::cell::Cell::new(0);
        let exact = |p: u64| {
            let counted = &counted;
            move || {
                counted.set(counted.get() + 1);
                p
            }
        };
        // A bound above every cost decides alone.
        assert!(worth_it(a.view(), columns, &mask, ring, u64::MAX, exact(0)).is_some());
        assert_eq!(counted.get(), 0);
        // A bound of 0: the exact count decides, either way.
        assert!(worth_it(a.view(), columns, &mask, ring, 0, exact(u64::MAX)).is_some());
        assert!(worth_it(a.view(), columns, &mask, ring, 0, exact(1)).is_none());
        assert_eq!(counted.get(), 2);
    }

    #[test]
    fn searches_of_long_rows_equal_merges() {
        // A hub row of 5,000 columns against short rows, either way round.
        let hub: Vec<u32> = (0..5000u32).map(|k| 3 * k).collect();
        let hub_vals: Vec<f64> = hub.iter().map(|&k| 1.0 + f64::from(k) / 7.0).collect();
        let short: Vec<u32> = vec![0, 2, 3, 299, 300, 14_997, 14_999];
        let short_vals: Vec<f64> = (0..short.len()).map(|p| p as f64 - 2.5).collect();
        assert!(dot_cost(7, 5000, false) < 5007);
        assert!(search_cost(7, 5000) < merge_cost(7, 5000, true));
        let merged: f64 = [(0, 0), (3, 2), (300, 4), (14_997, 5)]
            .iter()
            .map(|&(k, p)| hub_vals[k as usize / 3] * short_vals[p])
            .sum();
        for ring in Semiring::ALL {
            let want = [(0usize, 0usize), (1, 2), (100, 4), (4999, 5)]
                .iter()
                .map(|&(h, p)| ring.times(hub_vals[h], short_vals[p]))
                .reduce(|s, v| ring.plus(s, v));
            let one = dot(
                ring,
                (&short[..], &short_vals[..]),
                (&hub[..], &hub_vals[..]),
            );
            let other = dot(
                ring,
                (&hub[..], &hub_vals[..]),
                (&short[..], &short_vals[..]),
            );
            assert_eq!(one, want, "{ring}: short row of A");
            assert_eq!(other, want, "{ring}: short row of B");
        }
        let plus = dot(
            Semiring::PlusTimes,
            (&short[..], &short_vals[..]),
            (&hub[..], &hub_vals[..]),
        );
        assert!((plus.unwrap() - merged).abs() < 1e-9);
        // Nothing in common.
        assert_eq!(
            dot(
                Semiring::PlusTimes,
                (&[1u32][..], &[1.0][..]),
                (&hub[..], &hub_vals[..])
            ),
            None
        );
        // R-MAT hubs under the mask of the graph itself: exactly the reference.
        let g = generate::rmat::<f64>(10, 16, 5).unwrap();
        let mask = Mask::of(g.view(), false);
        let spec = ProductSpec::new().mask(g.view(), false);
        let total = spgemm_core::reference::multiply(g.view(), g.view())
            .unwrap()
            .nnz() as u64
            * 100;
        assert!(rule(
            g.view(),
            Columns::Of(g.view()),
            &mask,
            Semiring::PlusTimes,
            total
        )
        .is_some());
        let want = spgemm_core::reference::multiply_spec(g.view(), g.view(), &spec).unwrap();
        assert_eq!(
            multiply(
                g.view(),
                Columns::Of(g.view()),
                &spec,
                &mask,
                &rule(
                    g.view(),
                    Columns::Of(g.view()),
                    &mask,
                    Semiring::PlusTimes,
                    total
                )
                .unwrap()
            )
            .unwrap(),
            want
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
        assert!(rule(
            a.view(),
            Columns::Of(a.view()),
            &mask,
            Semiring::PlusTimes,
            100 * 400
        )
        .is_some());
        assert_eq!(
            crate::CpuBackend::new()
                .multiply_spec(&a, &a, &spec)
                .unwrap(),
            want
        );
        // A mask as dense as the products, or complemented: row-wise.
        assert!(rule(
            a.view(),
            Columns::Of(a.view()),
            &Mask::of(m.view(), true),
            Semiring::PlusTimes,
            100 * 400
        )
        .is_none());
        assert!(rule(
            a.view(),
            Columns::Of(a.view()),
            &mask,
            Semiring::PlusTimes,
            300
        )
        .is_none());
        // B with a repeated column in a row: row-wise.
        let rep = CsrMatrix::new(2, 2, vec![0, 2, 2], vec![1, 1], vec![1.0, 2.0]).unwrap();
        let one = CsrMatrix::new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, 1.0]).unwrap();
        assert!(rule(
            one.view(),
            Columns::Of(rep.view()),
            &Mask::of(one.view(), false),
            Semiring::PlusTimes,
            1000
        )
        .is_none());
    }
}
