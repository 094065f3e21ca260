//! Distributed products under `mpirun --oversubscribe -n 1…4`, against
//! the single-process reference.
//!
//! Each trial starts `mpirun` on this same binary with `SPGEMM_MPI_CASE`
//! naming the case; the ranks run it and exit non-zero on a failure. A run
//! that takes longer than its timeout is killed and fails the trial, so a
//! hang is a failure, not a stuck test.

use libtest_mimic::{Arguments, Failed, Trial};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::{CsrMatrix, CsrView};
use spgemm_cpu::CpuBackend;
use spgemm_distributed::{
    multiply, Choice, DistCsr, Error, Fetch, LocalProduct, Model, Options, Partition,
};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use wait_timeout::ChildExt;

mod npz;
#[cfg(feature = "nccl")]
mod resident;

type Case = fn(&SimpleCommunicator) -> Result<(), String>;

const CASES: &[(&str, Case)] = &[
    ("real_matrices_1d", |c| {
        real_matrices(c, Choice::OneD, Fetch::Messages)
    }),
    ("real_matrices_1d_shared_rows", |c| {
        real_matrices(c, Choice::OneD, Fetch::Shared)
    }),
    ("real_matrices_2d", |c| {
        real_matrices(c, Choice::TwoD, Fetch::Shared)
    }),
    ("real_matrices_auto", |c| {
        real_matrices(c, Choice::Auto, Fetch::Messages)
    }),
    ("real_matrices_auto_shared_rows", |c| {
        real_matrices(c, Choice::Auto, Fetch::Shared)
    }),
    ("random_rectangular_uneven_partitions", random_rectangular),
    ("fetch_auto_reads_random_rows_in_place", fetch_auto),
    ("more_ranks_than_rows", more_ranks_than_rows),
    ("model_predicts_bytes_moved", model_predicts_bytes_moved),
    ("scatter_gather_round_trip", scatter_gather_round_trip),
    ("parallel_write_reads_back", parallel_write_reads_back),
    (
        "parallel_read_matches_sequential",
        parallel_read_matches_sequential,
    ),
    (
        "parallel_read_errors_match_sequential",
        parallel_read_errors,
    ),
    ("dimension_mismatch_on_every_rank", dimension_mismatch),
    ("bad_part_on_one_rank_fails_all", bad_part_on_one_rank),
    ("local_product_failure_fails_all", local_failure_on_one_rank),
];

/// Longest a run may take before it counts as hung.
const TIMEOUT: Duration = Duration::from_secs(240);

fn main() {
    if let Ok(case) = std::env::var("SPGEMM_MPI_CASE") {
        std::process::exit(worker(&case));
    }
    let mut args = Arguments::from_args();
    // One mpirun at a time: the ranks of one already oversubscribe CI's
    // cores.
    args.test_threads.get_or_insert(1);
    let trials: Vec<Trial> = CASES
        .iter()
        .chain(npz::CASES)
        .flat_map(|&(name, _)| {
            (1..=4).map(move |p| {
                Trial::test(format!("mpi::{name}::ranks{p}"), move || launch(name, p))
            })
        })
        .collect();
    #[cfg(feature = "nccl")]
    let trials = trials.into_iter().chain(gpu_trials()).collect();
    libtest_mimic::run(&args, trials).exit();
}

/// The GPU cases on 1–4 ranks: ignored without a GPU (failed instead
/// with `SPGEMM_REQUIRE_GPU=1`), and those that need a GPU per rank
/// ignored beyond the GPUs present.
#[cfg(feature = "nccl")]
fn gpu_trials() -> Vec<Trial> {
    let gpus = resident::gpus();
    let required = std::env::var("SPGEMM_REQUIRE_GPU").is_ok_and(|v| v == "1");
    resident::CASES
        .iter()
        .flat_map(|&(name, _, per_rank)| {
            (1..=4).map(move |p| {
                let trial = Trial::test(format!("mpi::gpu::{name}::ranks{p}"), move || {
                    if gpus == 0 {
                        return Err("SPGEMM_REQUIRE_GPU=1 and no CUDA GPU is present".into());
                    }
                    launch(name, p)
                });
                let absent = gpus == 0 && !required;
                trial.with_ignored_flag(absent || (gpus > 0 && per_rank && p > gpus))
            })
        })
        .collect()
}

