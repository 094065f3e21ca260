//! Numeric binning and the numeric kernels into C's arrays (OpSparse §5.5,
//! §5.6.2; DCU §5.3–5.4).

use super::engine::{blocks_for, BLOCK};
use super::memory::DeviceArray;
use super::program::k;
use super::run::{offset, Counts, Meta, Run, U32};
use crate::device::{Device, KernelArg};
use crate::error::Result;
use crate::scalar::Scalar;

impl<D: Device, T: Scalar> Run<'_, D, T> {
    /// Numeric binning by nnz(i) (pass 1 already counted into `meta`,
    /// `counts`) and one kernel per bin, largest first on several streams:
    /// direct copies for single-entry rows of A, shared tables, and global
    /// memory for the longest rows.
    pub(super) fn numeric(
        &self,
        crpt: &DeviceArray<D, u64>,
        nnz: usize,
        typical: usize,
        meta: Meta<D>,
        counts: Counts,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let dev = self.dev();
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let ccol =
            DeviceArray::<D, u32>::alloc(dev, &self.s[0], nnz, "C column indices", self.usage)?;
        let cval = DeviceArray::<D, T>::alloc(dev, &self.s[0], nnz, "C values", self.usage)?;
        if nnz == 0 {
            return Ok((ccol, cval));
        }
        let table = &self.ks.table;
        let (nsym, nbins) = (table.symbolic.len(), table.numeric.len());
        self.fill_bins(&meta, crpt, k::BIN_FILL_NUMERIC)?;
        self.fork()?;
        let offsets = counts.offsets();
        let common = [
            a.rpt.arg(),
            a.col.arg(),
            self.a.val.arg(),
            b.rpt.arg(),
            b.col.arg(),
            self.b.val.arg(),
        ];
        let rows = |i: usize| -> Vec<KernelArg> {
            let mut v = common.to_vec();
            v.extend([
                meta.bins(offsets[i]),
                U32(counts.sizes[i]),
                crpt.arg(),
                ccol.arg(),
                cval.arg(),
            ]);
            v
        };
        let direct = counts.sizes[nbins] as usize;
        if direct > 0 {
            let warps = (BLOCK / dev.properties().warp_width) as usize;
            self.launch(
                Self::stream_of(1),
                k::NUMERIC_DIRECT,
                self.grid(direct, warps),
                BLOCK,
                0,
                &rows(nbins),
            )?;
        }
        let mut scratch = Vec::new();
        for (order, (i, bin)) in table.numeric.iter().enumerate().rev().enumerate() {
            let n = counts.sizes[i] as usize;
            if n == 0 {
                continue;
            }
            let mut args = rows(i);
            args.push(self.g(typical, bin.row_threads));
            let stream = Self::stream_of(order);
            if bin.global() {
                scratch.push(self.numeric_global(
                    stream,
                    bin.block_threads,
                    n,
                    counts.max,
                    args,
                )?);
            } else {
                let blocks = blocks_for(n, bin.rows_per_block() as usize, usize::MAX);
                let shared = bin.shared_bytes(4 + std::mem::size_of::<T>());
                self.launch(
                    stream,
                    k::FIRST_BIN + nsym + i,
                    blocks,
                    bin.block_threads,
                    shared,
                    &args,
                )?;
            }
        }
        self.join()?;
        drop(scratch);
        Ok((ccol, cval))
    }

    /// The longest rows: when C is narrow enough, a dense value array and
    /// bitmap per row, each row's entries of A split into slices over
    /// several blocks, then written out in column order (sorted by
    /// construction, no probing); else a power-of-two hash table of `2·nnz`
    /// per block, sorted in place (DCU §5.4.2).
    /// Returns the scratch arrays, to be kept until the kernel is done.
    fn numeric_global(
        &self,
        stream: usize,
        threads: u32,
        n: usize,
        max_nnz: u64,
        mut args: Vec<KernelArg>,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let (dev, s) = (self.dev(), &self.s[stream]);
        let ncols = self.b.ncols;
        let words = ncols.div_ceil(32).max(1);
        let blocks = n.min(self.sms()).max(1);
        let row_bytes = words * (32 * std::mem::size_of::<T>() + 4);
        let (rows_at_once, slices) = self.dense_batches(n, max_nnz, row_bytes)?;
        if (ncols as u64) <= 16 * max_nnz && rows_at_once >= 1 {
            let bits = DeviceArray::<D, u32>::alloc(
                dev,
                s,
                rows_at_once * words,
                "numeric dense bitmaps",
                self.usage,
            )?;
            let vals = DeviceArray::<D, T>::alloc(
                dev,
                s,
                rows_at_once * words * 32,
                "numeric dense accumulators",
                self.usage,
            )?;
            bits.zero(dev, s, 0, bits.len())?;
            vals.zero(dev, s, 0, vals.len())?;
            args.extend([vals.arg(), bits.arg(), U32(words as u32), U32(slices)]);
            // Batches of rows: slices accumulate, then one block a row
            // writes it out and leaves the scratch zero for the next batch.
            let bins = args[6];
            for start in (0..n).step_by(rows_at_once) {
                let rows = (n - start).min(rows_at_once);
                args[6] = offset(bins, 4 * start as u64);
                args[7] = U32(rows as u32);
                let grid = (rows as u64 * slices as u64) as u32;
                self.launch(stream, k::NUMERIC_DENSE, grid, threads, 0, &args)?;
                self.launch(
                    stream,
                    k::NUMERIC_DENSE_COMPACT,
                    rows as u32,
                    threads,
                    4 * threads as usize,
                    &args,
                )?;
            }
            return Ok((bits, vals));
        }
        let tsize = (2 * max_nnz.max(1)).next_power_of_two() as usize;
        let keys = DeviceArray::<D, u32>::alloc(
            dev,
            s,
            blocks * tsize,
            "numeric global hash keys",
            self.usage,
        )?;
        let vals = DeviceArray::<D, T>::alloc(
            dev,
            s,
            blocks * tsize,
            "numeric global hash values",
            self.usage,
        )?;
        args.extend([keys.arg(), vals.arg(), U32(tsize as u32)]);
        self.launch(stream, k::NUMERIC_GLOBAL, blocks as u32, threads, 0, &args)?;
        Ok((keys, vals))
    }
}
