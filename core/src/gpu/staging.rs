//! Host-device copies through page-locked (pinned) staging buffers, so
//! that transfers run at the bus's speed (hybrid CPU-GPU pipelining,
//! Wu 2015, §3.3: transfers dominate an application's SpGEMM time and are
//! pipelined). Two buffers alternate: while the device copies one piece,
//! the host cores copy the next piece into (or the previous piece out of)
//! the other. The buffers are allocated once per engine, grown when a
//! larger transfer comes, and reused by every later product
//! ([`StagingPool`]).

use crate::device::{Device, PinnedBuffer};
use crate::error::Result;
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Mutex;

/// Largest piece, bytes (the size of each pinned buffer of a large
/// transfer). Measured on an H100 host (16 cores, 2 GiB device to host):
/// pieces of 8 MiB ran at 25 GB/s, 32 MiB at 51 GB/s, 64 MiB at 48-52 GB/s
/// against 55 GB/s for one pinned copy: each piece costs an event wait
/// and waking the cores besides its bytes.
const PIECE: usize = 32 << 20;

/// Smallest buffer, bytes. A transfer's pieces start at the buffer's size
/// over 8 (the first and last pieces are the ones nothing overlaps) and
/// double up to it.
const FIRST_PIECE: usize = 1 << 20;

/// Bytes of each pinned buffer for a transfer of `len` bytes: an eighth of
/// it rounded up to a power of two within [`FIRST_PIECE`]..=[`PIECE`], so a
/// small product does not pay for pinning (about 0.5 ms per MiB) large
/// buffers it cannot use.
fn buffer_bytes(len: usize) -> usize {
    (len / 8).next_power_of_two().clamp(FIRST_PIECE, PIECE)
}

/// The sizes of a transfer's pieces through buffers of `cap` bytes, without
/// end: `cap / 8` first, doubling up to `cap`.
fn piece_sizes(cap: usize) -> impl Iterator<Item = usize> {
    std::iter::successors(Some((cap / 8).max(1)), move |&s| Some((2 * s).min(cap)))
}

/// Copies `src` into `dst` (equal lengths) on all cores: the destination
/// pages of a fresh allocation are first touched in parallel too.
pub(super) fn par_copy(src: &[u8], dst: &mut [MaybeUninit<u8>]) {
    const STRIPE: usize = 256 << 10;
    assert_eq!(
        src.len(),
        dst.len(),
        "copy between slices of unequal lengths"
    );
    dst.par_chunks_mut(STRIPE)
        .zip(src.par_chunks(STRIPE))
        // SAFETY: stripes of equal lengths (equal slices cut alike), of
        // distinct allocations (one is borrowed mutably); `MaybeUninit<u8>`
        // has `u8`'s layout.
        .for_each(|(d, s)| unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), d.as_mut_ptr() as *mut u8, s.len())
        });
}

/// The bytes of `v`, as the destination of a copy.
pub(super) fn bytes_of<T: bytemuck::Pod>(v: &mut [T]) -> &mut [MaybeUninit<u8>] {
    let len = std::mem::size_of_val(v);
    // SAFETY: the same memory, with no alignment or validity requirement;
    // copies write only initialized bytes into it, and any bytes are a
    // valid `T` (`Pod`).
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut MaybeUninit<u8>, len) }
}

/// The bytes of the uninitialised elements `v`, as the destination of a
/// copy that writes them all.
pub(super) fn uninit_bytes_of<T: bytemuck::Pod>(
    v: &mut [MaybeUninit<T>],
) -> &mut [MaybeUninit<u8>] {
    let len = std::mem::size_of_val(v);
    // SAFETY: the same memory; `MaybeUninit<u8>` has no validity
    // requirement, and copies write only initialized bytes into it.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut MaybeUninit<u8>, len) }
}

/// `r`, after waiting for `stream` when it is an error: no copy may still
/// use the staging buffers once they go back to the pool.
fn settled<D: Device>(dev: &D, stream: &D::Stream, r: Result<()>) -> Result<()> {
    if r.is_err() {
        let _ = dev.synchronize(stream);
    }
    r
}

/// One part of a download: a device buffer, the byte offset in it to
/// copy from, and the host bytes to fill (their length is the part's).
pub(super) type DownloadPart<'a, D> = (&'a <D as Device>::Buffer, usize, &'a mut [MaybeUninit<u8>]);

/// Two pinned buffers of equal size (none before the first transfer).
pub(super) struct Staging<D: Device> {
    bufs: Option<[D::Pinned; 2]>,
}

/// The staging pairs of an engine, one per product in flight, kept for reuse.
pub(super) struct StagingPool<D: Device>(Mutex<Vec<Staging<D>>>);

impl<D: Device> Default for StagingPool<D> {
    fn default() -> Self {
        Self(Mutex::new(Vec::new()))
    }
}

impl<D: Device> StagingPool<D> {
    /// Runs `f` with a staging pair from the pool (its buffers allocated
    /// by its first transfer) and returns the pair to the pool.
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut Staging<D>) -> Result<R>) -> Result<R> {
        let taken = self.0.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut s = taken.unwrap_or(Staging { bufs: None });
        let r = f(&mut s);
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(s);
        r
    }
}

impl<D: Device> Staging<D> {
    /// The buffers for a transfer of `len` bytes, reallocated when they
    /// are smaller than [`buffer_bytes`] asks (then only: they never shrink).
    fn buffers(&mut self, dev: &D, len: usize) -> Result<&mut [D::Pinned; 2]> {
        let want = buffer_bytes(len);
        let have = self.bufs.as_ref().map_or(0, |b| b[0].as_slice().len());
        if have < want {
            self.bufs = None;
            self.bufs = Some([dev.alloc_pinned(want)?, dev.alloc_pinned(want)?]);
        }
        Ok(self.bufs.as_mut().expect("allocated above"))
    }