/// Runs `case` on `ranks` ranks under mpirun.
fn launch(case: &str, ranks: usize) -> Result<(), Failed> {
    let exe = std::env::current_exe()?;
    let log = std::env::temp_dir().join(format!(
        "spgemm-mpi-{}-{case}-{ranks}.log",
        std::process::id()
    ));
    let out = std::fs::File::create(&log)?;
    let dir =
        std::env::temp_dir().join(format!("spgemm-mpi-{}-{case}-{ranks}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut child = Command::new("mpirun")
        .args(["--oversubscribe", "-n", &ranks.to_string()])
        .arg(&exe)
        .env("SPGEMM_MPI_CASE", case)
        .env("SPGEMM_MPI_DIR", &dir)
        // Containers and CI run as root; OpenMPI refuses it unless told.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .map_err(|e| format!("mpirun could not start ({e}); OpenMPI's mpirun must be on PATH"))?;
    let status = child.wait_timeout(TIMEOUT)?;
    let text = || std::fs::read_to_string(&log).unwrap_or_default();
    let result = match status {
        None => {
            child.kill()?;
            child.wait()?;
            Err(format!("hung: no exit after {TIMEOUT:?}\n{}", text()).into())
        }
        Some(s) if !s.success() => Err(format!("{s}\n{}", text()).into()),
        Some(_) => Ok(()),
    };
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The rank side: runs `case`, prints its failure, returns the exit code.
fn worker(case: &str) -> i32 {
    let Some(universe) = mpi::initialize() else {
        eprintln!("MPI did not initialise");
        return 2;
    };
    let world = universe.world();
    let found = CASES
        .iter()
        .chain(npz::CASES)
        .find(|(n, _)| *n == case)
        .map(|&(_, run)| run);
    #[cfg(feature = "nccl")]
    let found = found.or_else(|| {
        resident::CASES
            .iter()
            .find(|(n, _, _)| *n == case)
            .map(|&(_, run, _)| run)
    });
    let Some(run) = found else {
        eprintln!("no case {case}");
        return 2;
    };
    match run(&world) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("rank {}: {e}", world.rank());
            1
        }
    }
}

fn matrices_dir() -> PathBuf {
    std::env::var_os("SPGEMM_MATRICES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/matrices"))
}

/// Rows `range` of `m` with global columns: this rank's part.
fn part(m: &CsrMatrix<f64>, range: std::ops::Range<u64>) -> (Vec<usize>, Vec<u64>, Vec<f64>) {
    let (lo, hi) = (range.start as usize, range.end as usize);
    let o = m.row_offsets();
    let offsets = o[lo..=hi].iter().map(|x| x - o[lo]).collect();
    let cols = m.col_indices()[o[lo]..o[hi]]
        .iter()
        .map(|&c| u64::from(c))
        .collect();
    (offsets, cols, m.values()[o[lo]..o[hi]].to_vec())
}

/// `m`, held by every rank, split by `rows`.
fn distribute(
    comm: &SimpleCommunicator,
    m: &CsrMatrix<f64>,
    rows: &Partition,
) -> Result<DistCsr<f64>, String> {
    let (o, c, v) = part(m, rows.range(comm.rank() as usize));
    DistCsr::from_local(comm, m.ncols() as u64, o, c, v).map_err(|e| e.to_string())
}

/// Gathers `c` and checks it on rank 0 against the reference `a·b`.
fn check(
    comm: &SimpleCommunicator,
    a: &CsrMatrix<f64>,
    b: &CsrMatrix<f64>,
    c: &DistCsr<f64>,
    what: &str,
) -> Result<(), String> {
    let whole = c.gather(comm, 0).map_err(|e| e.to_string())?;
    if let Some(whole) = whole {
        spgemm_core::verify::check_product(a, b, &whole)
            .map_err(|e| e.to_string())?
            .map_err(|m| format!("{what}: {m}"))?;
    }
    Ok(())
}

