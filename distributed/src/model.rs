//! What each rank would send, receive, hold and compute in a distributed
//! `C = A·B`, from the structure of A and B alone, for any number of
//! ranks — thousands included — on one machine.
//!
//! The algorithms ([`crate::one_d`], [`crate::two_d`]) size their messages
//! with the same functions ([`crate::wire`]), so a prediction and a run's
//! counted bytes agree to the byte. Bytes are payload addressed to other
//! ranks, counts and headers included: a broadcast to `q − 1` ranks counts
//! as `q − 1` sends by its root, however the MPI library forwards it.

use crate::partition::Partition;
use crate::wire::{indices_bytes, rows_bytes, triplets_bytes, COUNT_BYTES, HEADER_BYTES};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;
use spgemm_core::structure::Structure;

/// A distributed algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// 1D rows: each rank fetches the rows of B its rows of A reference
    /// (row-wise distributed SpGEMM as in PETSc's MPIAIJ product; Ballard,
    /// Buluç, Demmel et al., "Communication optimal parallel
    /// multiplication of sparse random matrices", 2013, §3, 1D algorithms).
    #[serde(rename = "1d")]
    OneD,
    /// 2D sparse SUMMA on a `q × q` grid of ranks (Buluç and Gilbert,
    /// "Parallel sparse matrix-matrix multiplication and indexing:
    /// implementation and experiments", SIAM J. Sci. Comput. 2012, §3).
    #[serde(rename = "2d")]
    TwoD,
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Algorithm::OneD => "1d",
            Algorithm::TwoD => "2d",
        })
    }
}

/// One rank's share of a distributed product.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RankCost {
    /// Bytes of A's and B's data sent to other ranks.
    pub sent_inputs: u64,
    /// Bytes of A's and B's data received from other ranks.
    pub received_inputs: u64,
    /// Bytes of C sent to other ranks (2D: C returned to A's row owners).
    pub sent_c: u64,
    /// Bytes of C received from other ranks.
    pub received_c: u64,
    /// Bytes of A held (CSR: row offsets of 8 bytes, 4-byte columns,
    /// values): 1D the rank's rows, 2D its block plus the largest block
    /// received.
    pub memory_a: u64,
    /// Bytes of B held: 1D the rows its A references, 2D as A.
    pub memory_b: u64,
    /// Bytes of the rank's part of C.
    pub memory_c: u64,
    /// Products (multiply-adds) the rank computes.
    pub nprod: u64,
}

impl RankCost {
    /// All bytes sent.
    pub fn sent(&self) -> u64 {
        self.sent_inputs + self.sent_c
    }

    /// All bytes received.
    pub fn received(&self) -> u64 {
        self.received_inputs + self.received_c
    }
}

/// The predicted cost of one algorithm at one number of ranks.
#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Ranks.
    pub ranks: usize,
    /// 2D: the grid's side `q` (`ranks = q²`).
    pub grid: Option<usize>,
    /// Per rank, in rank order.
    pub per_rank: Vec<RankCost>,
}

/// Maximum and mean of a per-rank quantity.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Spread {
    /// Largest over the ranks.
    pub max: u64,
    /// Mean over the ranks.
    pub mean: f64,
}

impl Spread {
    fn of(v: impl Iterator<Item = u64> + Clone) -> Self {
        let n = v.clone().count().max(1) as f64;
        Spread {
            max: v.clone().max().unwrap_or(0),
            mean: v.map(|x| x as f64).sum::<f64>() / n,
        }
    }

    /// `max / mean` (1 is perfect balance; 1 when all are 0).
    pub fn imbalance(&self) -> f64 {
        if self.mean > 0.0 {
            self.max as f64 / self.mean
        } else {
            1.0
        }
    }
}

impl Prediction {
    /// Spread of the bytes each rank sends.
    pub fn sent(&self) -> Spread {
        Spread::of(self.per_rank.iter().map(RankCost::sent))
    }

    /// Spread of the bytes each rank receives.
    pub fn received(&self) -> Spread {
        Spread::of(self.per_rank.iter().map(RankCost::received))
    }

