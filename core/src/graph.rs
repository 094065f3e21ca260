//! Breadth-first search levels by sparse products over the `any_pair`
//! semiring: the frontier f (a `1×n` row) times the adjacency matrix A,
//! masked by the complement of the visited set v,
//! `f'⟨¬v⟩ = f any.pair A`, level after level until f' is empty (Kepner
//! and Gilbert, eds., "Graph Algorithms in the Language of Linear
//! Algebra", SIAM 2011, ch. 2). Edges follow A's rows: row k's entry in
//! column j leads from vertex k to vertex j. The product reads no values
//! and never reaches a vertex already visited.
//!
//! [`levels_by_products`] runs the search through any masked product (the
//! CPU backend's); GPU backends keep A, the visited set and the frontier
//! on the device for the whole search
//! ([`crate::gpu::GpuEngine::bfs_levels`]).

use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::semiring::{ProductSpec, Semiring};

/// The level of a vertex no path from the source reaches.
pub const UNREACHED: i32 = -1;

/// Checks a search of the graph of adjacency matrix `shape` from vertex
/// `source`: A square, its vertices numbered by `i32` (levels are `i32`,
/// [`UNREACHED`] for −1), `source` one of them.
///
/// # Errors
/// [`Error::Graph`] naming the shape or the source.
pub fn check_source((nrows, ncols): (usize, usize), source: usize) -> Result<()> {
    if nrows != ncols {
        return Err(Error::Graph(format!(
            "the adjacency matrix is {nrows}x{ncols}, not square"
        )));
    }
    if nrows > i32::MAX as usize {
        return Err(Error::TooLarge {
            what: "vertices of a searched graph",
            value: nrows as u128,
            limit: i32::MAX as u128,
        });
    }
    if source >= nrows {
        return Err(Error::Graph(format!(
            "source vertex {source} is not one of the graph's {nrows} vertices"
        )));
    }
    Ok(())
}

/// Each vertex's level in a breadth-first search of A's graph from
/// `source` (`n` levels: 0 for the source, [`UNREACHED`] where no path
/// leads), by one masked product per level through `product`, which
/// computes `f ⊕.⊗ A` for the frontier `f` (`1×n`, values 1) as the spec
/// it is given says (`any_pair`, the visited set's complement as the mask).
///
/// # Errors
/// As [`check_source`]; whatever `product` returns.
pub fn levels_by_products<T: Scalar>(
    a: CsrView<'_, T>,
    source: usize,
    mut product: impl FnMut(&CsrMatrix<T>, &ProductSpec<'_, T>) -> Result<CsrMatrix<T>>,
) -> Result<Vec<i32>> {
    check_source(a.shape(), source)?;
    let n = a.nrows();
    let mut levels = vec![UNREACHED; n];
    levels[source] = 0;
    let mut visited = vec![source as u32];
    let mut frontier = CsrMatrix::new(1, n, vec![0, 1], vec![source as u32], vec![T::ONE])?;
    let mut depth = 0;
    while frontier.nnz() > 0 {
        depth += 1;
        let ones = vec![T::ONE; visited.len()];
        let offsets = [0, visited.len()];
        let seen = CsrView::new(1, n, &offsets, &visited, &ones)?;
        let spec = ProductSpec::new()
            .semiring(Semiring::AnyPair)
            .mask(seen, true);
        frontier = product(&frontier, &spec)?;
        for &j in frontier.col_indices() {
            levels[j as usize] = depth;
        }
        visited = merged(&visited, frontier.col_indices());
    }
    Ok(levels)
}

/// The union of two sorted lists of distinct vertices, sorted.
fn merged(x: &[u32], y: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(x.len() + y.len());
    let (mut p, mut q) = (0, 0);
    while p < x.len() && q < y.len() {
        if x[p] < y[q] {
            out.push(x[p]);
            p += 1;
        } else {
            out.push(y[q]);
            q += 1;
        }
    }
    out.extend_from_slice(&x[p..]);
    out.extend_from_slice(&y[q..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;

    /// A path 0 → 1 → 2 and 3 → 0 (3 unreached from 0), a self loop at 1.
    fn graph() -> CsrMatrix<f64> {
        CsrMatrix::new(4, 4, vec![0, 1, 3, 3, 4], vec![1, 1, 2, 0], vec![1.0; 4]).unwrap()
    }

    #[test]
    fn levels_follow_rows_and_leave_unreached_vertices_at_minus_one() {
        let a = graph();
        let levels = levels_by_products(a.view(), 0, |f, spec| {
            reference::multiply_spec(f.view(), a.view(), spec)
        })
        .unwrap();
        assert_eq!(levels, vec![0, 1, 2, UNREACHED]);
        let from_3 = levels_by_products(a.view(), 3, |f, spec| {
            reference::multiply_spec(f.view(), a.view(), spec)
        })
        .unwrap();
        assert_eq!(from_3, vec![1, 2, 3, 0]);
    }

    #[test]
    fn a_source_outside_the_graph_or_a_rectangular_matrix_is_an_error() {
        let a = graph();
        let e = levels_by_products(a.view(), 4, |_, _| unreachable!()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "graph: source vertex 4 is not one of the graph's 4 vertices"
        );
        let r = CsrMatrix::new(1, 2, vec![0, 0], vec![], Vec::<f64>::new()).unwrap();
        let e = levels_by_products(r.view(), 0, |_, _| unreachable!()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "graph: the adjacency matrix is 1x2, not square"
        );
    }
}
