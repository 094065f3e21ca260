//! Markov clustering (van Dongen, "Graph clustering by flow simulation",
//! PhD thesis, Utrecht 2000, ch. 3; at scale, Azad et al., "HipMCL",
//! Nucleic Acids Research 46(6), 2018): random walks on the graph are
//! expanded (a sparse product) and inflated (entries raised to a power and
//! renormalised) until the flow settles on attractors. Each expansion
//! prunes its rows as they are computed — entries below a threshold
//! dropped, at most `keep` kept per row — so the unpruned product never
//! exists. Rows here are the walks' distributions (HipMCL's columns).
//!
//! ```sh
//! cargo run --release --example markov_clustering [graph.mtx.gz] [inflation]
//! ```
//! (default: the bundled karate club network, inflation 2).

use spgemm::semiring::ProductSpec;
use spgemm::{CpuBackend, CsrMatrix};
use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "data/matrices/karate.mtx.gz".into());
    let inflation: f64 = args.next().map_or(Ok(2.0), |s| s.parse())?;
    let g: CsrMatrix<f64> = spgemm::files::read(&path, &Default::default())?;
    let cpu = CpuBackend::new();
    let spec = ProductSpec::new().prune_below(1e-4).keep(64);
    let t = std::time::Instant::now();
    // Self-loops, every edge of weight 1, rows summing to 1.
    let mut m = normalised(&with_self_loops(&g)?);
    let mut iterations = 0;
    loop {
        iterations += 1;
        let expanded = cpu.multiply_spec(&m, &m, &spec)?;
        let next = normalised(&expanded.map(|v: f64| v.powf(inflation)));
        let settled = next.row_offsets() == m.row_offsets()
            && next.col_indices() == m.col_indices()
            && next
                .values()
                .iter()
                .zip(m.values())
                .all(|(x, y)| (x - y).abs() < 1e-8);
        m = next;
        if settled || iterations == 200 {
            break;
        }
    }
    // A vertex's cluster is the set of attractors its walk ends on.
    let mut clusters: BTreeMap<Vec<u32>, Vec<usize>> = BTreeMap::new();
    for i in 0..m.nrows() {
        let (cols, vals) = m.row(i);
        let attractors = cols
            .iter()
            .zip(vals)
            .filter(|e| *e.1 > 1e-6)
            .map(|e| *e.0)
            .collect();
        clusters.entry(attractors).or_default().push(i);
    }
    println!(
        "{path}: {} vertices in {} clusters after {iterations} iterations ({:.1} ms)",
        m.nrows(),
        clusters.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    for members in clusters.values().take(10) {
        println!("  {members:?}");
    }
    Ok(())
}

/// `g`'s structure with values 1 and the diagonal added.
fn with_self_loops(g: &CsrMatrix<f64>) -> spgemm::Result<CsrMatrix<f64>> {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..g.nrows() {
        rows.push(i);
        cols.push(i as u32);
        for &j in g.row(i).0 {
            if j as usize != i {
                rows.push(i);
                cols.push(j);
            }
        }
    }
    let m = CsrMatrix::from_triplets(g.nrows(), g.ncols(), &rows, &cols, &vec![1.0; rows.len()])?;
    Ok(m.map(|_: f64| 1.0))
}

/// `m` with each row divided by its sum.
fn normalised(m: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let mut out = m.clone();
    for i in 0..m.nrows() {
        let sum: f64 = m.row(i).1.iter().sum();
        let range = m.row_offsets()[i]..m.row_offsets()[i + 1];
        out.values_mut()[range].iter_mut().for_each(|v| *v /= sum);
    }
    out
}