fn read(name: &str) -> CsrMatrix<f64> {
    spgemm_core::files::read(
        matrices_dir().join(format!("{name}.mtx.gz")),
        &Default::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The real matrix `name` as A, and as B itself or (rectangular) its
/// transpose, each held whole and split evenly over the ranks.
type Operands = (CsrMatrix<f64>, CsrMatrix<f64>, DistCsr<f64>, DistCsr<f64>);
fn real_operands(comm: &SimpleCommunicator, name: &str) -> Result<Operands, String> {
    let p = comm.size() as usize;
    let a = read(name);
    let b = if a.nrows() == a.ncols() {
        a.clone()
    } else {
        a.transpose().unwrap()
    };
    let da = distribute(comm, &a, &Partition::even(a.nrows() as u64, p).unwrap())?;
    let db = distribute(comm, &b, &Partition::even(b.nrows() as u64, p).unwrap())?;
    Ok((a, b, da, db))
}

/// The real matrices multiplied over the ranks, checked against the
/// reference; with shared rows (1D, or auto, which then runs 1D) nothing
/// of B moves in messages; 2D sends its blocks whatever the fetch.
fn real_matrices(comm: &SimpleCommunicator, algorithm: Choice, fetch: Fetch) -> Result<(), String> {
    let p = comm.size() as usize;
    let cpu = CpuBackend::new();
    for name in [
        "west0067",
        "bcsstk08",
        "ca-GrQc",
        "email-Eu-core",
        "lp_afiro",
        "Goodwin_010",
    ] {
        let (a, b, da, db) = real_operands(comm, name)?;
        let options = Options { algorithm, fetch };
        match multiply(comm, &da, &db, &cpu, options) {
            Ok((c, stats)) => {
                let shared = algorithm != Choice::TwoD && fetch == Fetch::Shared;
                if stats.shared_rows != shared || (shared && stats.inputs.sent != 0) {
                    return Err(format!(
                        "{name}: {algorithm:?} {fetch:?}: B's rows shared {}, {} bytes sent",
                        stats.shared_rows, stats.inputs.sent
                    ));
                }
                check(comm, &a, &b, &c, name)?
            }
            Err(e) if algorithm == Choice::TwoD && (p == 2 || p == 3) => {
                let text = e.to_string();
                if !text.contains("square number of ranks") {
                    return Err(format!("{name}: 2D on {p} ranks: unexpected error: {text}"));
                }
            }
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
    Ok(())
}

/// Sizes of `p` uneven parts of `n`, some empty, from `seed`.
fn uneven(n: u64, p: usize, seed: u64) -> Partition {
    let mut rng = spgemm_core::generate::SplitMix64::new(seed, 7);
    let mut cuts: Vec<u64> = (0..p - 1).map(|_| rng.below(n + 1)).collect();
    if p > 1 {
        cuts[0] = 0; // the first rank holds no rows
    }
    cuts.sort_unstable();
    let mut sizes = Vec::with_capacity(p);
    let mut at = 0;
    for c in cuts.into_iter().chain([n]) {
        sizes.push(c - at);
        at = c;
    }
    Partition::from_sizes(&sizes).unwrap()
}

fn random_rectangular(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let cpu = CpuBackend::new();
    let a = spgemm_core::generate::uniform::<f64>(300, 170, 6, 11).unwrap();
    let b = spgemm_core::generate::uniform::<f64>(170, 230, 5, 12).unwrap();
    let da = distribute(comm, &a, &uneven(300, p, 1))?;
    let db = distribute(comm, &b, &uneven(170, p, 2))?;
    // Uneven parts (some empty) read in place too: empty segments of the
    // shared windows.
    let mut runs = vec![
        (Choice::OneD, Fetch::Messages),
        (Choice::Auto, Fetch::Messages),
        (Choice::OneD, Fetch::Shared),
    ];
    if spgemm_distributed::model::grid_side(p).is_some() {
        runs.push((Choice::TwoD, Fetch::Messages));
    }
    for (algorithm, fetch) in runs {
        let options = Options { algorithm, fetch };
        let (c, _) = multiply(comm, &da, &db, &cpu, options).map_err(|e| e.to_string())?;
        if c.row_partition() != da.row_partition() {
            return Err("C is not split as A".into());
        }
        check(comm, &a, &b, &c, &format!("{algorithm:?} {fetch:?}"))?;
        // C as the A of a second product (its column list comes from the
        // first product's rows of B).
        let b2 = spgemm_core::generate::uniform::<f64>(230, 90, 3, 13).unwrap();
        let db2 = distribute(comm, &b2, &uneven(230, p, 3))?;
        let (d, _) = multiply(comm, &c, &db2, &cpu, options).map_err(|e| e.to_string())?;
        let whole_c = c.gather(comm, 0).map_err(|e| e.to_string())?;
        let whole_d = d.gather(comm, 0).map_err(|e| e.to_string())?;
        if let (Some(wc), Some(wd)) = (whole_c, whole_d) {
            spgemm_core::verify::check_product(&wc, &b2, &wd)
                .map_err(|e| e.to_string())?
                .map_err(|m| format!("(A·B)·B2 {algorithm:?} {fetch:?}: {m}"))?;
        }
    }
    Ok(())
}

/// `Fetch::Auto` (the default) reads B in place where a rank's rows of A
/// reference most of the rows other ranks hold (a random matrix: at 4
/// ranks each references about 86% of them) and fetches them where they
/// reference a halo (a 7-point mesh); one rank never shares.
fn fetch_auto(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let cpu = CpuBackend::new();
    let random = spgemm_core::generate::erdos_renyi::<f64>(3000, 8, 5).unwrap();
    let mesh = spgemm_core::generate::poisson_7::<f64>(14).unwrap();
    for (name, m, shared) in [("random", &random, p > 1), ("mesh", &mesh, false)] {
        let rows = Partition::even(m.nrows() as u64, p).unwrap();
        let dm = distribute(comm, m, &rows)?;
        let (c, stats) =
            multiply(comm, &dm, &dm, &cpu, Options::default()).map_err(|e| e.to_string())?;
        if stats.shared_rows != shared || (shared && stats.inputs.sent != 0) {
            return Err(format!(
                "{name} on {p} ranks: B's rows shared {}, expected {shared}; {} bytes sent",
                stats.shared_rows, stats.inputs.sent
            ));
        }
        check(comm, m, m, &c, name)?;
    }
    Ok(())
}

fn more_ranks_than_rows(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let a = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0]).unwrap();
    let da = distribute(comm, &a, &Partition::even(2, p).unwrap())?;
    for algorithm in [Choice::OneD, Choice::Auto] {
        for fetch in [Fetch::Messages, Fetch::Shared] {
            let options = Options { algorithm, fetch };
            let (c, _) =
                multiply(comm, &da, &da, &CpuBackend::new(), options).map_err(|e| e.to_string())?;
            check(comm, &a, &a, &c, &format!("2x2 {fetch:?}"))?;
        }
    }
    Ok(())
}

fn model_predicts_bytes_moved(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let cpu = CpuBackend::new();
    let cases = [
        (
            "stencil",
            spgemm_core::generate::stencil_3d::<f64>(9, 27, 3).unwrap(),
            false,
        ),
        (
            "rmat",
            spgemm_core::generate::rmat::<f64>(9, 8, 4).unwrap(),
            true,
        ),
    ];
    for (name, a, uneven_rows) in cases {
        let n = a.nrows() as u64;
        let rows = if uneven_rows {
            uneven(n, p, 5)
        } else {
            Partition::even(n, p).unwrap()
        };
        let da = distribute(comm, &a, &rows)?;
        let model =
            Model::new(a.view().structure(), a.view().structure(), 8).map_err(|e| e.to_string())?;
        let mut algorithms = vec![Choice::OneD];
        if spgemm_distributed::model::grid_side(p).is_some() {
            algorithms.push(Choice::TwoD);
        }
        for algorithm in algorithms {
            let options = Options {
                algorithm,
                fetch: Fetch::Messages,
            };
            let (_, stats) = multiply(comm, &da, &da, &cpu, options).map_err(|e| e.to_string())?;
            let predicted = match algorithm {
                Choice::TwoD => model.two_d(&rows, &rows),
                _ => model.one_d(&rows, &rows),
            }
            .map_err(|e| e.to_string())?;
            let mine = &predicted.per_rank[comm.rank() as usize];
            let pairs = [
                ("sent", stats.inputs.sent + stats.c.sent, mine.sent()),
                (
                    "received",
                    stats.inputs.received + stats.c.received,
                    mine.received(),
                ),
            ];
            for (what, moved, model) in pairs {
                let off = moved.abs_diff(model) as f64 / model.max(1) as f64;
                if off > 0.05 {
                    return Err(format!(
                        "{name} {algorithm:?}: rank {} {what} {moved} bytes, the model says {model} ({:.1}% off)",
                        comm.rank(),
                        off * 100.0
                    ));
                }
            }
        }
    }
    Ok(())
}

fn scatter_gather_round_trip(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let root = p - 1;
    let a = read("bcsstk08");
    let rows = uneven(a.nrows() as u64, p, 9);
    let held = (comm.rank() as usize == root).then_some(&a);
    let d = DistCsr::scatter(comm, root, held, Some(&rows)).map_err(|e| e.to_string())?;
    if d.row_partition() != &rows {
        return Err("scatter ignored the partition".into());
    }
    if let Some(back) = d.gather(comm, root).map_err(|e| e.to_string())? {
        if back != a {
            return Err("gather(scatter(A)) != A".into());
        }
    }
    Ok(())
}

fn parallel_write_reads_back(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let dir = run_dir()?;
    for name in ["bcsstk08", "lp_afiro"] {
        let a = read(name);
        let d = distribute(comm, &a, &uneven(a.nrows() as u64, p, 4))?;
        for ext in ["mtx", "mtx.gz", "npz"] {
            let path = dir.join(format!("{name}.{ext}"));
            if ext == "npz" {
                d.write_npz(comm, &path).map_err(|e| e.to_string())?;
                // Read back in parts too: every rank its rows.
                let parts = DistCsr::<f64>::read(comm, &path, None).map_err(|e| e.to_string())?;
                if parts
                    .gather(comm, 0)
                    .map_err(|e| e.to_string())?
                    .is_some_and(|m| m != a)
                {
                    return Err(format!("{name}.npz read in parts is not A"));
                }
            } else {
                d.write_mtx(comm, &path).map_err(|e| e.to_string())?;
            }
            if comm.rank() == 0 {
                let back: CsrMatrix<f64> = spgemm_core::files::read(&path, &Default::default())
                    .map_err(|e| e.to_string())?;
                if back != a {
                    return Err(format!(
                        "{name}.{ext}: the file written by {p} ranks is not A"
                    ));
                }
            }
        }
    }
    let d = distribute(comm, &read("west0067"), &Partition::even(67, p).unwrap())?;
    expect_error(
        d.write_mtx(comm, &dir.join("c.npz")),
        "written as .mtx or .mtx.gz",
    )?;
    expect_error(d.write_mtx(comm, &dir.join("no/such/c.mtx")), "rank 0 of")?;
    expect_error(d.write_npz(comm, &dir.join("c.mtx")), "not a .npz file")?;
    expect_error(d.write_npz(comm, &dir.join("no/such/c.npz")), "rank 0 of")
}

/// The folder the launcher made for this run.
fn run_dir() -> Result<PathBuf, String> {
    Ok(PathBuf::from(
        std::env::var_os("SPGEMM_MPI_DIR").ok_or("SPGEMM_MPI_DIR is not set")?,
    ))
}

fn parallel_read_matches_sequential(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let dir = run_dir()?;
    // General real, symmetric, pattern, integer, rectangular, with comments.
    let names = [
        "west0067",
        "bcsstk08",
        "ca-GrQc",
        "lp_afiro",
        "karate",
        "Goodwin_010",
    ];
    if comm.rank() == 0 {
        for name in names {
            let gz = matrices_dir().join(format!("{name}.mtx.gz"));
            let mut text = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::MultiGzDecoder::new(
                    std::fs::File::open(&gz).map_err(|e| e.to_string())?,
                ),
                &mut text,
            )
            .map_err(|e| e.to_string())?;
            std::fs::write(dir.join(format!("{name}.mtx")), text).map_err(|e| e.to_string())?;
        }
    }
    comm.barrier();
    for name in names {
        let want = read(name);
        for (path, rows) in [
            (dir.join(format!("{name}.mtx")), None),
            (
                dir.join(format!("{name}.mtx")),
                Some(uneven(want.nrows() as u64, p, 6)),
            ),
            (matrices_dir().join(format!("{name}.mtx.gz")), None),
        ] {
            let d = DistCsr::<f64>::read(comm, &path, rows.as_ref()).map_err(|e| e.to_string())?;
            if let Some(got) = d.gather(comm, 0).map_err(|e| e.to_string())? {
                if got != want {
                    return Err(format!(
                        "{}: read by {p} ranks differs from the sequential reader",
                        path.display()
                    ));
                }
            }
        }
    }
    Ok(())
}

fn parallel_read_errors(comm: &SimpleCommunicator) -> Result<(), String> {
    let dir = run_dir()?;
    let body = |n: usize| -> String {
        (1..=n)
            .map(|i| format!("{i} {} 1.5\n", (i * 7) % 50 + 1))
            .collect()
    };
    let cases = [
        (
            "bad_line",
            format!(
                "%%MatrixMarket matrix coordinate real general\n50 50 60\n{}45 3 x\n{}",
                body(44),
                body(15)
            ),
        ),
        (
            "late_bad_line",
            format!(
                "%%MatrixMarket matrix coordinate real general\n50 50 60\n{}7 7 1.0 extra\n",
                body(59)
            ),
        ),
        (
            "more_entries",
            format!(
                "%%MatrixMarket matrix coordinate real general\n50 50 40\n{}",
                body(50)
            ),
        ),
        (
            "truncated",
            format!(
                "%%MatrixMarket matrix coordinate real general\n% a comment\n50 50 70\n{}",
                body(50)
            ),
        ),
        (
            "both_triangles",
            format!(
                "%%MatrixMarket matrix coordinate real symmetric\n50 50 60\n{}{}",
                (1..=58)
                    .map(|i| format!("{} {} 1\n", i % 50 + 1, 1))
                    .collect::<String>(),
                "1 2 1\n3 4 1\n"
            ),
        ),
        (
            "row_out_of_range",
            format!(
                "%%MatrixMarket matrix coordinate real general\n50 50 60\n{}51 1 1\n",
                body(59)
            ),
        ),
    ];
    for (name, text) in cases {
        let path = dir.join(format!("{name}.mtx"));
        if comm.rank() == 0 {
            std::fs::write(&path, &text).map_err(|e| e.to_string())?;
        }
        comm.barrier();
        let want = spgemm_core::files::read::<f64>(&path, &Default::default())
            .err()
            .ok_or(format!("{name}: the sequential reader accepts it"))?
            .to_string();
        match DistCsr::<f64>::read(comm, &path, None) {
            Ok(_) => {
                return Err(format!(
                    "{name}: read by {} ranks without error; expected {want}",
                    comm.size()
                ))
            }
            Err(e) if e.to_string() == want => {}
            Err(e) => {
                return Err(format!(
                    "{name}: '{e}', the sequential reader says '{want}'"
                ))
            }
        }
    }
    Ok(())
}

/// `Ok` when `r` failed on this rank with `expected` in its message.
fn expect_error<T>(r: Result<T, Error>, expected: &str) -> Result<(), String> {
    match r {
        Ok(_) => Err(format!("no error; expected one saying '{expected}'")),
        Err(e) if e.to_string().contains(expected) => Ok(()),
        Err(e) => Err(format!("error '{e}'; expected one saying '{expected}'")),
    }
}

fn dimension_mismatch(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let a = spgemm_core::generate::uniform::<f64>(40, 30, 3, 1).unwrap();
    let b = spgemm_core::generate::uniform::<f64>(31, 20, 3, 2).unwrap();
    let da = distribute(comm, &a, &Partition::even(40, p).unwrap())?;
    let db = distribute(comm, &b, &Partition::even(31, p).unwrap())?;
    for algorithm in [Choice::OneD, Choice::TwoD, Choice::Auto] {
        let r = multiply(
            comm,
            &da,
            &db,
            &CpuBackend::new(),
            Options {
                algorithm,
                ..Options::default()
            },
        );
        expect_error(r, "A is 40x30 and B 31x20")?;
    }
    Ok(())
}

fn bad_part_on_one_rank(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let last = p - 1;
    let (offsets, mut cols, values) = (vec![0, 2], vec![0u64, 3], vec![1.0, 2.0]);
    if comm.rank() as usize == last {
        cols[1] = 99; // outside the 10 columns
    }
    let r = DistCsr::from_local(comm, 10, offsets, cols, values);
    expect_error(
        r,
        &format!("rank {last} of {p}: local row 0: column 99 is outside the matrix's 10 columns"),
    )
}

/// A backend that fails on one rank.
struct FailsOn(usize);

impl LocalProduct<f64> for FailsOn {
    fn multiply(&self, a: CsrView<'_, f64>, b: CsrView<'_, f64>) -> Result<CsrMatrix<f64>, String> {
        if a.nrows() > 0 && std::env::var("OMPI_COMM_WORLD_RANK").ok() == Some(self.0.to_string()) {
            return Err("device out of memory (simulated)".into());
        }
        CpuBackend::new().multiply(a, b).map_err(|e| e.to_string())
    }
}

fn local_failure_on_one_rank(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let last = p - 1;
    let a = spgemm_core::generate::uniform::<f64>(60, 60, 4, 3).unwrap();
    let da = distribute(comm, &a, &Partition::even(60, p).unwrap())?;
    let mut runs = vec![
        (Choice::OneD, Fetch::Messages),
        (Choice::OneD, Fetch::Shared),
    ];
    if spgemm_distributed::model::grid_side(p).is_some() {
        runs.push((Choice::TwoD, Fetch::Messages));
    }
    for (algorithm, fetch) in runs {
        let r = multiply(comm, &da, &da, &FailsOn(last), Options { algorithm, fetch });
        expect_error(
            r,
            &format!("rank {last} of {p}: local product: device out of memory (simulated)"),
        )?;
    }
    Ok(())
}
