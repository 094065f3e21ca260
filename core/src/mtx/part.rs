//! One process's share of a Matrix Market coordinate file: its byte range
//! of the body parsed on its own, the facts that decide the file's first
//! error, and rows built from entries gathered in file order. The
//! distributed reader (`spgemm-distributed`) splits a file this way; the
//! result and the first error are the single-process reader's.

use super::chunks::{self, Chunk};
use super::text::{self, Lines};
use super::Header;
use crate::csr::CsrMatrix;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

pub use super::chunks::{first_error, FirstError, Summary};

/// The banner and size line of `text`: the header, the 1-based number of
/// the size line and the byte offset of the body.
///
/// # Errors
/// As [`super::parse`] for a malformed banner or size line.
pub fn header(text: &[u8]) -> Result<(Header, u64, usize)> {
    text::header(text)
}

/// The entries of one byte range of a coordinate body (whole lines), in
/// file order (mirrors of symmetric files after their entry), 0-based.
pub struct Part<T> {
    /// Rows.
    pub rows: Vec<usize>,
    /// Columns.
    pub cols: Vec<u32>,
    /// Values.
    pub values: Vec<T>,
    /// What decides the file's first error (lines counted from the range's
    /// first line).
    pub summary: Summary,
    /// The range's first error, its line counted from the range's first
    /// line.
    pub error: Option<Error>,
}

/// Parses `text`, whole lines of the body of a coordinate file with
/// header `h`, on all cores.
pub fn parse_part<T: Scalar>(text: &[u8], h: &Header) -> Part<T> {
    let target = (text.len() / (4 * rayon::current_num_threads())).clamp(256 << 10, 16 << 20);
    let parsed: Vec<Chunk<T>> = chunks::split_lines(text, target)
        .par_iter()
        .map(|p| chunks::parse_chunk::<T>(p, h))
        .collect();
    let (rows, cols, values, summary, error) = Chunk::join(parsed);
    Part {
        rows,
        cols,
        values,
        summary,
        error,
    }
}

/// The line of `text`'s `k`-th entry line (1-based, comments and blanks
/// skipped), counted from its first line; past the last, its line count.
pub fn entry_line(text: &[u8], k: u64) -> u64 {
    let mut seen = 0;
    let mut lines = Lines::new(text);
    for (no, l) in lines.by_ref() {
        if !text::is_comment(l) && !text::is_blank(l) {
            seen += 1;
            if seen == k {
                return no;
            }
        }
    }
    lines.no
}

/// The `nrows × ncols` matrix of entries given in file order, in parts
/// (rows, columns, values): duplicates summed in that order, rows sorted,
/// as the single-process reader builds it.
///
/// # Errors
/// [`Error::HostOutOfMemory`].
pub fn build_rows<T: Scalar>(
    nrows: usize,
    ncols: usize,
    parts: Vec<(Vec<usize>, Vec<u32>, Vec<T>)>,
) -> Result<CsrMatrix<T>> {
    let chunks = parts
        .into_iter()
        .map(|(r, c, v)| Chunk::of_entries(r, c, v))
        .collect();
    chunks::build(nrows, ncols, chunks)
}