    /// Spread of the bytes of A's and B's data each rank sends and
    /// receives: what [`Model::choose`] compares.
    pub fn input_traffic(&self) -> Spread {
        Spread::of(
            self.per_rank
                .iter()
                .map(|r| r.sent_inputs + r.received_inputs),
        )
    }

    /// Spread of each rank's memory (A, B and C).
    pub fn memory(&self) -> Spread {
        Spread::of(
            self.per_rank
                .iter()
                .map(|r| r.memory_a + r.memory_b + r.memory_c),
        )
    }

    /// Spread of each rank's products.
    pub fn nprod(&self) -> Spread {
        Spread::of(self.per_rank.iter().map(|r| r.nprod))
    }
}

/// Bytes of a CSR part with `rows` rows and `nnz` entries.
pub fn csr_bytes(rows: u64, nnz: u64, value_bytes: u64) -> u64 {
    (rows + 1) * 8 + nnz * (4 + value_bytes)
}

/// The side `q` of a square grid of `ranks`, if `ranks` is a square.
pub fn grid_side(ranks: usize) -> Option<usize> {
    let q = (ranks as f64).sqrt().round() as usize;
    (q * q == ranks).then_some(q)
}

/// The `q × q` grid of 2D SUMMA over a square number of ranks for
/// `C = A·B` (A `m × k`, B `k × n`): rank `i·q + j` holds block `(i, j)`
/// of each, A's rows, the shared dimension and B's columns each split
/// evenly into `q` parts (Buluç and Gilbert 2012, §3).
pub struct Grid {
    /// Ranks per side.
    pub q: usize,
    /// A's (and C's) rows.
    pub rows: Partition,
    /// A's columns, B's rows.
    pub inner: Partition,
    /// B's (and C's) columns.
    pub cols: Partition,
}

impl Grid {
    /// The grid of `ranks` ranks for A `m × k` and B `k × n`.
    ///
    /// # Errors
    /// [`Error::Argument`] when `ranks` is not a square.
    pub fn new(ranks: usize, m: u64, k: u64, n: u64) -> Result<Self> {
        let q = grid_side(ranks).ok_or_else(|| Error::not_square(ranks))?;
        Ok(Self {
            q,
            rows: Partition::even(m, q)?,
            inner: Partition::even(k, q)?,
            cols: Partition::even(n, q)?,
        })
    }
}

/// The structure of `C = A·B` and what the predictions need of A and B.
pub struct Model<'a> {
    a: Structure<'a>,
    b: Structure<'a>,
    value_bytes: u64,
    c_offsets: Vec<usize>,
    c_cols: Vec<u32>,
    row_nprod: Vec<u64>,
}

impl<'a> Model<'a> {
    /// Computes C's structure (one symbolic pass, `nprod` work, `4·nnz(C)`
    /// bytes) for predictions of `A·B` with values of `value_bytes` bytes.
    ///
    /// # Errors
    /// [`Error::Core`] with a dimension mismatch when `A.ncols != B.nrows`.
    pub fn new(a: Structure<'a>, b: Structure<'a>, value_bytes: u64) -> Result<Self> {
        if a.ncols != b.nrows {
            return Err(Error::Core(spgemm_core::Error::DimensionMismatch {
                a_rows: a.nrows,
                a_cols: a.ncols,
                b_rows: b.nrows,
                b_cols: b.ncols,
            }));
        }
        let b_row =
            |k: u32| &b.col_indices[b.row_offsets[k as usize]..b.row_offsets[k as usize + 1]];
        let a_row = |i: usize| &a.col_indices[a.row_offsets[i]..a.row_offsets[i + 1]];
        let row_nprod: Vec<u64> = (0..a.nrows)
            .into_par_iter()
            .map(|i| a_row(i).iter().map(|&k| b_row(k).len() as u64).sum())
            .collect();
        let rows: Vec<Vec<u32>> = (0..a.nrows)
            .into_par_iter()
            .map_init(
                || vec![u32::MAX; b.ncols],
                |mark, i| {
                    let mut cols = Vec::new();
                    for &k in a_row(i) {
                        for &j in b_row(k) {
                            if mark[j as usize] != i as u32 {
                                mark[j as usize] = i as u32;
                                cols.push(j);
                            }
                        }
                    }
                    cols.sort_unstable();
                    cols
                },
            )
            .collect();
        let mut c_offsets = Vec::with_capacity(a.nrows + 1);
        c_offsets.push(0);
        for r in &rows {
            c_offsets.push(c_offsets.last().unwrap() + r.len());
        }
        let c_cols = rows.concat();
        Ok(Self {
            a,
            b,
            value_bytes,
            c_offsets,
            c_cols,
            row_nprod,
        })
    }

