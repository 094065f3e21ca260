//! Host-device copies through page-locked (pinned) staging buffers, so
//! that transfers run at the bus's speed (hybrid CPU-GPU pipelining,
//! Wu 2015, §3.3: transfers dominate an application's SpGEMM time and are
//! pipelined). Two buffers alternate: while the device copies one piece,
//! the host cores copy the next piece into (or the previous piece out of)
//! the other. The buffers are allocated once per engine and reused by
//! every later product ([`StagingPool`]).

use crate::device::{Device, PinnedBuffer};
use crate::error::Result;
use rayon::prelude::*;
use std::sync::Mutex;

/// Bytes of one pinned buffer (two per staging pair): small enough that
/// the first and last pieces, which nothing overlaps, cost little.
pub(super) const PIECE: usize = 8 << 20;

/// Copies `src` into `dst` (equal lengths) on all cores: the destination
/// pages of a fresh allocation are first touched in parallel too.
pub(super) fn par_copy(src: &[u8], dst: &mut [u8]) {
    const STRIPE: usize = 256 << 10;
    dst.par_chunks_mut(STRIPE)
        .zip(src.par_chunks(STRIPE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// `r`, after waiting for `stream` when it is an error: no copy may still
/// use the staging buffers once they go back to the pool.
fn settled<D: Device>(dev: &D, stream: &D::Stream, r: Result<()>) -> Result<()> {
    if r.is_err() {
        let _ = dev.synchronize(stream);
    }
    r
}

/// Two pinned buffers of [`PIECE`] bytes.
pub(super) struct Staging<D: Device> {
    bufs: [D::Pinned; 2],
}

/// The staging pairs of an engine, one per product in flight, kept for reuse.
pub(super) struct StagingPool<D: Device>(Mutex<Vec<Staging<D>>>);

impl<D: Device> Default for StagingPool<D> {
    fn default() -> Self {
        Self(Mutex::new(Vec::new()))
    }
}

impl<D: Device> StagingPool<D> {
    /// Runs `f` with a staging pair from the pool (allocated on first use)
    /// and returns the pair to the pool.
    pub(super) fn with<R>(
        &self,
        dev: &D,
        f: impl FnOnce(&mut Staging<D>) -> Result<R>,
    ) -> Result<R> {
        let taken = self.0.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut s = match taken {
            Some(s) => s,
            None => Staging {
                bufs: [dev.alloc_pinned(PIECE)?, dev.alloc_pinned(PIECE)?],
            },
        };
        let r = f(&mut s);
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(s);
        r
    }
}

impl<D: Device> Staging<D> {
    /// Copies `src` to `dst[offset..]`, a piece at a time; returns when
    /// the copies are complete.
    ///
    /// # Errors
    /// Device errors.
    pub(super) fn upload(
        &mut self,
        dev: &D,
        stream: &D::Stream,
        src: &[u8],
        dst: &D::Buffer,
        offset: usize,
    ) -> Result<()> {
        let r = (|| {
            let mut in_flight: [Option<D::Event>; 2] = [None, None];
            for (k, piece) in src.chunks(PIECE).enumerate() {
                let b = k % 2;
                if let Some(e) = in_flight[b].take() {
                    dev.sync_event(&e)?;
                }
                par_copy(piece, &mut self.bufs[b].as_mut_slice()[..piece.len()]);
                // SAFETY: the buffer is not touched again before the event
                // recorded after this copy has completed (waited for above on
                // its next use, or below).
                unsafe {
                    dev.copy_to_device_async(
                        stream,
                        &self.bufs[b],
                        0,
                        piece.len(),
                        dst,
                        offset + k * PIECE,
                    )?
                };
                in_flight[b] = Some(dev.record(stream)?);
            }
            for e in in_flight.into_iter().flatten() {
                dev.sync_event(&e)?;
            }
            Ok(())
        })();
        settled(dev, stream, r)
    }

    /// Copies `dst.len()` bytes of `src` from `offset` into `dst`, a piece
    /// at a time: the device copies piece k while the cores copy piece
    /// k − 1 out of the other buffer. Waits for earlier work on `stream`.
    ///
    /// # Errors
    /// Device errors (including faults of earlier kernels).
    pub(super) fn download(
        &mut self,
        dev: &D,
        stream: &D::Stream,
        src: &D::Buffer,
        offset: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let r = (|| {
            let mut previous: Option<(usize, D::Event)> = None;
            let pieces = dst.len().div_ceil(PIECE);
            let finish =
                |k: usize, e: D::Event, bufs: &[D::Pinned; 2], dst: &mut [u8]| -> Result<()> {
                    dev.sync_event(&e)?;
                    let end = ((k + 1) * PIECE).min(dst.len());
                    let out = &mut dst[k * PIECE..end];
                    let n = out.len();
                    par_copy(&bufs[k % 2].as_slice()[..n], out);
                    Ok(())
                };
            for k in 0..pieces {
                let len = PIECE.min(dst.len() - k * PIECE);
                // SAFETY: buffer k % 2 was last filled by piece k − 2, whose
                // copy completed and was copied out in the previous step; it is
                // read only after the event recorded below has completed.
                unsafe {
                    dev.copy_to_host_async(
                        stream,
                        src,
                        offset + k * PIECE,
                        &mut self.bufs[k % 2],
                        0,
                        len,
                    )?
                };
                let e = dev.record(stream)?;
                if let Some((j, pe)) = previous.take() {
                    finish(j, pe, &self.bufs, dst)?;
                }
                previous = Some((k, e));
            }
            if let Some((j, pe)) = previous {
                finish(j, pe, &self.bufs, dst)?;
            }
            Ok(())
        })();
        settled(dev, stream, r)
    }
}
