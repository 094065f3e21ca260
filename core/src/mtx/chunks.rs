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
                Some(v) if v.is_finite() => T::from_f64(v),
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

/// Checks the chunks of a body whose size line is line `size_line` as the
/// sequential reader checks the whole file, reporting the same first error,
/// then builds the matrix. `line_of_entry(k)` rereads the text for the
/// line of the `k`-th entry line (1-based), needed only for a file with
/// more entries than declared.
pub(super) fn assemble<T: Scalar>(
    h: &Header,
    size_line: u64,
    chunks: Vec<Chunk<T>>,
    line_of_entry: impl FnOnce(u64) -> Result<u64>,
) -> Result<CsrMatrix<T>> {
    let declared = h.entries;
    let more = |line| parse_err(line, format!("more entries than the {declared} declared"));
    // The first error in file order, found chunk by chunk.
    let (mut read, mut base) = (0u64, size_line);
    let mut first: Option<(u64, Error)> = None;
    let mut chunks = chunks;
    for c in &mut chunks {
        if read + c.entries > declared {
            let line = line_of_entry(declared + 1)?;
            first = Some((line, more(line)));
            break;
        }
        if let Some(e) = c.error.take() {
            let Error::Parse { line, message } = e else {
                return Err(e);
            };
            let line = line + base;
            // An entry line past the declared count is an error as such,
            // whatever else is wrong with it.
            first = Some(if read + c.entries == declared {
                (line, more(line))
            } else {
                (line, Error::Parse { line, message })
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
        for c in &chunks {
            lower = lower.or(c.lower.map(|l| l + line_base));
            upper = upper.or(c.upper.map(|u| u + line_base));
            line_base += c.lines;
        }
        if let (Some(l), Some(u)) = (lower, upper) {
            let at = l.max(u);
            if first.as_ref().is_none_or(|(line, _)| *line > at) {
                let message = format!("symmetric file stores entries on both sides of the diagonal (lines {l} and {u}); only one triangle may be stored");
                first = Some((at, parse_err(at, message)));
            }
        }
    }
    if let Some((_, e)) = first {
        return Err(e);
    }
    if read < declared {
        return Err(parse_err(
            base,
            format!("file ends after {read} of the {declared} declared entries (truncated?)"),
        ));
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
fn build<T: Scalar>(nrows: usize, ncols: usize, chunks: Vec<Chunk<T>>) -> Result<CsrMatrix<T>> {
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
