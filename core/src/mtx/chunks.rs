//! The parallel Matrix Market reader: the body of a coordinate file is
//! cut into chunks at line boundaries, the chunks are parsed on all cores
//! (each into its own triplets, counting its lines for error messages),
//! and the triplets are scattered into CSR rows in parallel, in file order
//! within each row, so that duplicates are summed exactly as the
//! sequential reader sums them.

use super::text::{check_range, next_token, parse_err, parse_index, parse_integer, parse_real};
use super::text::{is_blank, is_comment, Lines};
use super::{Field, Header, Symmetry};
use crate::csr::CsrMatrix;
use crate::error::{try_reserve, try_zeroed, Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// What one chunk of the body holds: its entries as triplets (mirrors of
/// symmetric files included, in file order) and what the merge needs to
/// name lines and check the whole file.
pub(super) struct Chunk<T> {
    rows: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<T>,
    /// Entry lines parsed before the first error (all of them without one).
    entries: u64,
    /// Lines of the chunk, comments and blanks included.
    lines: u64,
    /// The first error, its line counted from the chunk's first line.
    error: Option<Error>,
    /// First lines (chunk-local) with an entry below / above the diagonal.
    lower: Option<u64>,
    upper: Option<u64>,
}

impl<T> Chunk<T> {
    /// A chunk of entries only (rows, columns, values in file order), for
    /// [`build`].
    pub(super) fn of_entries(rows: Vec<usize>, cols: Vec<u32>, vals: Vec<T>) -> Self {
        Chunk {
            rows,
            cols,
            vals,
            entries: 0,
            lines: 0,
            error: None,
            lower: None,
            upper: None,
        }
    }

    /// Consecutive chunks as one: their entries, and the summary and
    /// first error of the text they cover (lines counted from its start).
    pub(super) fn join(
        chunks: Vec<Chunk<T>>,
    ) -> (Vec<usize>, Vec<u32>, Vec<T>, Summary, Option<Error>) {
        let mut s = Summary::default();
        let mut error = None;
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for mut c in chunks {
            if error.is_none() {
                s.entries += c.entries;
                s.lower = s.lower.or(c.lower.map(|l| l + s.lines));
                s.upper = s.upper.or(c.upper.map(|u| u + s.lines));
                if let Some(e) = c.error.take() {
                    let e = match e {
                        Error::Parse { line, message } => Error::Parse {
                            line: line + s.lines,
                            message,
                        },
                        other => other,
                    };
                    s.error_line = Some(match &e {
                        Error::Parse { line, .. } => *line,
                        _ => s.lines,
                    });
                    error = Some(e);
                }
                rows.append(&mut c.rows);
                cols.append(&mut c.cols);
                vals.append(&mut c.vals);
            }
            s.lines += c.lines;
        }
        (rows, cols, vals, s, error)
    }

    /// What decides the body's first error, of this chunk.
    pub(super) fn summary(&self) -> Summary {
        Summary {
            entries: self.entries,
            lines: self.lines,
            error_line: match &self.error {
                Some(Error::Parse { line, .. }) => Some(*line),
                Some(_) => Some(0),
                None => None,
            },
            lower: self.lower,
            upper: self.upper,
        }
    }
}

/// Cuts `text` into pieces of about `target` bytes, each ending just after
/// a `\n` (the last one at the end of `text`).
pub(super) fn split_lines(text: &[u8], target: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(text.len() / target.max(1) + 1);
    let mut start = 0;
    while start < text.len() {
        let from = start + target.max(1);
        let end = if from >= text.len() {
            text.len()
        } else {
            memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |p| from + p + 1)
        };
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// One entry line: 0-based row and column and the value.
#[inline]
fn entry<T: Scalar>(line: &[u8], no: u64, h: &Header) -> Result<(usize, usize, T)> {
    let mut at = 0;
    let i = parse_index(no, next_token(line, &mut at), "row index")?;
    let j = parse_index(no, next_token(line, &mut at), "column index")?;
    check_range(no, i, h.nrows, "row")?;
    check_range(no, j, h.ncols, "column")?;
    let v = match h.field {
        Field::Pattern => T::ONE,
        Field::Real => {
            let tok = next_token(line, &mut at);
            // Finite values through lexical-core; anything else (no token,
            // infinities, NaN, what it refuses) by the standard library's
            // rules, which give the same value and the same errors as the
            // sequential reader.
            match tok.and_then(|t| lexical_core::parse::<f64>(t).ok()) {
                Some(v) if v.is_finite() => match T::try_from_f64(v) {
                    Some(x) => x,
                    None => parse_real::<T>(no, tok)?,
                },
                _ => parse_real::<T>(no, tok)?,
            }
        }
        Field::Integer => parse_integer::<T>(no, next_token(line, &mut at))?,
    };
    if next_token(line, &mut at).is_some() {
        return Err(parse_err(no, "unexpected extra token after the entry"));
    }
    Ok(((i - 1) as usize, (j - 1) as usize, v))
}

/// Parses the entry lines of one chunk of a coordinate file's body.
pub(super) fn parse_chunk<T: Scalar>(text: &[u8], h: &Header) -> Chunk<T> {
    let mut c = Chunk {
        rows: Vec::new(),
        cols: Vec::new(),
        vals: Vec::new(),
        entries: 0,
        lines: 0,
        error: None,
        lower: None,
        upper: None,
    };
    let mut lines = Lines::new(text);
    // At most one entry a line (two with its mirror): never more than
    // the text can hold, whatever the header says.
    let bound = lines.count_rest() as usize;
    let cap = if h.symmetry == Symmetry::General {
        bound
    } else {
        bound * 2
    };
    let reserved = try_reserve(&mut c.rows, cap, "Matrix Market row indices")
        .and_then(|_| try_reserve(&mut c.cols, cap, "Matrix Market column indices"))
        .and_then(|_| try_reserve(&mut c.vals, cap, "Matrix Market values"));
    if let Err(e) = reserved {
        c.error = Some(e);
        c.lines = bound as u64;
        return c;
    }
    let general = h.symmetry == Symmetry::General;
    for (no, line) in lines.by_ref() {
        if is_comment(line) || is_blank(line) {
            continue;
        }
        let (i, j, v) = match entry::<T>(line, no, h) {
            Ok(e) => e,
            Err(e) => {
                c.error = Some(e);
                break;
            }
        };
        if !general {
            if h.symmetry == Symmetry::SkewSymmetric && i == j {
                c.error = Some(parse_err(
                    no,
                    format!(
                        "skew-symmetric matrix stores a diagonal entry ({}, {})",
                        i + 1,
                        j + 1
                    ),
                ));
                break;
            }
            match i.cmp(&j) {
                std::cmp::Ordering::Greater => c.lower.get_or_insert(no),
                std::cmp::Ordering::Less => c.upper.get_or_insert(no),
                std::cmp::Ordering::Equal => &mut 0,
            };
        }
        c.entries += 1;
        c.rows.push(i);
        c.cols.push(j as u32);
        c.vals.push(v);
        if i != j && !general {
            c.rows.push(j);
            c.cols.push(i as u32);
            c.vals.push(if h.symmetry == Symmetry::SkewSymmetric {
                -v
            } else {
                v
            });
        }
    }
    c.lines = lines.no + lines.count_rest();
    c
}

/// What decides a body's first error, of one piece of it (a chunk, or one
/// process's byte range): see [`first_error`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Entry lines parsed before the piece's first error (all without one).
    pub entries: u64,
    /// Lines of the piece, comments and blanks included.
    pub lines: u64,
    /// The piece's first error's line, counted from its first line (1).
    pub error_line: Option<u64>,
    /// First lines (piece-local) with an entry below / above the diagonal.
    pub lower: Option<u64>,
    /// See `lower`.
    pub upper: Option<u64>,
}

/// A body's first error, as the sequential reader reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstError {
    /// The own error of a piece.
    Piece {
        /// Which piece.
        piece: usize,
        /// Its line in the file.
        line: u64,
    },
    /// An entry line past the declared count.
    MoreEntries {
        /// Its line in the file.
        line: u64,
    },
    /// A symmetric file with entries on both sides of the diagonal.
    BothTriangles {
        /// The first line below the diagonal.
        lower: u64,
        /// The first line above it.
        upper: u64,
    },
    /// The body ends before the declared count.
    Truncated {
        /// The last line.
        line: u64,
        /// Entries read.
        read: u64,
    },
}

