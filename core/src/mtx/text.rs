//! The pieces of Matrix Market text both readers share: lines, tokens,
//! the banner and size line, and the rules for one index or value.

use super::{Field, Header, Symmetry};
use crate::csr::MAX_COLUMNS;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

pub(super) fn parse_err(line: u64, message: impl Into<String>) -> Error {
    Error::Parse {
        line,
        message: message.into(),
    }
}

/// A comment: `%` as the line's first byte (not after blanks).
pub(super) fn is_comment(l: &[u8]) -> bool {
    l.first() == Some(&b'%')
}

pub(super) fn is_blank(l: &[u8]) -> bool {
    l.iter().all(|b| b.is_ascii_whitespace())
}

/// The next maximal run of non-blank bytes of `line` from `*at`, if any.
#[inline]
pub(super) fn next_token<'a>(line: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let mut p = *at;
    while p < line.len() && line[p].is_ascii_whitespace() {
        p += 1;
    }
    if p == line.len() {
        *at = p;
        return None;
    }
    let start = p;
    while p < line.len() && !line[p].is_ascii_whitespace() {
        p += 1;
    }
    *at = p;
    Some(&line[start..p])
}

/// The banner and size line: the header, the 1-based number of the size
/// line and the byte offset of the line after it. `Ok(None)` when `text`
/// ends before the size line (a stream may not have delivered it yet).
///
/// # Errors
/// [`Error::Parse`] for a malformed banner or size line,
/// [`Error::Unsupported`] for complex data, [`Error::TooLarge`] for more
/// than [`MAX_COLUMNS`] columns.
pub(super) fn header_in(text: &[u8]) -> Result<Option<(Header, u64, usize)>> {
    let mut lines = Lines::new(text);
    let Some((no, first)) = lines.next() else {
        return Ok(None);
    };
    let (coordinate, field, symmetry) = parse_banner(no, first)?;
    let (no, size) = loop {
        match lines.next() {
            None => return Ok(None),
            Some((_, l)) if is_comment(l) || is_blank(l) => continue,
            Some(x) => break x,
        }
    };
    let mut at = 0;
    let nrows = parse_index(no, next_token(size, &mut at), "number of rows")? as usize;
    let ncols = parse_index(no, next_token(size, &mut at), "number of columns")? as usize;
    let entries = if coordinate {
        parse_index(no, next_token(size, &mut at), "number of entries")?
    } else {
        (nrows as u64).checked_mul(ncols as u64).ok_or_else(|| {
            parse_err(
                no,
                format!("an array of {nrows}x{ncols} values has more than 2^64 entries"),
            )
        })?
    };
    if next_token(size, &mut at).is_some() {
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
    Ok(Some((header, no, text.len() - lines.remaining())))
}

/// As [`header_in`], with a text that ended before the size line an error.
pub(super) fn header(text: &[u8]) -> Result<(Header, u64, usize)> {
    header_in(text)?.ok_or_else(|| {
        if text.is_empty() {
            parse_err(1, "empty file")
        } else {
            parse_err(Lines::new(text).count() as u64 + 1, "missing size line")
        }
    })
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
                "line 1: complex values are not supported (only real, integer and pattern)".into(),
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
                "line 1: hermitian matrices are complex, which is not supported (only real, integer and pattern)".into(),
            ))
        }
        s => return Err(parse_err(no, format!("unknown symmetry '{s}'"))),
    };
    Ok((coordinate, field, symmetry))
}

/// A non-negative decimal integer of at most 19 digits.
#[inline]
pub(super) fn parse_index(no: u64, tok: Option<&[u8]>, what: &str) -> Result<u64> {
    let Some(tok) = tok else {
        return Err(missing(no, what));
    };
    if tok.is_empty() || tok.len() > 19 {
        return Err(not_an_index(no, tok, what));
    }
    let mut acc = 0u64;
    for &d in tok {
        let v = d.wrapping_sub(b'0');
        if v > 9 {
            return Err(not_an_index(no, tok, what));
        }
        acc = acc * 10 + v as u64;
    }
    Ok(acc)
}

#[cold]
fn missing(no: u64, what: &str) -> Error {
    parse_err(no, format!("missing {what}"))
}

#[cold]
fn not_an_index(no: u64, tok: &[u8], what: &str) -> Error {
    parse_err(
        no,
        format!(
            "{what} '{}' is not a non-negative integer",
            String::from_utf8_lossy(tok)
        ),
    )
}

/// `idx` is a 1-based index within `1..=n`.
#[inline]
pub(super) fn check_range(no: u64, idx: u64, n: usize, what: &str) -> Result<()> {
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

/// A real value by the standard library's rules (Rust's float syntax,
/// `inf` and `nan` accepted, an overflow to infinity refused).
pub(super) fn parse_real<T: Scalar>(no: u64, tok: Option<&[u8]>) -> Result<T> {
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
    T::try_from_f64(v)
        .ok_or_else(|| parse_err(no, format!("value '{s}' is not an integer of {}", T::NAME)))
}

/// An integer value (`i64`), converted to the value type (rounded for
/// floats; refused when it does not fit an integer type).
pub(super) fn parse_integer<T: Scalar>(no: u64, tok: Option<&[u8]>) -> Result<T> {
    let tok = tok.ok_or_else(|| parse_err(no, "missing value"))?;
    let s = std::str::from_utf8(tok).map_err(|_| parse_err(no, "value is not ASCII text"))?;
    let v: i64 = s
        .parse()
        .map_err(|_| parse_err(no, format!("value '{s}' is not an integer")))?;
    T::try_from_i64(v).ok_or_else(|| parse_err(no, format!("value '{s}' does not fit {}", T::NAME)))
}

/// Iterates over the lines of a byte buffer with 1-based line numbers; a
/// `\r` before the `\n` is dropped, and no empty line follows a final `\n`.
pub(super) struct Lines<'a> {
    rest: &'a [u8],
    pub(super) no: u64,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a [u8]) -> Self {
        Self { rest: text, no: 0 }
    }
    pub(super) fn remaining(&self) -> usize {
        self.rest.len()
    }
    /// Lines not yet returned.
    pub(super) fn count_rest(&self) -> u64 {
        let n = memchr::memchr_iter(b'\n', self.rest).count() as u64;
        n + u64::from(self.rest.last().is_some_and(|&b| b != b'\n'))
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, &'a [u8]);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', self.rest).unwrap_or(self.rest.len());
        let line = &self.rest[..end];
        self.rest = &self.rest[(end + 1).min(self.rest.len())..];
        self.no += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some((self.no, line))
    }
}
