//! Matrix Market (`.mtx`, `.mtx.gz`) reading and writing.
//!
//! Reading supports `matrix coordinate` with fields `real`, `integer` and
//! `pattern` and symmetries `general`, `symmetric`, `skew-symmetric` (the
//! other triangle is filled in on read), and `matrix array` (dense, stored
//! column-major; every entry, zeros included, becomes a stored entry).
//! `pattern` entries get the value 1. Duplicate coordinates are summed and
//! columns sorted, so the result satisfies [`CsrMatrix::check_sorted`].
//! `complex` and `hermitian` files are refused with [`Error::Unsupported`].
//!
//! Gzip input is recognised by its magic bytes, not by the file name.
//! Errors name the 1-based line of the decompressed text. The entry count in
//! the size line is never trusted for allocation beyond what the file's
//! length can hold, so a lying header cannot trigger a giant allocation.

use crate::csr::{CsrMatrix, MAX_COLUMNS};
use crate::error::{try_reserve, Error, Result};
use crate::scalar::Scalar;
use flate2::read::MultiGzDecoder;
use std::io::{BufWriter, Read, Write};
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

/// Reads a Matrix Market file (plain or gzip) into a sorted CSR matrix.
///
/// # Errors
/// [`Error::Io`] if the file cannot be read, [`Error::Parse`] naming the
/// line and fault for malformed content, [`Error::Unsupported`] for
/// `complex`/`hermitian` data, [`Error::TooLarge`],
/// [`Error::HostOutOfMemory`].
pub fn read_path<T: Scalar>(path: impl AsRef<Path>) -> Result<CsrMatrix<T>> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read(file).map(|(_, m)| m).map_err(|e| e.in_file(path))
}

/// Reads a Matrix Market stream (plain or gzip) and returns its header and
/// the matrix. See [`read_path`].
///
/// # Errors
/// As [`read_path`]; I/O errors name the path `<input stream>`.
pub fn read<T: Scalar>(mut reader: impl Read) -> Result<(Header, CsrMatrix<T>)> {
    let io = |source| Error::Io {
        path: "<input stream>".into(),
        source,
    };
    let mut raw = Vec::new();
    reader.read_to_end(&mut raw).map_err(io)?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| Error::Parse {
                line: 0,
                message: format!("corrupt or truncated gzip stream: {e}"),
            })?;
        out
    } else {
        raw
    };
    parse(&text)
}

/// Parses the text of a Matrix Market file. See [`read_path`].
///
/// # Errors
/// As [`read_path`].
pub fn parse<T: Scalar>(text: &[u8]) -> Result<(Header, CsrMatrix<T>)> {
    let mut lines = Lines::new(text);
    let (no, first) = lines.next().ok_or_else(|| parse_err(1, "empty file"))?;
    let (coordinate, field, symmetry) = parse_banner(no, first)?;
    let (no, size) = loop {
        match lines.next() {
            None => return Err(parse_err(no + 1, "missing size line")),
            Some((_, l)) if l.first() == Some(&b'%') || is_blank(l) => continue,
            Some(x) => break x,
        }
    };
    let mut toks = size
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty());
    let nrows = parse_index(no, toks.next(), "number of rows")? as usize;
    let ncols = parse_index(no, toks.next(), "number of columns")? as usize;
    let entries = if coordinate {
        parse_index(no, toks.next(), "number of entries")?
    } else {
        nrows as u64 * ncols as u64
    };
    if toks.next().is_some() {
        return Err(parse_err(
            no,
            "size line has more than the expected numbers",
        ));
    }
    if ncols > MAX_COLUMNS {
        return Err(Error::TooLarge {
            what: "number of columns",
            value: ncols as u128,
            limit: MAX_COLUMNS as u128,
        });
    }
    if symmetry != Symmetry::General && nrows != ncols {
        return Err(parse_err(
            no,
            format!("a {symmetry:?} matrix must be square, not {nrows}x{ncols}"),
        ));
    }
    if coordinate
        && nrows
            .checked_mul(ncols)
            .is_some_and(|n| (entries as u128) > n as u128)
    {
        return Err(parse_err(
            no,
            format!("{entries} entries declared for a {nrows}x{ncols} matrix"),
        ));
    }
    let header = Header {
        coordinate,
        field,
        symmetry,
        nrows,
        ncols,
        entries,
    };
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
        if line.first() == Some(&b'%') || is_blank(line) {
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

/// Writes `m` as a `matrix coordinate real general` file; gzip-compressed
/// when the path ends in `.gz`. Values are written in shortest round-trip
/// form, so reading the file back gives exactly `m` (for sorted `m`).
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_path<T: Scalar>(path: impl AsRef<Path>, m: &CsrMatrix<T>) -> Result<()> {
    let path = path.as_ref();
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut gz =
            flate2::write::GzEncoder::new(BufWriter::new(file), flate2::Compression::fast());
        write(&mut gz, m).map_err(io)?;
        gz.finish().map_err(io)?.flush().map_err(io)
    } else {
        let mut w = BufWriter::new(file);
        write(&mut w, m).map_err(io)?;
        w.flush().map_err(io)
    }
}