    /// Entries of C.
    pub fn nnz_c(&self) -> u64 {
        self.c_cols.len() as u64
    }

    /// Products of C.
    pub fn nprod(&self) -> u64 {
        self.row_nprod.iter().sum()
    }

    fn a_row(&self, i: usize) -> &[u32] {
        &self.a.col_indices[self.a.row_offsets[i]..self.a.row_offsets[i + 1]]
    }

    fn b_row_nnz(&self, k: usize) -> u64 {
        (self.b.row_offsets[k + 1] - self.b.row_offsets[k]) as u64
    }

    fn check(&self, a_rows: &Partition, b_rows: &Partition) -> Result<()> {
        if a_rows.len() != self.a.nrows as u64 || b_rows.len() != self.b.nrows as u64 {
            return Err(Error::Argument(format!(
                "the partitions cover {} and {} rows; A has {} and B {}",
                a_rows.len(),
                b_rows.len(),
                self.a.nrows,
                self.b.nrows
            )));
        }
        if a_rows.parts() != b_rows.parts() {
            return Err(Error::Argument(format!(
                "A is split over {} ranks and B over {}",
                a_rows.parts(),
                b_rows.parts()
            )));
        }
        Ok(())
    }

    /// The 1D algorithm with A's rows split by `a_rows` and B's by
    /// `b_rows` (as many parts as ranks).
    ///
    /// # Errors
    /// [`Error::Argument`] when the partitions do not fit A and B.
    pub fn one_d(&self, a_rows: &Partition, b_rows: &Partition) -> Result<Prediction> {
        self.check(a_rows, b_rows)?;
        let p = a_rows.parts();
        let (k, n, vb) = (self.b.nrows as u64, self.b.ncols as u64, self.value_bytes);
        // For each rank: the rows of B it needs from each other rank.
        let needs: Vec<Vec<(u64, u64)>> = (0..p)
            .into_par_iter()
            .map(|r| {
                let range = a_rows.range(r);
                let mut cols: Vec<u32> = (range.start as usize..range.end as usize)
                    .flat_map(|i| self.a_row(i).iter().copied())
                    .collect();
                cols.sort_unstable();
                cols.dedup();
                // (rows, entries) asked of each owner.
                let mut asked = vec![(0u64, 0u64); p];
                for &c in &cols {
                    let e = &mut asked[b_rows.owner(u64::from(c))];
                    e.0 += 1;
                    e.1 += self.b_row_nnz(c as usize);
                }
                asked
            })
            .collect();
        // Counts before the requests and before the replies.
        let counts = 2 * COUNT_BYTES * (p as u64 - 1);
        let mut per_rank: Vec<RankCost> = (0..p)
            .map(|r| {
                let range = a_rows.range(r);
                let (lo, hi) = (range.start as usize, range.end as usize);
                let nnz_a = (self.a.row_offsets[hi] - self.a.row_offsets[lo]) as u64;
                let nnz_c = (self.c_offsets[hi] - self.c_offsets[lo]) as u64;
                let (rows_b, nnz_b) = needs[r]
                    .iter()
                    .fold((0, 0), |(x, y), &(rows, nnz)| (x + rows, y + nnz));
                RankCost {
                    sent_inputs: counts,
                    received_inputs: counts,
                    memory_a: csr_bytes(range.end - range.start, nnz_a, vb),
                    memory_b: csr_bytes(rows_b, nnz_b, vb),
                    memory_c: csr_bytes(range.end - range.start, nnz_c, vb),
                    nprod: self.row_nprod[lo..hi].iter().sum(),
                    ..RankCost::default()
                }
            })
            .collect();
        for (r, asked) in needs.iter().enumerate() {
            for (q, &(rows, nnz)) in asked.iter().enumerate() {
                if q == r {
                    continue;
                }
                let request = indices_bytes(rows, k);
                let reply = rows_bytes(rows, nnz, n, vb);
                per_rank[r].sent_inputs += request;
                per_rank[q].received_inputs += request;
                per_rank[q].sent_inputs += reply;
                per_rank[r].received_inputs += reply;
            }
        }
        Ok(Prediction {
            algorithm: Algorithm::OneD,
            ranks: p,
            grid: None,
            per_rank,
        })
    }

