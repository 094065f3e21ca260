//! `spgemm plan-distributed` (the communication model, no MPI needed) and
//! `spgemm multiply --distributed` (under mpirun, feature `mpi`).

use super::source::MatrixSource;
use super::CliError;
use clap::Args;
use spgemm::distributed::{Algorithm, Model, Partition, Prediction};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// A: a .mtx, .mtx.gz or .npz file, or a generator such as gen:rmat:16:16.
    a: MatrixSource,
    /// B, as A (without B: A·A, or A·Aᵀ when A is not square).
    b: Option<MatrixSource>,
    /// Numbers of ranks to predict (2D only where it is a square).
    #[arg(long, value_delimiter = ',', default_value = "2,4,16,64,256,1024,4096")]
    ranks: Vec<usize>,
    /// Algorithms to predict: 1d, 2d or both (auto).
    #[arg(long, default_value = "auto")]
    algorithm: String,
    /// Bytes of one value (8 for f64, 4 for f32).
    #[arg(long, default_value_t = 8)]
    value_bytes: u64,
    /// Also write every prediction, per rank included, as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Seed for generated matrices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// One line of the table: `P`, the algorithm and its spreads.
fn line(p: &Prediction, chosen: bool) -> String {
    let mib = |b: f64| b / (1u64 << 20) as f64;
    format!(
        "{:>6} {:>3}{} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>9.2}",
        p.ranks,
        p.algorithm.to_string(),
        if chosen { "*" } else { " " },
        mib(p.sent().max as f64),
        mib(p.sent().mean),
        mib(p.received().max as f64),
        mib(p.received().mean),
        mib(p.memory().max as f64),
        p.nprod().imbalance(),
    )
}

/// Prints the model's table for every number of ranks asked.
pub fn plan(args: &PlanArgs) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        spgemm::files::check_output(path, false)?;
    }
    let which: Vec<Algorithm> = match args.algorithm.as_str() {
        "auto" => vec![Algorithm::OneD, Algorithm::TwoD],
        "1d" => vec![Algorithm::OneD],
        "2d" => vec![Algorithm::TwoD],
        other => {
            return Err(CliError::Argument(format!(
                "unknown algorithm '{other}' (auto, 1d, 2d)"
            )))
        }
    };
    if args.ranks.contains(&0) {
        return Err(CliError::Argument(
            "--ranks: a number of ranks is at least 1".into(),
        ));
    }
    let a = args.a.load::<f64>(args.seed)?;
    let b = match &args.b {
        Some(s) => s.load::<f64>(args.seed)?,
        None if a.nrows() != a.ncols() => a.transpose()?,
        None => a.clone(),
    };
    let model = Model::new(a.view().structure(), b.view().structure(), args.value_bytes)
        .map_err(spgemm::Error::from)?;
    println!(
        "A {}x{} ({} entries), B {}x{} ({} entries): nnz(C) {}, nprod {}",
        a.nrows(),
        a.ncols(),
        a.nnz(),
        b.nrows(),
        b.ncols(),
        b.nnz(),
        model.nnz_c(),
        model.nprod()
    );
    println!(
        "{:>6} {:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}",
        "ranks", "alg", "sent max", "sent mean", "recv max", "recv mean", "mem max", "imbalance"
    );
    println!(
        "{:>6} {:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}",
        "", "", "MiB", "MiB", "MiB", "MiB", "MiB", "nprod"
    );
    let mut all = Vec::new();
    for &p in &args.ranks {
        let a_rows = Partition::even(a.nrows() as u64, p).map_err(spgemm::Error::from)?;
        let b_rows = Partition::even(b.nrows() as u64, p).map_err(spgemm::Error::from)?;
        let chosen = model.choose(p).map_err(spgemm::Error::from)?;
        for &alg in &which {
            let prediction = match alg {
                Algorithm::OneD => model.one_d(&a_rows, &b_rows),
                Algorithm::TwoD if spgemm::distributed::model::grid_side(p).is_none() => continue,
                Algorithm::TwoD => model.two_d(&a_rows, &b_rows),
            }
            .map_err(spgemm::Error::from)?;
            println!("{}", line(&prediction, alg == chosen && which.len() > 1));
            all.push(serde_json::json!({
                "ranks": p,
                "algorithm": alg,
                "auto_picks": chosen,
                "sent": prediction.sent(),
                "received": prediction.received(),
                "input_traffic": prediction.input_traffic(),
                "memory": prediction.memory(),
                "nprod": prediction.nprod(),
                "per_rank": if p <= 64 { serde_json::to_value(&prediction.per_rank).unwrap_or_default() } else { serde_json::Value::Null },
            }));
        }
    }
    if which.len() > 1 {
        println!("* what --algorithm auto runs (fewest bytes of A and B on the busiest rank)");
    }
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "a": args.a.name(),
            "b": args.b.as_ref().map(|b| b.name()),
            "nnz_c": model.nnz_c(),
            "nprod": model.nprod(),
            "value_bytes": args.value_bytes,
            "predictions": all,
        });
        std::fs::write(path, format!("{json:#}\n")).map_err(|e| CliError::Output {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}