impl FirstError {
    /// The error; `piece_error(piece, line)` gives a piece's own error.
    pub fn into_error(self, h: &Header, piece_error: impl FnOnce(usize, u64) -> Error) -> Error {
        match self {
            FirstError::Piece { piece, line } => piece_error(piece, line),
            FirstError::MoreEntries { line } => parse_err(
                line,
                format!("more entries than the {} declared", h.entries),
            ),
            FirstError::BothTriangles { lower, upper } => parse_err(
                lower.max(upper),
                format!("symmetric file stores entries on both sides of the diagonal (lines {lower} and {upper}); only one triangle may be stored"),
            ),
            FirstError::Truncated { line, read } => parse_err(
                line,
                format!(
                    "file ends after {read} of the {} declared entries (truncated?)",
                    h.entries
                ),
            ),
        }
    }

    fn line(&self) -> u64 {
        match *self {
            FirstError::Piece { line, .. }
            | FirstError::MoreEntries { line }
            | FirstError::Truncated { line, .. } => line,
            FirstError::BothTriangles { lower, upper } => lower.max(upper),
        }
    }
}

/// The first error of a body whose size line is line `size_line`, split
/// into `pieces` in file order, as the sequential reader finds it.
/// `entry_line(piece, k)` gives the file line of piece `piece`'s `k`-th
/// entry line (1-based), needed only for more entries than declared.
///
/// # Errors
/// Those of `entry_line`.
pub fn first_error(
    h: &Header,
    size_line: u64,
    pieces: &[Summary],
    entry_line: impl FnOnce(usize, u64) -> Result<u64>,
) -> Result<Option<FirstError>> {
    let declared = h.entries;
    let (mut read, mut base) = (0u64, size_line);
    let mut first: Option<FirstError> = None;
    for (k, c) in pieces.iter().enumerate() {
        if read + c.entries > declared {
            let line = entry_line(k, declared - read + 1)?;
            first = Some(FirstError::MoreEntries { line });
            break;
        }
        if let Some(l) = c.error_line {
            let line = l + base;
            // An entry line past the declared count is an error as such,
            // whatever else is wrong with it.
            first = Some(if read + c.entries == declared {
                FirstError::MoreEntries { line }
            } else {
                FirstError::Piece { piece: k, line }
            });
            break;
        }
        read += c.entries;
        base += c.lines;
    }
    // Both triangles of a symmetric file: the error is on the first line
    // of the second triangle, unless an earlier line failed.
    if h.symmetry != Symmetry::General {
        let mut line_base = size_line;
        let (mut lower, mut upper) = (None::<u64>, None::<u64>);
        for c in pieces {
            lower = lower.or(c.lower.map(|l| l + line_base));
            upper = upper.or(c.upper.map(|u| u + line_base));
            line_base += c.lines;
        }
        if let (Some(l), Some(u)) = (lower, upper) {
            if first.as_ref().is_none_or(|f| f.line() > l.max(u)) {
                first = Some(FirstError::BothTriangles { lower: l, upper: u });
            }
        }
    }
    if first.is_some() {
        return Ok(first);
    }
    Ok((read < declared).then_some(FirstError::Truncated { line: base, read }))
}

