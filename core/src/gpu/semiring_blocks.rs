//! Semiring, masked and pruned products from the host in blocks of A's
//! rows: one block per device when C fits, more when it does not. Blocks
//! are sized by an explicit device-memory budget where the engines have
//! one (as [`GpuEngine::multiply_chunked`] sizes its chunks), and a block
//! that runs out of device memory is split in two and both halves are
//! queued again, down to single rows. Each block's C is pruned on its
//! device before it is downloaded, so that a pruned product's C never
//! exists unpruned beyond one block per device, as HipMCL computes its
//! expansion in phases whose products are pruned one by one (Azad et
//! al., "HipMCL: a high-performance parallel implementation of the Markov
//! clustering algorithm for large-scale networks", Nucleic Acids Research
//! 46(6), 2018), with blocks of rows in place of phases of columns.

use super::chunked::out_of_memory;
use super::engine::GpuEngine;
use super::multi::MultiGpu;
use super::rows::{beside_b, rows_of, split_balanced, split_rows, stack_rows};
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::{Device, DeviceErrorKind};
use crate::error::{Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;
use crate::semiring::{Mask, Prune, Semiring};
use crate::stats::product_stats;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Condvar, Mutex};

/// The blocks still to compute, how many are being computed, the blocks
/// done (by first row) and the first failure.
struct Work<R> {
    queue: VecDeque<Range<usize>>,
    running: usize,
    done: Vec<(usize, R)>,
    failure: Option<Error>,
}

/// The rows of a product block by block: `run(w, rows)` computes a block
/// with worker `w` (a device's engine), each worker on its own thread
/// taking the next block from the queue; a block that runs out of device memory is split in two by
/// products (`nprod`, per row) and both halves go to the front of the
/// queue. Returns the blocks in row order, or the first failure: an out
/// of memory on a single row names it.
fn in_blocks<W: Sync, R: Send>(
    workers: &[W],
    blocks: Vec<Range<usize>>,
    nprod: &[u64],
    run: impl Fn(&W, Range<usize>) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let work = Mutex::new(Work {
        queue: blocks.into_iter().filter(|r| !r.is_empty()).collect(),
        running: 0,
        done: Vec::new(),
        failure: None,
    });
    let changed = Condvar::new();
    let lock = || work.lock().unwrap_or_else(|p| p.into_inner());
    let worker = |x: &W| loop {
        let rows = {
            let mut w = lock();
            loop {
                if w.failure.is_some() {
                    return;
                }
                if let Some(r) = w.queue.pop_front() {
                    w.running += 1;
                    break r;
                }
                if w.running == 0 {
                    return;
                }
                w = changed.wait(w).unwrap_or_else(|p| p.into_inner());
            }
        };
        let outcome = run(x, rows.clone());
        let mut w = lock();
        w.running -= 1;
        match outcome {
            Ok(r) => w.done.push((rows.start, r)),
            Err(e) if out_of_memory(&e) && rows.len() > 1 => {
                let halves = split_balanced(&nprod[rows.clone()], 2);
                for h in halves.into_iter().rev() {
                    w.queue.push_front(rows.start + h.start..rows.start + h.end);
                }
            }
            Err(Error::Device(mut d)) if d.kind == DeviceErrorKind::OutOfMemory => {
                d.call = format!("row {} of the product alone: {}", rows.start, d.call);
                w.failure.get_or_insert(Error::Device(d));
            }
            Err(e) => {
                w.failure.get_or_insert(e);
            }
        }
        changed.notify_all();
    };
    std::thread::scope(|s| {
        for x in workers {
            s.spawn(|| worker(x));
        }
    });
    let w = work.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = w.failure {
        return Err(e);
    }
    let mut done = w.done;
    done.sort_unstable_by_key(|(start, _)| *start);
    Ok(done.into_iter().map(|(_, r)| r).collect())
}

