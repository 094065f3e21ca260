//! Triangle counting with a masked product: for the strictly lower
//! triangle L of an undirected graph, `C⟨L⟩ = L ⊕.pair Lᵀ` counts, for each
//! edge (i, j) with j < i, the vertices k < j adjacent to both; the sum of
//! C is the number of triangles, each counted once (the Sandia method of
//! LAGraph's triangle count; Wolf, Deveci, Berry, Hammond and
//! Rajamanickam, "Fast linear algebra-based triangle counting with
//! KokkosKernels", IEEE HPEC 2017, §III). The mask keeps the product to
//! the edges of L: no other entry of `L·Lᵀ` is ever accumulated, and
//! `Backend::reduce_spec` sums C's entries (`⊕` over C).
//!
//! ```sh
//! cargo run --release --example triangles [graph.mtx.gz]
//! ```
//! (default: the bundled collaboration network ca-GrQc, 48,260 triangles).

use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{Backend, CpuBackend, CsrMatrix, Transposed};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "data/matrices/ca-GrQc.mtx.gz".into());
    let g: CsrMatrix<f64> = spgemm::files::read(&path, &Default::default())?;
    let lower = strictly_lower(&g)?;
    let t = std::time::Instant::now();
    let spec = ProductSpec::new()
        .semiring(Semiring::PlusPair)
        .mask(lower.view(), false);
    // Lᵀ is read from L's rows where the dot products use it: nothing is
    // transposed; C's entries summed (on a GPU backend, under this mask,
    // summed on the device without forming C).
    let backend = Backend::Cpu(CpuBackend::new());
    let triangles = backend.reduce_spec(&lower, &lower, &spec, Some(Transposed::B))?;
    println!(
        "{path}: {} vertices, {} edges, {triangles} triangles ({:.1} ms)",
        g.nrows(),
        lower.nnz(),
        t.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// The entries (i, j) of `g` with j < i, values 1 (the graph's edges once).
fn strictly_lower(g: &CsrMatrix<f64>) -> spgemm::Result<CsrMatrix<f64>> {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..g.nrows() {
        for &j in g.row(i).0 {
            if (j as usize) < i {
                rows.push(i);
                cols.push(j);
            }
        }
    }
    let ones = vec![1.0; rows.len()];
    let mut l = CsrMatrix::from_triplets(g.nrows(), g.ncols(), &rows, &cols, &ones)?;
    // A repeated edge in the file is one edge.
    l.values_mut().iter_mut().for_each(|v| *v = 1.0);
    Ok(l)
}