/// Checks the chunks of a body whose size line is line `size_line` as the
/// sequential reader checks the whole file, reporting the same first error,
/// then builds the matrix. `line_of_entry(k)` rereads the text for the
/// line of the `k`-th entry line (1-based), needed only for a file with
/// more entries than declared.
pub(super) fn assemble<T: Scalar>(
    h: &Header,
    size_line: u64,
    mut chunks: Vec<Chunk<T>>,
    line_of_entry: impl FnOnce(u64) -> Result<u64>,
) -> Result<CsrMatrix<T>> {
    let summaries: Vec<Summary> = chunks.iter().map(Chunk::summary).collect();
    let read_before = |k: usize| summaries[..k].iter().map(|s| s.entries).sum::<u64>();
    let first = first_error(h, size_line, &summaries, |k, entry| {
        line_of_entry(read_before(k) + entry)
    })?;
    if let Some(f) = first {
        return Err(f.into_error(h, |k, line| match chunks[k].error.take() {
            Some(Error::Parse { message, .. }) => Error::Parse { line, message },
            Some(e) => e,
            None => parse_err(line, "unreadable line"),
        }));
    }
    build(h.nrows, h.ncols, chunks)
}

/// Destination of the parallel scatter: each position is written by
/// exactly one group (see [`build`]).
struct Scatter<T>(*mut T);
// SAFETY: only used to write disjoint positions from several threads.
unsafe impl<T: Send> Send for Scatter<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Scatter<T> {}

