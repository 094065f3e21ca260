//! # spgemm-cpu
//!
//! The multithreaded CPU backend of spgemm: row-wise two-phase SpGEMM after
//! KokkosKernels (Deveci et al. 2018, §3.3), parallel with rayon.
//!
//! 1. **Setup.** Products per row (`nprod`); rows are split into chunks of
//!    about equal products (not equal row counts), several per thread.
//! 2. **Symbolic.** Each row's distinct columns are counted with a dense
//!    accumulator when C has at most [`CpuBackend::dense_cutoff`] columns,
//!    a hash accumulator otherwise; when C is wide and A's columns lie far
//!    from its diagonal (random graphs), the rows of B that A's next
//!    entries select are prefetched (Ainsworth and Jones, "Software
//!    prefetching for indirect memory accesses", CGO 2017).
//! 3. **Scan.** A prefix sum of the counts gives C's row offsets.
//! 4. **Numeric.** Each row is accumulated again and written sorted into its
//!    slot of C; when C is wide and A's columns scattered, short rows by
//!    sorting their products and long ones densely. Where the symbolic
//!    phase counted from B's rows packed into 32-column masks (§3.2 of the
//!    same paper), a dense row's columns are found from those masks first
//!    and set to `−0.0`, so each product is added with no test of whether
//!    it is its column's first.
//!
//! Rows with no products, and rows of A with one entry when B's rows are
//! sorted without repeats, need no accumulator in either phase: their
//! count is their products, and a single entry's row of C is its row of B
//! scaled (the direct rows of the DCU paper's GPU kernels, §5.3). On
//! hypersparse inputs, where most rows are such rows, the work follows nnz,
//! not the row count. Rows of at most 32 products are sorted and merged in
//! a small buffer instead of an accumulator (`short_rows`). When every row
//! is that short, or A has fewer entries than rows, [`CpuBackend::multiply`]
//! computes each row once, into a buffer per chunk of rows, and copies the
//! buffers into C (`one_pass`): B's rows are read from anywhere in memory
//! once, not twice (and for a hypersparse A, not a third time to count its
//! products per row).
//!
//! C keeps every structurally produced entry even when its value cancels to
//! zero (as cuSPARSE and OpSparse do); [`CsrMatrix::drop_explicit_zeros`]
//! removes them. The [`CpuPlan`] returned by the symbolic phase runs the
//! numeric phase again when only values change.
//!
//! ```
//! use spgemm_core::CsrMatrix;
//! use spgemm_cpu::CpuBackend;
//! let a = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0f64, 2.0, 3.0])?;
//! let c = CpuBackend::new().multiply(&a, &a)?;
//! assert_eq!(c.values(), &[1.0, 8.0, 9.0]);
//! # Ok::<(), spgemm_core::Error>(())
//! ```
#![warn(missing_docs)]

mod accumulator;
mod intersect;
mod masked_dot;
mod one_pass;
mod per_thread;
mod planned;
mod prefetch;
mod rows;
mod search;
mod semiring;
mod short_rows;
mod shortcuts;

use accumulator::{Accumulator, CompressedRows, Dense, Hash, Mixed, Ops, PlusTimes};
use per_thread::PerThread;
use rayon::prelude::*;
use shortcuts::Shortcuts;
use spgemm_core::csr::split_rows_mut;
use spgemm_core::error::try_with_capacity;
use spgemm_core::semiring::ProductSpec;
use spgemm_core::stats::{product_stats, ProductStats};
use spgemm_core::{CsrMatrix, CsrView, Error, Result, Scalar};
use std::ops::Range;

/// Default largest number of columns of C for the dense accumulator
/// (measured: see `docs/benchmarks/cpu-dense-cutoff-dev-2core-2026-11-21.md`).
pub const DEFAULT_DENSE_CUTOFF: usize = 1 << 20;
/// Widest C whose products with scattered columns accumulate densely
/// (12 bytes a column for f64: 768 KiB); wider ones use [`Mixed`]. Was
/// 2¹⁸ while [`Mixed`] hashed its short rows; with them sorted, 2¹⁶ took
/// Erdős–Rényi 2¹⁸ × 8 from 45–56 to 36–39 ms on 16 cores, R-MAT 17 and
/// 18 within that run's spread
/// (`docs/benchmarks/cpu-sorting-vs-graphblas-h200host-2026-11-27.md`).
const MIXED_COLUMNS: usize = 1 << 16;
/// Chunks per thread: enough to even out the products the chunks hold.
const CHUNKS_PER_THREAD: usize = 8;

