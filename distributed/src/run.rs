//! Running a distributed product: the algorithm chosen, what it moved and
//! how long its phases took.

use crate::comm::Traffic;
use crate::dist_csr::DistCsr;
use crate::local::LocalProduct;
use crate::model::{grid_side, Algorithm, Grid};
use crate::one_d;
use crate::partition::Partition;
use crate::wire::{rows_bytes, triplets_bytes, COUNT_BYTES, HEADER_BYTES};
use crate::{two_d, Error, Result};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;
use serde::Serialize;
use spgemm_core::Scalar;
use std::time::Instant;

/// Which algorithm to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Choice {
    /// The one whose busiest rank moves the fewest bytes of A and B,
    /// predicted from the structure before any row moves (2D only on a
    /// square number of ranks).
    #[default]
    Auto,
    /// [`Algorithm::OneD`].
    OneD,
    /// [`Algorithm::TwoD`].
    TwoD,
}

impl std::str::FromStr for Choice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "1d" => Ok(Self::OneD),
            "2d" => Ok(Self::TwoD),
            _ => Err(format!("unknown algorithm '{s}' (auto, 1d, 2d)")),
        }
    }
}

/// Where the 1D algorithm reads the rows of B that other ranks hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fetch {
    /// [`Fetch::Shared`] where every rank runs on one node, B has fewer
    /// than 2³² rows and columns, and some rank's rows of A reference at
    /// least [`SHARED_ROWS_FRACTION`] of the rows of B that other ranks
    /// hold (random matrices, where each rank needs nearly all of B);
    /// [`Fetch::Messages`] otherwise (meshes, whose ranks need a halo).
    /// Decided from the structure before any row moves: each rank counts
    /// the rows of B its list of A's columns holds outside its own part,
    /// then one reduction and one split of the communicator by node.
    #[default]
    Auto,
    /// Fetched: each rank asks for the rows its rows of A reference,
    /// receives them in messages and assembles them with its own into B̂.
    Messages,
    /// Read in place: each rank writes its rows of B into shared-memory
    /// windows of the node (MPI-3 `MPI_Win_allocate_shared`), then either
    /// multiplies by the rows of B its rows of A span, where they lie
    /// (where C will not be much larger than those rows: random
    /// matrices), or copies the rows it references into a compact B̂
    /// (meshes, power-law graphs); no row is sent. 1D even under
    /// [`Choice::Auto`]. Every rank must run on one node, and B must have
    /// fewer than 2³² rows and columns. Measured on 16 cores of one host
    /// (4 ranks × 4 threads, one call, 2026-11-30): Erdős–Rényi 2²⁰ × 8
    /// 267–289 against 407–469 ms with messages, R-MAT 16 325–373 against
    /// 311–377, a 27-point stencil 105–112 against 94 (writing all of B
    /// into the windows costs more than its few fetched rows): what
    /// [`Fetch::Auto`] weighs.
    Shared,
}

impl std::str::FromStr for Fetch {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "messages" => Ok(Self::Messages),
            "shared" => Ok(Self::Shared),
            _ => Err(format!("unknown fetch '{s}' (auto, messages, shared)")),
        }
    }
}

/// How to run a distributed product.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// The algorithm.
    pub algorithm: Choice,
    /// Where the 1D algorithm reads other ranks' rows of B (2D SUMMA
    /// always sends its blocks in messages).
    pub fetch: Fetch,
}

/// What one rank did in a distributed product.
#[derive(Clone, Debug, Serialize)]
pub struct RunStats {
    /// The algorithm run.
    pub algorithm: Algorithm,
    /// Bytes of A and B (and the 1D requests) sent and received.
    pub inputs: Traffic,
    /// Bytes of C sent and received (2D: C back to A's row owners).
    pub c: Traffic,
    /// `auto`: the predicted bytes of A and B of the busiest rank, 1D and
    /// 2D (the 2D figure is `u64::MAX` where the ranks are not a square).
    pub predicted: Option<(u64, u64)>,
    /// B's rows were read in place from the node's shared memory
    /// ([`Fetch::Shared`]): no bytes of B moved.
    pub shared_rows: bool,
    /// Milliseconds moving A and B (with shared rows: writing this
    /// rank's rows of B into the shared windows).
    pub fetch_ms: f64,
    /// Milliseconds in local products.
    pub local_ms: f64,
    /// Milliseconds assembling B's rows (1D), adding partial products and
    /// returning C (2D).
    pub merge_ms: f64,
    /// Milliseconds in all.
    pub total_ms: f64,
}

