//! The Matrix Market writer: rows are formatted into buffers on all cores
//! (`itoa` for indices, `ryu` for shortest round-trip values), a window of
//! buffers at a time, while a second thread writes the previous window in
//! order with large writes; `.gz` output compresses each buffer as its own
//! gzip member on the same cores.

use super::gzip::member;
use crate::csr::CsrMatrix;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

/// Entries formatted into one buffer (about 8 MB of text).
const PIECE: usize = 1 << 18;

/// Called with the number of entries written so far, from any thread.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Writes `m` as a `matrix coordinate real general` file (`integer` for
/// integer values), gzip-compressed (on all cores, as independent members) when the path ends in `.gz`.
/// Values are written in shortest round-trip form, so reading the file
/// back gives exactly `m` (for sorted `m`), bit for bit.
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_path<T: Scalar>(path: impl AsRef<Path>, m: &CsrMatrix<T>) -> Result<()> {
    write_path_with(path, m, None)
}

/// As [`write_path`], calling `progress` with the entries written so far.
///
/// # Errors
/// As [`write_path`].
pub fn write_path_with<T: Scalar>(
    path: impl AsRef<Path>,
    m: &CsrMatrix<T>,
    progress: Option<Progress<'_>>,
) -> Result<()> {
    let path = path.as_ref();
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::create(path).map_err(io)?;
    let gz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    write_pieces(&mut file, m, gz, progress).map_err(io)?;
    file.flush().map_err(io)
}

/// Writes `m` in Matrix Market coordinate format to `w` (plain text).
///
/// # Errors
/// Any error of `w`.
pub fn write<T: Scalar>(w: &mut (impl Write + Send), m: &CsrMatrix<T>) -> std::io::Result<()> {
    write_pieces(w, m, false, None)
}

/// Rows of `m` in ranges of about [`PIECE`] entries.
fn pieces<T: Scalar>(m: &CsrMatrix<T>) -> Vec<Range<usize>> {
    let offsets = m.row_offsets();
    let mut out = Vec::new();
    let mut start = 0;
    while start < m.nrows() {
        let want = offsets[start] + PIECE;
        let end = offsets
            .partition_point(|&o| o <= want)
            .clamp(start + 1, m.nrows());
        out.push(start..end);
        start = end;
    }
    out
}

/// The text of rows `rows` of `m`, numbered from `first_row` (0-based)
/// with columns through `col_map` (`None`: as they are).
fn format_rows<T: Scalar>(
    m: &CsrMatrix<T>,
    rows: Range<usize>,
    first_row: u64,
    col_map: Option<&[u64]>,
) -> Vec<u8> {
    let offsets = m.row_offsets();
    let entries = offsets[rows.end] - offsets[rows.start];
    let mut out = Vec::with_capacity(entries * 24 + 64);
    let (mut ints, mut row_text) = (itoa::Buffer::new(), itoa::Buffer::new());
    for i in rows {
        let row = row_text.format(first_row + i as u64 + 1).as_bytes();
        let (cols, vals) = m.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            let c = col_map.map_or(u64::from(c), |map| map[c as usize]);
            out.extend_from_slice(row);
            out.push(b' ');
            out.extend_from_slice(ints.format(c + 1).as_bytes());
            out.push(b' ');
            v.write_shortest(&mut out);
            out.push(b'\n');
        }
    }
    out
}

/// The banner and size line that [`write_path`] writes for an `nrows ×
/// ncols` matrix of `nnz` entries of type `T` (the field `integer` for
/// integer types, `real` otherwise): text, or one gzip member when `gz`.
/// With [`rows_bytes`], parts of one file written by several processes
/// at offsets (gzip members concatenate into one valid `.gz` file).
///
/// # Errors
/// Compression errors.
pub fn header_bytes<T: Scalar>(
    nrows: u64,
    ncols: u64,
    nnz: u64,
    gz: bool,
) -> std::io::Result<Vec<u8>> {
    let field = if T::INTEGER { "integer" } else { "real" };
    let head = format!(
        "%%MatrixMarket matrix coordinate {field} general\n% written by spgemm {}\n{nrows} {ncols} {nnz}\n",
        env!("CARGO_PKG_VERSION"),
    );
    if gz {
        member(head.as_bytes())
    } else {
        Ok(head.into_bytes())
    }
}

/// The entry lines of all of `m`'s rows as rows `first_row..` (0-based)
/// of a larger matrix, columns mapped through `col_map` (`None`: as they
/// are), formatted on all cores; gzip members when `gz`. See
/// [`header_bytes`].
///
/// # Errors
/// Compression errors.
pub fn rows_bytes<T: Scalar>(
    m: &CsrMatrix<T>,
    first_row: u64,
    col_map: Option<&[u64]>,
    gz: bool,
) -> std::io::Result<Vec<u8>> {
    let bufs = pieces(m)
        .into_par_iter()
        .map(|r| {
            let text = format_rows(m, r, first_row, col_map);
            if gz {
                member(&text)
            } else {
                Ok(text)
            }
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    Ok(bufs.concat())
}

fn write_pieces<T: Scalar>(
    w: &mut (impl Write + Send),
    m: &CsrMatrix<T>,
    gz: bool,
    progress: Option<Progress<'_>>,
) -> std::io::Result<()> {
    let encode = |text: Vec<u8>| if gz { member(&text) } else { Ok(text) };
    w.write_all(&header_bytes::<T>(
        m.nrows() as u64,
        m.ncols() as u64,
        m.nnz() as u64,
        gz,
    )?)?;
    let pieces = pieces(m);
    let window = 2 * rayon::current_num_threads();
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<Vec<u8>>, u64)>(1);
        let writer = s.spawn(move || -> std::io::Result<()> {
            for (bufs, done) in rx {
                for b in bufs {
                    w.write_all(&b)?;
                }
                if let Some(p) = progress {
                    p(done);
                }
            }
            Ok(())
        });
        for group in pieces.chunks(window) {
            let bufs = group
                .par_iter()
                .map(|r| encode(format_rows(m, r.clone(), 0, None)))
                .collect::<std::io::Result<Vec<_>>>()?;
            let done = m.row_offsets()[group.last().map_or(0, |r| r.end)] as u64;
            if tx.send((bufs, done)).is_err() {
                break;
            }
        }
        drop(tx);
        writer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}
