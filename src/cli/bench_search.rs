//! `spgemm bench --bfs`: a whole breadth-first search of each graph from
//! vertex 0 on the chosen backend (`Backend::bfs_levels`), host to host,
//! optionally beside SuiteSparse:GraphBLAS's loop of masked `vxm` on the
//! same graph in the same run (`--compare graphblas`).

use super::bench::{time, BenchArgs};
use super::bench_semiring::{graphblas, summary, Peer};
use super::source::Operands;
use super::CliError;
use serde::Serialize;
use spgemm::semiring::Semiring;
use spgemm::{Backend, Scalar};

/// One line of results; the JSON output is an array of these.
#[derive(Serialize, Debug)]
struct Record {
    matrix: String,
    product: &'static str,
    backend: String,
    precision: &'static str,
    rows: usize,
    nnz: usize,
    /// Vertices reached from vertex 0, itself included.
    reached: usize,
    /// Levels, the source's included.
    levels: usize,
    reps: usize,
    /// The whole search, milliseconds.
    median_ms: f64,
    /// SuiteSparse:GraphBLAS's search (--compare graphblas).
    graphblas: Option<Peer>,
    check: Option<String>,
}

/// Searches every file's graph from vertex 0, prints a line each and
/// writes `--json`.
///
/// # Errors
/// Reading the files; a graph that is not square or has no vertex; the
/// comparison's or the check's failure.
pub fn run<T: Scalar>(
    backend: &Backend,
    files: &[Operands],
    args: &BenchArgs,
) -> Result<(), CliError> {
    println!(
        "{:24} {:>10} {:>10} {:>8} {:>14} {:>8}",
        "matrix", "ms", "reached", "levels", "GraphBLAS ms", "x"
    );
    let mut records = Vec::new();
    for ops in files {
        let (a, _, _) = ops.load::<T>(args.common.seed)?;
        let (median_ms, levels) = time(args.warmup, args.reps, || Ok(backend.bfs_levels(&a, 0)?))?;
        let reached = levels.iter().filter(|&&l| l >= 0).count();
        // Σ (level + 1) over the reached vertices: what both sides report.
        let score: f64 = levels
            .iter()
            .filter(|&&l| l >= 0)
            .map(|&l| l as f64 + 1.0)
            .sum();
        let check = if args.check {
            let want = spgemm::graph::levels_by_products(a.view(), 0, |f, spec| {
                spgemm::reference::multiply_spec(f.view(), a.view(), spec)
            })?;
            if want != levels {
                let v = (0..levels.len())
                    .find(|&v| want[v] != levels[v])
                    .unwrap_or(0);
                return Err(CliError::Compare(format!(
                    "{}: vertex {v} is at level {} but the reference puts it at {}",
                    ops.name(),
                    levels[v],
                    want[v]
                )));
            }
            Some("ok".to_string())
        } else {
            None
        };
        let graphblas = match args.compare {
            Some(_) => Some(graphblas(
                (&a, &a),
                Semiring::AnyPair,
                "bfs",
                args,
                &ops.name(),
                (score, median_ms),
            )?),
            None => None,
        };
        let r = Record {
            matrix: ops.name(),
            product: "bfs levels from vertex 0: f'<!v> = f any_pair A",
            backend: backend.name().to_string(),
            precision: T::NAME,
            rows: a.nrows(),
            nnz: a.nnz(),
            reached,
            levels: levels.iter().max().map_or(0, |&m| m as usize + 1),
            reps: args.reps,
            median_ms,
            graphblas,
            check,
        };
        let (gms, x) = Peer::columns(r.graphblas.as_ref());
        println!(
            "{:24} {:>10.3} {:>10} {:>8} {gms:>14} {x:>8}",
            r.matrix, r.median_ms, r.reached, r.levels
        );
        records.push(r);
    }
    summary(records.iter().filter_map(|r| r.graphblas.as_ref()));
    super::bench::write_json(args, &records)
}
