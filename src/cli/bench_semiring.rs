//! `spgemm bench --semiring NAME [--mask-self [--complement]]` and
//! `spgemm bench --triangles`: GraphBLAS-style products timed on the
//! chosen backend, SciPy-free, host to host (transfers included on a GPU),
//! optionally beside SuiteSparse:GraphBLAS's `mxm` on the same matrices in
//! the same run (`--compare graphblas`, through python-graphblas).

use super::bench::{median, time, BenchArgs, Compare};
use super::source::Operands;
use super::{python, CliError};
use clap::Args;
use serde::Serialize;
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{Backend, CsrMatrix, Scalar, Transposed};
use std::path::Path;

/// Which GraphBLAS-style product `spgemm bench` times instead of `A·B`.
#[derive(Args, Debug, Default)]
pub struct SemiringArgs {
    /// Time `C = A ⊕.⊗ B` with this semiring (a GraphBLAS name: plus_times,
    /// min_plus, max_plus, max_times, lor_land, plus_pair, any_pair)
    /// instead of the plain product.
    #[arg(long, value_parser = str::parse::<Semiring>)]
    semiring: Option<Semiring>,
    /// Mask the product by A's own structure: `C⟨A⟩` (A and C of one
    /// shape); plus_times unless --semiring names another.
    #[arg(long)]
    mask_self: bool,
    /// With --mask-self: its complement, `C⟨¬A⟩`.
    #[arg(long, requires = "mask_self")]
    complement: bool,
    /// Count each graph's triangles instead: A's structure made symmetric,
    /// L its strictly lower triangle, `C⟨L⟩ = L plus_pair Lᵀ` summed (the
    /// Sandia method; Lᵀ read from L's rows, as GraphBLAS reads it; timed
    /// as the product reduced to one value, on a GPU without forming C).
    #[arg(long, conflicts_with_all = ["semiring", "mask_self"])]
    triangles: bool,
    /// Search each graph breadth-first from vertex 0 instead (the whole
    /// search: every level `f'⟨¬v⟩ = f any_pair A`, on a GPU in one call
    /// with A uploaded once); GraphBLAS runs a loop of masked `vxm`.
    #[arg(long, conflicts_with_all = ["semiring", "mask_self", "triangles"])]
    pub bfs: bool,
}

impl SemiringArgs {
    /// Whether any of these options asks for a GraphBLAS-style product.
    pub fn any(&self) -> bool {
        self.semiring.is_some() || self.mask_self || self.triangles || self.bfs
    }

    /// The product's name in the table and the JSON.
    fn product(&self) -> String {
        if self.triangles {
            return "triangles: sum of C<L> = L plus_pair L'".into();
        }
        let ring = self.semiring.unwrap_or_default();
        match (self.mask_self, self.complement) {
            (false, _) => format!("A {ring} B"),
            (true, false) => format!("C<A> = A {ring} B"),
            (true, true) => format!("C<!A> = A {ring} B"),
        }
    }

    /// The mode the GraphBLAS script takes.
    fn mode(&self) -> &'static str {
        match (self.triangles, self.mask_self, self.complement) {
            (true, ..) => "triangles",
            (_, true, false) => "mask",
            (_, true, true) => "complement",
            _ => "plain",
        }
    }
}

/// One line of results; the JSON output is an array of these.
#[derive(Serialize, Debug)]
struct Record {
    matrix: String,
    product: String,
    backend: String,
    precision: &'static str,
    rows: usize,
    nnz: usize,
    /// Entries of C.
    nnz_c: usize,
    /// The triangle count (--triangles).
    triangles: Option<f64>,
    reps: usize,
    median_ms: f64,
    /// SuiteSparse:GraphBLAS on the same product (--compare graphblas).
    graphblas: Option<Peer>,
    check: Option<String>,
}

#[derive(Serialize, Debug)]
pub(super) struct Peer {
    library: String,
    median_ms: f64,
    /// Their time over ours.
    speedup: f64,
}

impl Peer {
    /// The peer's `ms` beside ours, `median_ms`.
    pub(super) fn beside(library: String, ms: f64, median_ms: f64) -> Self {
        Peer {
            library,
            median_ms: ms,
            speedup: ms / median_ms,
        }
    }

