//! `spgemm bench --distributed --resident` under mpirun: the distributed
//! product with A, B and C on the ranks' GPUs (B's rows moved GPU to GPU
//! by NCCL, RCCL or staged through the host), beside the same product on rank
//! 0's GPU alone and on all `--devices` in one process, all with their
//! operands already on the devices, in the same run.

use super::bench::BenchArgs;
use super::mpi_run::{median, on_root, rank_backend, scatter, slowest, together, Loaded};
use super::CliError;
use spgemm::device::Device;
use spgemm::distributed::comm;
use spgemm::distributed::device_exchange::{DeviceExchange, HostStaged};
use spgemm::distributed::mpi::topology::SimpleCommunicator;
use spgemm::distributed::mpi::traits::*;
use spgemm::distributed::resident::{self, DeviceDistCsr, ResidentStats};
use spgemm::distributed::DistCsr;
use spgemm::gpu::{GpuEngine, MultiGpu};
use spgemm::{Backend, GpuConfig, Scalar};
use std::time::Instant;

/// How B's rows move between the ranks' GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Exchange {
    /// NCCL (NVIDIA GPUs; feature `nccl`).
    Nccl,
    /// RCCL (AMD GPUs; feature `rccl`).
    Rccl,
    /// Staged through page-locked host memory and MPI.
    Host,
}

/// A boxed exchange for one vendor's devices.
type Boxed<'c, D> = Box<dyn DeviceExchange<D> + 'c>;

/// The exchange `e` between CUDA devices (`device` this rank's), or every
/// rank's error where it cannot be used. Collective.
#[cfg(feature = "cuda")]
fn cuda_exchange<'c>(
    world: &'c SimpleCommunicator,
    device: &spgemm::CudaDevice,
    e: Exchange,
) -> Result<Boxed<'c, spgemm::CudaDevice>, CliError> {
    #[cfg(not(feature = "nccl"))]
    let _ = device;
    match e {
        Exchange::Host => Ok(Box::new(HostStaged::new(world))),
        #[cfg(feature = "nccl")]
        Exchange::Nccl => Ok(Box::new(
            spgemm::distributed::nccl::Nccl::new(world, device).map_err(spgemm::Error::from)?,
        )),
        #[cfg(not(feature = "nccl"))]
        Exchange::Nccl => refused(world, host_only(e, "this build lacks the nccl feature")),
        Exchange::Rccl => refused(world, host_only(e, "RCCL is for AMD GPUs")),
    }
}

/// The exchange `e` between HIP devices (`device` this rank's), or every
/// rank's error where it cannot be used. Collective.
#[cfg(feature = "hip")]
fn hip_exchange<'c>(
    world: &'c SimpleCommunicator,
    device: &spgemm::HipDevice,
    e: Exchange,
) -> Result<Boxed<'c, spgemm::HipDevice>, CliError> {
    #[cfg(not(feature = "rccl"))]
    let _ = device;
    match e {
        Exchange::Host => Ok(Box::new(HostStaged::new(world))),
        #[cfg(feature = "rccl")]
        Exchange::Rccl => Ok(Box::new(
            spgemm::distributed::rccl::Rccl::new(world, device).map_err(spgemm::Error::from)?,
        )),
        #[cfg(not(feature = "rccl"))]
        Exchange::Rccl => refused(world, host_only(e, "this build lacks the rccl feature")),
        Exchange::Nccl => refused(world, host_only(e, "NCCL is for NVIDIA GPUs")),
    }
}

