//! B's rows read in place by the ranks of one node: each rank writes its
//! rows of B into its segment of MPI-3 shared-memory windows
//! (`MPI_Win_allocate_shared`, Message Passing Interface Forum, "MPI: A
//! Message-Passing Interface Standard", version 3.1, §11.2.3), whose
//! segments lie back to back in rank order, so that every rank of the node
//! sees the whole of B as one CSR matrix with global columns and reads the
//! rows its rows of A reference where they lie: no message, no copy, no
//! assembly of B̂.

use crate::assemble::copy_rows;
use crate::column_set::Marks;
use crate::dist_csr::DistCsr;
use crate::{Error, Result};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;
use spgemm_core::{CsrMatrix, CsrView, Scalar};
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::ops::Range;

/// Whether every rank of `comm` runs on one node (one shared-memory
/// domain: `MPI_Comm_split_type` with `MPI_COMM_TYPE_SHARED`). Collective.
pub(crate) fn on_one_node(comm: &SimpleCommunicator) -> bool {
    comm.split_shared(comm.rank()).size() == comm.size()
}

/// One shared-memory window of a communicator of one node, freed
/// (collectively) when dropped.
struct Window {
    win: ffi::MPI_Win,
}

impl Window {
    /// This rank's segment of `size` bytes of a new window over `comm`,
    /// the window and MPI's return code (a failure aborts every rank
    /// under MPI's default error handler; under one that returns, the
    /// caller agrees on the codes, since every rank took part). Collective.
    fn allocate(comm: &SimpleCommunicator, size: ffi::MPI_Aint) -> (Self, *mut u8, c_int) {
        let mut base: *mut u8 = std::ptr::null_mut();
        // SAFETY: MPI writes the window handle and this rank's base
        // address into the two out-pointers, which point to live locals;
        // the communicator handle is valid while `comm` lives.
        let (code, win) = unsafe {
            let mut win = ffi::RSMPI_WIN_NULL;
            let code = ffi::MPI_Win_allocate_shared(
                size,
                1,
                ffi::RSMPI_INFO_NULL,
                comm.as_raw(),
                &mut base as *mut *mut u8 as *mut c_void,
                &mut win,
            );
            (code, win)
        };
        (Self { win }, base, code)
    }

    /// The first byte of rank `rank`'s segment and its length in bytes;
    /// `None` for the first byte of the lowest rank's segment that is not
    /// empty (`MPI_PROC_NULL`).
    fn segment(&self, rank: Option<usize>) -> (*const u8, usize) {
        let (mut size, mut unit, mut base): (ffi::MPI_Aint, c_int, *mut u8) =
            (0, 0, std::ptr::null_mut());
        // SAFETY: the window is live; MPI writes three values into live
        // locals. A rank outside the window's group is never asked.
        unsafe {
            ffi::MPI_Win_shared_query(
                self.win,
                rank.map_or(ffi::RSMPI_PROC_NULL, |r| r as c_int),
                &mut size,
                &mut unit,
                &mut base as *mut *mut u8 as *mut c_void,
            );
        }
        (base, size as usize)
    }