/// The CPU backend: a thread pool and the accumulator cut-off.
pub struct CpuBackend {
    pool: Option<rayon::ThreadPool>,
    dense_cutoff: usize,
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for CpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuBackend")
            .field("threads", &self.threads())
            .field("dense_cutoff", &self.dense_cutoff)
            .finish()
    }
}

/// What the symbolic phase learned about `C = A·B`: the structure of A and
/// B it was computed for, C's row offsets and the row chunks.
///
/// Only [`CpuBackend::symbolic`] makes one; [`CpuBackend::numeric`] refuses
/// matrices whose structure differs.
#[derive(Clone, Debug)]
pub struct CpuPlan {
    a: Structure,
    b: Structure,
    c_row_offsets: Vec<usize>,
    chunks: Vec<Range<usize>>,
    total_nprod: u64,
    /// B's rows sorted without repeats (structural, so the plan keeps it).
    shortcuts: Shortcuts,
    /// B's packed rows, where the symbolic phase counted with them (the
    /// numeric phase finds each row's columns from them; boxed, so that a
    /// plan stays small where it has none).
    compressed: Option<Box<CompressedRows>>,
}

/// The symbolic phase's results: C's row offsets, the row chunks, the
/// products in all, and the row shortcuts B allows.
struct Symbolic {
    offsets: Vec<usize>,
    chunks: Vec<Range<usize>>,
    total_nprod: u64,
    shortcuts: Shortcuts,
    /// B's packed rows, where the symbolic phase counted with them.
    compressed: Option<CompressedRows>,
}

/// What both ways of computing a product start from: products per row
/// of A and the most in one row, rows split into chunks of about equal
/// products (several per thread).
struct Setup {
    nprod: Vec<u64>,
    total_nprod: u64,
    max_nprod: u64,
    chunks: Vec<Range<usize>>,
}