/// Runs the resident benchmark on every product of `args`.
pub fn bench<T: Scalar>(
    world: &SimpleCommunicator,
    args: &BenchArgs,
    files: &[super::source::Operands],
) -> Result<Vec<serde_json::Value>, CliError> {
    let backend = rank_backend(world, &args.common, GpuConfig::default())?;
    let several = args.common.devices.len() > 1;
    let all = if several {
        on_root(world, || {
            super::open_backend(&args.common, GpuConfig::default(), false)
        })?
    } else {
        None
    };
    match &backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda(m) => {
            let engine = &m.engines()[0];
            let exchanges = args
                .exchange
                .iter()
                .map(|&e| cuda_exchange(world, engine.device(), e))
                .collect::<Result<Vec<_>, _>>()?;
            let all = all.as_ref().and_then(|b| match b {
                Backend::Cuda(m) => Some(&**m),
                _ => None,
            });
            products::<_, T>(world, args, files, engine, &exchanges, all)
        }
        #[cfg(feature = "hip")]
        Backend::Hip(m) => {
            let engine = &m.engines()[0];
            let exchanges = args
                .exchange
                .iter()
                .map(|&e| hip_exchange(world, engine.device(), e))
                .collect::<Result<Vec<_>, _>>()?;
            let all = all.as_ref().and_then(|b| match b {
                Backend::Hip(m) => Some(&**m),
                _ => None,
            });
            products::<_, T>(world, args, files, engine, &exchanges, all)
        }
        Backend::Cpu(_) => refused(world, Err(no_gpu())),
    }
}

/// `C = A·B` (this rank's rows of each) with the operands on the ranks'
/// GPUs through `exchange`: uploaded, multiplied, C downloaded. Collective.
pub fn multiply<T: Scalar>(
    world: &SimpleCommunicator,
    backend: &Backend,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    exchange: Exchange,
) -> Result<(DistCsr<T>, ResidentStats), CliError> {
    match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda(m) => {
            let engine = &m.engines()[0];
            let exchange = cuda_exchange(world, engine.device(), exchange)?;
            on_gpus(world, engine, &*exchange, a, b)
        }
        #[cfg(feature = "hip")]
        Backend::Hip(m) => {
            let engine = &m.engines()[0];
            let exchange = hip_exchange(world, engine.device(), exchange)?;
            on_gpus(world, engine, &*exchange, a, b)
        }
        Backend::Cpu(_) => refused(world, Err(no_gpu())),
    }
}

/// The error of `--resident` on the CPU backend.
fn no_gpu() -> CliError {
    CliError::Argument("--resident needs a GPU backend (cuda or hip)".into())
}

/// `e`'s error on every rank (every rank refuses the same request).
fn refused<R>(world: &SimpleCommunicator, e: Result<(), CliError>) -> Result<R, CliError> {
    match together(world, e) {
        Err(e) => Err(e),
        Ok(()) => Err(CliError::Argument("a request refused on some rank".into())),
    }
}

/// [`multiply`] on `engine`'s GPU through `exchange`.
fn on_gpus<D: Device, T: Scalar>(
    world: &SimpleCommunicator,
    engine: &GpuEngine<D>,
    exchange: &dyn DeviceExchange<D>,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
) -> Result<(DistCsr<T>, ResidentStats), CliError> {
    let up = |m| DeviceDistCsr::upload(world, engine, m).map_err(spgemm::Error::from);
    let (ga, gb) = (up(a)?, up(b)?);
    let (gc, stats) =
        resident::multiply(world, engine, exchange, &ga, &gb).map_err(spgemm::Error::from)?;
    let c = gc.download(world, engine).map_err(spgemm::Error::from)?;
    Ok((c, stats))
}

/// The error for `--exchange e` where it cannot be used (`why`).
#[cfg(any(feature = "cuda", feature = "hip"))]
fn host_only(e: Exchange, why: &str) -> Result<(), CliError> {
    let name = match e {
        Exchange::Nccl => "nccl",
        Exchange::Rccl => "rccl",
        Exchange::Host => "host",
    };
    Err(CliError::Argument(format!(
        "--exchange {name}: {why}; use --exchange host"
    )))
}

