//! Row accumulators of the CPU backend (KokkosKernels §3.3): a dense one
//! (an array as wide as C, for few columns) and an open-addressing hash one
//! (for many columns). Both count a row's distinct columns (symbolic) and
//! produce the sorted row (numeric).

use crate::short_rows::Sorting;
use rayon::prelude::*;
use spgemm_core::semiring::Semiring;
use spgemm_core::{CsrView, Scalar};
use std::mem::MaybeUninit;

/// The `⊗` and `⊕` of the numeric phase: [`PlusTimes`] for the plain
/// product (compiled to `*` and `+`), a [`Semiring`] for the others.
pub(crate) trait Ops<T>: Copy + Send + Sync {
    /// `x ⊗ y`.
    fn times(self, x: T, y: T) -> T;
    /// `x ⊕ y`.
    fn plus(self, x: T, y: T) -> T;
    /// An identity `e` of `⊕` with `e ⊕ x` equal to `x` bit for bit for
    /// every `x` (NaN and signed zeros included), where there is one an
    /// accumulator may start from; `None` where a row's first product
    /// must be stored as it is.
    fn exact_identity(self) -> Option<T>;
}

/// The plain product's `×` and `+`.
#[derive(Clone, Copy)]
pub(crate) struct PlusTimes;

impl<T: Scalar> Ops<T> for PlusTimes {
    #[inline(always)]
    fn times(self, x: T, y: T) -> T {
        x * y
    }
    #[inline(always)]
    fn plus(self, x: T, y: T) -> T {
        x + y
    }
    /// `−0.0` for floats (`−0 + x` is `x`, `−0` itself included), 0 for
    /// integers.
    #[inline(always)]
    fn exact_identity(self) -> Option<T> {
        Some(T::from_f64(-0.0))
    }
}

impl<T: Scalar> Ops<T> for Semiring {
    #[inline(always)]
    fn times(self, x: T, y: T) -> T {
        Semiring::times(self, x, y)
    }
    #[inline(always)]
    fn plus(self, x: T, y: T) -> T {
        Semiring::plus(self, x, y)
    }
    /// None: `min` and `max` skip NaN, so their identities would turn a
    /// row of NaN products into `±∞`.
    #[inline(always)]
    fn exact_identity(self) -> Option<T> {
        None
    }
}

/// Accumulates the products of one row of A with the rows of B it selects.
pub(crate) trait Accumulator<T: Scalar> {
    /// Number of distinct columns of `A(i,:)·B` for the row given by
    /// `acols`, whose products number `nprod`.
    fn count(&mut self, acols: &[u32], b: &CsrView<'_, T>, nprod: usize) -> usize;
    /// Writes the sorted row `A(i,:) ⊕.⊗ B` into the front of
    /// `cols`/`vals` and returns how many entries it wrote (the row's
    /// count).
    fn fill<O: Ops<T>>(
        &mut self,
        ops: O,
        acols: &[u32],
        avals: &[T],
        b: &CsrView<'_, T>,
        cols: &mut [MaybeUninit<u32>],
        vals: &mut [MaybeUninit<T>],
    ) -> usize;
}

/// Dense accumulator: a value and a row stamp per column of C, the list of
/// columns the row touched, and scratch for emitting sorted rows.
///
/// [`Accumulator::fill`] branches on "first touch": at the compression
/// ratios of real matrices the branch predicts well and lets the core run
/// ahead, where a branch-free update of the column's bit waits on the store
/// to the same word (measured 3.5× slower on bcsstk16). Where B's rows pack
/// into 32-column masks, [`Dense::fill_compressed`] finds the row's columns
/// from the masks first and needs neither (on 16 cores of an H200 host,
/// bcsstk33 27–31% and the 3-dof FEM matrix 24–32% faster).
pub(crate) struct Dense<T> {
    vals: Vec<T>,
    mark: Vec<u32>,
    stamp: u32,
    touched: Vec<u32>,
    /// Columns a row touched, one bit each: set on first touch only.
    bits: Vec<u64>,
    /// Per 32-column block: stamp and OR of masks, for compressed symbolic.
    block_mark: Vec<u32>,
    block_bits: Vec<u32>,
}

impl<T: Scalar> Dense<T> {
    pub(crate) fn new(ncols: usize) -> Self {
        Self {
            vals: vec![T::ZERO; ncols],
            mark: vec![0; ncols],
            stamp: 0,
            touched: Vec::new(),
            bits: vec![0; ncols.div_ceil(64)],
            block_mark: vec![0; ncols.div_ceil(32)],
            block_bits: vec![0; ncols.div_ceil(32)],
        }
    }