impl Setup {
    fn of<T: Scalar>(a: CsrView<'_, T>, b: CsrView<'_, T>) -> Result<Self> {
        let ProductStats {
            nprod,
            total_nprod,
            max_nprod,
            ..
        } = product_stats(a, b)?;
        let chunks = rows::split_by_work(&nprod, rayon::current_num_threads() * CHUNKS_PER_THREAD);
        Ok(Self {
            nprod,
            total_nprod,
            max_nprod,
            chunks,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Structure {
    nrows: usize,
    ncols: usize,
    row_offsets: Vec<usize>,
    col_indices: Vec<u32>,
}

impl Structure {
    fn of<T: Scalar>(m: CsrView<'_, T>) -> Self {
        Self {
            nrows: m.nrows(),
            ncols: m.ncols(),
            row_offsets: m.row_offsets().to_vec(),
            col_indices: m.col_indices().to_vec(),
        }
    }
    fn view(&self) -> spgemm_core::structure::Structure<'_> {
        spgemm_core::structure::Structure {
            nrows: self.nrows,
            ncols: self.ncols,
            row_offsets: &self.row_offsets,
            col_indices: &self.col_indices,
        }
    }
}

impl CpuPlan {
    /// Number of entries of C.
    pub fn nnz(&self) -> usize {
        *self.c_row_offsets.last().unwrap_or(&0)
    }
    /// C's row offsets (length `M + 1`).
    pub fn row_offsets(&self) -> &[usize] {
        &self.c_row_offsets
    }
    /// Total products `Σ nprod`.
    pub fn total_nprod(&self) -> u64 {
        self.total_nprod
    }
    /// The row offsets of the A the plan was built for (length `M + 1`).
    pub fn a_row_offsets(&self) -> &[usize] {
        &self.a.row_offsets
    }
}

impl CpuBackend {
    /// A backend on rayon's global pool (all cores) with the default cut-off.
    pub fn new() -> Self {
        Self {
            pool: None,
            dense_cutoff: DEFAULT_DENSE_CUTOFF,
        }
    }

    /// A backend with its own pool of `threads` threads.
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`] if the pool's threads cannot be started.
    pub fn with_threads(threads: usize) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|_| Error::HostOutOfMemory {
                what: "CPU thread pool",
                bytes: 0,
            })?;
        Ok(Self {
            pool: Some(pool),
            dense_cutoff: DEFAULT_DENSE_CUTOFF,
        })
    }

    /// Sets the largest number of columns of C for the dense accumulator.
    pub fn with_dense_cutoff(mut self, columns: usize) -> Self {
        self.dense_cutoff = columns;
        self
    }

    /// The dense-accumulator cut-off in columns.
    pub fn dense_cutoff(&self) -> usize {
        self.dense_cutoff
    }

    /// Threads the backend runs on.
    pub fn threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
    }

    fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// `C = A·B` (`M×K` times `K×N`), sorted rows, explicit zeros from
    /// cancellation kept. Inputs may be unsorted and hold duplicates.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`], [`Error::HostOutOfMemory`].
    pub fn multiply<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        self.run(|| self.product(PlusTimes, a, b))
    }

    /// `C⟨M⟩ = A ⊕.⊗ B` (or `⟨¬M⟩`, or unmasked), its rows pruned, as
    /// `spec` says (see [`spgemm_core::semiring`]): A `M×K`, B `K×N`, the
    /// mask and C `M×N` with sorted rows. A product without mask or
    /// pruning runs the two phases of [`CpuBackend::multiply`], the
    /// semiring's operators in the numeric phase; one with either, one pass
    /// over A's rows with the mask applied while accumulating (products the
    /// mask excludes are never accumulated, rows its structure leaves empty
    /// never visited) and each row pruned before it is stored.
    ///
    /// # Errors
    /// As [`ProductSpec::check`]; [`Error::HostOutOfMemory`].
    pub fn multiply_spec<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
        spec: &ProductSpec<'_, T>,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        if spec.is_plain() {
            return self.multiply(a, b);
        }
        spec.check(a.shape(), b.shape())?;
        if spec.prune.columns && !spec.prune.is_none() {
            // Cᵀ = Bᵀ ⊕.⊗ Aᵀ with its rows pruned, transposed back.
            let (at, bt) = (a.transpose()?, b.transpose()?);
            let mask_t = spec.mask.map(|m| m.transposed::<T>()).transpose()?;
            let spec_t = spec.transposed(mask_t.as_ref().map(CsrMatrix::view));
            return self.multiply_spec(&bt, &at, &spec_t)?.transpose();
        }
        if spec.mask.is_none() && spec.prune.is_none() {
            // Only the numeric phase depends on the semiring.
            return self.run(|| self.product(spec.semiring, a, b));
        }
        self.run(|| semiring::multiply(a, b, spec, self.dense_cutoff))
    }

    /// `C⟨M⟩ = A ⊕.⊗ Bᵀ` (or `⟨¬M⟩`, or unmasked), pruned as `spec`
    /// says, with B given as its transpose `bt` (`N×K`; A `M×K`, the mask
    /// and C `M×N`). Under a structural mask far sparser than the products
    /// each entry `(i, j)` of M is the dot product of A's row `i` and
    /// `bt`'s row `j`, read where they are: nothing is transposed
    /// (SuiteSparse:GraphBLAS's masked dot product with its input
    /// transposed by a descriptor: Davis, "Algorithm 1000", ACM TOMS 45(4),
    /// 2019, §5; triangle counting's `C⟨L⟩ = L ⊕.pair Lᵀ`). Otherwise B is
    /// formed from `bt` and multiplied as [`CpuBackend::multiply_spec`]
    /// does.
    ///
    /// # Errors
    /// As [`ProductSpec::check`] with B's shape `bt`'s transposed;
    /// [`Error::HostOutOfMemory`].
    pub fn multiply_spec_transposed_b<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        bt: impl Into<CsrView<'b, T>>,
        spec: &ProductSpec<'_, T>,
    ) -> Result<CsrMatrix<T>> {
        let (a, bt) = (a.into(), bt.into());
        spec.check(a.shape(), (bt.ncols(), bt.nrows()))?;
        let columns_pruned = spec.prune.columns && !spec.prune.is_none();
        if !columns_pruned {
            if let Some(c) = self.run(|| semiring::dot_products_given_bt(a, bt, spec))? {
                return Ok(c);
            }
        }
        let b = self.run(|| bt.transpose())?;
        self.multiply_spec(a, &b, spec)
    }

    /// The symbolic phase: C's structure size per row, as a reusable plan.
    ///
    /// # Errors
    /// As [`CpuBackend::multiply`].
    pub fn symbolic<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<CpuPlan> {
        let (a, b) = (a.into(), b.into());
        self.run(|| {
            let s = self.symbolic_parts(a, b, Setup::of(a, b)?, Shortcuts::of(&a, &b))?;
            Ok(CpuPlan {
                a: Structure::of(a),
                b: Structure::of(b),
                c_row_offsets: s.offsets,
                chunks: s.chunks,
                total_nprod: s.total_nprod,
                shortcuts: s.shortcuts,
                compressed: s.compressed.map(Box::new),
            })
        })
    }

    /// The numeric phase for matrices with exactly the structure `plan` was
    /// built for (values may differ).
    ///
    /// # Errors
    /// [`Error::StructureMismatch`] naming which matrix differs;
    /// [`Error::HostOutOfMemory`].
    pub fn numeric<'a, 'b, T: Scalar>(
        &self,
        plan: &CpuPlan,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        for (name, s, m) in [("A", &plan.a, a), ("B", &plan.b, b)] {
            if let Some(what) = s.view().difference(&m.structure()) {
                return Err(Error::StructureMismatch(format!(
                    "{name} is not the matrix the plan was built for: it {what}"
                )));
            }
        }
        self.run(|| {
            let offsets = plan.c_row_offsets.clone();
            let (chunks, compressed) = (&plan.chunks, plan.compressed.as_deref());
            self.numeric_parts(
                PlusTimes,
                a,
                b,
                offsets,
                chunks,
                &plan.shortcuts,
                compressed,
            )
        })
    }

    /// The accumulator for products with `b`: hash tables past the dense
    /// cut-off; below it dense, or both ([`Mixed`]) when C is wider than
    /// [`MIXED_COLUMNS`] and A's columns are scattered.
    fn kind<T: Scalar>(&self, b: &CsrView<'_, T>, prefetch: bool) -> Kind {
        if b.ncols() > self.dense_cutoff {
            Kind::Hash
        } else if b.ncols() > MIXED_COLUMNS && prefetch {
            Kind::Mixed
        } else {
            Kind::Dense
        }
    }

    /// `C = A ⊕.⊗ B` with `ops`: in one pass when A is hypersparse or
    /// every row short ([`one_pass`]), otherwise the symbolic and numeric
    /// phases.
    fn product<T: Scalar, O: Ops<T>>(
        &self,
        ops: O,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
    ) -> Result<CsrMatrix<T>> {
        let parts = rayon::current_num_threads() * CHUNKS_PER_THREAD;
        let one_pass = |chunks: &[Range<usize>]| {
            let prefetch = prefetch::worth_it(&a);
            let accumulators = Accumulators::new(self.kind(&b, prefetch), b.ncols());
            one_pass::multiply(ops, a, b, chunks, &accumulators, prefetch)
        };
        if one_pass::hypersparse(&a) {
            spgemm_core::reference::check_dimensions(a.shape(), b.shape())?;
            return one_pass(&one_pass::by_entries(&a, parts));
        }
        let setup = Setup::of(a, b)?;
        if one_pass::short(setup.max_nprod) {
            return one_pass(&setup.chunks);
        }
        let s = self.symbolic_parts(a, b, setup, Shortcuts::of(&a, &b))?;
        let compressed = s.compressed.as_ref();
        self.numeric_parts(ops, a, b, s.offsets, &s.chunks, &s.shortcuts, compressed)
    }

    fn symbolic_parts<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        setup: Setup,
        shortcuts: Shortcuts,
    ) -> Result<Symbolic> {
        let Setup {
            nprod,
            total_nprod: total,
            chunks,
            ..
        } = setup;
        let mut counts = rows::zeros(a.nrows() + 1, "C row offsets")?;
        let kind = self.kind(&b, shortcuts.prefetch);
        let compressed = match kind {
            Kind::Dense | Kind::Mixed => CompressedRows::of(&b),
            Kind::Hash => None,
        };
        {
            let mut slices = Vec::with_capacity(chunks.len());
            let mut rest = &mut counts[1..];
            for r in &chunks {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(r.len());
                slices.push(head);
                rest = tail;
            }
            let accumulators = Accumulators::new(kind, b.ncols());
            chunks.par_iter().zip(slices).for_each(|(r, out)| {
                accumulators.with(|acc| {
                    let rows = r.clone();
                    let s = &shortcuts;
                    match (&compressed, acc) {
                        (Some(cb), Either::Dense(acc)) => {
                            s.count_rows(a, b, rows, &nprod, out, false, |c, _| {
                                acc.count_compressed(c, cb)
                            })
                        }
                        (Some(cb), Either::Mixed(acc)) => {
                            s.count_rows(a, b, rows, &nprod, out, false, |c, _| {
                                acc.count_compressed(c, cb)
                            })
                        }
                        (_, Either::Dense(acc)) => {
                            s.count_rows(a, b, rows, &nprod, out, s.prefetch_counts, |c, p| {
                                acc.count(c, &b, p)
                            })
                        }
                        (_, Either::Mixed(acc)) => {
                            s.count_rows(a, b, rows, &nprod, out, s.prefetch_counts, |c, p| {
                                acc.count(c, &b, p)
                            })
                        }
                        (_, Either::Hash(acc)) => {
                            s.count_rows(a, b, rows, &nprod, out, s.prefetch_counts, |c, p| {
                                acc.count(c, &b, p)
                            })
                        }
                    }
                })
            });
        }
        rows::prefix_sum(&mut counts);
        Ok(Symbolic {
            offsets: counts,
            chunks,
            total_nprod: total,
            shortcuts,
            compressed,
        })
    }

    /// C's columns and values into `offsets`' rows; rows on a dense
    /// accumulator found from B's packed rows `compressed` first where
    /// `⊕` has an exact identity ([`Dense::fill_compressed`]).
    #[allow(clippy::too_many_arguments)]
    fn numeric_parts<T: Scalar, O: Ops<T>>(
        &self,
        ops: O,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        offsets: Vec<usize>,
        chunks: &[Range<usize>],
        shortcuts: &Shortcuts,
        compressed: Option<&CompressedRows>,
    ) -> Result<CsrMatrix<T>> {
        let nnz = *offsets.last().unwrap_or(&0);
        // C's arrays are written once, in parallel, straight into their
        // uninitialised capacity (no serial zero-fill pass).
        let mut cols: Vec<u32> = try_with_capacity(nnz, "C column indices")?;
        let mut vals: Vec<T> = try_with_capacity(nnz, "C values")?;
        advise_huge_pages(&mut cols);
        advise_huge_pages(&mut vals);
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(chunks.iter().map(|r| offsets[r.end]))
            .collect();
        let parts = split_rows_mut(
            &bounds,
            &mut cols.spare_capacity_mut()[..nnz],
            &mut vals.spare_capacity_mut()[..nnz],
        );
        let accumulators = Accumulators::new(self.kind(&b, shortcuts.prefetch), b.ncols());
        let written: usize = chunks
            .par_iter()
            .zip(parts)
            .map(|(r, (c, v))| {
                let rows = r.clone();
                accumulators.with(|acc| match (acc, compressed, ops.exact_identity()) {
                    (Either::Dense(acc), Some(cb), Some(e)) => {
                        shortcuts.fill_rows(ops, a, b, rows, &offsets, c, v, |ac, av, c, v| {
                            acc.fill_compressed(ops, e, ac, av, &b, cb, c, v)
                        })
                    }
                    (Either::Dense(acc), ..) => {
                        shortcuts.fill_rows(ops, a, b, rows, &offsets, c, v, |ac, av, c, v| {
                            acc.fill(ops, ac, av, &b, c, v)
                        })
                    }
                    (Either::Mixed(acc), ..) => {
                        shortcuts.fill_rows(ops, a, b, rows, &offsets, c, v, |ac, av, c, v| {
                            acc.fill(ops, ac, av, &b, c, v)
                        })
                    }
                    (Either::Hash(acc), ..) => {
                        shortcuts.fill_rows(ops, a, b, rows, &offsets, c, v, |ac, av, c, v| {
                            acc.fill(ops, ac, av, &b, c, v)
                        })
                    }
                })
            })
            .sum();
        // Each row writes exactly the count the symbolic phase found for the
        // same structure; anything else is a bug in this crate.
        assert_eq!(
            written, nnz,
            "internal error: numeric phase wrote {written} of {nnz} entries"
        );
        // SAFETY: all `nnz` entries were initialised (checked above).
        unsafe {
            cols.set_len(nnz);
            vals.set_len(nnz);
        }
        // SAFETY: offsets are a prefix sum of the exact per-row counts, and
        // every column written comes from B's checked column indices.
        Ok(unsafe { CsrMatrix::new_unchecked(a.nrows(), b.ncols(), offsets, cols, vals) })
    }
}