    /// The table's two columns for `peer`: its milliseconds and speedup
    /// (empty without one).
    pub(super) fn columns(peer: Option<&Peer>) -> (String, String) {
        peer.map_or((String::new(), String::new()), |p| {
            (format!("{:.2}", p.median_ms), format!("{:.2}", p.speedup))
        })
    }
}

/// Runs the GraphBLAS-style product `args.semiring` asks for on every
/// file, prints a line each and writes `--json`.
///
/// # Errors
/// Reading the files; a product the backend refuses (a complemented mask
/// on a GPU), a mask of another shape than C; `--compare` other than
/// graphblas; the comparison's or the check's failure.
pub fn run<T: Scalar>(
    backend: &Backend,
    files: &[Operands],
    args: &BenchArgs,
) -> Result<(), CliError> {
    let s = &args.semiring;
    if !matches!(args.compare, None | Some(Compare::Graphblas)) {
        return Err(CliError::Compare(
            "--semiring, --mask-self, --triangles and --bfs compare with --compare graphblas"
                .into(),
        ));
    }
    if s.bfs {
        return super::bench_search::run::<T>(backend, files, args);
    }
    println!(
        "{:24} {:>10} {:>12} {:>12} {:>14} {:>8}",
        "matrix", "ms", "nnz(C)", "triangles", "GraphBLAS ms", "x"
    );
    let mut records = Vec::new();
    for ops in files {
        let (a, b, _) = ops.load::<T>(args.common.seed)?;
        // Triangles: A becomes L, and the product reads Lᵀ from L's rows
        // (GraphBLAS is handed L and its transposing descriptor alike).
        let a = if s.triangles { strictly_lower(&a)? } else { a };
        let upper = if s.triangles && args.check {
            Some(a.transpose()?)
        } else {
            None
        };
        let b = upper.as_ref().or(b.as_ref()).unwrap_or(&a);
        let ring = if s.triangles {
            Semiring::PlusPair
        } else {
            s.semiring.unwrap_or_default()
        };
        let mut spec = ProductSpec::new().semiring(ring);
        if s.triangles || s.mask_self {
            spec = spec.mask(a.view(), s.complement);
        }
        // Triangles are counted by the product reduced to one value (on a
        // GPU, C never formed); C itself is formed once, untimed, for its
        // size and the check.
        let (median_ms, c, triangles) = if s.triangles {
            let bt = Some(Transposed::B);
            let (ms, count) = time(args.warmup, args.reps, || {
                Ok(backend.reduce_spec(&a, &a, &spec, bt)?)
            })?;
            let c = backend.multiply_spec_transposed(&a, &a, &spec, Transposed::B)?;
            (ms, c, Some(count.to_f64()))
        } else {
            let (ms, c) = time(args.warmup, args.reps, || {
                Ok(backend.multiply_spec(&a, b, &spec)?)
            })?;
            (ms, c, None)
        };
        let check = if args.check {
            if let Some(count) = triangles.filter(|&t| t != total(&c)) {
                return Err(CliError::Reduced {
                    matrix: ops.name(),
                    got: count,
                    expected: total(&c),
                });
            }
            // Within rounding, by |A| ⊕.⊗ |B| under the same mask (sums of
            // plus_times may run in another order on a GPU).
            let want = spgemm::reference::multiply_spec(a.view(), b.view(), &spec)?;
            let (abs_a, abs_b) = (a.map(|v| v.abs()), b.map(|v| v.abs()));
            let scale = spgemm::reference::multiply_spec(abs_a.view(), abs_b.view(), &spec)?;
            spgemm::verify::compare(&want, &scale, &c, a.max_row_nnz()).map_err(|mismatch| {
                CliError::Check {
                    matrix: ops.name(),
                    mismatch,
                }
            })?;
            Some("ok".to_string())
        } else {
            None
        };
        let ours = (triangles.unwrap_or(c.nnz() as f64), median_ms);
        let pair = (&a, if s.triangles { &a } else { b });
        let graphblas = match args.compare {
            Some(_) => Some(graphblas(pair, ring, s.mode(), args, &ops.name(), ours)?),
            None => None,
        };
        let r = Record {
            matrix: ops.name(),
            product: s.product(),
            backend: backend.name().to_string(),
            precision: T::NAME,
            rows: a.nrows(),
            nnz: a.nnz(),
            nnz_c: c.nnz(),
            triangles,
            reps: args.reps,
            median_ms,
            graphblas,
            check,
        };
        let (gms, x) = Peer::columns(r.graphblas.as_ref());
        println!(
            "{:24} {:>10.2} {:>12} {:>12} {gms:>14} {x:>8}",
            r.matrix,
            r.median_ms,
            r.nnz_c,
            r.triangles.map_or(String::new(), |t| format!("{t}")),
        );
        records.push(r);
    }
    summary(records.iter().filter_map(|r| r.graphblas.as_ref()));
    super::bench::write_json(args, &records)
}