/// One block's `C⟨M⟩ = A ⊕.⊗ B` on `e`: by [`GpuEngine::masked_dot`]
/// under a mask, else [`GpuEngine::multiply_host_semiring`].
fn block_product<D: Device, T: Scalar>(
    e: &GpuEngine<D>,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    mask: Option<Mask<'_>>,
    semiring: Semiring,
    prune: &Prune<T>,
) -> Result<CsrMatrix<T>> {
    match mask {
        Some(m) => e.masked_dot(m, a, b, semiring, prune),
        None => e.multiply_host_semiring(a, b, semiring, prune),
    }
}

impl<D: Device> MultiGpu<D> {
    /// `C⟨M⟩ = A ⊕.⊗ B` (or `⟨¬M⟩`, or unmasked: `mask` `None`) on the
    /// host over all devices: A's rows (and the mask's) split by products
    /// into a block per device, each device computing its block as
    /// [`GpuEngine::masked_dot`] (under a mask or its complement) or
    /// [`GpuEngine::multiply_host_semiring`] does, and the blocks stacked.
    /// One device without an explicit memory budget first tries the whole
    /// product. C is pruned as `prune` says on the devices, each block's
    /// rows on its device ([`GpuEngine::prune_device`]). Columns keep
    /// their largest entries on the one device that holds all of C; in
    /// blocks, `Cᵀ = Bᵀ ⊕.⊗ Aᵀ` (Aᵀ, Bᵀ and the mask's transpose formed
    /// here) runs in blocks of Bᵀ's rows, each pruned per row on its
    /// device, and is transposed back here, so that C never exists
    /// unpruned beyond one block a device. A product whose C does not fit runs
    /// in more blocks (see the module), within the engines' explicit memory
    /// budget ([`GpuConfig::memory_budget`](super::GpuConfig::memory_budget))
    /// where they have one, each block pruned before it leaves its device.
    /// B (and, under a mask through dot products, its transpose) goes to a
    /// device once per block.
    ///
    /// # Errors
    /// As those functions, from the first block that fails;
    /// [`Error::MaskShape`] unless the mask is A's rows by B's columns;
    /// [`Error::TooLarge`] when B takes more than half an explicit budget
    /// or one row does not fit it; out of device memory on a single row
    /// (naming it).
    pub fn multiply_semiring_host<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        mask: Option<Mask<'_>>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<CsrMatrix<T>> {
        check_dimensions(a.shape(), b.shape())?;
        if let Some(m) = &mask {
            if m.shape() != (a.nrows(), b.ncols()) {
                return Err(Error::MaskShape {
                    mask: m.shape(),
                    product: (a.nrows(), b.ncols()),
                });
            }
        }
        let engines = self.engines();
        let budget = engines.iter().filter_map(GpuEngine::memory_budget).min();
        if let ([e], None) = (engines, budget) {
            match block_product(e, a, b, mask, semiring, prune) {
                Err(e) if out_of_memory(&e) => {}
                c => return c,
            }
        }
        self.by_blocks(a, b, mask, semiring, prune, budget)
    }

    /// [`MultiGpu::multiply_semiring_host`] in blocks of A's rows (of Bᵀ's
    /// for a `keep` per column), by `budget` where there is one.
    fn by_blocks<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        mask: Option<Mask<'_>>,
        semiring: Semiring,
        prune: &Prune<T>,
        budget: Option<usize>,
    ) -> Result<CsrMatrix<T>> {
        if prune.columns && prune.keep.is_some() {
            let at = a.transpose()?;
            let bt = if a.same_arrays(&b) {
                None
            } else {
                Some(b.transpose()?)
            };
            let mask_t = mask.map(|m| m.transposed::<T>()).transpose()?;
            let mask_t = mask
                .zip(mask_t.as_ref())
                .map(|(m, t)| Mask::of(t.view(), m.complement()));
            let rows = Prune {
                columns: false,
                ..*prune
            };
            let bt = bt.as_ref().map_or(at.view(), CsrMatrix::view);
            let ct = self.by_blocks(bt, at.view(), mask_t, semiring, &rows, budget)?;
            return ct.transpose();
        }
        let engines = self.engines();
        let nprod = product_stats(a, b)?.nprod;
        let blocks = match budget {
            Some(budget) => {
                let beside = beside_b(b, budget)?;
                let row_nnz: Vec<usize> = (0..a.nrows()).map(|i| a.row_nnz(i)).collect();
                split_rows(&row_nnz, &nprod, b.ncols(), size_of::<T>(), beside)?
            }
            None => split_balanced(&nprod, engines.len().max(2)),
        };
        // The mask as a matrix to take blocks of rows from, unless it is A
        // (its blocks are then A's).
        let is_a = |m: &Mask<'_>| {
            let s = m.structure();
            std::ptr::eq(s.row_offsets, a.row_offsets())
                && std::ptr::eq(s.col_indices, a.col_indices())
        };
        let own = mask.filter(|m| !is_a(m)).map(|m| m.structure());
        let zeros: Vec<T> = match &own {
            Some(s) => crate::error::try_filled(s.col_indices.len(), T::ZERO, "mask values")?,
            None => Vec::new(),
        };
        let own = own
            .map(|s| CsrView::new(s.nrows, s.ncols, s.row_offsets, s.col_indices, &zeros))
            .transpose()?;
        let parts = in_blocks(engines, blocks, &nprod, |e, rows| {
            let block = rows_of(a, rows.clone())?;
            let Some(m) = mask else {
                return block_product(e, block.view(), b, None, semiring, prune);
            };
            let mblock = own.map(|v| rows_of(v, rows)).transpose()?;
            let mb = Mask::of(
                mblock.as_ref().map_or(block.view(), |x| x.view()),
                m.complement(),
            );
            block_product(e, block.view(), b, Some(mb), semiring, prune)
        })?;
        stack_rows(parts, b.ncols())
    }
}

