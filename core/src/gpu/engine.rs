//! The driver of the GPU pipeline (see the module docs of [`crate::gpu`]).

use super::config::GpuConfig;
use super::kernels::DevicePtr;
use super::launch::{KernelSet, Launcher, STREAMS};
use super::matrix::{GpuMatrix, GpuMatrixRef, GpuPlan, HostCsr, PhaseTimes, RowsOf, Structure};
use super::memory::{DeviceArray, Usage};
use super::product::{too_large, Product};
use super::program;
use super::prune_in_pass::InPass;
use super::staging::{bytes_of, StagingPool};
use super::streamed::Streamed;
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::{Device, KernelProgram};
use crate::error::{try_copied, Error, Result};
use crate::scalar::Scalar;
use crate::semiring::{Prune, Semiring};
use crate::table::KernelTable;
use rayon::prelude::*;
use std::any::TypeId;
use std::sync::{Arc, Mutex};

const _: () = assert!(
    std::mem::size_of::<usize>() == 8,
    "spgemm's GPU path needs 64-bit usize"
);

/// Compiled kernel sets, each under its key (a value type and a semiring).
type Sets<K, D> = Mutex<Vec<(K, Arc<KernelSet<D>>)>>;

/// SpGEMM on one device: compiled kernels per value type (and, for masked
/// products, per semiring), a pool of streams.
///
/// `GpuEngine` is `Send + Sync` when the device is: several host threads
/// may multiply at once, each on its own streams.
pub struct GpuEngine<D: Device> {
    pub(super) device: D,
    prelude: &'static str,
    body: &'static str,
    masked_dot: &'static str,
    pub(super) config: GpuConfig,
    tables: Sets<(TypeId, Semiring, bool), D>,
    masked: Sets<(TypeId, Semiring), D>,
    streams: Mutex<Vec<Vec<D::Stream>>>,
    pub(super) staging: StagingPool<D>,
    /// Page-locked memory for the products' small reads
    /// ([`Launcher::read`]).
    reads: Mutex<Option<D::Pinned>>,
}

impl<D: Device> GpuEngine<D> {
    /// An engine on `device` whose kernels are `prelude` + `body` (the
    /// product) and `prelude` + `masked_dot` (masked products by dot
    /// products, [`GpuEngine::masked_dot`]).
    pub fn new(
        device: D,
        prelude: &'static str,
        body: &'static str,
        masked_dot: &'static str,
    ) -> Self {
        Self {
            device,
            prelude,
            body,
            masked_dot,
            config: GpuConfig::default(),
            tables: Mutex::new(Vec::new()),
            masked: Mutex::new(Vec::new()),
            streams: Mutex::new(Vec::new()),
            staging: StagingPool::default(),
            reads: Mutex::new(None),
        }
    }

    /// The engine configured by `config` (every field but `devices`). Set
    /// it before the first product: the kernel table and the sort are
    /// compiled in once per value type.
    pub fn with_config(mut self, config: GpuConfig) -> Self {
        self.config = config;
        self
    }

    /// The engine's configuration.
    pub fn config(&self) -> &GpuConfig {
        &self.config
    }