/// Writes `m` in Matrix Market coordinate format to `w`.
///
/// # Errors
/// Any error of `w`.
pub fn write<T: Scalar>(w: &mut impl Write, m: &CsrMatrix<T>) -> std::io::Result<()> {
    writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(w, "% written by spgemm {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(w, "{} {} {}", m.nrows(), m.ncols(), m.nnz())?;
    for i in 0..m.nrows() {
        let (cols, vals) = m.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            writeln!(w, "{} {} {:e}", i + 1, c as u64 + 1, v)?;
        }
    }
    Ok(())
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

fn parse_banner(no: u64, line: &[u8]) -> Result<(bool, Field, Symmetry)> {
    let text = String::from_utf8_lossy(line).to_ascii_lowercase();
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.first() != Some(&"%%matrixmarket") {
        return Err(parse_err(no, "missing '%%MatrixMarket' header"));
    }
    if words.len() != 5 || words[1] != "matrix" {
        return Err(parse_err(
            no,
            format!(
                "header must read '%%MatrixMarket matrix <format> <field> <symmetry>', found '{}'",
                text.trim()
            ),
        ));
    }
    let coordinate = match words[2] {
        "coordinate" => true,
        "array" => false,
        f => {
            return Err(parse_err(
                no,
                format!("unknown format '{f}' (coordinate or array)"),
            ))
        }
    };
    let field = match words[3] {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" if coordinate => Field::Pattern,
        "complex" => {
            return Err(Error::Unsupported(
                "complex values are not supported yet".into(),
            ))
        }
        f => return Err(parse_err(no, format!("unknown or invalid field '{f}'"))),
    };
    let symmetry = match words[4] {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => {
            return Err(Error::Unsupported(
                "hermitian matrices are complex, which is not supported yet".into(),
            ))
        }
        s => return Err(parse_err(no, format!("unknown symmetry '{s}'"))),
    };
    Ok((coordinate, field, symmetry))
}

fn parse_err(line: u64, message: impl Into<String>) -> Error {
    Error::Parse {
        line,
        message: message.into(),
    }
}

fn is_blank(l: &[u8]) -> bool {
    l.iter().all(|b| b.is_ascii_whitespace())
}

fn parse_index(no: u64, tok: Option<&[u8]>, what: &str) -> Result<u64> {
    let tok = tok.ok_or_else(|| parse_err(no, format!("missing {what}")))?;
    if tok.is_empty() || tok.len() > 19 || !tok.iter().all(u8::is_ascii_digit) {
        return Err(parse_err(
            no,
            format!(
                "{what} '{}' is not a non-negative integer",
                String::from_utf8_lossy(tok)
            ),
        ));
    }
    Ok(tok
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + (d - b'0') as u64))
}

