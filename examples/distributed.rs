//! C = A·A over the ranks of an MPI job, each rank on its best backend:
//!
//! ```sh
//! cargo build --release --features mpi --example distributed
//! mpirun -n 4 target/release/examples/distributed data/matrices/bcsstk16.mtx.gz C.mtx
//! ```
//!
//! Every rank reads its share of A (a plain `.mtx` in parallel byte
//! ranges; a `.mtx.gz` through rank 0), the ranks multiply (the algorithm
//! picked by the bytes it would move), and every rank writes its rows of C
//! into the one output file.

use spgemm::distributed::mpi::traits::*;
use spgemm::distributed::{multiply, DistCsr, Options};
use spgemm::{Backend, BackendKind};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let (Some(input), Some(output)) = (args.next(), args.next()) else {
        return Err("usage: distributed A.mtx[.gz] C.mtx[.gz]".into());
    };
    let universe = spgemm::distributed::mpi::initialize().ok_or("MPI could not be initialised")?;
    let world = universe.world();
    let a = DistCsr::<f64>::read(&world, &input, None)?;
    let (backend, _) = Backend::select(BackendKind::Auto)?;
    let (c, stats) = multiply(&world, &a, &a, &backend, Options::default())?;
    c.write_mtx(&world, &output)?;
    let nnz = c.nnz(&world);
    if world.rank() == 0 {
        println!(
            "C: {}x{}, {nnz} entries, {} on {} ranks ({}); rank 0 sent {} bytes, {:.1} ms in all",
            c.nrows(),
            c.ncols(),
            stats.algorithm,
            world.size(),
            backend.name(),
            stats.inputs.sent + stats.c.sent,
            stats.total_ms
        );
    }
    Ok(())
}
