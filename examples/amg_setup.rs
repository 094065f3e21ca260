//! An algebraic multigrid setup's Galerkin chain: coarse operators
//! `A_{l+1} = P_lᵀ·A_l·P_l` for smoothed-aggregation-like prolongators on
//! the 7-point Laplacian, then a re-setup for new values of the fine
//! matrix (the same structure) that reruns only the numeric phases of
//! each level's two products (PETSc's `MatPtAP` with `MAT_REUSE_MATRIX`).
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
    let (mut a, mut side) = (fine.clone(), n);
    let mut levels = Vec::new();
    while side >= 3 && side % 3 == 0 {
        let p: CsrMatrix<f64> = generate::sa_prolongator(side)?;
        let (plan, coarse) = backend.galerkin(None, &a, &p)?;
        println!(
            "level {}: {} unknowns, nnz {} -> {} unknowns, nnz {}",
            levels.len(),
            a.nrows(),
            a.nnz(),
            coarse.nrows(),
            coarse.nnz()
        );
        levels.push(plan);
        a = coarse;
        side /= 3;
    }
    let setup = t.elapsed().as_secs_f64() * 1e3;
    // A re-setup: new values of the fine matrix (a shifted operator), each
    // level's structure kept.
    let t = std::time::Instant::now();
    let mut a = fine.map(|v: f64| if v > 0.0 { v + 0.1 } else { v });
    for plan in &levels {
        a = plan.numeric(&backend, &a)?;
    }
    let resetup = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "{} levels: setup {setup:.1} ms, re-setup {resetup:.1} ms (numeric phases only); coarsest {}x{}",
        levels.len(),
        a.nrows(),
        a.ncols()
    );
    Ok(())
}
