//! An algebraic multigrid setup's Galerkin chain: coarse operators
//! `A_{l+1} = P_lᵀ·A_l·P_l` for smoothed-aggregation-like prolongators on
//! the 7-point Laplacian, then a re-setup for new values of the fine
//! matrix (the same structure) that reruns only the numeric phases of
//! each level's two products and refills each coarse operator in place
//! (PETSc's `MatPtAP` with `MAT_REUSE_MATRIX`).
//! Runs on the best backend present.
//!
//! ```sh
//! cargo run --release --example amg_setup [--features cuda] [n]
//! ```
//! (default n = 81: 531,441 unknowns, four levels of aggregates of 3³ down
//! to one unknown).

use spgemm::{generate, Backend, BackendKind, CsrMatrix};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(81), |s| s.parse())?;
    let (backend, why) = Backend::select(BackendKind::Auto)?;
    println!("{} on {} ({why})", backend.name(), backend.device());
    let fine: CsrMatrix<f64> = generate::poisson_7(n)?;
    let t = std::time::Instant::now();
    let (mut side, mut levels) = (n, Vec::new());
    // Each level's plan and coarse operator, kept for the re-setup.
    let mut operators: Vec<CsrMatrix<f64>> = Vec::new();
    while side >= 3 && side % 3 == 0 {
        let a = operators.last().unwrap_or(&fine);
        let p: CsrMatrix<f64> = generate::sa_prolongator(side)?;
        let (plan, coarse) = backend.galerkin(None, a, &p)?;
        println!(
            "level {}: {} unknowns, nnz {} -> {} unknowns, nnz {}",
            levels.len(),
            a.nrows(),
            a.nnz(),
            coarse.nrows(),
            coarse.nnz()
        );
        levels.push(plan);
        operators.push(coarse);
        side /= 3;
    }
    let setup = t.elapsed().as_secs_f64() * 1e3;
    // A re-setup: new values of the fine matrix (a shifted operator), each
    // level's coarse operator refilled in place (its structure kept).
    let t = std::time::Instant::now();
    let fine = fine.map(|v: f64| if v > 0.0 { v + 0.1 } else { v });
    for (k, plan) in levels.iter().enumerate() {
        let (done, rest) = operators.split_at_mut(k);
        let a = done.last().unwrap_or(&fine);
        plan.numeric_values(&backend, a, rest[0].values_mut())?;
    }
    let resetup = t.elapsed().as_secs_f64() * 1e3;
    let coarsest = operators.last().unwrap_or(&fine);
    println!(
        "{} levels: setup {setup:.1} ms, re-setup {resetup:.1} ms (numeric phases only); coarsest {}x{}",
        levels.len(),
        coarsest.nrows(),
        coarsest.ncols()
    );
    Ok(())
}