    fn next_stamp(&mut self) -> u32 {
        if self.stamp == u32::MAX {
            self.mark.fill(0);
            self.block_mark.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        self.stamp
    }

    /// Counts a row's distinct columns from B compressed into 32-column
    /// masks (KokkosKernels §3.2): OR the masks per block, then popcount.
    pub(crate) fn count_compressed(&mut self, acols: &[u32], b: &CompressedRows) -> usize {
        let s = self.next_stamp();
        self.touched.clear();
        for &k in acols {
            let r = b.offsets[k as usize]..b.offsets[k as usize + 1];
            for (&blk, &mask) in b.blocks[r.clone()].iter().zip(&b.masks[r]) {
                let i = blk as usize;
                if self.block_mark[i] != s {
                    self.block_mark[i] = s;
                    self.block_bits[i] = mask;
                    self.touched.push(blk);
                } else {
                    self.block_bits[i] |= mask;
                }
            }
        }
        self.touched
            .iter()
            .map(|&blk| self.block_bits[blk as usize].count_ones() as usize)
            .sum()
    }

    /// Writes the sorted row `A(i,:) ⊕.⊗ B` as [`Accumulator::fill`] does,
    /// with the row's columns found first from B's packed rows `cb` (its
    /// 32-column blocks' masks ORed, as [`Dense::count_compressed`]
    /// counts them) and their values set to `identity` (an exact identity
    /// of `⊕`): each product is then added to its column with no test of
    /// whether it is the column's first, and the row is written block by
    /// block in column order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fill_compressed<O: Ops<T>>(
        &mut self,
        ops: O,
        identity: T,
        acols: &[u32],
        avals: &[T],
        b: &CsrView<'_, T>,
        cb: &CompressedRows,
        cols: &mut [MaybeUninit<u32>],
        vals: &mut [MaybeUninit<T>],
    ) -> usize {
        let s = self.next_stamp();
        let (acc, touched) = (&mut self.vals[..], &mut self.touched);
        let (block_mark, block_bits) = (&mut self.block_mark[..], &mut self.block_bits[..]);
        touched.clear();
        assert!(acc.len() >= b.ncols() && block_mark.len() * 32 >= b.ncols());
        for &k in acols {
            let r = cb.offsets[k as usize]..cb.offsets[k as usize + 1];
            for (&blk, &mask) in cb.blocks[r.clone()].iter().zip(&cb.masks[r]) {
                let i = blk as usize;
                if block_mark[i] != s {
                    block_mark[i] = s;
                    block_bits[i] = mask;
                    touched.push(blk);
                } else {
                    block_bits[i] |= mask;
                }
            }
        }
        for &blk in touched.iter() {
            let mut m = block_bits[blk as usize];
            while m != 0 {
                acc[((blk as usize) << 5) + m.trailing_zeros() as usize] = identity;
                m &= m - 1;
            }
        }
        for (&k, &av) in acols.iter().zip(avals) {
            let (bc, bv) = b.row(k as usize);
            for (&j, &x) in bc.iter().zip(bv) {
                // SAFETY: `CsrMatrix` guarantees `j < b.ncols()`, and `acc`
                // covers `b.ncols()` columns (asserted above).
                let a = unsafe { acc.get_unchecked_mut(j as usize) };
                *a = ops.plus(*a, ops.times(av, x));
            }
        }
        touched.sort_unstable();
        let mut p = 0;
        for &blk in touched.iter() {
            let mut m = block_bits[blk as usize];
            while m != 0 {
                let j = ((blk as usize) << 5) + m.trailing_zeros() as usize;
                cols[p].write(j as u32);
                vals[p].write(acc[j]);
                p += 1;
                m &= m - 1;
            }
        }
        p
    }
}

/// B with each row's columns packed as (column / 32, bit mask) pairs.
#[derive(Clone, Debug)]
pub(crate) struct CompressedRows {
    offsets: Vec<usize>,
    blocks: Vec<u32>,
    masks: Vec<u32>,
}

impl CompressedRows {
    /// Packs `b`'s rows; `None` unless that removes more than 15% of the
    /// entries (Deveci et al., "Multi-threaded sparse matrix-matrix
    /// multiplication for many-core and GPU architectures", §3.2).
    pub(crate) fn of<T: Scalar>(b: &CsrView<'_, T>) -> Option<Self> {
        const ROWS: usize = 1024;
        if !Self::worth_packing(b, ROWS) {
            return None;
        }
        // Pack chunks of rows in parallel, then concatenate.
        let parts: Vec<(Vec<usize>, Vec<u32>, Vec<u32>)> = (0..b.nrows().div_ceil(ROWS))
            .into_par_iter()
            .map(|c| {
                let rows = c * ROWS..((c + 1) * ROWS).min(b.nrows());
                let (mut lens, mut blocks, mut masks) =
                    (Vec::with_capacity(rows.len()), Vec::new(), Vec::new());
                for i in rows {
                    let start = blocks.len();
                    for &j in b.row(i).0 {
                        let (blk, bit) = (j / 32, 1u32 << (j % 32));
                        // A block repeated in an unsorted row only ORs its mask twice.
                        if blocks.len() > start && blocks.last() == Some(&blk) {
                            *masks.last_mut().expect("non-empty") |= bit;
                        } else {
                            blocks.push(blk);
                            masks.push(bit);
                        }
                    }
                    lens.push(blocks.len() - start);
                }
                (lens, blocks, masks)
            })
            .collect();
        let total: usize = parts.iter().map(|p| p.1.len()).sum();
        if total as f64 > 0.85 * b.nnz() as f64 {
            return None;
        }
        let mut offsets = Vec::with_capacity(b.nrows() + 1);
        offsets.push(0);
        let (mut blocks, mut masks) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for (lens, bl, ma) in parts {
            for l in lens {
                offsets.push(offsets.last().expect("non-empty") + l);
            }
            blocks.extend(bl);
            masks.extend(ma);
        }
        Some(Self {
            offsets,
            blocks,
            masks,
        })
    }
}

impl CompressedRows {
    /// Whether packing would remove more than 15% of the entries of the
    /// chunks of `rows` rows sampled (one in [`SAMPLE_STRIDE`]; all of a
    /// smaller B), counted without packing: a B whose rows' columns are
    /// scattered (random matrices, road networks) then costs one pass over
    /// a sample, not a packed copy of B that is thrown away. A sample near
    /// the bound only changes the accumulator's speed; the packed
    /// rows are checked again whole.
    fn worth_packing<T: Scalar>(b: &CsrView<'_, T>, rows: usize) -> bool {
        let chunks = b.nrows().div_ceil(rows);
        let stride = if chunks >= 4 * SAMPLE_STRIDE {
            SAMPLE_STRIDE
        } else {
            1
        };
        let (blocks, entries) = (0..chunks)
            .into_par_iter()
            .step_by(stride)
            .map(|c| {
                let (mut blocks, mut entries) = (0usize, 0usize);
                for i in c * rows..((c + 1) * rows).min(b.nrows()) {
                    let cols = b.row(i).0;
                    entries += cols.len();
                    let mut last = None;
                    for &j in cols {
                        let blk = Some(j / 32);
                        blocks += usize::from(blk != last);
                        last = blk;
                    }
                }
                (blocks, entries)
            })
            .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
        blocks as f64 <= 0.85 * entries as f64
    }
}

/// One chunk of B's rows in this many is sampled to decide whether to
/// pack B ([`CompressedRows::of`]).
const SAMPLE_STRIDE: usize = 16;

impl<T: Scalar> Accumulator<T> for Dense<T> {
    fn count(&mut self, acols: &[u32], b: &CsrView<'_, T>, _nprod: usize) -> usize {
        let s = self.next_stamp();
        let mut n = 0;
        for &k in acols {
            for &j in b.row(k as usize).0 {
                let m = &mut self.mark[j as usize];
                if *m != s {
                    *m = s;
                    n += 1;
                }
            }
        }
        n
    }