#[cfg(test)]
mod tests {
    use super::in_blocks;
    use crate::device::{DeviceError, DeviceErrorKind};
    use crate::error::Error;
    use std::ops::Range;

    fn out_of_memory() -> Error {
        Error::Device(DeviceError::new(
            DeviceErrorKind::OutOfMemory,
            "cuda",
            "cuMemAllocAsync (C values, 96 MiB)",
            "out of memory",
        ))
    }

    #[test]
    fn blocks_that_run_out_of_memory_are_halved_and_come_back_in_order() {
        let nprod: Vec<u64> = (0..100).map(|i| (i % 7) as u64).collect();
        for workers in [1, 2, 3] {
            let got = in_blocks(
                &vec![(); workers],
                vec![0..40, 40..40, 40..100],
                &nprod,
                |_, r| {
                    if r.len() > 6 {
                        Err(out_of_memory())
                    } else {
                        Ok(r)
                    }
                },
            )
            .unwrap();
            assert!(got.iter().all(|r| !r.is_empty() && r.len() <= 6), "{got:?}");
            let rows: Vec<usize> = got.iter().flat_map(Range::clone).collect();
            assert_eq!(rows, (0..100).collect::<Vec<_>>(), "{workers} workers");
        }
    }

    #[test]
    fn a_single_row_out_of_memory_is_named_and_other_errors_stop_the_work() {
        let nprod = vec![1u64; 50];
        let err = in_blocks(&[(), ()], vec![0..25, 25..50], &nprod, |_, r| {
            if r.contains(&17) {
                Err(out_of_memory())
            } else {
                Ok(r)
            }
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("row 17 of the product alone: cuMemAllocAsync"),
            "{text}"
        );
        let whole: Vec<Range<usize>> = std::iter::once(0..50).collect();
        let err = in_blocks(&[()], whole, &nprod, |_, r| {
            if r.len() < 50 {
                Ok(r)
            } else {
                Err(Error::Prune("the threshold must be a number".into()))
            }
        })
        .unwrap_err();
        assert!(matches!(err, Error::Prune(_)), "{err}");
    }
}