impl RunStats {
    pub(crate) fn new(algorithm: Algorithm) -> Self {
        Self {
            algorithm,
            inputs: Traffic::default(),
            c: Traffic::default(),
            predicted: None,
            shared_rows: false,
            fetch_ms: 0.0,
            local_ms: 0.0,
            merge_ms: 0.0,
            total_ms: 0.0,
        }
    }
}

/// Milliseconds since `t`.
pub(crate) fn elapsed_ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The same error on every rank unless A's columns are B's rows and both
/// are split over this communicator's ranks.
pub(crate) fn check_shapes<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
) -> Result<()> {
    let shape = |m: &DistCsr<T>| (m.nrows(), m.ncols(), m.row_partition().parts());
    check_dims(comm, shape(a), shape(b))
}

/// [`check_shapes`] for `(rows, columns, parts of the row partition)` of
/// A and B.
pub(crate) fn check_dims(
    comm: &SimpleCommunicator,
    a: (u64, u64, usize),
    b: (u64, u64, usize),
) -> Result<()> {
    let p = comm.size() as usize;
    if a.1 != b.0 {
        return Err(Error::Argument(format!(
            "A is {}x{} and B {}x{}: A's columns must be B's rows",
            a.0, a.1, b.0, b.1
        )));
    }
    for (name, parts) in [("A", a.2), ("B", b.2)] {
        if parts != p {
            return Err(Error::Argument(format!(
                "{name} is split over {parts} ranks; the communicator has {p}"
            )));
        }
    }
    Ok(())
}

/// `C = A·B` over the ranks of `comm`, each rank's products by `backend`;
/// C has A's row partition. Collective.
///
/// # Errors
/// On every rank, the same ([`Error::Rank`] naming the first rank at
/// fault where one rank failed): shapes, a 2D run on a number of ranks
/// that is not a square, a local product's failure.
pub fn multiply<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    backend: &dyn LocalProduct<T>,
    options: Options,
) -> Result<(DistCsr<T>, RunStats)> {
    if options.algorithm != Choice::TwoD {
        match options.fetch {
            Fetch::Shared => return one_d::multiply_shared(comm, a, b, backend),
            Fetch::Messages => {}
            Fetch::Auto => {
                let start = Instant::now();
                check_shapes(comm, a, b)?;
                if shared_rows_pay(comm, a, b) {
                    return one_d::shared_product(comm, a, b, backend, start);
                }
            }
        }
    }
    match options.algorithm {
        Choice::OneD => one_d::multiply(comm, a, b, backend),
        Choice::TwoD => two_d::multiply(comm, a, b, backend),
        Choice::Auto => {
            let start = Instant::now();
            check_shapes(comm, a, b)?;
            let p = comm.size() as usize;
            let mut stats = RunStats::new(Algorithm::OneD);
            let replies = one_d::ask(comm, a, b, &mut stats)?;
            if p == 1 || grid_side(p).is_none() {
                return one_d::finish(comm, a, b, backend, replies, stats, start);
            }
            // This rank's 1D bytes: the requests moved, the replies it
            // sends and (told by their senders) receives.
            let sizes: Vec<u64> = replies.iter().map(|m| m.len() as u64 * 8).collect();
            let mut incoming = vec![0u64; p];
            comm.all_to_all_into(&sizes[..], &mut incoming[..]);
            let counts = COUNT_BYTES * (p as u64 - 1);
            let one = stats.inputs.sent
                + stats.inputs.received
                + 2 * counts
                + sizes.iter().sum::<u64>()
                + incoming.iter().sum::<u64>();
            let two = two_d_input_bytes(comm, a, b)?;
            let (mut one_max, mut two_max) = (0u64, 0u64);
            comm.all_reduce_into(&one, &mut one_max, SystemOperation::max());
            comm.all_reduce_into(&two, &mut two_max, SystemOperation::max());
            if two_max < one_max {
                let (c, mut s) = two_d::multiply(comm, a, b, backend)?;
                s.predicted = Some((one_max, two_max));
                s.total_ms = crate::run::elapsed_ms(start);
                Ok((c, s))
            } else {
                stats.predicted = Some((one_max, two_max));
                one_d::finish(comm, a, b, backend, replies, stats, start)
            }
        }
    }
}

/// The share of the rows of B other ranks hold that a rank's rows of A
/// must reference, on some rank, for [`Fetch::Auto`] to read B in place:
/// on 16 cores of one host (4 ranks) Erdős–Rényi 2²⁰ × 8 (each rank about
/// 86%) ran 1.4–1.7× faster in place, R-MAT 16 alike both ways, and a
/// 27-point stencil (a halo of about 1%) 12–19% slower in place.
pub const SHARED_ROWS_FRACTION: f64 = 0.5;

