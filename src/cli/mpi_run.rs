//! `spgemm multiply --distributed` and `spgemm bench --distributed`,
//! under mpirun (feature `mpi`).

use super::bench::BenchArgs;
use super::{open_backend, CliError, Common, MultiplyArgs};
use spgemm::distributed::mpi::topology::SimpleCommunicator;
use spgemm::distributed::mpi::traits::*;
use spgemm::distributed::{comm, DistCsr, Options, RunStats};
use spgemm::{Backend, CsrMatrix, GpuConfig, Scalar};
use std::time::Instant;

/// `Ok(v)` on every rank when no rank failed; otherwise the first failing
/// rank's error, on every rank.
pub(super) fn together<T>(
    world: &SimpleCommunicator,
    r: Result<T, CliError>,
) -> Result<T, CliError> {
    let r = r.map_err(|e| spgemm::distributed::Error::Argument(crate::one_line(&e.to_string())));
    comm::agree(world, r).map_err(|e| CliError::Spgemm(e.into()))
}

/// This rank's backend: `common`'s, on the device of `--devices` that
/// the node-local rank picks (round-robin).
pub(super) fn rank_backend(
    world: &SimpleCommunicator,
    common: &Common,
    options: GpuConfig,
) -> Result<Backend, CliError> {
    let node_rank = world.split_shared(world.rank()).rank() as usize;
    let common = Common {
        devices: vec![common.devices[node_rank % common.devices.len()]],
        ..common.clone()
    };
    let verbose = common.verbose;
    together(world, open_backend(&common, options, verbose))
}

/// Rank 0 runs `load`; its result (`Some` on rank 0) or error on every
/// rank.
pub(super) fn on_root<T>(
    world: &SimpleCommunicator,
    load: impl FnOnce() -> Result<T, CliError>,
) -> Result<Option<T>, CliError> {
    if world.rank() == 0 {
        together(world, load()).map(Some)
    } else {
        together(world, Ok(())).map(|()| None)
    }
}

/// A (and B, when given or when A is not square: Aᵀ) read on rank 0 and
/// scattered: A's rows in blocks of about equal products, B's of about
/// equal entries; `None` for B means B = A.
pub(super) fn scatter<T: Scalar>(
    world: &SimpleCommunicator,
    loaded: Option<&(CsrMatrix<T>, Option<CsrMatrix<T>>)>,
) -> Result<Operands<T>, CliError> {
    use spgemm::distributed::Partition;
    let ranks = world.size() as usize;
    let parts = loaded.map(|(a, b)| -> Result<_, spgemm::Error> {
        let bm = b.as_ref().unwrap_or(a);
        let row_nnz = |m: &CsrMatrix<T>| -> Vec<u64> {
            (0..m.nrows()).map(|i| m.row_nnz(i) as u64).collect()
        };
        let b_nnz = row_nnz(bm);
        let products: Vec<u64> = (0..a.nrows())
            .map(|i| a.row(i).0.iter().map(|&k| b_nnz[k as usize]).sum())
            .collect();
        Ok((
            Partition::balanced(&products, ranks)?,
            Partition::balanced(&b_nnz, ranks)?,
        ))
    });
    let parts = parts.transpose()?;
    let a = DistCsr::scatter(
        world,
        0,
        loaded.map(|(a, _)| a),
        parts.as_ref().map(|p| &p.0),
    )
    .map_err(spgemm::Error::from)?;
    let given = comm::sum(world, u64::from(loaded.is_some_and(|(_, b)| b.is_some())));
    let b = if given > 0 {
        let held = loaded.and_then(|(_, b)| b.as_ref());
        Some(
            DistCsr::scatter(world, 0, held, parts.as_ref().map(|p| &p.1))
                .map_err(spgemm::Error::from)?,
        )
    } else {
        None
    };
    Ok((a, b))
}

