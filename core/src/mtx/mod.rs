//! Matrix Market (`.mtx`, `.mtx.gz`) reading and writing, on all cores.
//!
//! Reading supports `matrix coordinate` with fields `real`, `integer` and
//! `pattern` and symmetries `general`, `symmetric`, `skew-symmetric` (the
//! other triangle is filled in on read), and `matrix array` (dense, stored
//! column-major; every entry, zeros included, becomes a stored entry).
//! `pattern` entries get the value 1. Duplicate coordinates are summed in
//! file order and columns sorted, so the result satisfies
//! [`CsrMatrix::check_sorted`]. `complex` and `hermitian` files are refused
//! with [`Error::Unsupported`].
//!
//! How: plain files are memory-mapped (`memmap2`); the body of a
//! coordinate file is cut into chunks at line boundaries, parsed in
//! parallel (rayon; values by `lexical-core`), and the entries scattered
//! into rows in parallel. Gzip input (recognised by its magic bytes, not
//! the file name) is decompressed on one thread (flate2 on zlib-rs) while
//! the other cores parse what is already decompressed. Dense `array` files
//! are read by [`parse_sequential`], the one-thread reader that the
//! parallel one is tested and fuzzed against: both give the same matrix and
//! the same first error for every input.
//!
//! Errors name the 1-based line of the decompressed text (gzip faults the
//! byte offset in the compressed file). The entry count in the size line
//! is never trusted for allocation beyond what the text can hold, so a
//! lying header cannot trigger a giant allocation.
//!
//! Writing formats rows on all cores (`itoa`, `ryu`: shortest round-trip
//! values, so a file reads back bit for bit) and compresses `.gz` output on
//! all cores as independent gzip members.

mod chunks;
mod format;
mod gzip;
pub mod part;
mod sequential;
mod text;

pub use format::{header_bytes, rows_bytes, write, write_path, write_path_with, Progress};
pub use sequential::parse_sequential;

use crate::csr::CsrMatrix;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::io::Read;
use std::path::Path;

/// The `field` of a Matrix Market header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Floating-point values.
    Real,
    /// Integer values (converted to the value type).
    Integer,
    /// No values: every entry is 1.
    Pattern,
}

/// The `symmetry` of a Matrix Market header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symmetry {
    /// Every entry is stored.
    General,
    /// One triangle is stored; `a(j,i) = a(i,j)`.
    Symmetric,
    /// One strict triangle is stored; `a(j,i) = -a(i,j)`, zero diagonal.
    SkewSymmetric,
}

/// What the header and size line of a Matrix Market file declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `true` for `coordinate`, `false` for `array`.
    pub coordinate: bool,
    /// Value field.
    pub field: Field,
    /// Symmetry.
    pub symmetry: Symmetry,
    /// Rows declared.
    pub nrows: usize,
    /// Columns declared.
    pub ncols: usize,
    /// Entries declared (stored lines), before symmetric expansion.
    pub entries: u64,
}

/// How to read: the parallel chunk size and a progress callback.
#[derive(Clone, Copy, Default)]
pub struct ReadOptions<'a> {
    /// Bytes of text per chunk parsed in parallel (cut at the next line
    /// end); `None`: about a quarter of the text per thread, between
    /// 256 KiB and 16 MiB (4 MiB for gzip input). Any size gives the same
    /// result.
    pub chunk_bytes: Option<usize>,
    /// Called with the input bytes read so far (compressed bytes for gzip
    /// input), from any thread.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

/// Reads a Matrix Market file (plain or gzip) into a sorted CSR matrix.
///
/// # Errors
/// [`Error::Io`] if the file cannot be read, [`Error::Parse`] naming the
/// line and fault for malformed content, [`Error::Gzip`] naming the byte of
/// a corrupt or truncated gzip stream, [`Error::Unsupported`] for
/// `complex`/`hermitian` data, [`Error::TooLarge`],
/// [`Error::HostOutOfMemory`].
pub fn read_path<T: Scalar>(path: impl AsRef<Path>) -> Result<CsrMatrix<T>> {
    read_path_with(path, &ReadOptions::default()).map(|(_, m)| m)
}

/// As [`read_path`], with options, returning the header too. The file is
/// memory-mapped: it must not be changed by another process while it is
/// read.
///
/// # Errors
/// As [`read_path`].
pub fn read_path_with<T: Scalar>(
    path: impl AsRef<Path>,
    opts: &ReadOptions<'_>,
) -> Result<(Header, CsrMatrix<T>)> {
    let path = path.as_ref();
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let r = if len == 0 {
        read_bytes(&[], opts)
    } else {
        // SAFETY: the map is read-only and lives until the end of this
        // call; the documented condition is that no other process changes
        // the file meanwhile (a truncation would fault, as for any mapped
        // reader).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        read_bytes(&map, opts)
    };
    r.map_err(|e| e.in_file(path))
}

/// Reads a Matrix Market stream (plain or gzip) and returns its header and
/// the matrix. See [`read_path`].
///
/// # Errors
/// As [`read_path`]; I/O errors name the path `<input stream>`.
pub fn read<T: Scalar>(mut reader: impl Read) -> Result<(Header, CsrMatrix<T>)> {
    let mut raw = Vec::new();
    reader.read_to_end(&mut raw).map_err(|source| Error::Io {
        path: "<input stream>".into(),
        source,
    })?;
    read_bytes(&raw, &ReadOptions::default())
}

/// Reads the bytes of a Matrix Market file, plain or gzip.
///
/// # Errors
/// As [`read_path`].
pub fn read_bytes<T: Scalar>(
    data: &[u8],
    opts: &ReadOptions<'_>,
) -> Result<(Header, CsrMatrix<T>)> {
    if gzip::is_gzip(data) {
        gzip::read(data, opts)
    } else {
        parse_with(data, opts)
    }
}

/// Parses the (uncompressed) text of a Matrix Market file in parallel.
/// See [`read_path`].
///
/// # Errors
/// As [`read_path`].
pub fn parse<T: Scalar>(text: &[u8]) -> Result<(Header, CsrMatrix<T>)> {
    parse_with(text, &ReadOptions::default())
}

/// As [`parse`], with options.
///
/// # Errors
/// As [`read_path`].
pub fn parse_with<T: Scalar>(
    text: &[u8],
    opts: &ReadOptions<'_>,
) -> Result<(Header, CsrMatrix<T>)> {
    let (h, size_line, body_start) = text::header(text)?;
    if !h.coordinate {
        return parse_sequential(text);
    }
    let body = &text[body_start..];
    let target = opts.chunk_bytes.unwrap_or_else(|| {
        (body.len() / (4 * rayon::current_num_threads())).clamp(256 << 10, 16 << 20)
    });
    let pieces = chunks::split_lines(body, target);
    let done = std::sync::atomic::AtomicU64::new(body_start as u64);
    use rayon::prelude::*;
    let parsed = pieces
        .par_iter()
        .map(|p| {
            let c = chunks::parse_chunk::<T>(p, &h);
            if let Some(f) = opts.progress {
                let n = p.len() as u64;
                f(done.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n);
            }
            c
        })
        .collect();
    let line_of_entry = |k: u64| -> Result<u64> {
        let mut seen = 0;
        let mut lines = text::Lines::new(body);
        lines.no = size_line;
        for (no, l) in lines {
            if !text::is_comment(l) && !text::is_blank(l) {
                seen += 1;
                if seen == k {
                    return Ok(no);
                }
            }
        }
        Ok(size_line)
    };
    let m = chunks::assemble(&h, size_line, parsed, line_of_entry)?;
    Ok((h, m))
}

#[cfg(test)]
mod tests;
