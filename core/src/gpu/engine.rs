//! The driver of the GPU pipeline (see the module docs of [`crate::gpu`]).

use super::memory::{DeviceArray, Usage};
use super::program::{self, k, SortVariant};
use crate::csr::CsrMatrix;
use crate::device::{Device, KernelArg, KernelProgram, LaunchShape};
use crate::error::{Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;
use crate::table::{group_size, KernelTable};
use std::any::TypeId;
use std::sync::{Arc, Mutex};

const _: () = assert!(
    std::mem::size_of::<usize>() == 8,
    "spgemm's GPU path needs 64-bit usize"
);

/// Streams one product spreads its bins over.
const STREAMS: usize = 4;
/// Threads per block of the setup, binning and scan kernels.
const BLOCK: u32 = 256;
const SCAN_BLOCK: u32 = 1024;
const SCAN_TILE: usize = SCAN_BLOCK as usize * 4;

/// Row structure of a matrix on the device, shared by every matrix that
/// has it (see [`GpuMatrix::with_values`]), with a host copy when it came
/// from the host (to check plans against).
struct Structure<D: Device> {
    rpt: DeviceArray<D, u64>,
    col: DeviceArray<D, u32>,
    host: Option<(Vec<usize>, Vec<u32>)>,
}

/// A CSR matrix in device memory: `nrows + 1` 64-bit row offsets, `nnz`
/// `u32` columns and `nnz` values.
pub struct GpuMatrix<D: Device, T> {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    structure: Arc<Structure<D>>,
    val: DeviceArray<D, T>,
    sorted: bool,
}

impl<D: Device, T: Scalar> GpuMatrix<D, T> {
    /// Rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.nnz
    }
    /// Whether `self` and `other` share their structure (offsets and columns).
    pub fn same_structure(&self, other: &GpuMatrix<D, T>) -> bool {
        self.nrows == other.nrows
            && self.ncols == other.ncols
            && (Arc::ptr_eq(&self.structure, &other.structure)
                || matches!((&self.structure.host, &other.structure.host), (Some(x), Some(y)) if x == y))
    }
}

/// Milliseconds of each phase of one product, from device events, and the
/// peak device memory it used beyond its inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    /// Setup: products per row, B's longest row.
    pub setup_ms: f64,
    /// Symbolic binning, symbolic kernels and scan.
    pub symbolic_ms: f64,
    /// Numeric binning, C's allocation and numeric kernels.
    pub numeric_ms: f64,
    /// The whole product, first event to last.
    pub total_ms: f64,
    /// Peak device bytes beyond A and B.
    pub peak_bytes: usize,
}

/// The symbolic result of `C = A·B`: C's row offsets on the device. Only
/// [`GpuEngine::symbolic`] makes one; [`GpuEngine::numeric`] reruns the
/// numeric phase for matrices of the same structure and refuses others.
pub struct GpuPlan<D: Device, T> {
    a: GpuMatrixRef<D>,
    b: GpuMatrixRef<D>,
    crpt: Arc<DeviceArray<D, u64>>,
    nnz: usize,
    max_b_row: u64,
    _t: std::marker::PhantomData<T>,
}

struct GpuMatrixRef<D: Device> {
    nrows: usize,
    ncols: usize,
    structure: Arc<Structure<D>>,
}

impl<D: Device> GpuMatrixRef<D> {
    fn of<T: Scalar>(m: &GpuMatrix<D, T>) -> Self {
        Self {
            nrows: m.nrows,
            ncols: m.ncols,
            structure: m.structure.clone(),
        }
    }
    fn matches<T: Scalar>(&self, m: &GpuMatrix<D, T>) -> bool {
        self.nrows == m.nrows
            && self.ncols == m.ncols
            && (Arc::ptr_eq(&self.structure, &m.structure)
                || matches!((&self.structure.host, &m.structure.host), (Some(x), Some(y)) if x == y))
    }
}

impl<D: Device, T> GpuPlan<D, T> {
    /// nnz(C).
    pub fn nnz(&self) -> usize {
        self.nnz
    }
}

struct KernelSet<D: Device> {
    table: KernelTable,
    kernels: Vec<D::Kernel>,
}

