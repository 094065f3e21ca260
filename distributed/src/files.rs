//! Files read and written by every rank at once: one Matrix Market or
//! `.npz` file, each rank its own rows.

use crate::comm::{self, agree, Traffic};
use crate::dist_csr::DistCsr;
use crate::partition::Partition;
use crate::two_d::Triplets;
use crate::{Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::mtx::part::{self, Summary};
use spgemm_core::npz::{PartsLayout, StoredCsr};
use spgemm_core::{CsrMatrix, Scalar};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// `Some(x)` as `x`, `None` as `u64::MAX` (a word for MPI).
fn word(x: Option<u64>) -> u64 {
    x.unwrap_or(u64::MAX)
}

/// The inverse of [`word`].
fn unword(w: u64) -> Option<u64> {
    (w != u64::MAX).then_some(w)
}

/// Where rank `k` of `parts` starts in `body`: the first line starting at
/// or after `k/parts` of its bytes.
fn cut(body: &[u8], k: usize, parts: usize) -> usize {
    if k == 0 {
        return 0;
    }
    let raw = (body.len() as u128 * k as u128 / parts as u128) as usize;
    if raw == 0 || raw >= body.len() {
        return raw.min(body.len());
    }
    memchr::memchr(b'\n', &body[raw - 1..]).map_or(body.len(), |q| raw + q)
}

impl<T: Scalar> DistCsr<T> {
    /// Reads a matrix file into rows split by `rows` (default: even).
    /// A plain Matrix Market coordinate file is read in parallel: every
    /// rank maps it and parses only its byte range of the body (whole
    /// lines), the entries go to the owners of their rows, and the file is
    /// read once in all; the matrix and the first error are those of the
    /// single-process reader. A CSR `.npz` whose arrays are stored
    /// uncompressed is read likewise: each rank reads its rows' offsets,
    /// columns and values at their places in the file, with the
    /// single-process reader's checks (where a file has several faults,
    /// the one named may differ). Other files (`.mtx.gz`, compressed or
    /// CSC `.npz`, dense `array` files) are read by rank 0 and scattered.
    /// Collective.
    ///
    /// # Errors
    /// On every rank, the same: the reader's errors (naming the file and
    /// line), a partition that does not fit the matrix.
    pub fn read(comm: &SimpleCommunicator, path: &Path, rows: Option<&Partition>) -> Result<Self> {
        let io = |e: std::io::Error| {
            Error::Core(spgemm_core::Error::Io {
                path: path.to_path_buf(),
                source: e,
            })
        };
        let npz = spgemm_core::files::is_npz(path);
        let map = std::fs::File::open(path)
            // SAFETY: the file is only read; as the single-process
            // reader, it must not change while it is read.
            .and_then(|f| unsafe { memmap2::Mmap::map(&f) })
            .map_err(io);
        let map = agree(comm, map)?;
        if npz {
            let layout = StoredCsr::find(&map).map_err(|e| Error::Core(e.in_file(path)));
            if let Some(layout) = agree(comm, layout)? {
                return Self::read_npz_parts(comm, path, &map, &layout, rows);
            }
        }
        let text: &[u8] = &map;
        let plain = !npz && !text.starts_with(&[0x1f, 0x8b]);
        let head = if plain {
            part::header(text)
                .map(Some)
                .map_err(|e| Error::Core(e.in_file(path)))
        } else {
            Ok(None)
        };
        match agree(comm, head)? {
            Some((h, size_line, body)) if h.coordinate => {
                Self::read_body(comm, path, &h, size_line, &text[body..], rows)
            }
            _ => {
                let whole = if comm.rank() == 0 {
                    spgemm_core::files::read::<T>(path, &Default::default())
                        .map(Some)
                        .map_err(Error::from)
                } else {
                    Ok(None)
                };
                let whole = agree(comm, whole)?;
                Self::scatter(comm, 0, whole.as_ref(), rows)
            }
        }
    }

    /// The parallel read of a coordinate body.
    fn read_body(
        comm: &SimpleCommunicator,
        path: &Path,
        h: &spgemm_core::mtx::Header,
        size_line: u64,
        body: &[u8],
        rows: Option<&Partition>,
    ) -> Result<Self> {
        let (p, r) = (comm.size() as usize, comm.rank() as usize);
        // Agreed: a rank given a partition that does not fit must not
        // leave the others waiting.
        let rows = rows_of_file(path, h.nrows as u64, rows, p);
        let rows = agree(comm, rows)?;
        let mine = &body[cut(body, r, p)..cut(body, r + 1, p)];
        let mut piece = part::parse_part::<T>(mine, h);
        let s = piece.summary;
        let words = [
            s.entries,
            s.lines,
            word(s.error_line),
            word(s.lower),
            word(s.upper),
        ];
        let mut all = vec![0u64; 5 * p];
        comm.all_gather_into(&words[..], &mut all[..]);
        let summaries: Vec<Summary> = all
            .chunks(5)
            .map(|w| Summary {
                entries: w[0],
                lines: w[1],
                error_line: unword(w[2]),
                lower: unword(w[3]),
                upper: unword(w[4]),
            })
            .collect();
        let lines_before =
            |k: usize| size_line + summaries[..k].iter().map(|s| s.lines).sum::<u64>();
        // Every rank takes the same steps here (the summaries are the
        // same everywhere): a line or a message comes from the rank that
        // has it.
        let first = part::first_error(h, size_line, &summaries, |k, entry| {
            let mut line = if r == k {
                part::entry_line(mine, entry)
            } else {
                0
            };
            comm.process_at_rank(k as i32).broadcast_into(&mut line);
            Ok(lines_before(k) + line)
        })?;
        if let Some(f) = first {
            let e = f.into_error(h, |k, line| {
                let text = match (r == k, piece.error.take()) {
                    (true, Some(spgemm_core::Error::Parse { message, .. })) => message,
                    (true, Some(e)) => e.to_string(),
                    _ => String::new(),
                };
                let words = comm::broadcast(
                    comm,
                    k,
                    text.into_bytes().into_iter().map(u64::from).collect(),
                    &mut Traffic::default(),
                );
                let message = match words {
                    Ok(w) => {
                        String::from_utf8_lossy(&w.iter().map(|&b| b as u8).collect::<Vec<_>>())
                            .into_owned()
                    }
                    Err(e) => e.to_string(),
                };
                spgemm_core::Error::Parse { line, message }
            });
            return Err(Error::Core(e.in_file(path)));
        }
        // The entries to the owners of their rows, in file order.
        let (nrows, ncols) = (h.nrows as u64, h.ncols as u64);
        let mut out: Vec<Triplets<T>> = (0..p).map(|_| Triplets::new()).collect();
        for ((&i, &j), &v) in piece.rows.iter().zip(&piece.cols).zip(&piece.values) {
            let t = &mut out[rows.owner(i as u64)];
            t.rows.push(i as u64);
            t.cols.push(u64::from(j));
            t.values.push(v);
        }
        drop(piece);
        let messages = out.iter().map(|t| t.message(nrows, ncols)).collect();
        let mut own = Some(std::mem::replace(&mut out[r], Triplets::new()));
        drop(out);
        let received = comm::exchange(comm, messages, &mut Traffic::default())?;
        let first_row = rows.range(r).start;
        let built = (|| {
            let mut parts = Vec::with_capacity(p);
            for (q, words) in received.iter().enumerate() {
                let t = if q == r {
                    own.take().unwrap_or_else(Triplets::new)
                } else {
                    let mut t = Triplets::new();
                    t.read(words, q, nrows, ncols)?;
                    t
                };
                parts.push((
                    t.rows.iter().map(|&i| (i - first_row) as usize).collect(),
                    t.cols.iter().map(|&j| j as u32).collect(),
                    t.values,
                ));
            }
            let local: CsrMatrix<T> = part::build_rows(rows.size(r) as usize, h.ncols, parts)?;
            let cols: Vec<u64> = local.col_indices().iter().map(|&c| u64::from(c)).collect();
            let (n, _, offsets, _, values) = local.into_parts();
            debug_assert_eq!(n as u64, rows.size(r));
            Self::compacted(ncols, rows.clone(), r, offsets, &cols, values)
        })();
        agree(comm, built)
    }

    /// Writes the matrix to one `.mtx` file (`.mtx.gz`: gzip members, one
    /// valid file) with every rank writing its own rows at its offset: the
    /// header by rank 0, each rank's text after the text of the ranks
    /// before it (offsets from the sizes of all). The file reads back as
    /// the matrix that [`DistCsr::gather`] would give. Collective.
    ///
    /// # Errors
    /// On every rank: a path that is not `.mtx` or `.mtx.gz`; a file that
    /// cannot be created or written (naming it and the rank).
    pub fn write_mtx(&self, comm: &SimpleCommunicator, path: &Path) -> Result<()> {
        let name = path.to_string_lossy();
        let gz = name.ends_with(".mtx.gz");
        if !gz && !name.ends_with(".mtx") {
            return Err(Error::Argument(format!(
                "{name}: one file from every rank is written as .mtx or .mtx.gz"
            )));
        }
        let io = |e: std::io::Error| -> Error {
            Error::Core(spgemm_core::Error::Io {
                path: path.to_path_buf(),
                source: e,
            })
        };
        let nnz = self.nnz(comm);
        let head =
            spgemm_core::mtx::header_bytes::<T>(self.nrows(), self.ncols(), nnz, gz).map_err(io);
        let text = head.and_then(|head| {
            let rows = spgemm_core::mtx::rows_bytes(
                self.local(),
                self.global_rows().start,
                Some(self.col_map()),
                gz,
            )
            .map_err(io)?;
            Ok((head, rows))
        });
        let (head, rows) = agree(comm, text)?;
        let sizes = comm::all_gather(comm, rows.len() as u64);
        let at = head.len() as u64 + sizes[..self.rank()].iter().sum::<u64>();
        let created = if comm.rank() == 0 {
            std::fs::File::create(path)
                .and_then(|f| f.write_all_at(&head, 0))
                .map_err(io)
        } else {
            Ok(())
        };
        agree(comm, created)?;
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.write_all_at(&rows, at))
            .map_err(io);
        agree(comm, written)
    }

    /// Writes the matrix to one stored `.npz` file with every rank writing
    /// its own rows' elements of `indptr`, `indices` and `data` at their
    /// offsets (from every rank's sizes), and rank 0 the zip and `.npy`
    /// headers, `format`, `shape` and the central directory once every
    /// member's CRC-32 is combined from the ranks' (see
    /// [`spgemm_core::npz::PartsLayout`]). The file reads back as the
    /// matrix that [`DistCsr::gather`] would give, through
    /// `scipy.sparse.load_npz` too. Collective.
    ///
    /// # Errors
    /// On every rank: a path that is not `.npz`; a file that cannot be
    /// created or written (naming it and the rank).
    pub fn write_npz(&self, comm: &SimpleCommunicator, path: &Path) -> Result<()> {
        if !spgemm_core::files::is_npz(path) {
            return Err(Error::Argument(format!(
                "{}: not a .npz file",
                path.display()
            )));
        }
        let io = |e: std::io::Error| -> Error {
            Error::Core(spgemm_core::Error::Io {
                path: path.to_path_buf(),
                source: e,
            })
        };
        let local = self.local();
        let rows = comm::all_gather(comm, local.nrows() as u64);
        let entries = comm::all_gather(comm, local.nnz() as u64);
        let sizes: Vec<(u64, u64)> = rows.into_iter().zip(entries).collect();
        let layout = PartsLayout::new::<T>(self.nrows(), self.ncols(), &sizes);
        let layout = agree(comm, layout.map_err(Error::from))?;
        let map = self.col_map();
        let part = layout.part(
            self.rank(),
            local.row_offsets(),
            local.col_indices(),
            |c| map[c as usize],
            local.values(),
        );
        let part = agree(comm, part.map_err(Error::from))?;
        let created = if comm.rank() == 0 {
            std::fs::File::create(path)
                .and_then(|f| f.set_len(layout.file_bytes()))
                .map_err(io)
        } else {
            Ok(())
        };
        agree(comm, created)?;
        let put = |pieces: &[(u64, Vec<u8>)]| {
            let f = std::fs::OpenOptions::new().write(true).open(path)?;
            pieces
                .iter()
                .try_for_each(|(at, bytes)| f.write_all_at(bytes, *at))
        };
        agree(comm, put(&part.pieces).map_err(io))?;
        let sums = crate::npz_parts::every_ranks_sums(comm, &part.sums);
        let headers = if comm.rank() == 0 {
            layout
                .headers(&sums)
                .map_err(Error::from)
                .and_then(|h| put(&h).map_err(io))
        } else {
            Ok(())
        };
        agree(comm, headers)
    }
}

/// `rows` (default: even) as the partition of the `nrows` rows of the
/// file at `path` over `ranks` ranks, or the error naming both sizes.
pub(crate) fn rows_of_file(
    path: &Path,
    nrows: u64,
    rows: Option<&Partition>,
    ranks: usize,
) -> Result<Partition> {
    match rows {
        Some(x) if x.parts() != ranks || x.len() != nrows => Err(Error::Argument(format!(
            "the partition has {} parts over {} rows; the communicator has {ranks} ranks and {} {nrows} rows",
            x.parts(),
            x.len(),
            path.display(),
        ))),
        Some(x) => Ok(x.clone()),
        None => Partition::even(nrows, ranks),
    }
}
