//! Single-source shortest paths by repeated min-plus products (the
//! Bellman–Ford relaxation, `d ← d ⊕.⊗ A` over `min_plus` merged with d,
//! until no distance changes; Kepner and Gilbert, eds., "Graph
//! Algorithms in the Language of Linear Algebra", SIAM 2011, ch. 3). Edge
//! weights are the magnitudes of the matrix's values.
//!
//! ```sh
//! cargo run --release --example shortest_paths [graph.mtx.gz] [source]
//! ```
//! (default: the bundled road network luxembourg_osm from vertex 0).

use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{CpuBackend, CsrMatrix};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "data/matrices/luxembourg_osm.mtx.gz".into());
    let source: usize = args.next().map_or(Ok(0), |s| s.parse())?;
    let a: CsrMatrix<f64> = spgemm::files::read(&path, &Default::default())?;
    let a = a.map(|w: f64| w.abs());
    let n = a.nrows();
    if source >= n {
        return Err(format!("source {source} is not a vertex of a graph of {n}").into());
    }
    let cpu = CpuBackend::new();
    let spec = ProductSpec::new().semiring(Semiring::MinPlus);
    let t = std::time::Instant::now();
    let mut dist = vec![f64::INFINITY; n];
    dist[source] = 0.0;
    // Only the vertices whose distance fell last round relax again.
    let mut changed = CsrMatrix::new(1, n, vec![0, 1], vec![source as u32], vec![0.0])?;
    let mut rounds = 0;
    while changed.nnz() > 0 {
        rounds += 1;
        let step = cpu.multiply_spec(&changed, &a, &spec)?;
        let (mut cols, mut values) = (Vec::new(), Vec::new());
        for (&j, &d) in step.col_indices().iter().zip(step.values()) {
            if d < dist[j as usize] {
                dist[j as usize] = d;
                cols.push(j);
                values.push(d);
            }
        }
        changed = CsrMatrix::new(1, n, vec![0, cols.len()], cols, values)?;
    }
    let reached: Vec<f64> = dist.iter().copied().filter(|d| d.is_finite()).collect();
    let farthest = reached.iter().copied().fold(0.0, f64::max);
    println!(
        "{path}: {} of {n} vertices reached from {source} after {rounds} rounds, farthest at {farthest:.4} ({:.1} ms)",
        reached.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