/// SpGEMM on one device: compiled kernels per value type, a pool of streams.
///
/// `GpuEngine` is `Send + Sync` when the device is: several host threads
/// may multiply at once, each on its own streams.
pub struct GpuEngine<D: Device> {
    device: D,
    prelude: &'static str,
    body: &'static str,
    sort: SortVariant,
    tables: Mutex<Vec<(TypeId, Arc<KernelSet<D>>)>>,
    streams: Mutex<Vec<Vec<D::Stream>>>,
}

fn too_large(what: &'static str, value: usize) -> Error {
    Error::TooLarge {
        what,
        value: value as u128,
        limit: u32::MAX as u128,
    }
}

fn blocks_for(n: usize, per_block: usize, cap: usize) -> u32 {
    n.div_ceil(per_block.max(1)).clamp(1, cap) as u32
}

impl<D: Device> GpuEngine<D> {
    /// An engine on `device` whose kernels are `prelude` + body.
    pub fn new(device: D, prelude: &'static str, body: &'static str) -> Self {
        Self {
            device,
            prelude,
            body,
            sort: SortVariant::default(),
            tables: Mutex::new(Vec::new()),
            streams: Mutex::new(Vec::new()),
        }
    }

    /// Chooses the numeric step's sort (default: bitonic, DCU §5.3).
    pub fn with_sort(mut self, sort: SortVariant) -> Self {
        self.sort = sort;
        self
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The kernel table used for values of type `T`.
    pub fn table<T: Scalar>(&self) -> KernelTable {
        KernelTable::for_device(self.device.properties(), std::mem::size_of::<T>())
    }

    /// The program (source and kernel names) compiled for values of type `T`.
    pub fn program<T: Scalar>(&self) -> KernelProgram {
        program::build::<T>(self.prelude, self.body, &self.table::<T>(), self.sort)
    }

    /// Compiles (or loads from the cache) the kernels for `T` now rather
    /// than at the first product.
    ///
    /// # Errors
    /// A compile error.
    pub fn prepare<T: Scalar>(&self) -> Result<()> {
        self.kernels::<T>().map(|_| ())
    }

    fn kernels<T: Scalar>(&self) -> Result<Arc<KernelSet<D>>> {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, set)) = tables.iter().find(|(t, _)| *t == TypeId::of::<T>()) {
            return Ok(set.clone());
        }
        let table = self.table::<T>();
        let kernels = self.device.load(&program::build::<T>(
            self.prelude,
            self.body,
            &table,
            self.sort,
        ))?;
        let set = Arc::new(KernelSet { table, kernels });
        tables.push((TypeId::of::<T>(), set.clone()));
        Ok(set)
    }

    fn take_streams(&self) -> Result<Vec<D::Stream>> {
        if let Some(s) = self.streams.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(s);
        }
        (0..STREAMS)
            .map(|_| Ok(self.device.create_stream()?))
            .collect()
    }

    fn give_streams(&self, s: Vec<D::Stream>) {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(s);
    }

    /// Copies `m` to the device (structure and values; a host copy of the
    /// structure is kept to check plans). Unsorted input is accepted.
    ///
    /// # Errors
    /// [`Error::TooLarge`] beyond `u32::MAX` rows; device errors (out of memory).
    pub fn upload<T: Scalar>(&self, m: &CsrMatrix<T>) -> Result<GpuMatrix<D, T>> {
        if m.nrows() > u32::MAX as usize - 1 {
            return Err(too_large("rows", m.nrows()));
        }
        let streams = self.take_streams()?;
        let s = &streams[0];
        let usage = Usage::default();
        let offsets: &[u64] = bytemuck::cast_slice(m.row_offsets());
        let structure = Structure {
            rpt: DeviceArray::from_host(&self.device, s, offsets, "row offsets", &usage)?,
            col: DeviceArray::from_host(
                &self.device,
                s,
                m.col_indices(),
                "column indices",
                &usage,
            )?,
            host: Some((m.row_offsets().to_vec(), m.col_indices().to_vec())),
        };
        let val = DeviceArray::from_host(&self.device, s, m.values(), "values", &usage)?;
        self.give_streams(streams);
        Ok(GpuMatrix {
            nrows: m.nrows(),
            ncols: m.ncols(),
            nnz: m.nnz(),
            structure: Arc::new(structure),
            val,
            sorted: m.is_sorted(),
        })
    }

    /// A matrix with `m`'s structure (shared, not copied) and new `values`.
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
        let val = DeviceArray::from_host(
            &self.device,
            &streams[0],
            values,
            "values",
            &Usage::default(),
        )?;
        self.give_streams(streams);
        Ok(GpuMatrix {
            val,
            structure: m.structure.clone(),
            ..*m
        })
    }

    /// Copies `m` back to the host.
    ///
    /// # Errors
    /// Device errors (including faults of earlier kernels).
    pub fn download<T: Scalar>(&self, m: &GpuMatrix<D, T>) -> Result<CsrMatrix<T>> {
        let streams = self.take_streams()?;
        let s = &streams[0];
        let mut offsets = vec![0usize; m.nrows + 1];
        let mut cols = vec![0u32; m.nnz];
        let mut vals = vec![T::ZERO; m.nnz];
        m.structure
            .rpt
            .read(&self.device, s, 0, bytemuck::cast_slice_mut(&mut offsets))?;
        m.structure.col.read(&self.device, s, 0, &mut cols)?;
        m.val.read(&self.device, s, 0, &mut vals)?;
        self.give_streams(streams);
        CsrMatrix::new(m.nrows, m.ncols, offsets, cols, vals)
    }

    /// `C = A·B` on the host: upload, multiply, download.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply`].
    pub fn multiply_host<T: Scalar>(
        &self,
        a: &CsrMatrix<T>,
        b: &CsrMatrix<T>,
    ) -> Result<CsrMatrix<T>> {
        check_dimensions(a, b)?;
        let (ga, gb) = (self.upload(a)?, self.upload(b)?);
        self.download(&self.multiply(&ga, &gb)?.0)
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
        self.run(a, b, None)
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
        let ks = self.kernels::<T>()?;
        let streams = self.take_streams()?;
        let usage = Usage::default();
        let r = Run {
            e: self,
            ks: &ks,
            s: &streams,
            usage: &usage,
            a,
            b,
        };
        let out = r.check().and_then(|_| r.symbolic_timed(None));
        self.give_streams(streams);
        let (crpt, nnz, _, max_b_row) = out?;
        Ok(GpuPlan {
            a: GpuMatrixRef::of(a),
            b: GpuMatrixRef::of(b),
            crpt: Arc::new(crpt),
            nnz,
            max_b_row,
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
        for (name, r, m) in [("A", &plan.a, a), ("B", &plan.b, b)] {
            if !r.matches(m) {
                return Err(Error::StructureMismatch(format!(
                    "{name} ({}x{}, {} entries) does not have the structure of the {}x{} matrix the plan was built for",
                    m.nrows, m.ncols, m.nnz, r.nrows, r.ncols
                )));
            }
        }
        self.run(a, b, Some(plan))
    }

    fn run<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        plan: Option<&GpuPlan<D, T>>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        let ks = self.kernels::<T>()?;
        let streams = self.take_streams()?;
        let usage = Usage::default();
        let r = Run {
            e: self,
            ks: &ks,
            s: &streams,
            usage: &usage,
            a,
            b,
        };
        let out = r.check().and_then(|_| r.all(plan));
        self.give_streams(streams);
        let (c, mut times) = out?;
        times.peak_bytes = usage.peak();
        Ok((c, times))
    }
}

