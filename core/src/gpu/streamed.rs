//! Host-to-host products computed and downloaded in chunks of rows
//! (hybrid CPU-GPU pipelining, Wu 2015, §3.3): after the symbolic phase
//! C's row offsets come back and the host allocates C; the numeric phase
//! then runs one chunk of rows at a time while a second host thread
//! downloads each finished chunk on a copy stream, through pinned staging
//! buffers, straight into its place in C's arrays. C's download thus
//! overlaps the kernels of the chunks after it, and C is assembled with no
//! copy beyond the staging one.

use super::config::MAX_DOWNLOAD_CHUNKS;
use super::kernels::{DevicePtr, Phase};
use super::matrix::{GpuMatrix, RowsOf, Structure};
use super::memory::DeviceArray;
use super::meta::Meta;
use super::numeric::COut;
use super::product::{NumericBinning, Product};
use super::staging::{bytes_of, uninit_bytes_of, Staging};
use super::symbolic::{distinct_rows, repeat_rows, Offsets};
use crate::csr::{check_columns, check_offsets, CsrMatrix};
use crate::device::Device;
use crate::error::{try_with_capacity, try_zeroed, Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// A chunk's first row is a multiple of this, so that its distinct-row
/// bits start on a whole word of the bitmap (of 32 or 64 bits).
const CHUNK_ROW_ALIGN: usize = 64;

/// C on the host (none when it went into a place given), and when its
/// last kernel was seen done on the host.
pub(super) struct Streamed<T> {
    pub(super) c: Option<CsrMatrix<T>>,
    pub(super) kernels_done: Instant,
}

/// Rows `0..offsets.len() - 1` of C (row offsets `offsets`) in chunks of
/// about `entries` entries each, at most [`MAX_DOWNLOAD_CHUNKS`] of them,
/// each starting at a multiple of [`CHUNK_ROW_ALIGN`] rows. One chunk when
/// C has no entries.
pub(super) fn row_chunks(offsets: &[usize], entries: usize) -> Vec<Range<usize>> {
    let m = offsets.len() - 1;
    let nnz = offsets[m];
    let per = entries.max(nnz.div_ceil(MAX_DOWNLOAD_CHUNKS)).max(1);
    let mut starts = vec![0];
    for k in 1..nnz.div_ceil(per) {
        let row = offsets.partition_point(|&o| o < k * per);
        let row = row / CHUNK_ROW_ALIGN * CHUNK_ROW_ALIGN;
        if row > *starts.last().expect("starts at 0") && row < m {
            starts.push(row);
        }
    }
    starts.push(m);
    starts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Rows `rows` of `m` as a matrix of their own that borrows `m`'s arrays:
/// its row offsets are `m`'s from `rows.start` on, still indexing `m`'s
/// whole column and value arrays. Valid while `m` lives.
fn rows_view<D: Device, T: Scalar>(
    dev: &D,
    m: &GpuMatrix<D, T>,
    rows: Range<usize>,
) -> GpuMatrix<D, T> {
    let s = &m.structure;
    // SAFETY: every array lies inside one of `m`'s, which outlives the view
    // (the caller's guarantee); borrowed arrays are never freed.
    let (rpt, col, val) = unsafe {
        (
            DeviceArray::borrowed(dev, s.rpt.ptr_at(rows.start), rows.len() + 1),
            DeviceArray::borrowed(dev, s.col.ptr_at(0), s.col.len()),
            DeviceArray::borrowed(dev, m.val.ptr_at(0), m.val.len()),
        )
    };
    GpuMatrix {
        nrows: rows.len(),
        ncols: m.ncols,
        nnz: m.nnz,
        structure: Arc::new(Structure {
            rpt,
            col,
            host: None,
        }),
        val,
        sorted: m.sorted,
    }
}

/// Bytes of the stretches of `v` whose pages one task of [`touch`] faults in.
const TOUCH_STRETCH: usize = 2 << 20;

/// Faults in every page of `v` on all cores (new pages are faulted in
/// here, while the device computes, rather than during the copy into
/// them): each stretch by one `madvise(MADV_POPULATE_WRITE)` (Linux 5.14
/// on), else by writing a byte per page. Measured on an H100 host whose
/// new pages were slow, together with the one-pipeline download of a
/// chunk's two arrays (whole job's multiply step, two runs each): R-MAT 17
/// 117 and 133 ms against 144 and 163 ms writing a byte per page, the
/// 3-dof FEM square 21 and 30 against 33 and 43 ms; writing nothing ahead
/// (the copy faulting the pages in), 224-279 and 59 ms.
fn touch<T: bytemuck::Pod>(v: &mut [T]) {
    bytemuck::cast_slice_mut::<T, u8>(v)
        .par_chunks_mut(TOUCH_STRETCH)
        .for_each(|stretch| {
            if !populate(stretch) {
                for page in stretch.chunks_mut(4096) {
                    page[0] = 0;
                }
            }
        });
}

/// Faults in the whole pages inside `bytes` for writing with one system
/// call; whether it did (false where the kernel lacks
/// `MADV_POPULATE_WRITE`, or off Linux). The bytes keep their contents.
fn populate(bytes: &mut [u8]) -> bool {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let p = bytes.as_mut_ptr() as usize;
        let (start, end) = (p.next_multiple_of(PAGE), (p + bytes.len()) / PAGE * PAGE);
        if end <= start {
            return false;
        }
        // SAFETY: whole pages inside a slice we borrow mutably;
        // MADV_POPULATE_WRITE only faults them in (as a write would), it
        // changes no contents.
        let r = unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_WRITE,
            )
        };
        // The partial pages at either end are written by the copy itself.
        r == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = bytes;
        false
    }
}

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// The whole product into host memory: the symbolic phase, C's row
    /// offsets downloaded, then the numeric phase in chunks of about
    /// `chunk_entries` entries of C ([`row_chunks`]), each downloaded on
    /// `copy` (a [`Device::create_copy_stream`] stream) through `staging`
    /// while the next chunk computes: into `place` when given (a block of
    /// rows of a larger C, whose own checks come when it is whole), else
    /// into a C of its own.
    ///
    /// # Errors
    /// Device errors of either phase or of the copies; host out of memory;
    /// [`Error::StructureMismatch`] when `place` has other sizes than this
    /// product; those of [`CsrMatrix::new`] for a C the device got wrong
    /// (its offsets checked when they come back, its columns chunk by
    /// chunk).
    pub(super) fn multiply_to_host(
        &self,
        staging: &mut Staging<D>,
        copy: &D::Stream,
        chunk_entries: usize,
        place: Option<RowsOf<'_, T>>,
    ) -> Result<Streamed<T>> {
        let (dev, s0, l) = (self.device(), self.stream(0), &self.launcher);
        let Offsets {
            crpt,
            typical,
            same_rows,
            ..
        } = self.symbolic_offsets(false)?;
        let m = self.m();
        // The offsets are written whole by their download, so they are not
        // zeroed first: an allocation the allocator reuses (its threshold
        // for fresh pages rises to the sizes freed before, up to 32 MiB)
        // is zeroed on one core, 0.7 ms for a 1 M-row C on an H100 host.
        let mut offsets: Vec<usize> = try_with_capacity(m + 1, "row offsets")?;
        let buf = crpt.buf.as_ref().expect("C's row offsets are never empty");
        let spare = &mut offsets.spare_capacity_mut()[..m + 1];
        staging.download(dev, s0, &mut [(buf, 0, uninit_bytes_of(spare))])?;
        // SAFETY: the download wrote all m + 1 offsets (`crpt` holds them
        // first).
        unsafe { offsets.set_len(m + 1) };
        let nnz = offsets[m];
        // C's offsets are checked as they come (on all cores, while the
        // device waits), its columns chunk by chunk as they come down: the
        // check of the whole C after the last copy took 1.7-2.2 ms on an
        // H100 host for the FEM square and a Galerkin A·P.
        check_offsets(m, &offsets, nnz)?;
        if let Some(p) = &place {
            if p.offsets.len() != m || p.cols.len() != nnz {
                return Err(Error::StructureMismatch(format!(
                    "a place of {} rows and {} entries for a block of C of {m} rows and {nnz} entries",
                    p.offsets.len(),
                    p.cols.len()
                )));
            }
        }
        let col = l.alloc::<u32>(0, nnz, "C column indices")?;
        let val = l.alloc::<T>(0, nnz, "C values")?;
        let own = place.is_none();
        let (mut own_cols, mut own_vals) = (Vec::new(), Vec::new());
        let (cols, vals): (&mut [u32], &mut [T]) = match place {
            Some(RowsOf {
                offsets: rows,
                base,
                cols,
                vals,
            }) => {
                rows.par_iter_mut()
                    .zip(&offsets[1..])
                    .for_each(|(d, &o)| *d = o + base);
                (cols, vals)
            }
            None => {
                own_cols = try_zeroed(nnz, "column indices")?;
                own_vals = try_zeroed(nnz, "values")?;
                (&mut own_cols[..], &mut own_vals[..])
            }
        };
        let chunks = if nnz == 0 {
            Vec::new()
        } else {
            row_chunks(&offsets, chunk_entries)
        };
        let nbins = l.table().numeric.len();
        let (distinct, repeat) = (distinct_rows(&crpt, m), repeat_rows(&crpt, m));
        let runs = self.runs_together(&crpt, same_rows);
        let (b_same_rows, _b_marks) = self.runs_of_b(runs)?;
        let band = self.band(&crpt);
        // C's entries of each chunk.
        let spans: Vec<Range<usize>> = chunks
            .iter()
            .map(|r| offsets[r.start]..offsets[r.end])
            .collect();
        let ncols = self.b.ncols;
        let (computed, downloaded) = std::thread::scope(|scope| {
            let (sent, received) = mpsc::channel::<(usize, D::Event)>();
            let (spans, col, val, offsets) = (&spans, &col, &val, &offsets);
            let (mut cols, mut vals) = (cols, vals);
            let downloader = scope.spawn(move || -> Result<()> {
                if let Some(first) = spans.first() {
                    touch(&mut cols[..first.len()]);
                    touch(&mut vals[..first.len()]);
                }
                for (k, ready) in received {
                    let e = spans[k].clone();
                    let (cur_cols, rest) = std::mem::take(&mut cols).split_at_mut(e.len());
                    cols = rest;
                    let (cur_vals, rest) = std::mem::take(&mut vals).split_at_mut(e.len());
                    vals = rest;
                    dev.wait(copy, &ready)?;
                    let staging = &mut *staging;
                    let download = move || -> Result<()> {
                        let (col, val) = (col.buf.as_ref(), val.buf.as_ref());
                        let col = col.expect("a chunk of entries has arrays");
                        let val = val.expect("a chunk of entries has arrays");
                        let at = e.start;
                        staging.download(
                            dev,
                            copy,
                            &mut [
                                (col, 4 * at, bytes_of(cur_cols)),
                                (val, size_of::<T>() * at, bytes_of(cur_vals)),
                            ],
                        )?;
                        // A place's columns are checked with its whole C.
                        if own {
                            check_columns(offsets, cur_cols, at, ncols)?;
                        }
                        Ok(())
                    };
                    // The next chunk's pages are faulted in while this one
                    // is copied (measured on an H100 host, R-MAT 17's C of
                    // 2.2 GB: 125-139 ms after the last kernel against
                    // 150 ms touching first).
                    let next = spans.get(k + 1).map_or(0, |r| r.len());
                    let (next_cols, next_vals) = (&mut cols[..next], &mut vals[..next]);
                    let touch_next = move || {
                        touch(next_cols);
                        touch(next_vals);
                    };
                    rayon::join(download, touch_next).0?;
                }
                Ok(())
            });
            let computed = (|| -> Result<Instant> {
                for (k, rows) in chunks.into_iter().enumerate() {
                    let a = rows_view(dev, self.a, rows.clone());
                    // SAFETY: rows of `crpt`, which outlives the view.
                    let crpt_rows = unsafe {
                        DeviceArray::borrowed(dev, crpt.ptr_at(rows.start), rows.len() + 1)
                    };
                    let chunk = Product {
                        launcher: self.launcher,
                        options: self.options,
                        a: &a,
                        b: self.b,
                        pending: None,
                        values_ready: None,
                        prune: None,
                    };
                    let meta = Meta::new(l, rows.len(), nbins)?;
                    let distinct = distinct.add((rows.start / 8) as u64);
                    let repeat = repeat.add((rows.start / 8) as u64);
                    // Chunks start on whole words of every bitmap.
                    let binning = NumericBinning {
                        distinct,
                        typical,
                        same_rows: match runs {
                            DevicePtr(0) => runs,
                            words => words.add((rows.start / 8) as u64),
                        },
                        b_same_rows,
                        band,
                    };
                    let counts =
                        chunk.count_bins(&meta, &crpt_rows, Phase::Numeric, Some(binning))?;
                    let out = COut {
                        crpt: &crpt_rows,
                        distinct,
                        repeat,
                        col,
                        val,
                    };
                    chunk.numeric(&out, binning, meta, counts)?;
                    if sent.send((k, dev.record(s0)?)).is_err() {
                        // The downloader stopped on an error, returned below.
                        break;
                    }
                }
                dev.synchronize(s0)?;
                Ok(Instant::now())
            })();
            drop(sent);
            let downloaded = downloader
                .join()
                .expect("the download thread does not panic");
            (computed, downloaded)
        });
        if computed.is_err() || downloaded.is_err() {
            // No copy may still be in flight into `cols`, `vals` or staging.
            let _ = dev.synchronize(copy);
        }
        let kernels_done = computed?;
        downloaded?;
        let c = if own {
            // SAFETY: the offsets were checked after their download and
            // the columns of every chunk (together, all of C's) after its
            // own; the values may be any.
            Some(unsafe { CsrMatrix::new_unchecked(m, ncols, offsets, own_cols, own_vals) })
        } else {
            None
        };
        Ok(Streamed { c, kernels_done })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(rows: &[usize]) -> Vec<usize> {
        let mut o = vec![0];
        for r in rows {
            o.push(o.last().unwrap() + r);
        }
        o
    }

    #[test]
    fn chunks_cover_the_rows_in_order_at_aligned_starts() {
        let rows: Vec<usize> = (0..10_000).map(|i| (i * 7919) % 13).collect();
        let o = offsets(&rows);
        for entries in [1, 100, 5_000, 1 << 30] {
            let c = row_chunks(&o, entries);
            assert_eq!(c.first().unwrap().start, 0);
            assert_eq!(c.last().unwrap().end, rows.len());
            assert!(c.windows(2).all(|w| w[0].end == w[1].start));
            assert!(c
                .iter()
                .all(|r| !r.is_empty() && r.start % CHUNK_ROW_ALIGN == 0));
            assert!(c.len() <= MAX_DOWNLOAD_CHUNKS);
        }
        assert_eq!(row_chunks(&o, 1 << 30).len(), 1);
        assert_eq!(row_chunks(&o, 1).len(), MAX_DOWNLOAD_CHUNKS);
    }

    #[test]
    fn chunks_hold_about_equal_entries() {
        let o = offsets(&vec![3; 64 * 1000]);
        let c = row_chunks(&o, 3 * 64 * 100);
        assert_eq!(c.len(), 10);
        assert!(c.iter().all(|r| r.len() == 6400));
    }

    #[test]
    fn one_chunk_without_entries_or_rows() {
        assert_eq!(row_chunks(&offsets(&[0; 500]), 10), vec![(0..500)]);
        assert_eq!(row_chunks(&[0], 10), vec![(0..0)]);
    }
}
