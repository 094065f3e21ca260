//! The sequential Matrix Market reader: one line after another on one
//! thread, kept as the oracle the parallel reader is tested and fuzzed
//! against.

use super::text::{
    check_range, header, is_blank, is_comment, parse_err, parse_index, parse_integer, parse_real,
    Lines,
};
use super::{Field, Header, Symmetry};
use crate::csr::CsrMatrix;
use crate::error::{try_reserve, Result};
use crate::scalar::Scalar;

/// Parses the text of a Matrix Market file line by line on one thread:
/// the simple reader that the parallel one ([`super::parse`]) is checked
/// against, equal to it in result and in every error.
///
/// # Errors
/// As [`super::read_path`].
pub fn parse_sequential<T: Scalar>(text: &[u8]) -> Result<(Header, CsrMatrix<T>)> {
    let (header, no, body_start) = header(text)?;
    let Header {
        coordinate,
        field,
        symmetry,
        nrows,
        ncols,
        entries,
    } = header;
    let mut lines = Lines::new(&text[body_start..]);
    lines.no = no;
    // Every entry line takes at least 4 bytes ("1 1\n"); never reserve more
    // than the remaining text can hold, whatever the header says.
    let min_line = if coordinate { 4 } else { 2 };
    let cap = entries.min((lines.remaining() / min_line + 1) as u64) as usize;
    let cap = if symmetry == Symmetry::General {
        cap
    } else {
        cap.saturating_mul(2)
    };
    let mut rows: Vec<usize> = Vec::new();
    let mut cols: Vec<u32> = Vec::new();
    let mut vals: Vec<T> = Vec::new();
    try_reserve(&mut rows, cap, "Matrix Market row indices")?;
    try_reserve(&mut cols, cap, "Matrix Market column indices")?;
    try_reserve(&mut vals, cap, "Matrix Market values")?;

    let mut read = 0u64;
    let mut triangle = Triangle::default();
    let mut last_line = no;
    for (no, line) in lines.by_ref() {
        last_line = no;
        if is_comment(line) || is_blank(line) {
            continue;
        }
        if read == entries {
            return Err(parse_err(
                no,
                format!("more entries than the {entries} declared"),
            ));
        }
        let mut toks = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty());
        let (i, j) = if coordinate {
            let i = parse_index(no, toks.next(), "row index")?;
            let j = parse_index(no, toks.next(), "column index")?;
            check_range(no, i, nrows, "row")?;
            check_range(no, j, ncols, "column")?;
            ((i - 1) as usize, (j - 1) as usize)
        } else {
            // Column-major dense data.
            (
                (read % nrows as u64) as usize,
                (read / nrows as u64) as usize,
            )
        };
        let v = match field {
            Field::Pattern => T::ONE,
            Field::Real => parse_real::<T>(no, toks.next())?,
            Field::Integer => parse_integer::<T>(no, toks.next())?,
        };
        if toks.next().is_some() {
            return Err(parse_err(no, "unexpected extra token after the entry"));
        }
        read += 1;
        if symmetry != Symmetry::General {
            if symmetry == Symmetry::SkewSymmetric && i == j {
                return Err(parse_err(
                    no,
                    format!(
                        "skew-symmetric matrix stores a diagonal entry ({}, {})",
                        i + 1,
                        j + 1
                    ),
                ));
            }
            triangle.note(no, i, j)?;
        }
        rows.push(i);
        cols.push(j as u32);
        vals.push(v);
        if i != j && symmetry != Symmetry::General {
            rows.push(j);
            cols.push(i as u32);
            vals.push(if symmetry == Symmetry::SkewSymmetric {
                -v
            } else {
                v
            });
        }
    }
    if read < entries {
        return Err(parse_err(
            last_line,
            format!("file ends after {read} of the {entries} declared entries (truncated?)"),
        ));
    }
    let m = CsrMatrix::from_triplets(nrows, ncols, &rows, &cols, &vals)?;
    Ok((header, m))
}

/// Tracks which strict triangle a symmetric file uses: storing both would
/// double entries on expansion, so it is an error.
#[derive(Default)]
struct Triangle {
    lower: Option<u64>,
    upper: Option<u64>,
}

impl Triangle {
    fn note(&mut self, line: u64, i: usize, j: usize) -> Result<()> {
        match i.cmp(&j) {
            std::cmp::Ordering::Greater => self.lower.get_or_insert(line),
            std::cmp::Ordering::Less => self.upper.get_or_insert(line),
            std::cmp::Ordering::Equal => return Ok(()),
        };
        match (self.lower, self.upper) {
            (Some(l), Some(u)) => Err(parse_err(
                line,
                format!("symmetric file stores entries on both sides of the diagonal (lines {l} and {u}); only one triangle may be stored"),
            )),
            _ => Ok(()),
        }
    }
}
