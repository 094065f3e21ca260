//! The structure of a CSR matrix (shape, row offsets, column indices,
//! no values) and what differs between two of them: a plan built for one
//! structure reruns its numeric phase only on matrices of that structure,
//! and names what differs when given another.

use rayon::prelude::*;

/// A CSR matrix's structure: `nrows x ncols`, `nrows + 1` row offsets and
/// `nnz` column indices, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct Structure<'a> {
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Row offsets (`nrows + 1`).
    pub row_offsets: &'a [usize],
    /// Column indices (`nnz`).
    pub col_indices: &'a [u32],
}

/// At most this many columns of a differing row are shown.
const SHOWN: usize = 6;

impl Structure<'_> {
    /// Number of entries.
    pub fn nnz(&self) -> usize {
        self.col_indices.len()
    }

    /// `None` when `given` has this structure; otherwise one line saying
    /// what differs in `given` against this one, the first that applies:
    /// the shape, the number of entries, or the first row whose entries
    /// differ, with its first columns in both.
    pub fn difference(&self, given: &Structure<'_>) -> Option<String> {
        if (given.nrows, given.ncols) != (self.nrows, self.ncols) {
            return Some(format!(
                "is {}x{}, not {}x{}",
                given.nrows, given.ncols, self.nrows, self.ncols
            ));
        }
        if given.nnz() != self.nnz() {
            return Some(format!("has {} entries, not {}", given.nnz(), self.nnz()));
        }
        // The common case, equal structures, compared on all cores; only a
        // difference is looked for row by row.
        if same(self.row_offsets, given.row_offsets) && same(self.col_indices, given.col_indices) {
            return None;
        }
        let row = (0..self.nrows).find(|&i| self.row(i) != given.row(i))?;
        Some(format!(
            "differs first in row {row}: columns {} where the plan's has {}",
            shown(given.row(row)),
            shown(self.row(row))
        ))
    }

    fn row(&self, i: usize) -> &[u32] {
        &self.col_indices[self.row_offsets[i]..self.row_offsets[i + 1]]
    }
}

/// Whether `x` and `y` are equal, compared in blocks on all cores.
fn same<T: PartialEq + Sync>(x: &[T], y: &[T]) -> bool {
    const BLOCK: usize = 1 << 16;
    x.len() == y.len()
        && x.par_chunks(BLOCK)
            .zip(y.par_chunks(BLOCK))
            .all(|(a, b)| a == b)
}

/// `[3, 8, 11]`, or the first [`SHOWN`] columns and how many more.
fn shown(cols: &[u32]) -> String {
    let head: Vec<String> = cols.iter().take(SHOWN).map(u32::to_string).collect();
    match cols.len().checked_sub(SHOWN) {
        Some(more) if more > 0 => format!("[{}, … {more} more]", head.join(", ")),
        _ => format!("[{}]", head.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::Structure;

    fn s<'a>(n: usize, offsets: &'a [usize], cols: &'a [u32]) -> Structure<'a> {
        Structure {
            nrows: n,
            ncols: 10,
            row_offsets: offsets,
            col_indices: cols,
        }
    }

    #[test]
    fn names_shape_entries_or_first_differing_row() {
        let plan = s(2, &[0, 2, 3], &[1, 4, 2]);
        assert_eq!(plan.difference(&plan), None);
        let wider = Structure { ncols: 11, ..plan };
        assert_eq!(plan.difference(&wider).unwrap(), "is 2x11, not 2x10");
        let more = s(2, &[0, 2, 4], &[1, 4, 2, 3]);
        assert_eq!(plan.difference(&more).unwrap(), "has 4 entries, not 3");
        let moved = s(2, &[0, 2, 3], &[1, 4, 5]);
        assert_eq!(
            plan.difference(&moved).unwrap(),
            "differs first in row 1: columns [5] where the plan's has [2]"
        );
        let shifted = s(2, &[0, 1, 3], &[1, 4, 2]);
        assert_eq!(
            plan.difference(&shifted).unwrap(),
            "differs first in row 0: columns [1] where the plan's has [1, 4]"
        );
        let long: Vec<u32> = (0..9).collect();
        let other: Vec<u32> = (1..10).collect();
        let a = s(1, &[0, 9], &long);
        assert!(a
            .difference(&s(1, &[0, 9], &other))
            .unwrap()
            .ends_with("has [0, 1, 2, 3, 4, 5, … 3 more]"));
    }
}
