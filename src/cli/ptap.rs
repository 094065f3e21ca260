//! `spgemm ptap`: the Galerkin product `Pᵀ·A·P` (or `R·A·P`) of algebraic
//! multigrid, its setup, a re-setup with A's values and the product
//! without a plan timed apart.

use super::source::MatrixSource;
use super::{duration, ms, open_backend, CliError, Common};
use clap::Args;
use spgemm::{GpuConfig, Scalar};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `spgemm ptap`.
#[derive(Args, Debug)]
pub struct PtapArgs {
    /// A (`K×K`, or `M×K` with --restriction): a .mtx, .mtx.gz or .npz
    /// file, or a generator such as gen:poisson7:32.
    a: MatrixSource,
    /// P (`K×L`), the prolongation, e.g. gen:sa-p:32.
    p: MatrixSource,
    /// Output file for C (`L×L`; .mtx, .mtx.gz or .npz).
    #[arg(short, long)]
    output: PathBuf,
    /// R (`Q×M`): compute R·A·P instead of Pᵀ·A·P.
    #[arg(long)]
    restriction: Option<MatrixSource>,
    #[command(flatten)]
    pub common: Common,
}

/// Runs `spgemm ptap`: the setup (both symbolic and numeric phases), a
/// re-setup with the same A (numeric phases only, C's values refilled in
/// place) and the product in one
/// call without a plan (`Backend::ptap` / `rap`), each timed.
pub fn run<T: Scalar>(args: &PtapArgs) -> Result<(), CliError> {
    spgemm::files::check_output(&args.output, true)?;
    let backend = open_backend(&args.common, GpuConfig::default(), args.common.verbose)?;
    let seed = args.common.seed;
    let t = Instant::now();
    let a = args.a.load::<T>(seed)?;
    let p = args.p.load::<T>(seed)?;
    let r = args
        .restriction
        .as_ref()
        .map(|r| r.load::<T>(seed))
        .transpose()?;
    let read_ms = ms(t);
    let t = Instant::now();
    let (plan, mut c) = backend.galerkin(r.as_ref().map(|r| r.view()), &a, &p)?;
    let setup_ms = ms(t);
    // The re-setup refills C's values in place (the same A: the same C).
    let t = Instant::now();
    plan.numeric_values(&backend, &a, c.values_mut())?;
    let resetup_ms = ms(t);
    let t = Instant::now();
    match &r {
        Some(r) => backend.rap(r, &a, &p)?,
        None => backend.ptap(&a, &p)?,
    };
    let once_ms = ms(t);
    let t = Instant::now();
    spgemm::files::write(&args.output, &c, None)?;
    eprintln!(
        "C = {}: {}x{}, nnz(C) {}; read {}, setup {} (symbolic and numeric phases), re-setup {} (numeric phases only, C refilled), one call without a plan {}, write {}; wrote {}",
        if r.is_some() { "R·A·P" } else { "Pᵀ·A·P" },
        c.nrows(),
        c.ncols(),
        c.nnz(),
        duration(read_ms),
        duration(setup_ms),
        duration(resetup_ms),
        duration(once_ms),
        duration(ms(t)),
        args.output.display()
    );
    Ok(())
}