/// What rank 0 loads for a benchmark: A and B (`None`: B = A), what
/// they are, and the product's `nprod`.
pub(super) type Loaded<T> = ((CsrMatrix<T>, Option<CsrMatrix<T>>), &'static str, u64);

/// A and B split over the ranks; `None` for B means B = A.
type Operands<T> = (DistCsr<T>, Option<DistCsr<T>>);

/// A and B read by every rank from their files at once (rows split
/// evenly; a plain `.mtx` read in parallel byte ranges, other files by
/// rank 0 and scattered), when both are files and the product is not
/// A·Aᵀ; `None` otherwise.
fn read_files<T: Scalar>(
    world: &SimpleCommunicator,
    args: &MultiplyArgs,
) -> Result<Option<Operands<T>>, CliError> {
    use super::source::MatrixSource;
    let MatrixSource::File(a_path) = &args.a else {
        return Ok(None);
    };
    let b_path = match &args.b {
        Some(MatrixSource::File(p)) => Some(p),
        Some(_) => return Ok(None),
        None => None,
    };
    let a = DistCsr::read(world, a_path, None).map_err(spgemm::Error::from)?;
    let b = match b_path {
        Some(p) => Some(DistCsr::read(world, p, None).map_err(spgemm::Error::from)?),
        None if a.nrows() != a.ncols() => return Ok(None),
        None => None,
    };
    Ok(Some((a, b)))
}

/// Every rank's value of each of `stats`' figures, in rank order:
/// bytes sent, bytes received, fetch, local, merge and total milliseconds.
fn gather_stats(world: &SimpleCommunicator, stats: &RunStats) -> [Vec<f64>; 6] {
    let every = |v: f64| {
        comm::all_gather(world, v.to_bits())
            .into_iter()
            .map(f64::from_bits)
            .collect()
    };
    [
        every((stats.inputs.sent + stats.c.sent) as f64),
        every((stats.inputs.received + stats.c.received) as f64),
        every(stats.fetch_ms),
        every(stats.local_ms),
        every(stats.merge_ms),
        every(stats.total_ms),
    ]
}

/// Prints each rank's line of `columns` (from [`gather_stats`]).
fn print_ranks(columns: &[Vec<f64>; 6]) {
    let [sent, received, fetch, local, merge, total] = columns;
    let mib = |b: f64| b / (1u64 << 20) as f64;
    eprintln!("rank   sent MiB   recv MiB   fetch ms   local ms   merge ms   total ms");
    for r in 0..sent.len() {
        eprintln!(
            "{r:>4} {:>10.3} {:>10.3} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
            mib(sent[r]),
            mib(received[r]),
            fetch[r],
            local[r],
            merge[r],
            total[r]
        );
    }
}

/// `spgemm multiply --distributed` under mpirun: rank 0 reads A and B and
/// scatters their rows, every rank multiplies on its device or CPU, rank
/// 0 gathers and writes C and prints each rank's bytes and times.
pub fn multiply<T: Scalar>(args: &MultiplyArgs) -> Result<(), CliError> {
    let universe = spgemm::distributed::mpi::initialize()
        .ok_or_else(|| CliError::Argument("MPI could not be initialised".into()))?;
    let world = universe.world();
    // Only rank 0 writes, and only it probes the output (ranks probing the
    // same path at once would trip over each other's probe).
    on_root(&world, || {
        Ok(spgemm::files::check_output(&args.output, true)?)
    })?;
    let options = GpuConfig {
        memory_budget: args.memory_budget,
        ..GpuConfig::default()
    };
    let backend = rank_backend(&world, &args.common, options)?;
    let t = Instant::now();
    let (da, db) = match read_files::<T>(&world, args)? {
        Some(both) => both,
        None => {
            let loaded = on_root(&world, || {
                let a = args.a.load::<T>(args.common.seed)?;
                let b = match &args.b {
                    Some(s) => Some(s.load::<T>(args.common.seed)?),
                    None if a.nrows() != a.ncols() => Some(a.transpose()?),
                    None => None,
                };
                Ok((a, b))
            })?;
            scatter(&world, loaded.as_ref())?
        }
    };
    let read_ms = t.elapsed().as_secs_f64() * 1e3;
    let db = db.as_ref().unwrap_or(&da);
    #[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
    if args.resident {
        let (c, stats) =
            super::mpi_resident::multiply::<T>(&world, &backend, &da, db, args.exchange)?;
        let how = format!("1d on the GPUs over {}", stats.exchange);
        let report = super::mpi_resident::gather(&world, &stats);
        return write_c(&world, args, &c, (read_ms, &how, &backend), || {
            super::mpi_resident::print_ranks(&report)
        });
    }
    let options = Options {
        algorithm: args.algorithm,
        fetch: args.fetch,
    };
    let (c, stats) = spgemm::distributed::multiply(&world, &da, db, &backend, options)
        .map_err(spgemm::Error::from)?;
    let columns = gather_stats(&world, &stats);
    let how = stats.algorithm.to_string() + shared_note(&stats);
    write_c(&world, args, &c, (read_ms, &how, &backend), || {
        print_ranks(&columns)
    })
}

/// Writes C (every rank its rows into one `.mtx`, `.mtx.gz` or `.npz`),
/// then prints on rank 0 what ran (`read_ms`, how,
/// on which backend) and each rank's figures (`per_rank`). Collective.
fn write_c<T: Scalar>(
    world: &SimpleCommunicator,
    args: &MultiplyArgs,
    c: &DistCsr<T>,
    (read_ms, how, backend): (f64, &str, &Backend),
    per_rank: impl FnOnce(),
) -> Result<(), CliError> {
    let ranks = world.size() as usize;
    // Every rank writes its rows into the one file.
    let t = Instant::now();
    if spgemm::files::is_npz(&args.output) {
        c.write_npz(world, &args.output)
    } else {
        c.write_mtx(world, &args.output)
    }
    .map_err(spgemm::Error::from)?;
    let write_ms = t.elapsed().as_secs_f64() * 1e3;
    let nnz = c.nnz(world);
    on_root(world, || {
        eprintln!(
            "C: {}x{}, nnz(C) {nnz}; {how} on {ranks} ranks ({}), read {read_ms:.1} ms, write {write_ms:.1} ms (every rank its rows); wrote {}",
            c.nrows(),
            c.ncols(),
            backend.name(),
            args.output.display()
        );
        per_rank();
        Ok(())
    })?;
    Ok(())
}

/// The largest of every rank's `ms`. Collective.
pub(super) fn slowest(world: &SimpleCommunicator, ms: f64) -> f64 {
    comm::all_gather(world, ms.to_bits())
        .into_iter()
        .map(f64::from_bits)
        .fold(0.0, f64::max)
}

/// The median of `v` (not empty; of an even count, the upper middle one).
pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `spgemm bench --distributed` under mpirun: per product, the
/// distributed product's wall-clock time (the slowest rank's, median of
/// `--reps`) beside the same product on rank 0 alone, in the same run;
/// the phases and bytes of each rank.
pub fn bench<T: Scalar>(args: &BenchArgs) -> Result<(), CliError> {
    let universe = spgemm::distributed::mpi::initialize()
        .ok_or_else(|| CliError::Argument("MPI could not be initialised".into()))?;
    let world = universe.world();
    let ranks = world.size() as usize;
    if let Some(path) = &args.json {
        on_root(&world, || Ok(spgemm::files::check_output(path, false)?))?;
    }
    let files = if args.files.is_empty() {
        vec![super::source::Operands {
            a: super::source::MatrixSource::File(super::bench::BUNDLED.into()),
            b: None,
        }]
    } else {
        args.files.clone()
    };
    #[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
    if args.resident {
        let rows = super::mpi_resident::bench::<T>(&world, args, &files)?;
        return write_json(&world, args, rows);
    }
    let backend = rank_backend(&world, &args.common, GpuConfig::default())?;
    let options = Options {
        algorithm: args.algorithm,
        fetch: args.fetch,
    };
    let mut rows = Vec::new();
    for ops in &files {
        let loaded: Option<Loaded<T>> = on_root(&world, || {
            let (a, b, what) = ops.load::<T>(args.common.seed)?;
            let nprod = spgemm::stats::product_stats(&a, b.as_ref().unwrap_or(&a))?.total_nprod;
            Ok(((a, b), what, nprod))
        })?;
        let (da, db) = scatter(&world, loaded.as_ref().map(|(m, _, _)| m))?;
        let db = db.as_ref().unwrap_or(&da);
        // The same product on rank 0 alone, the others waiting: on its own
        // device, and (several --devices) on all of them in one process.
        let time_on = |backend: &Backend| -> Result<f64, CliError> {
            let ((a, b), _, _) = loaded.as_ref().expect("rank 0 loaded");
            let b = b.as_ref().unwrap_or(a);
            let mut times = Vec::new();
            for run in 0..args.warmup + args.reps {
                let t = Instant::now();
                drop(backend.multiply(a, b)?);
                if run >= args.warmup {
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            Ok(median(times))
        };
        let single = on_root(&world, || time_on(&backend))?;
        let several = args.common.devices.len() > 1 && !matches!(backend, Backend::Cpu(_));
        let all_devices = if several {
            on_root(&world, || {
                let all = open_backend(&args.common, GpuConfig::default(), false)?;
                time_on(&all)
            })?
        } else {
            None
        };
        let mut runs: Vec<(f64, RunStats)> = Vec::new();
        for run in 0..args.warmup + args.reps {
            world.barrier();
            let t = Instant::now();
            let (c, stats) = spgemm::distributed::multiply(&world, &da, db, &backend, options)
                .map_err(spgemm::Error::from)?;
            let mine = t.elapsed().as_secs_f64() * 1e3;
            let slowest = slowest(&world, mine);
            if run + 1 == args.warmup + args.reps && args.check {
                let whole = c.gather(&world, 0).map_err(spgemm::Error::from)?;
                on_root(&world, || {
                    let ((a, b), _, _) = loaded.as_ref().expect("rank 0 loaded");
                    let c = whole.as_ref().expect("rank 0 gathered C");
                    spgemm::verify::check_product(a, b.as_ref().unwrap_or(a), c)?.map_err(
                        |mismatch| CliError::Check {
                            matrix: ops.name(),
                            mismatch,
                        },
                    )
                })?;
            }
            if run >= args.warmup {
                runs.push((slowest, stats));
            }
        }
        runs.sort_by(|x, y| x.0.total_cmp(&y.0));
        let (time, stats) = runs.swap_remove(runs.len() / 2);
        let columns = gather_stats(&world, &stats);
        on_root(&world, || {
            let (_, what, nprod) = loaded.as_ref().expect("rank 0 loaded");
            let single = single.expect("rank 0 timed alone");
            let gflops = |ms: f64| 2.0 * *nprod as f64 / (ms * 1e6);
            eprintln!(
                "{} ({what}): {}{} on {ranks} ranks ({}) {time:.2} ms, {:.2} GFLOPS; rank 0 alone {single:.2} ms, {:.2} GFLOPS: {:.2}x{}",
                ops.name(),
                stats.algorithm,
                shared_note(&stats),
                backend.name(),
                gflops(time),
                gflops(single),
                single / time,
                stats
                    .predicted
                    .map(|(one, two)| format!(" (auto: busiest rank's bytes of A and B 1d {one}, 2d {two})"))
                    .unwrap_or_default()
            );
            if let Some(ms) = all_devices {
                eprintln!(
                    "one process on --devices {:?}: {ms:.2} ms, {:.2} GFLOPS ({:.2}x the distributed time)",
                    args.common.devices,
                    gflops(ms),
                    time / ms
                );
            }
            print_ranks(&columns);
            let [sent, received, fetch, local, merge, total] = &columns;
            rows.push(serde_json::json!({
                "product": ops.name(),
                "what": what,
                "ranks": ranks,
                "algorithm": stats.algorithm,
                "shared_rows": stats.shared_rows,
                "backend": backend.name(),
                "device": backend.device(),
                "nprod": nprod,
                "distributed_ms": time,
                "one_rank_ms": single,
                "one_process_all_devices_ms": all_devices,
                "speedup": single / time,
                "predicted_input_bytes": stats.predicted,
                "per_rank": {
                    "sent_bytes": sent, "received_bytes": received,
                    "fetch_ms": fetch, "local_ms": local, "merge_ms": merge, "total_ms": total,
                },
            }));
            Ok(())
        })?;
    }
    write_json(&world, args, rows)
}

/// What a run's algorithm is followed by when B's rows were read in
/// place from shared memory.
fn shared_note(stats: &RunStats) -> &'static str {
    if stats.shared_rows {
        " (B's rows read in place from the node's shared memory)"
    } else {
        ""
    }
}

/// Writes `rows` to `--json` on rank 0, if given.
fn write_json(
    world: &SimpleCommunicator,
    args: &BenchArgs,
    rows: Vec<serde_json::Value>,
) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        on_root(world, || {
            std::fs::write(
                path,
                format!("{:#}\n", serde_json::Value::Array(rows.clone())),
            )
            .map_err(|e| CliError::Output {
                path: path.display().to_string(),
                message: e.to_string(),
            })
        })?;
    }
    Ok(())
}
