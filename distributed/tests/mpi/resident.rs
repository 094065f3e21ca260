//! GPU-resident products (`spgemm_distributed::resident`) under mpirun,
//! one CUDA GPU per rank (ranks share GPUs round-robin where there are
//! fewer), against the single-process reference: through host staging on
//! 1–4 ranks, and through NCCL on as many ranks as there are GPUs (NCCL
//! refuses two ranks on one GPU).

use super::{check, distribute, real_operands, uneven, Case};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::CsrMatrix;
use spgemm_cuda::{CudaDevice, CudaEngine};
use spgemm_distributed::device_exchange::{DeviceExchange, HostStaged};
use spgemm_distributed::nccl::Nccl;
use spgemm_distributed::resident::{multiply, DeviceDistCsr};
use spgemm_distributed::DistCsr;

/// The GPU cases: name, case, whether it needs one GPU per rank.
pub const CASES: &[(&str, Case, bool)] = &[
    ("resident_host_staged", |c| resident(c, false), false),
    ("resident_nccl", |c| resident(c, true), true),
];

/// CUDA GPUs present (0 without a driver).
pub fn gpus() -> usize {
    (0..8).take_while(|&i| spgemm_cuda::open(i).is_ok()).count()
}

/// This rank's engine: GPU `rank % gpus`.
fn engine(comm: &SimpleCommunicator) -> Result<CudaEngine, String> {
    let n = gpus().max(1);
    spgemm_cuda::open(comm.rank() as usize % n).map_err(|e| e.to_string())
}

/// `a·b` on the GPUs through `exchange`, checked; then the product's C
/// (whose columns the ranks do not know: every row of B is fetched) as
/// the A of a second product with `b2`, checked against the first C.
fn product(
    comm: &SimpleCommunicator,
    engine: &CudaEngine,
    exchange: &dyn DeviceExchange<CudaDevice>,
    (a, da): (&CsrMatrix<f64>, &DistCsr<f64>),
    (b, db): (&CsrMatrix<f64>, &DistCsr<f64>),
    b2: Option<(&CsrMatrix<f64>, &DistCsr<f64>)>,
    what: &str,
) -> Result<(), String> {
    let up = |m: &DistCsr<f64>| DeviceDistCsr::upload(comm, engine, m).map_err(|e| e.to_string());
    let (ga, gb) = (up(da)?, up(db)?);
    let (gc, stats) = multiply(comm, engine, exchange, &ga, &gb).map_err(|e| e.to_string())?;
    if stats.exchange != exchange.name() {
        return Err(format!(
            "{what}: stats name {} for {}",
            stats.exchange,
            exchange.name()
        ));
    }
    let c = gc.download(comm, engine).map_err(|e| e.to_string())?;
    if c.row_partition() != da.row_partition() {
        return Err(format!("{what}: C is not split as A"));
    }
    check(comm, a, b, &c, what)?;
    if let Some((b2, db2)) = b2 {
        let gb2 = up(db2)?;
        let (gd, _) = multiply(comm, engine, exchange, &gc, &gb2).map_err(|e| e.to_string())?;
        let d = gd.download(comm, engine).map_err(|e| e.to_string())?;
        let whole_c = c.gather(comm, 0).map_err(|e| e.to_string())?;
        let whole_d = d.gather(comm, 0).map_err(|e| e.to_string())?;
        if let (Some(wc), Some(wd)) = (whole_c, whole_d) {
            spgemm_core::verify::check_product(&wc, b2, &wd)
                .map_err(|e| e.to_string())?
                .map_err(|m| format!("{what}, (A·B)·B2: {m}"))?;
        }
    }
    Ok(())
}

fn resident(comm: &SimpleCommunicator, nccl: bool) -> Result<(), String> {
    let p = comm.size() as usize;
    let engine = engine(comm)?;
    let staged;
    let through_nccl;
    let exchange: &dyn DeviceExchange<CudaDevice> = if nccl {
        through_nccl = Nccl::new(comm, engine.device()).map_err(|e| e.to_string())?;
        &through_nccl
    } else {
        staged = HostStaged::new(comm);
        &staged
    };
    for name in ["west0067", "bcsstk08", "ca-GrQc", "lp_afiro"] {
        let (a, b, da, db) = real_operands(comm, name)?;
        product(comm, &engine, exchange, (&a, &da), (&b, &db), None, name)?;
    }
    // Rectangular, uneven partitions with an empty rank, rows of B far
    // apart (more runs than one rank asks of another: merged) and C as
    // the A of a second product.
    let a = spgemm_core::generate::uniform::<f64>(3000, 1700, 6, 21).unwrap();
    let b = spgemm_core::generate::uniform::<f64>(1700, 2300, 5, 22).unwrap();
    let b2 = spgemm_core::generate::uniform::<f64>(2300, 900, 3, 23).unwrap();
    let da = distribute(comm, &a, &uneven(3000, p, 1))?;
    let db = distribute(comm, &b, &uneven(1700, p, 2))?;
    let db2 = distribute(comm, &b2, &uneven(2300, p, 3))?;
    product(
        comm,
        &engine,
        exchange,
        (&a, &da),
        (&b, &db),
        Some((&b2, &db2)),
        "random rectangular",
    )?;
    // Blocks already on the device (global columns): the same product.
    let on_device = |m: &DistCsr<f64>| -> Result<DeviceDistCsr<CudaDevice, f64>, String> {
        // An upload's matrix (global columns) taken out and in again.
        let g = DeviceDistCsr::upload(comm, &engine, m).map_err(|e| e.to_string())?;
        DeviceDistCsr::from_device(comm, &engine, g.into_matrix(), m.ncols())
            .map_err(|e| e.to_string())
    };
    let (ga, gb) = (on_device(&da)?, on_device(&db)?);
    let (gc, _) = multiply(comm, &engine, exchange, &ga, &gb).map_err(|e| e.to_string())?;
    let c = gc.download(comm, &engine).map_err(|e| e.to_string())?;
    check(comm, &a, &b, &c, "blocks from the device")?;
    // A block whose columns are not the matrix's on one rank: the same
    // error on every rank.
    let block = CsrMatrix::<f64>::zeros(2, 1700).map_err(|e| e.to_string())?;
    let g = engine.upload(&block).map_err(|e| e.to_string())?;
    let claimed = if comm.rank() as usize == p - 1 {
        1699
    } else {
        1700
    };
    match DeviceDistCsr::from_device(comm, &engine, g, claimed) {
        Err(e) if e.to_string().contains("1700 columns, not 1699") => {}
        Err(e) => return Err(format!("columns at fault: unexpected error {e}")),
        Ok(_) => return Err("a block of 1700 columns taken as 1699 was not refused".into()),
    }
    // A dimension mismatch is the same error on every rank.
    let gb = DeviceDistCsr::upload(comm, &engine, &db).map_err(|e| e.to_string())?;
    match multiply(comm, &engine, exchange, &gb, &gb) {
        Err(e) if e.to_string().contains("A's columns must be B's rows") => Ok(()),
        Err(e) => Err(format!("dimension mismatch: unexpected error {e}")),
        Ok(_) => Err("a 1700x2300 times 1700x2300 product was not refused".into()),
    }
}
