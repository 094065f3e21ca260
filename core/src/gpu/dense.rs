//! Dense accumulators in shared memory for rows of a narrow C: the dense
//! accumulator of KokkosKernels (Deveci et al. 2018, §3.3: a value array
//! indexed by column, preferred when C has few columns) held in a block's
//! shared memory in place of a bin's hash table. A column is its own slot,
//! so there is no hashing or probing, and the row is written sorted by
//! reading its bitmap in column order, with no sort. On Hopper a row of C
//! of up to about 14,000 doubles fits twice per multiprocessor.

use super::engine::blocks_for;
use super::memory::DeviceArray;
use super::program::k;
use super::run::{Run, U32};
use crate::device::{Device, KernelArg};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::table::Bin;

/// Which accumulator the bins of both phases use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Accumulator {
    /// Dense accumulators in shared memory for the bins where they are
    /// cheaper than a hash table: shared bins with a block per row whose
    /// table has at least as many slots as a bitmap of C's columns has
    /// 32-bit words, since clearing and reading the bitmap then costs no
    /// more than clearing the table; in the numeric phase only when a dense
    /// row (a value and a bit per column) fits twice in a multiprocessor's
    /// shared memory. Hash tables elsewhere. Rows past the last shared
    /// table (the last symbolic bin's overflow, the global bins) keep the
    /// global paths of [`LongRows`](super::LongRows), which split a long
    /// row between blocks.
    #[default]
    Auto,
    /// Hash tables in every bin (OpSparse, DCU).
    Hash,
}

impl Accumulator {
    /// Every choice, in the order of [`Accumulator::name`]'s list.
    pub const ALL: [Accumulator; 2] = [Accumulator::Auto, Accumulator::Hash];
    /// Name on the command line: `auto`, `hash`.
    pub fn name(self) -> &'static str {
        match self {
            Accumulator::Auto => "auto",
            Accumulator::Hash => "hash",
        }
    }
    /// The choice called `name` (see [`Accumulator::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Threads of a block of the dense kernels (`SPGEMM_DENSE_THREADS`).
const DENSE_THREADS: u32 = 512;
/// Resident blocks the dense kernels are compiled for (their launch bounds):
/// symbolic, numeric (`SPGEMM_DENSE_NUMERIC_BLOCKS`: 3 on NVIDIA, 2 on AMD,
/// where shared memory holds two dense rows at most).
const DENSE_BLOCKS: [usize; 2] = [4, 3];
/// Static shared memory the kernels may add to the dynamic part, bytes.
const STATIC_SLACK: usize = 64;

impl<D: Device, T: Scalar> Run<'_, D, T> {
    /// 32-bit words of a bitmap of C's columns.
    fn dense_words(&self) -> usize {
        self.b.ncols.div_ceil(32).max(1)
    }

    /// Whether a bin's rows take the dense path (see [`Accumulator::Auto`]):
    /// `bytes` of shared memory per block, `resident` blocks required per
    /// multiprocessor.
    fn dense_fits(&self, bin: &Bin, bytes: usize, resident: usize) -> bool {
        let p = self.dev().properties();
        self.e.accumulator == Accumulator::Auto
            && !bin.global()
            && bin.rows_per_block() == 1
            && self.dense_words() <= bin.table_size as usize
            && bytes + STATIC_SLACK <= p.shared_memory_per_block_optin
            && resident * (bytes + STATIC_SLACK + p.reserved_shared_memory_per_block)
                <= p.shared_memory_per_multiprocessor
    }

    fn symbolic_dense_bytes(&self) -> usize {
        4 * self.dense_words()
    }

    fn numeric_dense_bytes(&self) -> usize {
        let warps = (DENSE_THREADS / self.dev().properties().warp_width) as usize;
        self.dense_words() * (32 * std::mem::size_of::<T>() + 4) + 4 * warps
    }

    /// Whether symbolic bin `i` counts with a bitmap in shared memory (not
    /// a last bin that hands its longest rows to the global kernels).
    pub(super) fn symbolic_dense(&self, i: usize) -> bool {
        let t = &self.ks.table;
        let overflows = i + 1 == t.symbolic.len() && t.symbolic_overflows();
        !overflows && self.dense_fits(&t.symbolic[i], self.symbolic_dense_bytes(), 1)
    }

    /// Whether numeric bin `bin` accumulates in a dense row in shared
    /// memory.
    pub(super) fn numeric_dense(&self, bin: &Bin) -> bool {
        self.dense_fits(bin, self.numeric_dense_bytes(), 2)
    }

    /// Blocks of a dense kernel over `n` rows: as many as fit the device
    /// at once with `bytes` each (`which`: 0 symbolic, 1 numeric).
    fn dense_grid(&self, n: usize, bytes: usize, which: usize) -> u32 {
        let p = self.dev().properties();
        let by_smem = p.shared_memory_per_multiprocessor
            / (bytes + STATIC_SLACK + p.reserved_shared_memory_per_block);
        let per_sm = DENSE_BLOCKS[which].min(by_smem).max(1);
        blocks_for(n, 1, per_sm * self.sms())
    }

    /// Counts the `n` rows listed at `rows` with a bitmap per block
    /// (`spgemm_symbolic_dense_shared`) on `stream`, marking rows whose
    /// products all have their own column in `distinct`.
    pub(super) fn symbolic_dense_shared(
        &self,
        stream: usize,
        rows: KernelArg,
        n: usize,
        crpt: &DeviceArray<D, u64>,
        typical: usize,
        distinct: KernelArg,
    ) -> Result<()> {
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let args = [
            a.rpt.arg(),
            a.col.arg(),
            b.rpt.arg(),
            b.col.arg(),
            rows,
            U32(n as u32),
            crpt.arg(),
            self.g(typical, DENSE_THREADS),
            U32(self.dense_words() as u32),
            distinct,
        ];
        let bytes = self.symbolic_dense_bytes();
        let grid = self.dense_grid(n, bytes, 0);
        self.launch(
            stream,
            k::SYMBOLIC_DENSE_SHARED,
            grid,
            DENSE_THREADS,
            bytes,
            &args,
        )
    }

    /// Computes the `n` rows of a numeric bin with a dense row per block
    /// (`spgemm_numeric_dense_shared`) on `stream`; `args` are the bin's
    /// (A, B, rows, count, C) as for the hash kernels, without G.
    pub(super) fn numeric_dense_shared(
        &self,
        stream: usize,
        mut args: Vec<KernelArg>,
        n: usize,
        typical: usize,
    ) -> Result<()> {
        args.extend([
            self.g(typical, DENSE_THREADS),
            U32(self.dense_words() as u32),
        ]);
        let bytes = self.numeric_dense_bytes();
        let grid = self.dense_grid(n, bytes, 1);
        self.launch(
            stream,
            k::NUMERIC_DENSE_SHARED,
            grid,
            DENSE_THREADS,
            bytes,
            &args,
        )
    }
}