    /// Ends the epoch in which this rank wrote its segment: after it every
    /// rank's writes are visible to all. Collective.
    fn fence(&self) {
        // SAFETY: the window is live; a fence with no assertion.
        unsafe {
            ffi::MPI_Win_fence(0, self.win);
        }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: the window is live and freed once; every rank drops its
        // windows at the same point of the same collective sequence.
        // SAFETY: reading MPI's constant handle for no window.
        if self.win == unsafe { ffi::RSMPI_WIN_NULL } {
            return;
        }
        unsafe {
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}

/// The whole of B (global rows and columns), its rows written by their
/// owners into shared-memory windows of one node.
pub(crate) struct SharedRows<'c, T> {
    comm: &'c SimpleCommunicator,
    nrows: usize,
    ncols: usize,
    offsets: *const usize,
    cols: *const u32,
    values: *const T,
    nnz: usize,
    // Dropped after the barrier in `Drop`: the fields drop after it runs.
    _windows: [Window; 3],
    _values: PhantomData<T>,
}

impl<T: Scalar> SharedRows<'_, T> {
    /// Writes this rank's rows of `b` into windows shared by the ranks of
    /// `comm`, which must all run on one node ([`on_one_node`]).
    /// Collective.
    ///
    /// # Errors
    /// On every rank: B wider than 2³² − 1 columns; a window MPI did not
    /// allocate, or whose segments do not lie back to back.
    pub(crate) fn share<'c>(
        comm: &'c SimpleCommunicator,
        b: &DistCsr<T>,
    ) -> Result<SharedRows<'c, T>> {
        let (p, r) = (comm.size() as usize, comm.rank() as usize);
        if b.ncols() > u64::from(u32::MAX) || b.nrows() > u64::from(u32::MAX) {
            return Err(Error::Argument(format!(
                "B is {}x{}: rows read in place need fewer than 2^32 rows and columns",
                b.nrows(),
                b.ncols()
            )));
        }
        let local = b.local();
        let nnz_all = crate::comm::all_gather(comm, local.nnz() as u64);
        let first: u64 = nnz_all[..r].iter().sum();
        let nnz: u64 = nnz_all.iter().sum();
        // Row offsets: the last rank also writes the final one.
        let own_offsets = local.nrows() + usize::from(r + 1 == p);
        // Every size checked, and the checks agreed, before the first
        // (collective) allocation.
        let vb = std::mem::size_of::<T>();
        let bytes = [
            own_offsets.checked_mul(std::mem::size_of::<usize>()),
            local.nnz().checked_mul(4),
            local.nnz().checked_mul(vb),
        ];
        let sizes = bytes
            .iter()
            .map(|b| b.and_then(|b| ffi::MPI_Aint::try_from(b).ok()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Error::Argument(format!(
                    "this rank's {} rows of B exceed MPI's window sizes",
                    local.nrows()
                ))
            });
        let sizes = crate::comm::agree(comm, sizes)?;
        let (wo, po, co) = Window::allocate(comm, sizes[0]);
        let (wc, pc, cc) = Window::allocate(comm, sizes[1]);
        let (wv, pv, cv) = Window::allocate(comm, sizes[2]);
        let windows = [wo, wc, wv];
        let allocated = match [co, cc, cv]
            .into_iter()
            .find(|&c| c != ffi::MPI_SUCCESS as c_int)
        {
            None => Ok(()),
            Some(code) => Err(Error::Argument(format!(
                "MPI_Win_allocate_shared for this rank's rows of B failed (MPI error {code})"
            ))),
        };
        // The windows are freed (collectively) on every rank if this fails.
        crate::comm::agree(comm, allocated)?;
        // SAFETY: each segment was allocated above with room for exactly
        // these elements; MPI aligns a segment's start for any type (as
        // malloc does: checked below for the first, which the others
        // follow at multiples of the element sizes).
        unsafe {
            let offsets = std::slice::from_raw_parts_mut(po as *mut usize, own_offsets);
            let shift = first as usize;
            offsets
                .par_iter_mut()
                .zip(local.row_offsets().par_iter())
                .for_each(|(o, &x)| *o = x + shift);
            let cols = std::slice::from_raw_parts_mut(pc as *mut u32, local.nnz());
            let map = b.col_map();
            cols.par_chunks_mut(1 << 15)
                .zip(local.col_indices().par_chunks(1 << 15))
                .for_each(|(out, src)| {
                    for (o, &c) in out.iter_mut().zip(src) {
                        *o = map[c as usize] as u32;
                    }
                });
            let values = std::slice::from_raw_parts_mut(pv as *mut T, local.nnz());
            values
                .par_chunks_mut(1 << 15)
                .zip(local.values().par_chunks(1 << 15))
                .for_each(|(out, src)| out.copy_from_slice(src));
        }
        for w in &windows {
            w.fence();
        }
        // Segments back to back in rank order, as MPI allocates them by
        // default, from the first that is not empty; that one aligned for
        // its element type.
        let sizes = [std::mem::size_of::<usize>(), 4, vb];
        let aligns = [std::mem::align_of::<usize>(), 4, std::mem::align_of::<T>()];
        let rows_all = crate::comm::all_gather(comm, local.nrows() as u64);
        let mut contiguous = true;
        let mut bases = [std::ptr::null::<u8>(); 3];
        for (k, w) in windows.iter().enumerate() {
            let (base, _) = w.segment(None);
            bases[k] = base;
            contiguous &= (base as usize).is_multiple_of(aligns[k]);
            let mut at = 0usize;
            for q in 0..p {
                let elements = match k {
                    0 => rows_all[q] as usize + usize::from(q + 1 == p),
                    _ => nnz_all[q] as usize,
                };
                let (b_q, len) = w.segment(Some(q));
                if len > 0 {
                    contiguous &= b_q as usize == base as usize + at;
                }
                contiguous &= len == elements * sizes[k];
                at += elements * sizes[k];
            }
        }
        // No entries anywhere: the column and value windows are empty and
        // their bases may be null; an empty slice needs an aligned one.
        if nnz == 0 {
            bases[1] = std::ptr::NonNull::<u32>::dangling().as_ptr() as *const u8;
            bases[2] = std::ptr::NonNull::<T>::dangling().as_ptr() as *const u8;
        }
        let contiguous = crate::comm::agree(
            comm,
            if contiguous {
                Ok(())
            } else {
                Err(Error::Argument(
                    "MPI did not place the shared windows' segments back to back".into(),
                ))
            },
        );
        // The windows are freed (collectively) on every rank if this fails.
        contiguous?;
        Ok(SharedRows {
            comm,
            nrows: b.nrows() as usize,
            ncols: b.ncols() as usize,
            offsets: bases[0] as *const usize,
            cols: bases[1] as *const u32,
            values: bases[2] as *const T,
            nnz: nnz as usize,
            _windows: windows,
            _values: PhantomData,
        })
    }

    /// B's offsets, columns and values, all ranks' rows.
    fn arrays(&self) -> (&[usize], &[u32], &[T]) {
        // SAFETY: the windows hold `nrows + 1` offsets, `nnz` columns and
        // values back to back (checked in `share`), written before the
        // fences and not written again while `self` lives.
        unsafe {
            (
                std::slice::from_raw_parts(self.offsets, self.nrows + 1),
                std::slice::from_raw_parts(self.cols, self.nnz),
                std::slice::from_raw_parts(self.values, self.nnz),
            )
        }
    }

    /// B's row offsets (global rows, `nrows + 1`).
    pub(crate) fn row_offsets(&self) -> &[usize] {
        self.arrays().0
    }

    /// B's rows `need` (global, ascending, distinct) copied into one CSR
    /// matrix, row `k` being row `need[k]`, over the sorted list of the
    /// distinct columns they use (returned with it): the 1D algorithm's
    /// B̂, copied from the windows rather than received.
    pub(crate) fn gather(&self, need: &[u64]) -> (CsrMatrix<T>, Vec<u64>) {
        const ROWS: usize = 1 << 12;
        let (offsets, cols, values) = self.arrays();
        let row = |g: u64| offsets[g as usize]..offsets[g as usize + 1];
        let mut hat = Vec::with_capacity(need.len() + 1);
        hat.push(0usize);
        for &g in need {
            hat.push(hat[hat.len() - 1] + row(g).len());
        }
        let nnz = hat[need.len()];
        let marks = Marks::new(self.ncols as u64);
        need.par_chunks(ROWS).for_each(|rows| {
            for &g in rows {
                for &c in &cols[row(g)] {
                    marks.mark(u64::from(c));
                }
            }
        });
        let set = marks.finish();
        let (mut hat_cols, mut hat_values) = (vec![0u32; nnz], vec![T::ZERO; nnz]);
        copy_rows(
            need,
            |&g| (&cols[row(g)], &values[row(g)]),
            |c| set.position(u64::from(c)),
            &mut hat_cols,
            &mut hat_values,
        );
        let map = set.columns();
        // SAFETY: offsets from 0 adding each row's length; every column is
        // its position among the marked columns of these same rows, in the
        // rows' order.
        let m =
            unsafe { CsrMatrix::new_unchecked(need.len(), map.len(), hat, hat_cols, hat_values) };
        (m, map)
    }

    /// B's rows `rows` (global, consecutive), read in place: their
    /// columns and values where they lie, their row offsets copied to
    /// start from 0.
    pub(crate) fn rows(&self, rows: Range<usize>) -> RowsOfB<'_, T> {
        let (offsets, cols, values) = self.arrays();
        let (first, last) = (offsets[rows.start], offsets[rows.end]);
        RowsOfB {
            ncols: self.ncols,
            offsets: offsets[rows.start..=rows.end]
                .par_iter()
                .map(|&o| o - first)
                .collect(),
            cols: &cols[first..last],
            values: &values[first..last],
        }
    }
}

/// Consecutive rows of the shared B ([`SharedRows::rows`]).
pub(crate) struct RowsOfB<'s, T> {
    ncols: usize,
    offsets: Vec<usize>,
    cols: &'s [u32],
    values: &'s [T],
}

impl<T: Scalar> RowsOfB<'_, T> {
    /// The rows as a CSR matrix (global columns).
    pub(crate) fn view(&self) -> CsrView<'_, T> {
        // SAFETY: each rank wrote its checked rows of B: offsets shifted
        // by the entries of the ranks before it (so increasing across
        // ranks, here shifted to start from 0 and end at the rows'
        // entries), and global columns below `ncols` from its column map.
        unsafe {
            CsrView::new_unchecked(
                self.offsets.len() - 1,
                self.ncols,
                &self.offsets,
                self.cols,
                self.values,
            )
        }
    }
}

impl<T> Drop for SharedRows<'_, T> {
    /// Waits for every rank to finish reading before any frees its
    /// segments (the windows drop after this).
    fn drop(&mut self) {
        self.comm.barrier();
    }
}