/// Prints the geomean and median of the peers' speedups, when there are
/// any.
pub(super) fn summary<'p>(peers: impl Iterator<Item = &'p Peer>) {
    let peers: Vec<&Peer> = peers.collect();
    if let Some(first) = peers.first() {
        let x: Vec<f64> = peers.iter().map(|p| p.speedup.ln()).collect();
        println!(
            "{}: geomean {:.2}x, median {:.2}x over {} products",
            first.library,
            (x.iter().sum::<f64>() / x.len() as f64).exp(),
            median(x.iter().map(|v| v.exp()).collect()),
            x.len()
        );
    }
}

/// The sum of C's values (a triangle count).
fn total<T: Scalar>(c: &CsrMatrix<T>) -> f64 {
    c.values().iter().map(|v| v.to_f64()).sum()
}

/// The entries (i, j) with j < i of `a`'s structure made symmetric, values
/// 1: each edge of the undirected graph once.
fn strictly_lower<T: Scalar>(a: &CsrMatrix<T>) -> spgemm::Result<CsrMatrix<T>> {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..a.nrows() {
        for &j in a.row(i).0 {
            let j = j as usize;
            if j != i {
                rows.push(i.max(j));
                cols.push(i.min(j) as u32);
            }
        }
    }
    let ones = vec![T::ONE; rows.len()];
    let n = a.nrows().max(a.ncols());
    let mut l = CsrMatrix::from_triplets(n, n, &rows, &cols, &ones)?;
    // An edge stored both ways (or repeated) is one edge.
    l.values_mut().iter_mut().for_each(|v| *v = T::ONE);
    Ok(l)
}

/// SuiteSparse:GraphBLAS's time for the same product (A and B written to
/// temporary `.npz` files for it) beside ours (`median_ms`), its result —
/// nnz(C), the triangle count or a search's Σ (level + 1), `mode` as
/// [`python::semiring`] takes it — checked against `ours`.
///
/// # Errors
/// [`CliError::Compare`] naming `name` when the results differ; the
/// script's and the files' errors.
pub(super) fn graphblas<T: Scalar>(
    (a, b): (&CsrMatrix<T>, &CsrMatrix<T>),
    ring: Semiring,
    mode: &str,
    args: &BenchArgs,
    name: &str,
    (ours, median_ms): (f64, f64),
) -> Result<Peer, CliError> {
    let (ms, library, result) = graphblas_run(a, b, ring, mode, args)?;
    if result != ours {
        return Err(CliError::Compare(format!(
            "{name}: GraphBLAS's result {result} differs from ours {ours}"
        )));
    }
    Ok(Peer::beside(library, ms, median_ms))
}

/// [`graphblas`]'s run: median milliseconds, the library's name and its
/// result.
fn graphblas_run<T: Scalar>(
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    ring: Semiring,
    mode: &str,
    args: &BenchArgs,
) -> Result<(f64, String, f64), CliError> {
    let dir = std::env::temp_dir();
    let path = |k: &str| dir.join(format!("spgemm-semiring-{}-{k}.npz", std::process::id()));
    let (pa, pb) = (path("a"), path("b"));
    let written = write(&pa, a).and_then(|()| {
        if std::ptr::eq(a, b) {
            Ok(None)
        } else {
            write(&pb, b).map(|()| Some(pb.clone()))
        }
    });
    let r = written.and_then(|pb| {
        python::semiring(
            &pa,
            pb.as_deref(),
            args.reps,
            args.warmup,
            T::NAME,
            ring.name(),
            mode,
        )
    });
    for p in [&pa, &pb] {
        let _ = std::fs::remove_file(p);
    }
    r
}

fn write<T: Scalar>(path: &Path, m: &CsrMatrix<T>) -> Result<(), CliError> {
    Ok(spgemm::files::write(path, m, None)?)
}