    /// The explicit device-memory budget, if one was set.
    pub fn memory_budget(&self) -> Option<usize> {
        self.config.memory_budget
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The kernel table used for values of type `T`.
    ///
    /// # Errors
    /// [`Error::TableDoesNotFit`] when the chosen table does not fit the
    /// device; [`Error::NotOnBackend`] for a type the kernels do not take
    /// ([`crate::Bool`]: every product, upload and transpose of the engine
    /// refuses it through here).
    pub fn table<T: Scalar>(&self) -> Result<KernelTable> {
        if !T::DEVICE {
            return Err(Error::NotOnBackend(format!(
                "the GPU kernels do not take {} values: GPU backends' host products \
                 (Backend::multiply, multiply_spec, reduce_spec) take them as i32 0 and 1; \
                 convert them for the device's own calls",
                T::NAME
            )));
        }
        KernelTable::configured(
            self.config.table,
            self.device.properties(),
            std::mem::size_of::<T>(),
        )
    }

    /// The programs (compilation units: source and kernel names) compiled
    /// for values of type `T`.
    ///
    /// # Errors
    /// As [`GpuEngine::table`].
    pub fn program<T: Scalar>(&self) -> Result<Vec<KernelProgram>> {
        let units = program::build::<T>(
            self.prelude,
            self.body,
            &self.table::<T>()?,
            self.config.sort,
            Semiring::PlusTimes,
        );
        Ok(units.into_iter().map(|u| u.program).collect())
    }

    /// Compiles (or loads from the cache) the kernels for `T` now rather
    /// than at the first product.
    ///
    /// # Errors
    /// A compile error.
    pub fn prepare<T: Scalar>(&self) -> Result<()> {
        self.kernels::<T>().map(|_| ())
    }

    pub(super) fn kernels<T: Scalar>(&self) -> Result<Arc<KernelSet<D>>> {
        self.kernels_for::<T>(Semiring::PlusTimes)
    }

    /// The product's kernels for `T` with `semiring`'s operators, compiled
    /// (or loaded from the cache) at their first use.
    pub(super) fn kernels_for<T: Scalar>(&self, semiring: Semiring) -> Result<Arc<KernelSet<D>>> {
        self.kernel_set::<T>(semiring, false)
    }

    /// [`GpuEngine::kernels_for`], and with `pruning` the numeric bins'
    /// kernels that prune rows as they write them
    /// ([`program::build_pruning`]; the other units are the same programs,
    /// loaded from the cache).
    fn kernel_set<T: Scalar>(
        &self,
        semiring: Semiring,
        pruning: bool,
    ) -> Result<Arc<KernelSet<D>>> {
        let key = (TypeId::of::<T>(), semiring, pruning);
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, set)) = tables.iter().find(|(k, _)| *k == key) {
            return Ok(set.clone());
        }
        let table = self.table::<T>()?;
        let build = if pruning {
            program::build_pruning::<T>
        } else {
            program::build::<T>
        };
        let units = build(self.prelude, self.body, &table, self.config.sort, semiring);
        let set = Arc::new(self.load(table, &units, semiring)?);
        tables.push((key, set.clone()));
        Ok(set)
    }

    /// The masked dot-product kernel for `T` and `semiring`, compiled (or
    /// loaded from the cache) at its first use.
    pub(super) fn masked_kernels<T: Scalar>(
        &self,
        semiring: Semiring,
    ) -> Result<Arc<KernelSet<D>>> {
        let key = (TypeId::of::<T>(), semiring);
        let mut sets = self.masked.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, set)) = sets.iter().find(|(k, _)| *k == key) {
            return Ok(set.clone());
        }
        let unit = program::masked_dot::<T>(self.prelude, self.masked_dot, semiring);
        let set = Arc::new(self.load(self.table::<T>()?, &[unit], semiring)?);
        sets.push((key, set.clone()));
        Ok(set)
    }

    /// Compiles and loads `units`, each on its own thread (compilers are
    /// single-threaded).
    fn load(
        &self,
        table: KernelTable,
        units: &[program::Unit],
        semiring: Semiring,
    ) -> Result<KernelSet<D>> {
        let loaded = std::thread::scope(|s| {
            let handles: Vec<_> = units
                .iter()
                .map(|u| s.spawn(|| self.device.load(&u.program)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect::<std::result::Result<Vec<_>, _>>()
        })?;
        let kernels = units
            .iter()
            .flat_map(|u| u.kernels.iter().copied())
            .zip(loaded.into_iter().flatten())
            .collect();
        Ok(KernelSet {
            table,
            sort: self.config.sort,
            semiring,
            kernels,
        })
    }

    pub(super) fn take_streams(&self) -> Result<Vec<D::Stream>> {
        if let Some(s) = self.streams.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(s);
        }
        (0..STREAMS)
            .map(|_| Ok(self.device.create_stream()?))
            .collect()
    }

    pub(super) fn give_streams(&self, s: Vec<D::Stream>) {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(s);
    }

    /// Copies `m` to the device (structure and values; a host copy of the
    /// structure is kept to check plans) through pinned staging buffers.
    /// Unsorted input is accepted.
    ///
    /// # Errors
    /// [`Error::TooLarge`] beyond `u32::MAX` rows; device errors (out of memory).
    pub fn upload<'a, T: Scalar>(&self, m: impl Into<CsrView<'a, T>>) -> Result<GpuMatrix<D, T>> {
        self.upload_with(m.into(), true)
    }

    /// [`GpuEngine::upload`], keeping a host copy of the structure only
    /// when `keep_host` (plans need it; one product does not).
    pub(super) fn upload_with<T: Scalar>(
        &self,
        m: CsrView<'_, T>,
        keep_host: bool,
    ) -> Result<GpuMatrix<D, T>> {
        let [g] = self.upload_all([m], keep_host)?;
        Ok(g)
    }

    /// [`GpuEngine::upload_with`] for several matrices in one pipeline
    /// through the staging buffers (one ramp of pieces and one wait for
    /// all their arrays, not one per matrix).
    pub(super) fn upload_all<T: Scalar, const N: usize>(
        &self,
        ms: [CsrView<'_, T>; N],
        keep_host: bool,
    ) -> Result<[GpuMatrix<D, T>; N]> {
        if let Some(m) = ms.iter().find(|m| m.nrows() > u32::MAX as usize - 1) {
            return Err(too_large("rows", m.nrows()));
        }
        self.with_launcher::<T, _>(|l| self.upload_on(l, ms, keep_host, true))
    }

    /// `m`'s structure on the device without its values (an empty values
    /// array): for products that read none (`any_pair`).
    ///
    /// # Errors
    /// As [`GpuEngine::upload_all`].
    pub(super) fn upload_structure<T: Scalar>(&self, m: CsrView<'_, T>) -> Result<GpuMatrix<D, T>> {
        if m.nrows() > u32::MAX as usize - 1 {
            return Err(too_large("rows", m.nrows()));
        }
        let [g] = self.with_launcher::<T, _>(|l| self.upload_on(l, [m], false, false))?;
        Ok(g)
    }

    /// [`GpuEngine::upload_all`] on `l`'s stream 0, the values only when
    /// `values`. Whether rows are sorted is found on the device after the
    /// copies ([`super::checks::sorted_on_device`]).
    fn upload_on<T: Scalar, const N: usize>(
        &self,
        l: &Launcher<'_, D>,
        ms: [CsrView<'_, T>; N],
        keep_host: bool,
        values: bool,
    ) -> Result<[GpuMatrix<D, T>; N]> {
        let (dev, s) = (&self.device, &l.streams[0]);
        let mut arrays = Vec::with_capacity(N);
        for m in &ms {
            arrays.push((
                DeviceArray::<D, u64>::alloc(dev, s, m.nrows() + 1, "row offsets", l.usage)?,
                DeviceArray::<D, u32>::alloc(dev, s, m.nnz(), "column indices", l.usage)?,
                DeviceArray::<D, T>::alloc(
                    dev,
                    s,
                    if values { m.nnz() } else { 0 },
                    "values",
                    l.usage,
                )?,
            ));
        }
        let parts: Vec<(&[u8], &D::Buffer)> = ms
            .iter()
            .zip(&arrays)
            .flat_map(|(m, (rpt, col, val))| {
                let offsets: &[u64] = bytemuck::cast_slice(m.row_offsets());
                [
                    (bytemuck::cast_slice(offsets), &rpt.buf),
                    (bytemuck::cast_slice(m.col_indices()), &col.buf),
                    (bytemuck::cast_slice(m.values()), &val.buf),
                ]
            })
            .filter_map(|(bytes, arr)| Some((bytes, arr.as_ref()?)))
            .collect();
        self.staging.with(|st| st.upload(dev, s, &parts))?;
        let uploaded: Vec<_> = ms
            .iter()
            .zip(&arrays)
            .map(|(m, (rpt, col, _))| (rpt, col, m.ncols()))
            .collect();
        let sorted = super::checks::sorted_on_device(l, &uploaded)?;
        let mut hosts = Vec::with_capacity(N);
        for m in &ms {
            hosts.push(if keep_host {
                Some((
                    try_copied(m.row_offsets(), "row offsets")?,
                    try_copied(m.col_indices(), "column indices")?,
                ))
            } else {
                None
            });
        }
        let (mut arrays, mut hosts) = (arrays.into_iter(), hosts.into_iter());
        Ok(std::array::from_fn(|i| {
            let (m, (rpt, col, val)) = (ms[i], arrays.next().expect("arrays of every matrix"));
            let host = hosts.next().expect("a host copy or none for every matrix");
            GpuMatrix {
                nrows: m.nrows(),
                ncols: m.ncols(),
                nnz: m.nnz(),
                structure: Arc::new(Structure { rpt, col, host }),
                val,
                sorted: sorted[i],
            }
        }))
    }

    /// A matrix with `m`'s structure (shared, not copied) and new `values`,
    /// copied through the pinned staging buffers.
    ///
    /// # Errors
    /// [`Error::ValuesLength`] unless `values.len() == m.nnz()`; device errors.
    pub fn with_values<T: Scalar>(
        &self,
        m: &GpuMatrix<D, T>,
        values: &[T],
    ) -> Result<GpuMatrix<D, T>> {
        if values.len() != m.nnz {
            return Err(Error::ValuesLength {
                columns: m.nnz,
                values: values.len(),
            });
        }
        let streams = self.take_streams()?;
        let (dev, s) = (&self.device, &streams[0]);
        let val = DeviceArray::<D, T>::alloc(dev, s, values.len(), "values", &Usage::default())
            .and_then(|val| {
                if let Some(buf) = &val.buf {
                    self.staging
                        .with(|st| st.upload(dev, s, &[(bytemuck::cast_slice(values), buf)]))?;
                }
                Ok(val)
            });
        self.give_streams(streams);
        let val = val?;
        Ok(GpuMatrix {
            val,
            structure: m.structure.clone(),
            ..*m
        })
    }

    /// Copies `m` back to the host through pinned staging buffers, the
    /// cores copying one piece out while the device copies the next.
    ///
    /// # Errors
    /// Device errors (including faults of earlier kernels); host out of memory.
    pub fn download<T: Scalar>(&self, m: &GpuMatrix<D, T>) -> Result<CsrMatrix<T>> {
        let HostCsr {
            mut offsets,
            mut cols,
            mut vals,
        } = HostCsr::zeroed(m.nrows, m.nnz)?;
        self.download_arrays(m, 0, &mut offsets, &mut cols, &mut vals)?;
        CsrMatrix::new(m.nrows, m.ncols, offsets, cols, vals)
    }

    /// Downloads `m` into its place in a larger C's host arrays: its row
    /// offsets (after the first, which is zero), shifted by `place.base`,
    /// into `place.offsets`, its columns and values into `place.cols` and
    /// `place.vals` (all of `m`'s lengths).
    ///
    /// # Errors
    /// Device errors.
    pub(super) fn download_into<T: Scalar>(
        &self,
        m: &GpuMatrix<D, T>,
        place: RowsOf<'_, T>,
    ) -> Result<()> {
        let RowsOf {
            offsets,
            base,
            cols,
            vals,
        } = place;
        self.download_arrays(m, 1, offsets, cols, vals)?;
        offsets.par_iter_mut().for_each(|o| *o += base);
        Ok(())
    }

    /// Copies `m`'s values (nnz of them, `values.len()`) into `values`
    /// through the staging buffers; its structure stays on the device.
    ///
    /// # Errors
    /// Device errors (including faults of earlier kernels).
    pub(super) fn download_values<T: Scalar>(
        &self,
        m: &GpuMatrix<D, T>,
        values: &mut [T],
    ) -> Result<()> {
        debug_assert_eq!(values.len(), m.nnz);
        let Some(buf) = &m.val.buf else {
            return Ok(());
        };
        let streams = self.take_streams()?;
        let (s, dev) = (&streams[0], &self.device);
        let r = self
            .staging
            .with(|st| st.download(dev, s, &mut [(buf, 0, bytes_of(values))]));
        self.give_streams(streams);
        r
    }

    /// Copies `m`'s row offsets from the `first`-th on into `offsets`, its
    /// columns into `cols` and its values into `vals`, in one pipeline
    /// through the staging buffers.
    fn download_arrays<T: Scalar>(
        &self,
        m: &GpuMatrix<D, T>,
        first: usize,
        offsets: &mut [usize],
        cols: &mut [u32],
        vals: &mut [T],
    ) -> Result<()> {
        let streams = self.take_streams()?;
        let (s, dev) = (&streams[0], &self.device);
        let r = self.staging.with(|st| {
            let mut parts: Vec<_> = [
                (&m.structure.rpt.buf, 8 * first, bytes_of(offsets)),
                (&m.structure.col.buf, 0, bytes_of(cols)),
                (&m.val.buf, 0, bytes_of(vals)),
            ]
            .into_iter()
            .filter_map(|(arr, offset, out)| arr.as_ref().map(|b| (b, offset, out)))
            .collect();
            st.download(dev, s, &mut parts)
        });
        self.give_streams(streams);
        r
    }

    /// `C = A·B` on the device (A is `M×K`, B is `K×N`), sorted rows,
    /// explicit zeros from cancellation kept; with the phase times.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`], [`Error::TooLarge`] (more than
    /// `u32::MAX` rows or columns), device errors (out of memory, launch or
    /// compile failures).
    pub fn multiply<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        self.run(a, b, None, None)
    }

    /// `C = A·B` as [`GpuEngine::multiply`] while B's values are still
    /// being written (by a transfer from another GPU): the symbolic phase,
    /// which reads only B's structure, runs at once, and the numeric phase
    /// waits on the device for `values_ready`, an event recorded on the
    /// stream that writes them.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply`].
    pub fn multiply_values_after<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        values_ready: &D::Event,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        self.run(a, b, None, Some(values_ready))
    }

    /// `C = A ⊕.⊗ B` on the device with `semiring` (A `M×K`, B `K×N`):
    /// the product's own two phases, its numeric kernels compiled with the
    /// semiring's `⊗` and `⊕` ([`Semiring::kernel_definitions`]; once per
    /// value type and semiring, on first use). C holds an entry wherever
    /// some `k` joins `i` and `j`, rows sorted. Accumulators start at `⊕`'s
    /// identity: an entry all of whose products are NaN holds the identity
    /// (`±∞`) under `min` and `max`, which skip NaN, where the CPU keeps the
    /// NaN. With the phase times.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply`] (there is no fallback to chunks of rows
    /// when C does not fit the device).
    pub fn multiply_semiring<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        semiring: Semiring,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        self.multiply_semiring_pruned(a, b, semiring, &Prune::default())
    }

    /// [`GpuEngine::multiply_semiring`] with C pruned as `prune` says
    /// (as [`GpuEngine::prune_device`] prunes): where the product runs in
    /// one pass ([`SymbolicMode`](super::SymbolicMode); short rows), each
    /// row is pruned by its threshold and, per row, its `keep` largest as
    /// it is written, so that C never exists unpruned (its arrays then
    /// have room for at most `keep` entries a row). After a symbolic
    /// phase, the rows of the shared-memory numeric bins are pruned the
    /// same way in their tables before they are written (C's arrays keep
    /// the symbolic phase's room; a dropped entry's place is marked) and
    /// only the longest rows (global and dense accumulators, rows of one
    /// product) are marked after the numeric phase; the marked places are
    /// then compacted away. A `keep` per column is a `keep` per row of
    /// `Cᵀ = Bᵀ ⊕.⊗ Aᵀ`, transposed back on the device
    /// ([`GpuEngine::transpose_device_sorted`]): C's columns are pruned
    /// as Cᵀ's rows are, not after C is formed. [`PhaseTimes::one_pass`]
    /// says which path
    /// ran.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply_semiring`] and [`GpuEngine::prune_device`].
    pub fn multiply_semiring_pruned<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        prune.check()?;
        if prune.columns && prune.keep.is_some() {
            return self.multiply_columns_kept(a, b, semiring, prune);
        }
        let in_pass = InPass::of(prune);
        let kernels = self.kernel_set::<T>(semiring, in_pass.is_some())?;
        // One bit a row of C: the rows the numeric bins pruned.
        let pruned_rows = match in_pass {
            Some(_) => Some(self.launching(&kernels, |l| {
                let words = a.nrows.div_ceil(32);
                let rows = l.alloc::<u32>(0, words, "rows pruned by the numeric phase")?;
                rows.zero(l.device, &l.streams[0], 0, words)?;
                l.device.synchronize(&l.streams[0])?;
                Ok(rows)
            })?),
            None => None,
        };
        let in_pass = in_pass.map(|p| InPass {
            pruned_rows: pruned_rows.as_ref().map_or(DevicePtr(0), |r| r.ptr()),
            ..p
        });
        let ((c, mut times), peak) =
            self.with_product_on(&kernels, a, b, (None, in_pass), |p| p.multiply(None))?;
        times.peak_bytes = peak;
        // The one pass pruned every row; without a bitmap nothing is left.
        let c = match &pruned_rows {
            Some(rows) if !times.one_pass => self.prune_after_numeric(c, prune, rows)?,
            _ => c,
        };
        Ok((c, times))
    }

    /// [`GpuEngine::multiply_semiring`] from the host to the host: A and B
    /// uploaded (once when they are the same arrays), C pruned on the
    /// device as `prune` says ([`GpuEngine::prune_device`]) and downloaded.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply_semiring`] and [`GpuEngine::prune_device`];
    /// host out of memory.
    pub fn multiply_host_semiring<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<CsrMatrix<T>> {
        crate::reference::check_dimensions(a.shape(), b.shape())?;
        let (ga, gb) = if a.same_arrays(&b) {
            (self.upload_with(a, false)?, None)
        } else {
            let [ga, gb] = self.upload_all([a, b], false)?;
            (ga, Some(gb))
        };
        let (c, _) =
            self.multiply_semiring_pruned(&ga, gb.as_ref().unwrap_or(&ga), semiring, prune)?;
        drop((ga, gb));
        self.download(&c)
    }

    /// The symbolic phase of `C = A·B`, kept as a plan.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply`].
    pub fn symbolic<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
    ) -> Result<GpuPlan<D, T>> {
        let sym = self.with_product(a, b, |p| p.symbolic())?.0;
        let (crpt, nnz, typical) = (sym.crpt, sym.nnz, sym.typical);
        Ok(GpuPlan {
            a: GpuMatrixRef::of(a),
            b: GpuMatrixRef::of(b),
            crpt: Arc::new(crpt),
            nnz,
            typical,
            _t: std::marker::PhantomData,
        })
    }

    /// The numeric phase with a plan: `a` and `b` must have the structure
    /// the plan was built for; their values may differ.
    ///
    /// # Errors
    /// [`Error::StructureMismatch`]; device errors.
    pub fn numeric<T: Scalar>(
        &self,
        plan: &GpuPlan<D, T>,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        plan_matches(plan, a, b)?;
        self.run(a, b, Some(plan), None)
    }

    /// `C = A·B` into host memory, C downloaded in chunks of rows while
    /// later chunks compute (see [`GpuConfig::download_chunk_bytes`]):
    /// into `place` (a block of rows of a larger C, of exactly this
    /// product's rows and entries) when given, else into a C of its own.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply`]; host out of memory;
    /// [`Error::StructureMismatch`] when `place` has other sizes.
    pub(super) fn multiply_streamed<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        place: Option<RowsOf<'_, T>>,
    ) -> Result<Streamed<T>> {
        let copy = self.device.create_copy_stream()?;
        let chunk_entries = self.config.download_chunk_bytes / (4 + std::mem::size_of::<T>());
        let (s, _peak) = self.staging.with(|st| {
            self.with_product(a, b, |p| {
                p.multiply_to_host(st, &copy, chunk_entries, place)
            })
        })?;
        Ok(s)
    }

    /// The whole product (from `plan` when given; the numeric phase after
    /// `values_ready` when given) with its phase times and peak memory.
    fn run<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        plan: Option<&GpuPlan<D, T>>,
        values_ready: Option<&D::Event>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        let ((c, mut times), peak) =
            self.with_product_after(a, b, values_ready, |p| p.multiply(plan))?;
        times.peak_bytes = peak;
        Ok((c, times))
    }

    /// Runs `f` on a product in flight (kernels for `T`, a set of streams,
    /// memory accounting) after checking the shapes; returns its result
    /// and the peak device bytes it used. The streams go back to the pool
    /// whatever the outcome.
    pub(super) fn with_product<T: Scalar, R>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        f: impl FnOnce(&Product<'_, D, T>) -> Result<R>,
    ) -> Result<(R, usize)> {
        self.with_product_after(a, b, None, f)
    }

    /// [`GpuEngine::with_product`] with B's values complete only once
    /// `values_ready` has (`None`: they are).
    fn with_product_after<T: Scalar, R>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        values_ready: Option<&D::Event>,
        f: impl FnOnce(&Product<'_, D, T>) -> Result<R>,
    ) -> Result<(R, usize)> {
        self.with_product_on(&*self.kernels::<T>()?, a, b, (values_ready, None), f)
    }

    /// [`GpuEngine::with_product_after`] with `kernels` (another
    /// semiring's).
    fn with_product_on<T: Scalar, R>(
        &self,
        kernels: &KernelSet<D>,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        (values_ready, prune): (Option<&D::Event>, Option<InPass>),
        f: impl FnOnce(&Product<'_, D, T>) -> Result<R>,
    ) -> Result<(R, usize)> {
        self.launching(kernels, |l| {
            let product = Product {
                launcher: *l,
                options: &self.config,
                a,
                b,
                pending: None,
                values_ready,
                prune,
            };
            product.check()?;
            Ok((f(&product)?, l.usage.peak()))
        })
    }

    /// Runs `f` with a launcher on this engine: the kernels for `T`, a set
    /// of streams from the pool (given back whatever the outcome) and
    /// memory accounting of its own.
    pub(super) fn with_launcher<T: Scalar, R>(
        &self,
        f: impl FnOnce(&Launcher<'_, D>) -> Result<R>,
    ) -> Result<R> {
        self.launching(&*self.kernels::<T>()?, f)
    }

    /// [`GpuEngine::with_launcher`] with `kernels`.
    pub(super) fn launching<R>(
        &self,
        kernels: &KernelSet<D>,
        f: impl FnOnce(&Launcher<'_, D>) -> Result<R>,
    ) -> Result<R> {
        let streams = self.take_streams()?;
        let usage = Usage::default();
        let l = Launcher {
            device: &self.device,
            kernels,
            streams: &streams,
            usage: &usage,
            reads: &self.reads,
        };
        let out = f(&l);
        self.give_streams(streams);
        out
    }
}

/// [`Error::StructureMismatch`] unless `a` and `b` have the structures
/// `plan` was built for.
pub(super) fn plan_matches<D: Device, T: Scalar>(
    plan: &GpuPlan<D, T>,
    a: &GpuMatrix<D, T>,
    b: &GpuMatrix<D, T>,
) -> Result<()> {
    for (name, r, m) in [("A", &plan.a, a), ("B", &plan.b, b)] {
        if let Some(what) = r.difference(m) {
            return Err(Error::StructureMismatch(format!(
                "{name} is not the matrix the plan was built for: it {what}"
            )));
        }
    }
    Ok(())
}