fn check_range(no: u64, idx: u64, n: usize, what: &str) -> Result<()> {
    if idx == 0 {
        return Err(parse_err(
            no,
            format!("{what} index 0: Matrix Market indices start at 1"),
        ));
    }
    if idx > n as u64 {
        return Err(parse_err(
            no,
            format!("{what} index {idx} is out of range 1..={n}"),
        ));
    }
    Ok(())
}

fn parse_real<T: Scalar>(no: u64, tok: Option<&[u8]>) -> Result<T> {
    let tok = tok.ok_or_else(|| parse_err(no, "missing value"))?;
    let s = std::str::from_utf8(tok).map_err(|_| parse_err(no, "value is not ASCII text"))?;
    let v: f64 = s
        .parse()
        .map_err(|_| parse_err(no, format!("value '{s}' is not a number")))?;
    if !v.is_finite()
        && !s.to_ascii_lowercase().contains("inf")
        && !s.to_ascii_lowercase().contains("nan")
    {
        return Err(parse_err(no, format!("value '{s}' overflows")));
    }
    Ok(T::from_f64(v))
}

fn parse_integer<T: Scalar>(no: u64, tok: Option<&[u8]>) -> Result<T> {
    let tok = tok.ok_or_else(|| parse_err(no, "missing value"))?;
    let s = std::str::from_utf8(tok).map_err(|_| parse_err(no, "value is not ASCII text"))?;
    let v: i64 = s
        .parse()
        .map_err(|_| parse_err(no, format!("value '{s}' is not an integer")))?;
    Ok(T::from_f64(v as f64))
}

/// Iterates over the lines of a byte buffer with 1-based line numbers.
struct Lines<'a> {
    rest: &'a [u8],
    no: u64,
}

impl<'a> Lines<'a> {
    fn new(text: &'a [u8]) -> Self {
        Self { rest: text, no: 0 }
    }
    fn remaining(&self) -> usize {
        self.rest.len()
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let end = memchr_newline(self.rest);
        let line = &self.rest[..end];
        self.rest = &self.rest[(end + 1).min(self.rest.len())..];
        self.no += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some((self.no, line))
    }
}

fn memchr_newline(s: &[u8]) -> usize {
    s.iter().position(|&b| b == b'\n').unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<CsrMatrix<f64>> {
        parse::<f64>(s.as_bytes()).map(|(_, m)| m)
    }

    #[test]
    fn symmetric_is_expanded_and_duplicates_summed() {
        let m = p("%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 4\n1 1 2\n2 1 -1\n3 2 5\n2 1 1\n").unwrap();
        assert_eq!(m.row_offsets(), &[0, 2, 4, 5]);
        assert_eq!(m.col_indices(), &[0, 1, 0, 2, 1]);
        assert_eq!(m.values(), &[2.0, 0.0, 0.0, 5.0, 5.0]);
    }

    #[test]
    fn skew_symmetric_negates_mirror() {
        let m = p("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n").unwrap();
        assert_eq!(m.values(), &[-3.0, 3.0]);
    }

    #[test]
    fn pattern_integer_and_array() {
        let m = p("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n").unwrap();
        assert_eq!(m.values(), &[1.0, 1.0]);
        let m = p("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -7\n").unwrap();
        assert_eq!(m.values(), &[-7.0]);
        let m = p("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n").unwrap();
        assert_eq!(m.row(0), (&[0u32, 1][..], &[1.0, 3.0][..]));
    }

    #[test]
    fn lying_header_is_an_error_not_an_allocation() {
        let e = p("%%MatrixMarket matrix coordinate real general\n4000000000 4000000000 15000000000000000\n1 1 1\n").unwrap_err();
        assert!(matches!(e, Error::Parse { line: 3, .. }), "{e}");
    }

    #[test]
    fn round_trip() {
        let m = CsrMatrix::from_triplets(3, 2, &[0, 2, 2], &[1, 0, 1], &[0.1f64, -2.5e300, 3.0])
            .unwrap();
        let mut buf = Vec::new();
        write(&mut buf, &m).unwrap();
        assert_eq!(parse::<f64>(&buf).unwrap().1, m);
    }
}