/// Whether [`Fetch::Auto`] reads B's rows in place ([`Fetch::Auto`]'s
/// rule); the same answer on every rank. Collective; A's columns are B's
/// rows, both split over `comm`'s ranks.
fn shared_rows_pay<T: Scalar>(comm: &SimpleCommunicator, a: &DistCsr<T>, b: &DistCsr<T>) -> bool {
    let (p, r) = (comm.size() as usize, comm.rank() as usize);
    let own = b.row_partition().range(r);
    let need = a.col_map();
    let held = need.partition_point(|&c| c < own.end) - need.partition_point(|&c| c < own.start);
    let others = b.nrows() - (own.end - own.start);
    let share = if others == 0 {
        0.0
    } else {
        (need.len() - held) as f64 / others as f64
    };
    let mut busiest = 0.0f64;
    comm.all_reduce_into(&share, &mut busiest, SystemOperation::max());
    let one_node = crate::shared_rows::on_one_node(comm);
    let narrow = b.nrows() <= u64::from(u32::MAX) && b.ncols() <= u64::from(u32::MAX);
    p > 1 && one_node && narrow && busiest >= SHARED_ROWS_FRACTION
}

/// The bytes of A and B this rank would send and receive in 2D SUMMA
/// ([`crate::model::Model::two_d`]'s rule from the distributed structure:
/// an all-to-all of entry counts and a sum of block sizes). Collective;
/// `ranks` is a square.
fn two_d_input_bytes<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
) -> Result<u64> {
    let (p, r) = (comm.size() as usize, comm.rank() as usize);
    let vb = std::mem::size_of::<T>() as u64;
    let (m, k, n) = (a.nrows(), b.nrows(), b.ncols());
    let Grid {
        q,
        rows: gm,
        inner: gk,
        cols: gn,
    } = Grid::new(p, m, k, n)?;
    // Entries per block of the grid, on all the rank's cores: the grid
    // column of each local column found once (a search per column, not
    // per entry), then rows counted in parallel (a sequential count per
    // entry took 70–90 ms of a 520 ms product on four ranks).
    let count = |x: &DistCsr<T>, gr: &Partition, gc: &Partition| {
        let first = x.global_rows().start;
        let local = x.local();
        let block_col: Vec<u32> = x
            .col_map()
            .par_iter()
            .map(|&g| gc.owner(g) as u32)
            .collect();
        (0..local.nrows())
            .into_par_iter()
            .with_min_len(1 << 12)
            .fold(
                || vec![0u64; p],
                |mut c, i| {
                    let row = gr.owner(first + i as u64) * q;
                    for &col in local.row(i).0 {
                        c[row + block_col[col as usize] as usize] += 1;
                    }
                    c
                },
            )
            .reduce(
                || vec![0u64; p],
                |mut x, y| {
                    x.iter_mut().zip(y).for_each(|(s, t)| *s += t);
                    x
                },
            )
    };
    let (to_a, to_b) = (count(a, &gm, &gk), count(b, &gk, &gn));
    let (mut from_a, mut from_b) = (vec![0u64; p], vec![0u64; p]);
    comm.all_to_all_into(&to_a[..], &mut from_a[..]);
    comm.all_to_all_into(&to_b[..], &mut from_b[..]);
    let mut bytes = 4 * COUNT_BYTES * (p as u64 - 1);
    for x in (0..p).filter(|&x| x != r) {
        bytes += triplets_bytes(to_a[x], m, k, vb) + triplets_bytes(from_a[x], m, k, vb);
        bytes += triplets_bytes(to_b[x], k, n, vb) + triplets_bytes(from_b[x], k, n, vb);
    }
    let (mut a_blocks, mut b_blocks) = (vec![0u64; p], vec![0u64; p]);
    comm.all_reduce_into(&to_a[..], &mut a_blocks[..], SystemOperation::sum());
    comm.all_reduce_into(&to_b[..], &mut b_blocks[..], SystemOperation::sum());
    let (i, j) = (r / q, r % q);
    let a_msg =
        |s: usize| HEADER_BYTES + rows_bytes(gm.size(i), a_blocks[i * q + s], gk.size(s), vb);
    let b_msg =
        |s: usize| HEADER_BYTES + rows_bytes(gk.size(s), b_blocks[s * q + j], gn.size(j), vb);
    for s in 0..q {
        bytes += if s == j {
            (q as u64 - 1) * a_msg(s)
        } else {
            a_msg(s)
        };
        bytes += if s == i {
            (q as u64 - 1) * b_msg(s)
        } else {
            b_msg(s)
        };
    }
    Ok(bytes)
}