    fn fill<O: Ops<T>>(
        &mut self,
        ops: O,
        acols: &[u32],
        avals: &[T],
        b: &CsrView<'_, T>,
        cols: &mut [MaybeUninit<u32>],
        vals: &mut [MaybeUninit<T>],
    ) -> usize {
        let (acc, bits, touched) = (&mut self.vals[..], &mut self.bits[..], &mut self.touched);
        touched.clear();
        assert!(acc.len() >= b.ncols() && bits.len() * 64 >= b.ncols());
        for (&k, &av) in acols.iter().zip(avals) {
            let (bc, bv) = b.row(k as usize);
            for (&j, &x) in bc.iter().zip(bv) {
                let ju = j as usize;
                // SAFETY: `CsrMatrix` guarantees `j < b.ncols()`, and both
                // arrays cover `b.ncols()` columns (asserted above).
                let (w, a) =
                    unsafe { (bits.get_unchecked_mut(ju >> 6), acc.get_unchecked_mut(ju)) };
                let m = 1u64 << (ju & 63);
                if *w & m == 0 {
                    *w |= m;
                    *a = ops.times(av, x);
                    touched.push(j);
                } else {
                    *a = ops.plus(*a, ops.times(av, x));
                }
            }
        }
        let n = touched.len();
        if n == 0 {
            return 0;
        }
        let (lo, hi) = touched
            .iter()
            .fold((u32::MAX, 0), |(l, h), &j| (l.min(j), h.max(j)));
        let (lo_w, hi_w) = ((lo >> 6) as usize, (hi >> 6) as usize);
        let mut p = 0;
        let mut emit = |j: usize| {
            cols[p].write(j as u32);
            vals[p].write(acc[j]);
            p += 1;
        };
        if hi_w - lo_w < 4 * n {
            // Walk the set bits of the row's range: sorted, ~range/64 + n steps.
            for (wi, word) in bits.iter_mut().enumerate().take(hi_w + 1).skip(lo_w) {
                let mut w = std::mem::take(word);
                while w != 0 {
                    emit((wi << 6) + w.trailing_zeros() as usize);
                    w &= w - 1;
                }
            }
        } else {
            touched.sort_unstable();
            for &j in touched.iter() {
                bits[(j >> 6) as usize] = 0;
                emit(j as usize);
            }
        }
        p
    }
}

const EMPTY: u32 = u32::MAX;

/// Products of the row of A given by `acols` with B.
pub(crate) fn row_products<T: Scalar>(acols: &[u32], b: &CsrView<'_, T>) -> usize {
    let off = b.row_offsets();
    acols
        .iter()
        .map(|&k| off[k as usize + 1] - off[k as usize])
        .sum()
}

/// Hash accumulator: linear probing in a power-of-two table of at least
/// twice the row's products.
pub(crate) struct Hash<T> {
    keys: Vec<u32>,
    vals: Vec<T>,
    used: Vec<u32>,
    pairs: Vec<(u32, T)>,
}

impl<T: Scalar> Hash<T> {
    pub(crate) fn new() -> Self {
        Self {
            keys: Vec::new(),
            vals: Vec::new(),
            used: Vec::new(),
            pairs: Vec::new(),
        }
    }