/// Which accumulator a product's threads use.
#[derive(Clone, Copy)]
enum Kind {
    Dense,
    Mixed,
    Hash,
}

/// An accumulator of one [`Kind`].
enum Either<T> {
    Dense(Dense<T>),
    Mixed(Mixed<T>),
    Hash(Hash<T>),
}

/// One accumulator per thread of the pool, kept for all the chunks it
/// takes: a dense one is as wide as C (12 bytes a column for f64), and
/// there are eight chunks a thread.
struct Accumulators<T> {
    kind: Kind,
    ncols: usize,
    slots: PerThread<Either<T>>,
}

impl<T: Scalar> Accumulators<T> {
    fn new(kind: Kind, ncols: usize) -> Self {
        Self {
            kind,
            ncols,
            slots: PerThread::new(),
        }
    }

    /// Runs `f` with this thread's accumulator.
    fn with<R>(&self, f: impl FnOnce(&mut Either<T>) -> R) -> R {
        let make = || match self.kind {
            Kind::Dense => Either::Dense(Dense::new(self.ncols)),
            Kind::Mixed => Either::Mixed(Mixed::new(self.ncols)),
            Kind::Hash => Either::Hash(Hash::new()),
        };
        self.slots.with(make, f)
    }
}

/// Asks Linux for transparent huge pages on a large output buffer, so that
/// filling it takes a few hundred page faults instead of hundreds of
/// thousands (THP is often in `madvise` mode). Only a hint: failure is ignored.
fn advise_huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < 4 * HUGE {
            return;
        }
        let start = v.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let len = (start + bytes - aligned) / HUGE * HUGE;
        // SAFETY: the range lies inside the vector's own allocation, and
        // MADV_HUGEPAGE changes no contents, only how pages are backed.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_and_dense_agree() {
        let a = spgemm_core::generate::uniform::<f64>(300, 300, 9, 1).unwrap();
        let d = CpuBackend::new().multiply(&a, &a).unwrap();
        let h = CpuBackend::new()
            .with_dense_cutoff(0)
            .multiply(&a, &a)
            .unwrap();
        assert_eq!(d.row_offsets(), h.row_offsets());
        assert_eq!(d.col_indices(), h.col_indices());
        spgemm_core::verify::check_product(&a, &a, &h)
            .unwrap()
            .unwrap();
    }

    #[test]
    fn scattered_products_prefetch_and_stay_exact() {
        // Random columns over more than 2¹⁸ rows (wider than MIXED_COLUMNS,
        // and far enough from the diagonal to prefetch); row 0 with 700
        // entries (about 2,100 products: the dense half of the mixed
        // accumulator), the others 3 (its sorting half).
        let n = (1 << 18) + 4096;
        let er = spgemm_core::generate::erdos_renyi::<f64>(n, 3, 7).unwrap();
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..n {
            let (c, v) = er.row(i);
            rows.extend(std::iter::repeat_n(i, c.len()));
            cols.extend_from_slice(c);
            vals.extend_from_slice(v);
        }
        for k in 0..700u32 {
            rows.push(0);
            cols.push(k.wrapping_mul(2_654_435_761) % n as u32);
            vals.push(1.0 + f64::from(k));
        }
        let a = CsrMatrix::from_triplets(n, n, &rows, &cols, &vals).unwrap();
        assert!(prefetch::worth_it(&a.view()));
        let shortcuts = Shortcuts::of(&a.view(), &a.view());
        assert!(matches!(
            CpuBackend::new().kind(&a.view(), shortcuts.prefetch),
            Kind::Mixed
        ));
        let stencil = spgemm_core::generate::stencil_3d::<f64>(32, 27, 1).unwrap();
        assert!(!prefetch::worth_it(&stencil.view()));
        for cutoff in [DEFAULT_DENSE_CUTOFF, 0] {
            let cpu = CpuBackend::with_threads(3)
                .unwrap()
                .with_dense_cutoff(cutoff);
            let c = cpu.multiply(&a, &a).unwrap();
            spgemm_core::verify::check_product(&a, &a, &c)
                .unwrap()
                .unwrap();
        }
    }

    #[test]
    fn plan_refuses_other_structure() {
        let a = spgemm_core::generate::uniform::<f64>(50, 50, 4, 1).unwrap();
        let other = spgemm_core::generate::uniform::<f64>(50, 50, 4, 2).unwrap();
        let cpu = CpuBackend::new();
        let plan = cpu.symbolic(&a, &a).unwrap();
        let mut a2 = a.clone();
        a2.values_mut().iter_mut().for_each(|v| *v *= 2.0);
        let c = cpu.numeric(&plan, &a2, &a2).unwrap();
        spgemm_core::verify::check_product(&a2, &a2, &c)
            .unwrap()
            .unwrap();
        assert!(matches!(
            cpu.numeric(&plan, &other, &a),
            Err(Error::StructureMismatch(_))
        ));
        assert!(matches!(
            cpu.numeric(&plan, &a, &other),
            Err(Error::StructureMismatch(_))
        ));
    }
}