    /// Copies each `(src, dst)` of `parts` to the start of `dst`, a piece
    /// at a time, the pieces growing once over all the parts (one ramp,
    /// not one per array); returns when the copies are complete.
    ///
    /// # Errors
    /// Device errors.
    pub(super) fn upload(
        &mut self,
        dev: &D,
        stream: &D::Stream,
        parts: &[(&[u8], &D::Buffer)],
    ) -> Result<()> {
        let r = (|| {
            let total = parts.iter().map(|(src, _)| src.len()).sum();
            let bufs = self.buffers(dev, total)?;
            let cap = bufs[0].as_slice().len();
            let mut in_flight: [Option<D::Event>; 2] = [None, None];
            let mut sizes = piece_sizes(cap);
            let mut k = 0;
            for &(src, dst) in parts {
                let mut start = 0;
                while start < src.len() {
                    let size = sizes.next().expect("piece sizes do not end");
                    let piece = start..(start + size).min(src.len());
                    let (b, n) = (k % 2, piece.len());
                    if let Some(e) = in_flight[b].take() {
                        dev.sync_event(&e)?;
                    }
                    par_copy(
                        &src[piece.clone()],
                        bytes_of(&mut bufs[b].as_mut_slice()[..n]),
                    );
                    // SAFETY: the buffer is not touched again before the
                    // event recorded after this copy has completed (waited
                    // for above on its next use, or below).
                    unsafe { dev.copy_to_device_async(stream, &bufs[b], 0, n, dst, piece.start)? };
                    in_flight[b] = Some(dev.record(stream)?);
                    (start, k) = (piece.end, k + 1);
                }
            }
            for e in in_flight.into_iter().flatten() {
                dev.sync_event(&e)?;
            }
            Ok(())
        })();
        settled(dev, stream, r)
    }

    /// Copies each `(src, offset, dst)` of `parts` — `dst.len()` bytes of
    /// `src` from byte `offset` — into `dst` (each written whole when this
    /// returns `Ok`), a piece at a time: the device copies piece k while
    /// the cores copy piece k − 1 out of the other buffer. The pieces grow
    /// once over all the parts (one ramp) and the pipeline runs on from
    /// one part into the next, so a part's first piece crosses the bus
    /// while the previous part's last piece is copied out. Waits for
    /// earlier work on `stream`.
    ///
    /// # Errors
    /// Device errors (including faults of earlier kernels).
    pub(super) fn download(
        &mut self,
        dev: &D,
        stream: &D::Stream,
        parts: &mut [DownloadPart<'_, D>],
    ) -> Result<()> {
        let r = (|| {
            let total = parts.iter().map(|(_, _, dst)| dst.len()).sum();
            let bufs = self.buffers(dev, total)?;
            let cap = bufs[0].as_slice().len();
            let mut sizes = piece_sizes(cap);
            // Piece k − 1: its number, part, range in the part, and event.
            let mut previous: Option<(usize, usize, Range<usize>, D::Event)> = None;
            // Copies a finished piece out of its buffer into its part.
            let copy_out = |bufs: &[D::Pinned; 2],
                            parts: &mut [DownloadPart<'_, D>],
                            (j, q, range, pe): (usize, usize, Range<usize>, D::Event)|
             -> Result<()> {
                dev.sync_event(&pe)?;
                par_copy(
                    &bufs[j % 2].as_slice()[..range.len()],
                    &mut parts[q].2[range],
                );
                Ok(())
            };
            let mut k = 0;
            for p in 0..parts.len() {
                let (src, offset) = (parts[p].0, parts[p].1);
                let len = parts[p].2.len();
                let mut start = 0;
                while start < len {
                    let size = sizes.next().expect("piece sizes do not end");
                    let piece = start..(start + size).min(len);
                    // SAFETY: buffer k % 2 was last filled by piece k − 2,
                    // whose copy completed and was copied out in the
                    // previous step; it is read only after the event
                    // recorded below has completed.
                    unsafe {
                        dev.copy_to_host_async(
                            stream,
                            src,
                            offset + piece.start,
                            &mut bufs[k % 2],
                            0,
                            piece.len(),
                        )?
                    };
                    let e = dev.record(stream)?;
                    if let Some(done) = previous.take() {
                        copy_out(bufs, parts, done)?;
                    }
                    previous = Some((k, p, piece.clone(), e));
                    (start, k) = (piece.end, k + 1);
                }
            }
            if let Some(done) = previous {
                copy_out(bufs, parts, done)?;
            }
            Ok(())
        })();
        settled(dev, stream, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_start_at_an_eighth_of_the_buffer_and_double_up_to_it() {
        let sizes: Vec<_> = piece_sizes(8).take(5).collect();
        assert_eq!(sizes, [1, 2, 4, 8, 8]);
        let sizes: Vec<_> = piece_sizes(32 << 20).take(6).collect();
        assert_eq!(
            sizes,
            [4 << 20, 8 << 20, 16 << 20, 32 << 20, 32 << 20, 32 << 20]
        );
        assert_eq!(piece_sizes(4).next(), Some(1));
    }

    #[test]
    fn buffers_are_an_eighth_of_the_transfer_within_bounds() {
        assert_eq!(buffer_bytes(0), FIRST_PIECE);
        assert_eq!(buffer_bytes(24 << 20), 4 << 20);
        assert_eq!(buffer_bytes(3 << 30), PIECE);
    }
}
