//! Products beyond the plain one on the CPU: any semiring of
//! [`spgemm_core::semiring`], a structural mask or its complement, and
//! pruning, in one pass over A's rows.
//!
//! Row-wise (Gustavson, "Two fast algorithms for sparse matrices:
//! multiplication and permuted transposition", ACM TOMS 4(3), 1978) with
//! the mask applied while accumulating, as SuiteSparse:GraphBLAS's
//! saxpy-based masked products do (Davis, "Algorithm 1000", ACM TOMS 45(4),
//! 2019, §5): a row's mask columns are marked in the accumulator first,
//! and a product whose column the mask excludes is never accumulated. A
//! row with an empty structural mask is not visited at all. Each chunk of
//! rows writes its rows to buffers of its own; C is their concatenation,
//! so no separate symbolic pass reads A and B twice.

use crate::masked_dot;
use crate::per_thread::PerThread;
use crate::prefetch;
use crate::rows;
use rayon::prelude::*;
use spgemm_core::error::try_with_capacity;
use spgemm_core::semiring::{Mask, ProductSpec, Semiring};
use spgemm_core::{CsrMatrix, CsrView, Result, Scalar};

/// C at most this wide is accumulated in a slot per column on every row
/// (the slots stay in the core's cache).
const NARROW: usize = 1 << 15;
/// In a wider C (up to the dense cut-off), rows of at least this many
/// products use a slot per column, shorter ones a hash table that stays
/// in the core's cache (as the plain product's mixed accumulator).
const HASH_BELOW: usize = 1024;
/// A row's mask is searched (binary search per product) rather than
/// marked when it is sorted and longer than this many times the row's
/// products.
const SEARCHED_MASK: u64 = 8;
/// Chunks per thread: enough to even out the work the chunks hold.
const CHUNKS_PER_THREAD: usize = 8;

/// One thread's accumulator for one row at a time: a slot per column of C
/// (dense) or an open-addressing hash table. A slot's stamp says whether
/// it is empty this row (below `row`), marked by the mask (`row`), or
/// holds a value (`row + 1`), so nothing is cleared between rows.
struct Table<T> {
    hashed: bool,
    stamps: Vec<u32>,
    keys: Vec<u32>,
    values: Vec<T>,
    /// Slots given a value this row, in order of arrival.
    filled: Vec<usize>,
    row: u32,
    /// Slots in use this row minus one (hash tables only).
    slot_mask: usize,
}

impl<T: Scalar> Table<T> {
    fn new(ncols: usize, hashed: bool) -> Self {
        let n = if hashed { 0 } else { ncols };
        Table {
            hashed,
            stamps: vec![0; n],
            keys: Vec::new(),
            values: vec![T::ZERO; n],
            filled: Vec::new(),
            row: 0,
            slot_mask: 0,
        }
    }

    /// Starts a row of at most `bound` distinct columns.
    fn begin(&mut self, bound: usize) {
        self.filled.clear();
        if self.row >= u32::MAX - 4 {
            self.stamps.fill(0);
            self.row = 0;
        }
        self.row += 2;
        if self.hashed {
            let slots = (2 * bound).next_power_of_two().max(16);
            if self.stamps.len() < slots {
                self.stamps = vec![0; slots];
                self.keys = vec![0; slots];
                self.values = vec![T::ZERO; slots];
            }
            self.slot_mask = slots - 1;
        }
    }