    /// Makes the table large enough for `keys` keys (at most half full);
    /// returns the shift that maps a 64-bit product hash to a slot.
    fn prepare(&mut self, keys: usize) -> u32 {
        let size = (2 * keys).next_power_of_two().max(16);
        if self.keys.len() < size {
            self.keys = vec![EMPTY; size];
            self.vals = vec![T::ZERO; size];
        }
        64 - self.keys.len().trailing_zeros()
    }

    #[inline]
    fn slot(&mut self, j: u32, shift: u32) -> (usize, bool) {
        let mask = self.keys.len() - 1;
        let mut h = ((j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
        loop {
            let k = self.keys[h];
            if k == j {
                return (h, false);
            }
            if k == EMPTY {
                self.keys[h] = j;
                self.used.push(h as u32);
                return (h, true);
            }
            h = (h + 1) & mask;
        }
    }

    fn clear(&mut self) {
        for &h in &self.used {
            self.keys[h as usize] = EMPTY;
        }
        self.used.clear();
    }
}

impl<T: Scalar> Accumulator<T> for Hash<T> {
    fn count(&mut self, acols: &[u32], b: &CsrView<'_, T>, nprod: usize) -> usize {
        let shift = self.prepare(nprod);
        for &k in acols {
            for &j in b.row(k as usize).0 {
                self.slot(j, shift);
            }
        }
        let n = self.used.len();
        self.clear();
        n
    }

    fn fill<O: Ops<T>>(
        &mut self,
        ops: O,
        acols: &[u32],
        avals: &[T],
        b: &CsrView<'_, T>,
        cols: &mut [MaybeUninit<u32>],
        vals: &mut [MaybeUninit<T>],
    ) -> usize {
        // Sized by the row's products, not by its count: never more keys
        // than the table holds (the offsets read here are the ones the
        // loop below reads again, from the cache).
        let shift = self.prepare(row_products(acols, b));
        for (&k, &av) in acols.iter().zip(avals) {
            let (bc, bv) = b.row(k as usize);
            for (&j, &x) in bc.iter().zip(bv) {
                let (h, new) = self.slot(j, shift);
                if new {
                    self.vals[h] = ops.times(av, x);
                } else {
                    self.vals[h] = ops.plus(self.vals[h], ops.times(av, x));
                }
            }
        }
        self.pairs.clear();
        self.pairs.extend(
            self.used
                .iter()
                .map(|&h| (self.keys[h as usize], self.vals[h as usize])),
        );
        self.pairs.sort_unstable_by_key(|p| p.0);
        for (p, &(j, v)) in self.pairs.iter().enumerate() {
            cols[p].write(j);
            vals[p].write(v);
        }
        self.clear();
        self.pairs.len()
    }
}

/// Rows of fewer products than this go to [`Mixed`]'s sorting buffers.
const SORT_BELOW: usize = 1024;

/// Two accumulators, chosen row by row in the numeric phase: rows of
/// fewer than [`SORT_BELOW`] products by sorting their products in
/// buffers that stay in the core's own cache ([`Sorting`]), longer ones in
/// the dense accumulator. For wide products whose columns are scattered,
/// where an accumulator as wide as C misses the cache on nearly every
/// product once every thread has one (Erdős–Rényi 2²⁰ × 8 on 32 cores,
/// three runs each: a numeric phase of 145–185 ms with a hash table for
/// short rows, 171–195 ms dense), while the long rows of power-law graphs
/// stay dense (R-MAT 16: 147 ms in all dense, 556 ms with hash tables
/// only). Sorting replaced the hash table for short rows: Erdős–Rényi
/// 2²⁰ × 8 took 155–174 ms against 258–263 ms on 16 cores
/// (`docs/benchmarks/cpu-sorting-vs-graphblas-h200host-2026-11-27.md`).
pub(crate) struct Mixed<T> {
    dense: Dense<T>,
    sorting: Sorting<T>,
}

impl<T: Scalar> Mixed<T> {
    pub(crate) fn new(ncols: usize) -> Self {
        Self {
            dense: Dense::new(ncols),
            sorting: Sorting::new(),
        }
    }

    /// [`Dense::count_compressed`].
    pub(crate) fn count_compressed(&mut self, acols: &[u32], b: &CompressedRows) -> usize {
        self.dense.count_compressed(acols, b)
    }
}

impl<T: Scalar> Accumulator<T> for Mixed<T> {
    /// Counting stays dense, with B's packed columns where they pay (R-MAT
    /// 19 on 32 cores: a symbolic phase of 808 ms so, 1,396 ms with short
    /// rows counted in the hash table and B unpacked; Erdős–Rényi 2²⁰ × 8:
    /// 94 and 89 ms).
    fn count(&mut self, acols: &[u32], b: &CsrView<'_, T>, nprod: usize) -> usize {
        self.dense.count(acols, b, nprod)
    }

    fn fill<O: Ops<T>>(
        &mut self,
        ops: O,
        acols: &[u32],
        avals: &[T],
        b: &CsrView<'_, T>,
        cols: &mut [MaybeUninit<u32>],
        vals: &mut [MaybeUninit<T>],
    ) -> usize {
        if row_products(acols, b) < SORT_BELOW {
            self.sorting.fill(ops, acols, avals, b, cols, vals)
        } else {
            self.dense.fill(ops, acols, avals, b, cols, vals)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spgemm_core::CsrMatrix;

    /// B's rows: runs of neighbouring columns (so that packing pays), one
    /// unsorted with a repeated column; values from `special`, cycled.
    fn banded<T: Scalar>(special: &[T]) -> CsrMatrix<T> {
        let (n, width) = (300usize, 45usize);
        let (mut offsets, mut cols, mut vals) = (vec![0], Vec::new(), Vec::new());
        for i in 0..n {
            let mut row: Vec<u32> = (i..(i + width).min(n)).map(|j| j as u32).collect();
            if i == 7 {
                row.reverse();
                row.push(row[3]);
            }
            for (k, &j) in row.iter().enumerate() {
                cols.push(j);
                vals.push(special[(i + k) % special.len()]);
            }
            offsets.push(cols.len());
        }
        CsrMatrix::new(n, n, offsets, cols, vals).unwrap()
    }

    /// Every row written from packed rows equals the first-touch fill's,
    /// bit for bit: columns, and values whose sums start from `−0.0`
    /// (signed zeros, infinities and NaN among them).
    fn packed_fill_is_the_first_touch_fill<T: Scalar>(special: &[T]) {
        let b = banded(special);
        let cb = CompressedRows::of(&b.view()).expect("neighbouring columns pack");
        let (mut first, mut packed) = (Dense::<T>::new(b.ncols()), Dense::<T>::new(b.ncols()));
        let identity = PlusTimes.exact_identity().unwrap();
        let bits = |v: &[MaybeUninit<T>], n: usize| -> Vec<Vec<u8>> {
            // SAFETY: both fills wrote their first `n` values.
            (0..n)
                .map(|i| bytemuck::bytes_of(unsafe { v[i].assume_init_ref() }).to_vec())
                .collect()
        };
        for i in 0..b.nrows() {
            // A's row: unsorted, a repeated column, a signed zero among its values.
            let acols: Vec<u32> = [i, i / 2, 7, i / 3, i / 2]
                .iter()
                .map(|&k| (k % b.nrows()) as u32)
                .collect();
            let avals: Vec<T> = (0..acols.len())
                .map(|k| special[(i * 3 + k) % special.len()])
                .collect();
            let room = row_products(&acols, &b.view());
            let mut c1 = vec![MaybeUninit::uninit(); room];
            let mut v1 = vec![MaybeUninit::uninit(); room];
            let mut c2 = vec![MaybeUninit::uninit(); room];
            let mut v2 = vec![MaybeUninit::uninit(); room];
            let n1 = first.fill(PlusTimes, &acols, &avals, &b.view(), &mut c1, &mut v1);
            let n2 = packed.fill_compressed(
                PlusTimes,
                identity,
                &acols,
                &avals,
                &b.view(),
                &cb,
                &mut c2,
                &mut v2,
            );
            assert_eq!(n1, n2, "row {i}");
            // SAFETY: the first `n1` columns were written by both.
            let cols = |c: &[MaybeUninit<u32>]| -> Vec<u32> {
                c[..n1].iter().map(|j| unsafe { j.assume_init() }).collect()
            };
            assert_eq!(cols(&c1), cols(&c2), "row {i}");
            assert_eq!(bits(&v1, n1), bits(&v2, n1), "row {i}");
        }
    }

    #[test]
    fn packed_fill_is_the_first_touch_fill_f64() {
        packed_fill_is_the_first_touch_fill::<f64>(&[
            -0.0,
            1.5,
            0.0,
            f64::INFINITY,
            -2.25,
            f64::NAN,
            -0.0,
            1e-310,
            f64::NEG_INFINITY,
            3.0,
            -1e300,
        ]);
    }

    #[test]
    fn packed_fill_is_the_first_touch_fill_f32_and_integers() {
        packed_fill_is_the_first_touch_fill::<f32>(&[
            -0.0,
            1.5,
            0.0,
            -2.25,
            3.0,
            f32::MIN_POSITIVE,
        ]);
        // Within range: a debug build's integer arithmetic panics on
        // overflow.
        packed_fill_is_the_first_touch_fill::<i32>(&[0, 1, -3, 1000, 7, -1000]);
        packed_fill_is_the_first_touch_fill::<i64>(&[0, 1, -3, 1 << 28, 7, -(1 << 28)]);
    }

    #[test]
    fn b_is_packed_only_where_a_sample_says_it_pays() {
        // 2^17 rows: 128 chunks of 1024, one in 16 sampled. Scattered
        // columns (Erdős–Rényi) are not packed; runs of neighbours are,
        // whole, as the sampled count foretold.
        let scattered: CsrMatrix<f64> = spgemm_core::generate::erdos_renyi(1 << 17, 8, 3).unwrap();
        assert!(!CompressedRows::worth_packing(&scattered.view(), 1024));
        assert!(CompressedRows::of(&scattered.view()).is_none());
        let n = 1usize << 17;
        let (mut offsets, mut cols) = (vec![0usize], Vec::new());
        for i in 0..n {
            cols.extend((i..(i + 20).min(n)).map(|j| j as u32));
            offsets.push(cols.len());
        }
        let vals = vec![1.0f64; cols.len()];
        let runs = CsrMatrix::new(n, n, offsets, cols, vals).unwrap();
        assert!(CompressedRows::worth_packing(&runs.view(), 1024));
        let cb = CompressedRows::of(&runs.view()).expect("runs of 20 neighbours pack");
        assert!(cb.blocks.len() < runs.nnz() / 10);
    }
}