/// Scatters the chunks' triplets into CSR rows. The chunks are split into
/// contiguous groups (at most one per thread, and few enough that a
/// count per row and group costs about what the entries cost); each group
/// counts its entries per row, the counts give every group its start in
/// every row, and the groups scatter in parallel: within a row, entries
/// keep the file's order.
pub(super) fn build<T: Scalar>(
    nrows: usize,
    ncols: usize,
    chunks: Vec<Chunk<T>>,
) -> Result<CsrMatrix<T>> {
    let nnz: usize = chunks.iter().map(|c| c.rows.len()).sum();
    let mut offsets: Vec<usize> = try_zeroed(nrows + 1, "row offsets")?;
    let groups = (2 * nnz / nrows.max(1))
        .clamp(1, rayon::current_num_threads())
        .min(chunks.len().max(1));
    // Contiguous runs of chunks with about nnz / groups entries each.
    let mut bounds = vec![0usize];
    let mut acc = 0usize;
    for (k, c) in chunks.iter().enumerate() {
        acc += c.rows.len();
        if bounds.len() < groups && acc * groups >= nnz * bounds.len() && k + 1 < chunks.len() {
            bounds.push(k + 1);
        }
    }
    bounds.push(chunks.len());
    let runs: Vec<&[Chunk<T>]> = bounds.windows(2).map(|w| &chunks[w[0]..w[1]]).collect();
    let mut counts: Vec<Vec<usize>> = runs
        .par_iter()
        .map(|run| {
            let mut n: Vec<usize> = try_zeroed(nrows, "row counts")?;
            for c in *run {
                for &r in &c.rows {
                    n[r] += 1;
                }
            }
            Ok(n)
        })
        .collect::<Result<_>>()?;
    // Two passes over blocks of rows, each touching every group's counts
    // of its rows: the rows' totals, then (after their prefix sum) each
    // group's first position in each row.
    const ROWS: usize = 1 << 14;
    let mut blocks: Vec<Vec<&mut [usize]>> = (0..nrows.div_ceil(ROWS))
        .map(|_| Vec::with_capacity(groups))
        .collect();
    for n in &mut counts {
        for (b, c) in n.chunks_mut(ROWS).enumerate() {
            blocks[b].push(c);
        }
    }
    offsets[1..]
        .par_chunks_mut(ROWS)
        .zip(blocks.par_iter())
        .for_each(|(o, gs)| {
            for (i, o) in o.iter_mut().enumerate() {
                *o = gs.iter().map(|g| g[i]).sum();
            }
        });
    for i in 0..nrows {
        offsets[i + 1] += offsets[i];
    }
    offsets[..nrows]
        .par_chunks(ROWS)
        .zip(blocks.par_iter_mut())
        .for_each(|(o, gs)| {
            for (i, &start) in o.iter().enumerate() {
                let mut p = start;
                for g in gs.iter_mut() {
                    let c = g[i];
                    g[i] = p;
                    p += c;
                }
            }
        });
    drop(blocks);
    let mut cols: Vec<u32> = try_zeroed(nnz, "column indices")?;
    let mut vals: Vec<T> = try_zeroed(nnz, "values")?;
    let (cp, vp) = (Scatter(cols.as_mut_ptr()), Scatter(vals.as_mut_ptr()));
    runs.par_iter()
        .zip(counts.par_iter_mut())
        .for_each(|(run, pos)| {
            let (cp, vp) = (&cp, &vp);
            for c in *run {
                for ((&r, &col), &v) in c.rows.iter().zip(&c.cols).zip(&c.vals) {
                    let p = pos[r];
                    pos[r] += 1;
                    // SAFETY: group g writes row r's positions
                    // offsets[r] + (entries of r in groups before g) onwards,
                    // one per entry of r in g: the ranges of the groups are
                    // disjoint and lie within row r's, so every position below
                    // nnz is written once, by one thread.
                    unsafe {
                        *cp.0.add(p) = col;
                        *vp.0.add(p) = v;
                    }
                }
            }
        });
    drop(chunks);
    // SAFETY: offsets are a prefix sum of the row counts, ending at nnz;
    // every column was checked against ncols while parsing.
    let m = unsafe { CsrMatrix::new_unchecked(nrows, ncols, offsets, cols, vals) };
    Ok(m.sort_and_sum_duplicates())
}