    /// 2D SUMMA on a `q × q` grid (`q²` parts in the partitions): A and B
    /// moved from their row owners into blocks (rows, inner dimension and
    /// columns each split evenly in `q`), `q` stages of broadcasts along
    /// grid rows (A) and columns (B), and C moved back to A's row owners.
    ///
    /// # Errors
    /// [`Error::Argument`] when the number of parts is not a square or
    /// the partitions do not fit A and B.
    pub fn two_d(&self, a_rows: &Partition, b_rows: &Partition) -> Result<Prediction> {
        self.check(a_rows, b_rows)?;
        let p = a_rows.parts();
        let (m, k, n, vb) = (
            self.a.nrows as u64,
            self.b.nrows as u64,
            self.b.ncols as u64,
            self.value_bytes,
        );
        let Grid {
            q,
            rows: gm,
            inner: gk,
            cols: gn,
        } = Grid::new(p, m, k, n)?;
        // Counts before each exchange: A's and B's entries to their
        // blocks, C's back to its rows' owners.
        let counts = COUNT_BYTES * (p as u64 - 1);
        let mut per_rank = vec![
            RankCost {
                sent_inputs: 2 * counts,
                received_inputs: 2 * counts,
                sent_c: counts,
                received_c: counts,
                ..RankCost::default()
            };
            p
        ];
        // A and B to their blocks: entries per (row owner, block).
        let moves = |s: Structure<'_>, rows: &Partition, gr: &Partition, gc: &Partition| {
            let mut counts = vec![vec![0u64; p]; p];
            for (owner, c) in counts.iter_mut().enumerate() {
                for i in rows.range(owner) {
                    let bi = gr.owner(i);
                    let (lo, hi) = (s.row_offsets[i as usize], s.row_offsets[i as usize + 1]);
                    for &col in &s.col_indices[lo..hi] {
                        c[bi * q + gc.owner(u64::from(col))] += 1;
                    }
                }
            }
            counts
        };
        let a_moves = moves(self.a, a_rows, &gm, &gk);
        let b_moves = moves(self.b, b_rows, &gk, &gn);
        let mut a_block = vec![0u64; p];
        let mut b_block = vec![0u64; p];
        for from in 0..p {
            for to in 0..p {
                a_block[to] += a_moves[from][to];
                b_block[to] += b_moves[from][to];
                if from != to {
                    let bytes = triplets_bytes(a_moves[from][to], m, k, vb)
                        + triplets_bytes(b_moves[from][to], k, n, vb);
                    per_rank[from].sent_inputs += bytes;
                    per_rank[to].received_inputs += bytes;
                }
            }
        }
        // The stages' broadcasts.
        for i in 0..q {
            for j in 0..q {
                let r = i * q + j;
                let mut largest = (0, 0);
                for s in 0..q {
                    if s == j {
                        continue;
                    }
                    let bytes =
                        HEADER_BYTES + rows_bytes(gm.size(i), a_block[i * q + s], gk.size(s), vb);
                    per_rank[r].received_inputs += bytes;
                    per_rank[i * q + s].sent_inputs += bytes;
                    largest.0 = largest.0.max(csr_bytes(gm.size(i), a_block[i * q + s], vb));
                }
                for s in 0..q {
                    if s == i {
                        continue;
                    }
                    let bytes =
                        HEADER_BYTES + rows_bytes(gk.size(s), b_block[s * q + j], gn.size(j), vb);
                    per_rank[r].received_inputs += bytes;
                    per_rank[s * q + j].sent_inputs += bytes;
                    largest.1 = largest.1.max(csr_bytes(gk.size(s), b_block[s * q + j], vb));
                }
                per_rank[r].memory_a = csr_bytes(gm.size(i), a_block[r], vb) + largest.0;
                per_rank[r].memory_b = csr_bytes(gk.size(i), b_block[r], vb) + largest.1;
            }
        }
        // Products: A(i, s)·B(s, j) summed over s, from B's row counts by
        // column block.
        let b_by_block: Vec<Vec<u64>> = (0..self.b.nrows)
            .into_par_iter()
            .map(|row| {
                let mut c = vec![0u64; q];
                let (lo, hi) = (self.b.row_offsets[row], self.b.row_offsets[row + 1]);
                for &col in &self.b.col_indices[lo..hi] {
                    c[gn.owner(u64::from(col))] += 1;
                }
                c
            })
            .collect();
        for i in 0..q {
            let mut by_j = vec![0u64; q];
            for row in gm.range(i) {
                for &col in self.a_row(row as usize) {
                    for (j, x) in b_by_block[col as usize].iter().enumerate() {
                        by_j[j] += x;
                    }
                }
            }
            for (j, x) in by_j.into_iter().enumerate() {
                per_rank[i * q + j].nprod = x;
            }
        }
        // C's blocks back to A's row owners.
        let mut c_moves = vec![vec![0u64; p]; p];
        for row in 0..self.a.nrows {
            let i = gm.owner(row as u64);
            let owner = a_rows.owner(row as u64);
            let cols = &self.c_cols[self.c_offsets[row]..self.c_offsets[row + 1]];
            for j in 0..q {
                let range = gn.range(j);
                let lo = cols.partition_point(|&c| u64::from(c) < range.start);
                let hi = cols.partition_point(|&c| u64::from(c) < range.end);
                c_moves[i * q + j][owner] += (hi - lo) as u64;
                per_rank[i * q + j].memory_c += (hi - lo) as u64 * (4 + vb);
            }
        }
        for from in 0..p {
            for to in 0..p {
                if from != to {
                    let bytes = triplets_bytes(c_moves[from][to], m, n, vb);
                    per_rank[from].sent_c += bytes;
                    per_rank[to].received_c += bytes;
                }
            }
        }
        for i in 0..q {
            for j in 0..q {
                per_rank[i * q + j].memory_c += (gm.size(i) + 1) * 8;
            }
        }
        Ok(Prediction {
            algorithm: Algorithm::TwoD,
            ranks: p,
            grid: Some(q),
            per_rank,
        })
    }

    /// What `--algorithm auto` runs on `ranks` ranks with even row splits:
    /// the algorithm whose busiest rank sends and receives the fewest
    /// bytes of A and B (2D only where `ranks` is a square).
    ///
    /// # Errors
    /// As [`Model::one_d`].
    pub fn choose(&self, ranks: usize) -> Result<Algorithm> {
        let a_rows = Partition::even(self.a.nrows as u64, ranks)?;
        let b_rows = Partition::even(self.b.nrows as u64, ranks)?;
        let one = self.one_d(&a_rows, &b_rows)?.input_traffic().max;
        if ranks == 1 || grid_side(ranks).is_none() {
            return Ok(Algorithm::OneD);
        }
        let two = self.two_d(&a_rows, &b_rows)?.input_traffic().max;
        Ok(if two < one {
            Algorithm::TwoD
        } else {
            Algorithm::OneD
        })
    }
}
