//! Breadth-first search levels by sparse products: the frontier f (a
//! `1×n` row) times the adjacency matrix A over the `any_pair` semiring,
//! masked by the complement of the visited set, `f' ⟨¬v⟩ = f ⊕.⊗ A`
//! (Kepner and Gilbert, eds., "Graph Algorithms in the Language of Linear
//! Algebra", SIAM 2011, ch. 2): the product reads no values and never
//! accumulates a vertex already visited.
//!
//! ```sh
//! cargo run --release --example bfs [graph.mtx.gz] [source]
//! ```
//! (default: the bundled road network luxembourg_osm from vertex 0).

use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{CpuBackend, CsrMatrix};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "data/matrices/luxembourg_osm.mtx.gz".into());
    let source: u32 = args.next().map_or(Ok(0), |s| s.parse())?;
    let a: CsrMatrix<f64> = spgemm::files::read(&path, &Default::default())?;
    let n = a.nrows();
    if source as usize >= n {
        return Err(format!("source {source} is not a vertex of a graph of {n}").into());
    }
    let cpu = CpuBackend::new();
    let t = std::time::Instant::now();
    let mut level = vec![u32::MAX; n];
    level[source as usize] = 0;
    let mut visited = vec![source];
    let mut frontier = row(n, vec![source])?;
    let mut depth = 0;
    while frontier.nnz() > 0 {
        depth += 1;
        let seen = row(n, visited.clone())?;
        let spec = ProductSpec::new()
            .semiring(Semiring::AnyPair)
            .mask(seen.view(), true);
        frontier = cpu.multiply_spec(&frontier, &a, &spec)?;
        for &j in frontier.col_indices() {
            level[j as usize] = depth;
        }
        visited = merged(&visited, frontier.col_indices());
    }
    let reached = level.iter().filter(|&&l| l != u32::MAX).count();
    println!(
        "{path}: {reached} of {n} vertices reached from {source} in {} levels ({:.1} ms)",
        depth - 1,
        t.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// The `1×n` row with entries (value 1) at `cols` (sorted, distinct).
fn row(n: usize, cols: Vec<u32>) -> spgemm::Result<CsrMatrix<f64>> {
    let ones = vec![1.0; cols.len()];
    Ok(CsrMatrix::new(1, n, vec![0, cols.len()], cols, ones)?)
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
