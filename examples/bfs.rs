//! Breadth-first search levels by sparse products: the frontier f (a
//! `1×n` row) times the adjacency matrix A over the `any_pair` semiring,
//! masked by the complement of the visited set, `f' ⟨¬v⟩ = f ⊕.⊗ A`
//! (Kepner and Gilbert, eds., "Graph Algorithms in the Language of Linear
//! Algebra", SIAM 2011, ch. 2), on the best backend present
//! (`Backend::bfs_levels`: on a GPU the whole search in one call).
//!
//! ```sh
//! cargo run --release --features cuda --example bfs [graph.mtx.gz] [source]
//! ```
//! (default: the bundled road network luxembourg_osm from vertex 0).

use spgemm::{Backend, BackendKind, CsrMatrix};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "data/matrices/luxembourg_osm.mtx.gz".into());
    let source: usize = args.next().map_or(Ok(0), |s| s.parse())?;
    let a: CsrMatrix<f64> = spgemm::files::read(&path, &Default::default())?;
    let (backend, why) = Backend::select(BackendKind::Auto)?;
    println!("backend: {} ({why})", backend.name());
    // The first search also compiles (or loads) the GPU's kernels.
    backend.bfs_levels(&a, source)?;
    let t = std::time::Instant::now();
    let levels = backend.bfs_levels(&a, source)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let reached = levels.iter().filter(|&&l| l >= 0).count();
    let depth = levels.iter().max().copied().unwrap_or(0);
    println!(
        "{path}: {reached} of {} vertices reached from {source}, the farthest {depth} levels away ({ms:.2} ms)",
        a.nrows()
    );
    Ok(())
}