/// Median wall-clock milliseconds of `f` over `--reps` after `--warmup`.
fn timed(args: &BenchArgs, mut f: impl FnMut() -> Result<(), CliError>) -> Result<f64, CliError> {
    let mut times = Vec::new();
    for run in 0..args.warmup + args.reps {
        let t = Instant::now();
        f()?;
        if run >= args.warmup {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(median(times))
}

/// Every product of `files`, resident, through each of `exchanges`.
fn products<D: Device, T: Scalar>(
    world: &SimpleCommunicator,
    args: &BenchArgs,
    files: &[super::source::Operands],
    engine: &GpuEngine<D>,
    exchanges: &[Boxed<'_, D>],
    all: Option<&MultiGpu<D>>,
) -> Result<Vec<serde_json::Value>, CliError> {
    let ranks = world.size() as usize;
    let mut rows = Vec::new();
    for ops in files {
        let loaded: Option<Loaded<T>> = on_root(world, || {
            let (a, b, what) = ops.load::<T>(args.common.seed)?;
            let nprod = spgemm::stats::product_stats(&a, b.as_ref().unwrap_or(&a))?.total_nprod;
            Ok(((a, b), what, nprod))
        })?;
        let (da, db) = scatter(world, loaded.as_ref().map(|(m, _, _)| m))?;
        let db = db.as_ref().unwrap_or(&da);
        let operands = || {
            let ((a, b), _, _) = loaded.as_ref().expect("rank 0 loaded");
            (a, b.as_ref().unwrap_or(a))
        };
        // Rank 0's GPU alone, operands on it, the other ranks waiting.
        let single = on_root(world, || {
            let (a, b) = operands();
            let (ga, gb) = (engine.upload(a)?, engine.upload(b)?);
            timed(args, || {
                engine.multiply(&ga, &gb).map(drop).map_err(Into::into)
            })
        })?;
        // `all` is rank 0's alone: every rank joins when there are several
        // --devices.
        let all_ms = if args.common.devices.len() > 1 {
            on_root(world, || {
                let multi = all.expect("rank 0 opened every device");
                let (a, b) = operands();
                let ops = multi.upload(a, b)?;
                timed(args, || multi.multiply(&ops).map(drop).map_err(Into::into))
            })?
        } else {
            None
        };
        for exchange in exchanges {
            let (time, stats) = distributed(world, args, engine, &**exchange, &da, db, &loaded)?;
            let per_rank = gather(world, &stats);
            on_root(world, || {
                let (_, what, nprod) = loaded.as_ref().expect("rank 0 loaded");
                let single = single.expect("rank 0 timed alone");
                let gflops = |ms: f64| 2.0 * *nprod as f64 / (ms * 1e6);
                eprintln!(
                    "{} ({what}): resident 1d over {} on {ranks} ranks {time:.2} ms, {:.2} GFLOPS; rank 0 alone {single:.2} ms: {:.2}x{}",
                    ops.name(),
                    stats.exchange,
                    gflops(time),
                    single / time,
                    all_ms
                        .map(|ms| format!("; one process on --devices {:?} {ms:.2} ms: {:.2}x", args.common.devices, ms / time))
                        .unwrap_or_default()
                );
                print_ranks(&per_rank);
                rows.push(serde_json::json!({
                    "product": ops.name(),
                    "what": what,
                    "ranks": ranks,
                    "resident": true,
                    "exchange": stats.exchange,
                    "device": engine.device().properties().name,
                    "nprod": nprod,
                    "distributed_ms": time,
                    "one_rank_ms": single,
                    "one_process_all_devices_ms": all_ms,
                    "speedup": single / time,
                    "per_rank": per_rank,
                }));
                Ok(())
            })?;
        }
    }
    Ok(rows)
}

/// The resident product of `da·db` through `exchange`: the slowest rank's
/// median time and this rank's figures of that run; checked on the last
/// run with `--check`.
fn distributed<D: Device, T: Scalar>(
    world: &SimpleCommunicator,
    args: &BenchArgs,
    engine: &GpuEngine<D>,
    exchange: &dyn DeviceExchange<D>,
    da: &DistCsr<T>,
    db: &DistCsr<T>,
    loaded: &Option<Loaded<T>>,
) -> Result<(f64, ResidentStats), CliError> {
    let up = |m| DeviceDistCsr::upload(world, engine, m).map_err(spgemm::Error::from);
    let (ga, gb) = (up(da)?, up(db)?);
    let mut runs = Vec::new();
    for run in 0..args.warmup + args.reps {
        world.barrier();
        let t = Instant::now();
        let (c, stats) =
            resident::multiply(world, engine, exchange, &ga, &gb).map_err(spgemm::Error::from)?;
        let mine = t.elapsed().as_secs_f64() * 1e3;
        let slowest = slowest(world, mine);
        if run + 1 == args.warmup + args.reps && args.check {
            let c = c.download(world, engine).map_err(spgemm::Error::from)?;
            let whole = c.gather(world, 0).map_err(spgemm::Error::from)?;
            on_root(world, || {
                let ((a, b), _, _) = loaded.as_ref().expect("rank 0 loaded");
                let c = whole.as_ref().expect("rank 0 gathered C");
                spgemm::verify::check_product(a, b.as_ref().unwrap_or(a), c)?.map_err(|mismatch| {
                    CliError::Check {
                        matrix: "resident product".into(),
                        mismatch,
                    }
                })
            })?;
        }
        if run >= args.warmup {
            runs.push((slowest, stats));
        }
    }
    runs.sort_by(|x, y| x.0.total_cmp(&y.0));
    Ok(runs.swap_remove(runs.len() / 2))
}

/// Every rank's figures of `stats`, in rank order, by name. Collective.
pub(super) fn gather(world: &SimpleCommunicator, stats: &ResidentStats) -> serde_json::Value {
    let every = |v: f64| -> Vec<f64> {
        comm::all_gather(world, v.to_bits())
            .into_iter()
            .map(f64::from_bits)
            .collect()
    };
    serde_json::json!({
        "device_sent_bytes": every(stats.device.sent as f64),
        "device_received_bytes": every(stats.device.received as f64),
        "host_sent_bytes": every(stats.host.sent as f64),
        "fetched_rows": every(stats.fetched_rows as f64),
        "runs": every(stats.runs as f64),
        "plan_ms": every(stats.plan_ms),
        "fetch_ms": every(stats.fetch_ms),
        "moves_device_ms": every(stats.moves_device_ms),
        "assemble_ms": every(stats.assemble_ms),
        "local_ms": every(stats.local_ms),
        "total_ms": every(stats.total_ms),
    })
}

/// Prints each rank's line of `per_rank` (from [`gather`]).
pub(super) fn print_ranks(per_rank: &serde_json::Value) {
    let col = |k: &str| -> Vec<f64> {
        per_rank[k]
            .as_array()
            .map(|v| v.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default()
    };
    let names = [
        "device_received_bytes",
        "fetched_rows",
        "runs",
        "plan_ms",
        "fetch_ms",
        "moves_device_ms",
        "assemble_ms",
        "local_ms",
        "total_ms",
    ];
    let cols: Vec<Vec<f64>> = names.iter().map(|k| col(k)).collect();
    eprintln!(
        "rank   recv MiB  fetched rows  runs   plan ms  fetch ms   moves ms  assemble ms  local ms  total ms"
    );
    for r in 0..cols[0].len() {
        let v: Vec<f64> = cols.iter().map(|c| c[r]).collect();
        eprintln!(
            "{r:>4} {:>10.3} {:>13} {:>5} {:>9.2} {:>9.2} {:>10.2} {:>12.2} {:>9.2} {:>9.2}",
            v[0] / (1u64 << 20) as f64,
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            v[6],
            v[7],
            v[8]
        );
    }
}