    /// The slot of column `j`, and whether it is in use this row; a slot
    /// not in use is where `j` goes (its key set here).
    #[inline(always)]
    fn slot(&mut self, j: u32) -> (usize, bool) {
        if !self.hashed {
            return (j as usize, self.stamps[j as usize] >= self.row);
        }
        let mut h =
            (u64::from(j).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.slot_mask;
        loop {
            if self.stamps[h] < self.row {
                self.keys[h] = j;
                return (h, false);
            }
            if self.keys[h] == j {
                return (h, true);
            }
            h = (h + 1) & self.slot_mask;
        }
    }

    /// Marks column `j` as in the mask.
    #[inline(always)]
    fn mark(&mut self, j: u32) {
        let (s, used) = self.slot(j);
        if !used {
            self.stamps[s] = self.row;
        }
    }

    /// Adds `v` at column `j`: with `masked`, only to a marked column
    /// (`⟨M⟩`); otherwise to any column not marked (`⟨¬M⟩`, or no mask).
    #[inline(always)]
    fn add(&mut self, j: u32, v: T, ring: Semiring, masked: bool) {
        let (s, used) = self.slot(j);
        let stamp = self.stamps[s];
        if !used {
            if masked {
                return;
            }
        } else if stamp == self.row + 1 {
            self.values[s] = ring.plus(self.values[s], v);
            return;
        } else if !masked {
            return; // marked: outside a complemented mask
        }
        self.stamps[s] = self.row + 1;
        self.values[s] = v;
        self.filled.push(s);
    }

    /// The row's entries, sorted by column: a dense row whose columns
    /// span less than four times their number is read off its span in
    /// order, any other sorted.
    fn drain(&mut self, out: &mut Vec<(u32, T)>) {
        out.clear();
        let n = self.filled.len();
        if !self.hashed && n > 0 {
            let (lo, hi) = self
                .filled
                .iter()
                .fold((usize::MAX, 0), |(l, h), &j| (l.min(j), h.max(j)));
            if hi - lo < 4 * n {
                let filled = self.row + 1;
                out.extend(
                    (lo..=hi)
                        .filter(|&j| self.stamps[j] == filled)
                        .map(|j| (j as u32, self.values[j])),
                );
                return;
            }
            self.filled.sort_unstable();
            out.extend(self.filled.iter().map(|&j| (j as u32, self.values[j])));
            return;
        }
        for &s in &self.filled {
            out.push((self.keys[s], self.values[s]));
        }
        out.sort_unstable_by_key(|e| e.0);
    }
}

/// A thread's accumulators: a slot per column (made on its first row that
/// needs it) and a hash table.
struct Tables<T> {
    dense: Option<Table<T>>,
    hash: Table<T>,
}

/// One chunk's rows of C: their lengths, columns and values.
pub(crate) struct Piece<T> {
    lens: Vec<usize>,
    cols: Vec<u32>,
    values: Vec<T>,
}

impl<T: Scalar> Piece<T> {
    /// An empty piece for `rows` rows.
    pub(crate) fn with_rows(rows: usize) -> Self {
        Piece {
            lens: Vec::with_capacity(rows),
            cols: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Appends the next row, `(column, value)` pairs sorted by column.
    pub(crate) fn push_row(&mut self, row: &mut [(u32, T)]) {
        self.lens.push(row.len());
        self.cols.extend(row.iter().map(|e| e.0));
        self.values.extend(row.iter().map(|e| e.1));
    }
}

/// `C = A ⊕.⊗ B` masked and pruned as `spec` says, on the current pool;
/// `spec` already checked against A and B.
pub(crate) fn multiply<T: Scalar>(
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    spec: &ProductSpec<'_, T>,
    dense_cutoff: usize,
) -> Result<CsrMatrix<T>> {
    let mask = spec.mask.as_ref();
    let products: Vec<u64> = (0..a.nrows())
        .into_par_iter()
        .map(|i| {
            a.row(i)
                .0
                .iter()
                .map(|&k| b.row(k as usize).0.len() as u64)
                .sum()
        })
        .collect();
    let work: Vec<u64> = match mask {
        Some(m) => products
            .par_iter()
            .enumerate()
            .map(|(i, &p)| p + m.row(i).len() as u64)
            .collect(),
        None => products.clone(),
    };
    let total: u64 = products.par_iter().sum();
    if let Some(m) = mask {
        let columns = masked_dot::Columns::Of(b);
        if let Some(merges) = masked_dot::worth_it(a, columns, m, spec.semiring, total, || total) {
            return masked_dot::multiply(a, columns, spec, m, &merges);
        }
    }
    let chunks = rows::split_by_work(&work, rayon::current_num_threads() * CHUNKS_PER_THREAD);
    // A slot per column costs each thread C's width to set up: worth it
    // only for products at least that many (not a BFS step's one row).
    let dense = b.ncols() <= dense_cutoff && total >= b.ncols() as u64;
    // Rows of B far apart (random graphs) are fetched ahead, as in the
    // plain product.
    let scattered = prefetch::worth_it(&a);
    let tables: PerThread<Tables<T>> = PerThread::new();
    let pieces: Vec<Piece<T>> = chunks
        .par_iter()
        .map(|r| {
            let make = || Tables {
                dense: None,
                hash: Table::new(0, true),
            };
            tables.with(make, |t| {
                chunk(t, dense, scattered, a, b, spec, mask, r.clone(), &products)
            })
        })
        .collect();
    concatenate(a.nrows(), b.ncols(), pieces)
}

/// `C⟨M⟩ = A ⊕.⊗ Bᵀ` by dot products of A's rows and the rows of `bt`
/// (Bᵀ, `N×K`) as given, for a structural mask, when they cost less than
/// the row-wise products ([`masked_dot::worth_it`]; no transpose to form
/// then); `None` otherwise. `spec` already checked against A and B.
pub(crate) fn dot_products_given_bt<T: Scalar>(
    a: CsrView<'_, T>,
    bt: CsrView<'_, T>,
    spec: &ProductSpec<'_, T>,
) -> Result<Option<CsrMatrix<T>>> {
    let Some(m) = spec.mask.as_ref().filter(|m| !m.complement()) else {
        return Ok(None);
    };
    // The row-wise products: A's column k meets B's row k, Bᵀ's column k.
    let products = || {
        let b_rows = masked_dot::column_counts(bt);
        if a.same_arrays(&bt) {
            // A·Aᵀ (triangle counting): A's count of column k, squared.
            b_rows.par_iter().map(|&c| c * c).sum()
        } else {
            (0..a.nrows())
                .into_par_iter()
                .map(|i| a.row(i).0.iter().map(|&k| b_rows[k as usize]).sum::<u64>())
                .sum()
        }
    };
    // For A·Aᵀ they are Σ_k c_k² ≥ nnz(A)² / K (Cauchy–Schwarz over A's K
    // column counts c_k), which mostly decides without counting them.
    let at_least = if a.same_arrays(&bt) {
        let nnz = a.nnz() as u128;
        (nnz * nnz / a.ncols().max(1) as u128).min(u128::from(u64::MAX)) as u64
    } else {
        0
    };
    let columns = masked_dot::Columns::Given(bt);
    match masked_dot::worth_it(a, columns, m, spec.semiring, at_least, products) {
        Some(merges) => masked_dot::multiply(a, columns, spec, m, &merges).map(Some),
        None => Ok(None),
    }
}

/// The rows `rows` of C into a piece (`dense`: rows may use a slot per
/// column).
#[allow(clippy::too_many_arguments)] // the product's operands and the chunk's rows
fn chunk<T: Scalar>(
    tables: &mut Tables<T>,
    dense: bool,
    scattered: bool,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    spec: &ProductSpec<'_, T>,
    mask: Option<&Mask<'_>>,
    rows: std::ops::Range<usize>,
    products: &[u64],
) -> Piece<T> {
    let mut piece = Piece::with_rows(rows.len());
    let mut out = Vec::new();
    let ring = spec.semiring;
    let masked = mask.is_some_and(|m| !m.complement());
    let (aoff, end) = (a.row_offsets(), a.row_offsets()[rows.end]);
    for i in rows {
        if scattered {
            prefetch::rows_ahead(&a, &b, aoff[i]..aoff[i + 1], end, ring.reads_values());
        }
        let marks = mask.map_or(&[][..], |m| m.row(i));
        if products[i] == 0 || (masked && marks.is_empty()) {
            piece.lens.push(0);
            continue;
        }
        // A mask row far longer than the row's products (a BFS's visited
        // set) is searched, not marked: marking costs its length per row.
        let searched = (marks.len() as u64 > SEARCHED_MASK * products[i]
            && marks.windows(2).all(|w| w[0] < w[1]))
        .then_some(marks);
        let marking = masked && searched.is_none();
        let bound = if marking {
            marks.len()
        } else {
            products[i].min(b.ncols() as u64) as usize + marks.len()
        };
        let t = if dense && (b.ncols() <= NARROW || products[i] >= HASH_BELOW as u64) {
            tables
                .dense
                .get_or_insert_with(|| Table::new(b.ncols(), false))
        } else {
            &mut tables.hash
        };
        t.begin(bound);
        if searched.is_none() {
            for &j in marks {
                t.mark(j);
            }
        }
        let admit = |j: u32| searched.is_none_or(|m| m.binary_search(&j).is_ok() == masked);
        let (acols, avals) = a.row(i);
        if ring.reads_values() {
            for (&k, &av) in acols.iter().zip(avals) {
                let (bcols, bvals) = b.row(k as usize);
                for (&j, &bv) in bcols.iter().zip(bvals) {
                    if admit(j) {
                        t.add(j, ring.times(av, bv), ring, marking);
                    }
                }
            }
        } else {
            for &k in acols {
                for &j in b.row(k as usize).0 {
                    if admit(j) {
                        t.add(j, T::ONE, ring, marking);
                    }
                }
            }
        }
        t.drain(&mut out);
        spec.prune.row(&mut out);
        piece.push_row(&mut out);
    }
    piece
}

/// C from its pieces, in order, the copies done in parallel.
pub(crate) fn concatenate<T: Scalar>(
    nrows: usize,
    ncols: usize,
    pieces: Vec<Piece<T>>,
) -> Result<CsrMatrix<T>> {
    // Each piece's rows' offsets written by one task, from the piece's
    // first entry (a serial pass over a road network's 114 K rows took
    // about 0.2 ms of a 2 ms triangle count on 16 cores).
    let mut offsets = rows::zeros(nrows + 1, "C row offsets")?;
    let mut parts = Vec::with_capacity(pieces.len());
    let (mut rest, mut first) = (&mut offsets[1..], 0usize);
    for p in &pieces {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(p.lens.len());
        parts.push((mine, first));
        first += p.cols.len();
        rest = tail;
    }
    pieces
        .par_iter()
        .zip(parts)
        .for_each(|(p, (mine, mut at))| {
            for (o, &l) in mine.iter_mut().zip(&p.lens) {
                at += l;
                *o = at;
            }
        });
    let nnz = offsets[nrows];
    let mut cols: Vec<u32> = try_with_capacity(nnz, "C column indices")?;
    let mut values: Vec<T> = try_with_capacity(nnz, "C values")?;
    cols.resize(nnz, 0);
    values.resize(nnz, T::ZERO);
    let mut slices = Vec::with_capacity(pieces.len());
    let (mut c_rest, mut v_rest) = (&mut cols[..], &mut values[..]);
    for p in &pieces {
        let (c, c_tail) = std::mem::take(&mut c_rest).split_at_mut(p.cols.len());
        let (v, v_tail) = std::mem::take(&mut v_rest).split_at_mut(p.values.len());
        slices.push((c, v));
        (c_rest, v_rest) = (c_tail, v_tail);
    }
    pieces.par_iter().zip(slices).for_each(|(p, (c, v))| {
        c.copy_from_slice(&p.cols);
        v.copy_from_slice(&p.values);
    });
    // SAFETY: the offsets are a prefix sum of the rows' lengths, each row
    // sorted without repeats, every column one of B's checked columns.
    Ok(unsafe { CsrMatrix::new_unchecked(nrows, ncols, offsets, cols, values) })
}