/// One product in flight.
struct Run<'a, D: Device, T: Scalar> {
    e: &'a GpuEngine<D>,
    ks: &'a KernelSet<D>,
    s: &'a [D::Stream],
    usage: &'a Usage,
    a: &'a GpuMatrix<D, T>,
    b: &'a GpuMatrix<D, T>,
}

/// Counters and scratch of one phase, in one allocation (OpSparse §5.3):
/// stats (3 u64), per-bin sizes and cursors, the maximum, the overflow
/// count, then the bins array and the overflow list (M u32 each).
struct Meta<D: Device> {
    words: DeviceArray<D, u64>,
    m: usize,
    nbins: usize,
}

impl<D: Device> Meta<D> {
    const HEADER: usize = 64;
    fn new(r: &Run<'_, D, impl Scalar>, nbins: usize) -> Result<Self> {
        let m = r.a.nrows;
        // Words 0..8: stats, max, overflow count; then sizes and cursors (u32).
        assert!(
            8 + nbins + 1 <= Self::HEADER,
            "too many bins for the metadata header"
        );
        let words = DeviceArray::alloc(
            &r.e.device,
            &r.s[0],
            Self::HEADER + m,
            "bins and counters",
            r.usage,
        )?;
        words.zero(&r.e.device, &r.s[0], 0, Self::HEADER)?;
        Ok(Self { words, m, nbins })
    }
    fn stats(&self) -> u64 {
        self.words.ptr_at(0)
    }
    fn max_value(&self) -> u64 {
        self.words.ptr_at(3)
    }
    fn noverflow(&self) -> u64 {
        self.words.ptr_at(4)
    }
    fn sizes(&self) -> u64 {
        self.words.ptr_at(8)
    }
    fn cursors(&self) -> u64 {
        self.sizes() + 4 * (self.nbins as u64 + 1)
    }
    fn bins(&self) -> u64 {
        self.words.ptr_at(Self::HEADER)
    }
    fn overflow(&self) -> u64 {
        self.bins() + 4 * self.m as u64
    }
    /// Reads the header: (stats, max, noverflow, sizes).
    fn read(&self, r: &Run<'_, D, impl Scalar>) -> Result<([u64; 3], u64, u32, Vec<u32>)> {
        let mut h = vec![0u64; 8 + (self.nbins + 2) / 2];
        self.words.read(&r.e.device, &r.s[0], 0, &mut h)?;
        let sizes: &[u32] = bytemuck::cast_slice(&h[8..]);
        Ok((
            [h[0], h[1], h[2]],
            h[3],
            h[4] as u32,
            sizes[..=self.nbins].to_vec(),
        ))
    }
}

