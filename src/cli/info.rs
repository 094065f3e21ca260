//! `spgemm info`: what a matrix is and what squaring it costs.

use super::source::MatrixSource;
use super::CliError;
use clap::Args;
use spgemm::CpuBackend;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The matrix (.mtx, .mtx.gz, .npz or gen:...).
    file: MatrixSource,
    /// Seed for generated matrices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: &InfoArgs) -> Result<(), CliError> {
    use spgemm::mtx::{Field, Symmetry};
    let (a, field, symmetry) = match &args.file {
        MatrixSource::File(p) if !spgemm::files::is_npz(p) => {
            let (h, a) = spgemm::mtx::read_path_with::<f64>(p, &Default::default())?;
            let field = match h.field {
                Field::Real => "real",
                Field::Integer => "integer",
                Field::Pattern => "pattern (every entry 1)",
            };
            let symmetry = match h.symmetry {
                Symmetry::General => "general".to_string(),
                Symmetry::Symmetric => format!("symmetric ({} entries stored)", h.entries),
                Symmetry::SkewSymmetric => {
                    format!("skew-symmetric ({} entries stored)", h.entries)
                }
            };
            (a, field, symmetry)
        }
        MatrixSource::File(_) => (
            args.file.load::<f64>(args.seed)?,
            "numeric (.npz, read as f64)",
            "general (.npz stores every entry)".to_string(),
        ),
        MatrixSource::Gen(_) => (
            args.file.load::<f64>(args.seed)?,
            "real (generated)",
            "general".to_string(),
        ),
    };
    println!("matrix        {}", args.file.name());
    println!("size          {} x {}", a.nrows(), a.ncols());
    println!("field         {field}");
    println!("symmetry      {symmetry}");
    println!("nnz           {}", a.nnz());
    let explicit_zeros = a.values().iter().filter(|&&v| v == 0.0).count();
    println!("explicit 0s   {explicit_zeros}");
    println!("longest row   {}", a.max_row_nnz());
    println!("row lengths   (entries per row: rows)");
    let mut hist = std::collections::BTreeMap::<u32, usize>::new();
    for i in 0..a.nrows() {
        let n = a.row_nnz(i);
        let bucket = if n == 0 { 0 } else { 1 + n.ilog2() };
        *hist.entry(bucket).or_default() += 1;
    }
    for (b, count) in hist {
        let label = if b == 0 {
            "0".to_string()
        } else {
            format!("{}-{}", 1usize << (b - 1), (1usize << b) - 1)
        };
        println!("  {label:>15}: {count}");
    }
    let at;
    let (b, what) = if a.nrows() == a.ncols() {
        (&a, "A·A")
    } else {
        at = a.transpose()?;
        (&at, "A·Aᵀ")
    };
    let stats = spgemm::stats::product_stats(&a, b)?;
    let plan = CpuBackend::new().symbolic(&a, b)?;
    println!("{what}:");
    println!("  nprod       {}", stats.total_nprod);
    println!("  max nprod   {}", stats.max_nprod);
    println!("  nnz(C)      {}", plan.nnz());
    println!(
        "  compression {:.3}",
        spgemm::stats::compression_ratio(stats.total_nprod, plan.nnz())
    );
    Ok(())
}