use KernelArg::{Ptr, U32, U64};

impl<D: Device, T: Scalar> Run<'_, D, T> {
    fn dev(&self) -> &D {
        &self.e.device
    }

    fn check(&self) -> Result<()> {
        if self.a.ncols != self.b.nrows {
            return Err(Error::DimensionMismatch {
                a_rows: self.a.nrows,
                a_cols: self.a.ncols,
                b_rows: self.b.nrows,
                b_cols: self.b.ncols,
            });
        }
        for (what, n) in [
            ("rows of A", self.a.nrows),
            ("rows of B", self.b.nrows),
            ("columns of B", self.b.ncols),
        ] {
            if n >= u32::MAX as usize {
                return Err(too_large(what, n));
            }
        }
        Ok(())
    }

    fn launch(
        &self,
        stream: usize,
        kernel: usize,
        blocks: u32,
        threads: u32,
        shared: usize,
        args: &[KernelArg],
    ) -> Result<()> {
        let shape = LaunchShape {
            blocks,
            threads,
            shared_bytes: shared as u32,
        };
        // SAFETY: every launch in this file passes the argument list of the
        // kernel it names in `spgemm.cuh` (or its generated wrapper), with
        // pointers into live arrays sized for the rows and bins passed.
        unsafe {
            self.dev()
                .launch(&self.s[stream], &self.ks.kernels[kernel], shape, args)?
        };
        Ok(())
    }

    fn sms(&self) -> usize {
        self.dev().properties().multiprocessor_count as usize
    }

    /// Makes stream 0 wait for the others.
    fn join(&self) -> Result<()> {
        for s in &self.s[1..] {
            let ev = self.dev().record(s)?;
            self.dev().wait(&self.s[0], &ev)?;
        }
        Ok(())
    }

    /// Makes the other streams wait for stream 0.
    fn fork(&self) -> Result<()> {
        let ev = self.dev().record(&self.s[0])?;
        for s in &self.s[1..] {
            self.dev().wait(s, &ev)?;
        }
        Ok(())
    }

    fn g(&self, max_b_row: u64, row_threads: u32) -> u32 {
        group_size(
            max_b_row as usize,
            self.dev().properties().warp_width,
            row_threads,
        )
    }

    fn direct_ok(&self) -> u32 {
        self.b.sorted as u32
    }

    /// Setup, symbolic binning and kernels, scan: C's row offsets, nnz(C),
    /// the event after setup (when timing) and B's longest row.
    fn symbolic_timed(
        &self,
        t0: Option<&D::Event>,
    ) -> Result<(DeviceArray<D, u64>, usize, Option<D::Event>, u64)> {
        let (dev, m) = (self.dev(), self.a.nrows);
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let crpt =
            DeviceArray::<D, u64>::alloc(dev, &self.s[0], m + 1, "C row offsets", self.usage)?;
        crpt.zero(dev, &self.s[0], m, 1)?;
        let table = &self.ks.table;
        let nbins = table.symbolic.len();
        let meta = Meta::new(self, nbins)?;
        let cap = self.sms() * 8;
        let rows = m.max(self.b.nrows);
        self.launch(
            0,
            k::SETUP,
            blocks_for(rows, BLOCK as usize, cap),
            BLOCK,
            0,
            &[
                a.rpt.arg(),
                a.col.arg(),
                b.rpt.arg(),
                U32(m as u32),
                U32(self.b.nrows as u32),
                crpt.arg(),
                Ptr(meta.stats()),
            ],
        )?;
        let t1 = match t0 {
            Some(_) => Some(dev.record(&self.s[0])?),
            None => None,
        };
        let bin_args = [
            crpt.arg(),
            a.rpt.arg(),
            U32(m as u32),
            U32(self.direct_ok()),
        ];
        let grid = blocks_for(m, BLOCK as usize, cap);
        self.launch(
            0,
            k::BIN_COUNT_SYMBOLIC,
            grid,
            BLOCK,
            0,
            &[
                bin_args[0],
                bin_args[1],
                bin_args[2],
                bin_args[3],
                Ptr(meta.sizes()),
                Ptr(meta.max_value()),
            ],
        )?;
        let (stats, _, _, sizes) = meta.read(self)?;
        let max_b_row = stats[2];
        if stats[0] > 0 {
            self.launch(
                0,
                k::BIN_FILL_SYMBOLIC,
                grid,
                BLOCK,
                0,
                &[
                    bin_args[0],
                    bin_args[1],
                    bin_args[2],
                    bin_args[3],
                    Ptr(meta.sizes()),
                    Ptr(meta.cursors()),
                    Ptr(meta.bins()),
                ],
            )?;
            self.fork()?;
            let mut offset: u64 = 0;
            let offsets: Vec<u64> = sizes
                .iter()
                .map(|&s| {
                    let o = offset;
                    offset += s as u64;
                    o
                })
                .collect();
            for (i, bin) in table.symbolic.iter().enumerate().rev() {
                let n = sizes[i] as usize;
                if n == 0 {
                    continue;
                }
                let rpb = bin.rows_per_block() as usize;
                let shared = bin.shared_bytes(4);
                let stream = (nbins - 1 - i) % STREAMS;
                self.launch(
                    stream,
                    k::FIRST_BIN + i,
                    blocks_for(n, rpb, usize::MAX),
                    bin.block_threads,
                    shared,
                    &[
                        a.rpt.arg(),
                        a.col.arg(),
                        b.rpt.arg(),
                        b.col.arg(),
                        Ptr(meta.bins() + 4 * offsets[i]),
                        U32(n as u32),
                        crpt.arg(),
                        U32(self.g(max_b_row, bin.row_threads)),
                        U32(table.overflow_threshold()),
                        Ptr(meta.overflow()),
                        Ptr(meta.noverflow()),
                    ],
                )?;
            }
            self.join()?;
            if sizes[nbins - 1] > 0 {
                let (_, _, noverflow, _) = meta.read(self)?;
                if noverflow > 0 {
                    self.symbolic_global(&crpt, &meta, noverflow as usize, stats[1], max_b_row)?;
                }
            }
        }
        drop(meta);
        self.scan(&crpt, m + 1)?;
        let mut nnz = [0u64];
        crpt.read(dev, &self.s[0], m, &mut nnz)?;
        Ok((crpt, nnz[0] as usize, t1, max_b_row))
    }

    fn symbolic_global(
        &self,
        crpt: &DeviceArray<D, u64>,
        meta: &Meta<D>,
        n: usize,
        max_nprod: u64,
        max_b_row: u64,
    ) -> Result<()> {
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let bound = max_nprod.min(self.b.ncols as u64).max(1);
        let tsize = (2 * bound).next_power_of_two() as usize;
        let blocks = n.min(self.sms() * 2).max(1);
        let table = DeviceArray::<D, u32>::alloc(
            self.dev(),
            &self.s[0],
            blocks * tsize,
            "symbolic global hash tables",
            self.usage,
        )?;
        let threads = 1024u32.min(self.dev().properties().max_threads_per_block);
        self.launch(
            0,
            k::SYMBOLIC_GLOBAL,
            blocks as u32,
            threads,
            0,
            &[
                a.rpt.arg(),
                a.col.arg(),
                b.rpt.arg(),
                b.col.arg(),
                Ptr(meta.overflow()),
                U32(n as u32),
                crpt.arg(),
                U32(self.g(max_b_row, threads)),
                table.arg(),
                U32(tsize as u32),
            ],
        )?;
        self.usage.sub(blocks * tsize * 4);
        Ok(())
    }

    /// Exclusive scan of `n` u64 values in place (recursive over tile sums).
    fn scan(&self, data: &DeviceArray<D, u64>, n: usize) -> Result<()> {
        self.scan_at(data.ptr_at(0), n)
    }

    fn scan_at(&self, ptr: u64, n: usize) -> Result<()> {
        let tiles = n.div_ceil(SCAN_TILE);
        let sums = DeviceArray::<D, u64>::alloc(
            self.dev(),
            &self.s[0],
            tiles.max(1),
            "scan tile sums",
            self.usage,
        )?;
        self.launch(
            0,
            k::SCAN_TILES,
            tiles.max(1) as u32,
            SCAN_BLOCK,
            8 * SCAN_BLOCK as usize,
            &[Ptr(ptr), U64(n as u64), sums.arg()],
        )?;
        if tiles > 1 {
            self.scan_at(sums.ptr_at(0), tiles)?;
            self.launch(
                0,
                k::SCAN_ADD,
                tiles as u32,
                SCAN_BLOCK,
                0,
                &[Ptr(ptr), U64(n as u64), sums.arg()],
            )?;
        }
        self.usage.sub(8 * tiles.max(1));
        Ok(())
    }

    /// Numeric binning and kernels into C's arrays.
    fn numeric(
        &self,
        crpt: &DeviceArray<D, u64>,
        nnz: usize,
        max_b_row: u64,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let (dev, m) = (self.dev(), self.a.nrows);
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let ccol =
            DeviceArray::<D, u32>::alloc(dev, &self.s[0], nnz, "C column indices", self.usage)?;
        let cval = DeviceArray::<D, T>::alloc(dev, &self.s[0], nnz, "C values", self.usage)?;
        if nnz == 0 {
            return Ok((ccol, cval));
        }
        let table = &self.ks.table;
        let nbins = table.numeric.len();
        let meta = Meta::new(self, nbins)?;
        let cap = self.sms() * 8;
        let grid = blocks_for(m, BLOCK as usize, cap);
        let bin_args = [
            crpt.arg(),
            a.rpt.arg(),
            U32(m as u32),
            U32(self.direct_ok()),
        ];
        self.launch(
            0,
            k::BIN_COUNT_NUMERIC,
            grid,
            BLOCK,
            0,
            &[
                bin_args[0],
                bin_args[1],
                bin_args[2],
                bin_args[3],
                Ptr(meta.sizes()),
                Ptr(meta.max_value()),
            ],
        )?;
        let (_, max_nnz, _, sizes) = meta.read(self)?;
        self.launch(
            0,
            k::BIN_FILL_NUMERIC,
            grid,
            BLOCK,
            0,
            &[
                bin_args[0],
                bin_args[1],
                bin_args[2],
                bin_args[3],
                Ptr(meta.sizes()),
                Ptr(meta.cursors()),
                Ptr(meta.bins()),
            ],
        )?;
        self.fork()?;
        let mut offset: u64 = 0;
        let offsets: Vec<u64> = sizes
            .iter()
            .map(|&s| {
                let o = offset;
                offset += s as u64;
                o
            })
            .collect();
        let common = [
            a.rpt.arg(),
            a.col.arg(),
            self.a.val.arg(),
            b.rpt.arg(),
            b.col.arg(),
            self.b.val.arg(),
        ];
        let vb = std::mem::size_of::<T>();
        let mut global_tables = None;
        // The direct bin (single-entry rows of A) first: it is often large.
        if sizes[nbins] > 0 {
            let n = sizes[nbins] as usize;
            let per_block = (BLOCK / dev.properties().warp_width) as usize;
            let mut args = common.to_vec();
            args.extend([
                Ptr(meta.bins() + 4 * offsets[nbins]),
                U32(n as u32),
                crpt.arg(),
                ccol.arg(),
                cval.arg(),
            ]);
            self.launch(
                1 % STREAMS,
                k::NUMERIC_DIRECT,
                blocks_for(n, per_block, cap),
                BLOCK,
                0,
                &args,
            )?;
        }
        let mut shared_index = 0;
        let shared_kernel: Vec<Option<usize>> = table
            .numeric
            .iter()
            .map(|bin| {
                (!bin.global()).then(|| {
                    shared_index += 1;
                    k::FIRST_BIN + table.symbolic.len() + shared_index - 1
                })
            })
            .collect();
        for (i, bin) in table.numeric.iter().enumerate().rev() {
            let n = sizes[i] as usize;
            if n == 0 {
                continue;
            }
            let stream = (nbins - 1 - i) % STREAMS;
            let g = U32(self.g(max_b_row, bin.row_threads));
            let mut args = common.to_vec();
            args.extend([
                Ptr(meta.bins() + 4 * offsets[i]),
                U32(n as u32),
                crpt.arg(),
                ccol.arg(),
                cval.arg(),
                g,
            ]);
            match shared_kernel[i] {
                Some(kernel) => {
                    let rpb = bin.rows_per_block() as usize;
                    let shared = bin.shared_bytes(4 + vb);
                    self.launch(
                        stream,
                        kernel,
                        blocks_for(n, rpb, usize::MAX),
                        bin.block_threads,
                        shared,
                        &args,
                    )?;
                }
                None => {
                    let tsize = (2 * max_nnz.max(1)).next_power_of_two() as usize;
                    let blocks = n.min(self.sms()).max(1);
                    let keys = DeviceArray::<D, u32>::alloc(
                        dev,
                        &self.s[stream],
                        blocks * tsize,
                        "numeric global hash keys",
                        self.usage,
                    )?;
                    let vals = DeviceArray::<D, T>::alloc(
                        dev,
                        &self.s[stream],
                        blocks * tsize,
                        "numeric global hash values",
                        self.usage,
                    )?;
                    args.extend([keys.arg(), vals.arg(), U32(tsize as u32)]);
                    self.launch(
                        stream,
                        k::NUMERIC_GLOBAL,
                        blocks as u32,
                        bin.block_threads,
                        0,
                        &args,
                    )?;
                    global_tables = Some((keys, vals));
                }
            }
        }
        self.join()?;
        drop(global_tables);
        Ok((ccol, cval))
    }

    fn all(&self, plan: Option<&GpuPlan<D, T>>) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        let dev = self.dev();
        let t0 = dev.record(&self.s[0])?;
        let (crpt, nnz, t1, max_b_row) = match plan {
            Some(p) => (p.crpt.clone(), p.nnz, None, p.max_b_row),
            None => {
                let (crpt, nnz, t1, max_b_row) = self.symbolic_timed(Some(&t0))?;
                (Arc::new(crpt), nnz, t1, max_b_row)
            }
        };
        let t2 = dev.record(&self.s[0])?;
        let (ccol, cval) = self.numeric(&crpt, nnz, max_b_row)?;
        let t3 = dev.record(&self.s[0])?;
        dev.synchronize(&self.s[0])?;
        let times = PhaseTimes {
            setup_ms: t1.as_ref().map_or(Ok(0.0), |t1| dev.elapsed_ms(&t0, t1))? as f64,
            symbolic_ms: t1.as_ref().map_or(Ok(0.0), |t1| dev.elapsed_ms(t1, &t2))? as f64,
            numeric_ms: dev.elapsed_ms(&t2, &t3)? as f64,
            total_ms: dev.elapsed_ms(&t0, &t3)? as f64,
            peak_bytes: 0,
        };
        let crpt = Arc::try_unwrap(crpt).or_else(|shared| self.copy_offsets(&shared))?;
        let structure = Arc::new(Structure {
            rpt: crpt,
            col: ccol,
            host: None,
        });
        Ok((
            GpuMatrix {
                nrows: self.a.nrows,
                ncols: self.b.ncols,
                nnz,
                structure,
                val: cval,
                sorted: true,
            },
            times,
        ))
    }

    /// C's row offsets for a product run from a plan (the plan keeps its own).
    fn copy_offsets(&self, src: &DeviceArray<D, u64>) -> Result<DeviceArray<D, u64>> {
        let dst = DeviceArray::<D, u64>::alloc(
            self.dev(),
            &self.s[0],
            src.len(),
            "C row offsets",
            self.usage,
        )?;
        if let (Some(from), Some(to)) = (&src.buf, &dst.buf) {
            self.dev()
                .copy_device(&self.s[0], from, 0, to, 0, 8 * src.len())?;
        }
        Ok(dst)
    }
}
