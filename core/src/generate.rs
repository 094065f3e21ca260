//! Seeded, deterministic synthetic matrices: the families used in the SpGEMM
//! literature (3D stencils, R-MAT / Graph500, Erdős–Rényi, short rows with a
//! few very long rows) and uniform random matrices for tests.
//!
//! The same arguments and seed give the same matrix on every platform and
//! thread count: randomness comes from SplitMix64 streams seeded per chunk.

use crate::csr::{CsrMatrix, MAX_COLUMNS};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny generator whose output is
/// fixed by its definition, so seeded matrices never change across versions.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator for stream `stream` of seed `seed`.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut g = Self(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        g.next_u64();
        g
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

const CHUNK: usize = 1 << 14;

/// Value of a generated entry: uniform in `[0.5, 1.5)` for floats, in
/// `1..=9` for integers, so no cancellation and no zeros.
fn value<T: Scalar>(g: &mut SplitMix64) -> T {
    if T::INTEGER {
        T::from_f64((1.0 + 9.0 * g.next_f64()).floor())
    } else {
        T::from_f64(0.5 + g.next_f64())
    }
}

fn check_cols(ncols: usize) -> Result<()> {
    if ncols > MAX_COLUMNS {
        return Err(Error::TooLarge {
            what: "number of columns",
            value: ncols as u128,
            limit: MAX_COLUMNS as u128,
        });
    }
    Ok(())
}

/// Builds a matrix row by row in parallel: `row(i, rng, out)` pushes row
/// `i`'s `(column, value)` pairs; duplicates are summed, rows sorted.
fn by_rows<T: Scalar>(
    nrows: usize,
    ncols: usize,
    seed: u64,
    row: impl Fn(usize, &mut SplitMix64, &mut Vec<(u32, T)>) + Sync,
) -> Result<CsrMatrix<T>> {
    check_cols(ncols)?;
    let chunks: Vec<Vec<(usize, u32, T)>> = (0..nrows.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut g = SplitMix64::new(seed, c as u64);
            let mut out = Vec::new();
            let mut buf = Vec::new();
            for i in c * CHUNK..((c + 1) * CHUNK).min(nrows) {
                buf.clear();
                row(i, &mut g, &mut buf);
                out.extend(buf.iter().map(|&(j, v)| (i, j, v)));
            }
            out
        })
        .collect();
    let all: Vec<(usize, u32, T)> = chunks.into_iter().flatten().collect();
    let rows: Vec<usize> = all.iter().map(|e| e.0).collect();
    let cols: Vec<u32> = all.iter().map(|e| e.1).collect();
    let vals: Vec<T> = all.iter().map(|e| e.2).collect();
    CsrMatrix::from_triplets(nrows, ncols, &rows, &cols, &vals)
}

/// `nrows × ncols` with `per_row` uniformly random columns per row
/// (duplicates summed, so a row may hold fewer).
///
/// # Errors
/// [`Error::TooLarge`], [`Error::HostOutOfMemory`].
pub fn uniform<T: Scalar>(
    nrows: usize,
    ncols: usize,
    per_row: usize,
    seed: u64,
) -> Result<CsrMatrix<T>> {
    if ncols == 0 {
        return CsrMatrix::zeros(nrows, 0);
    }
    by_rows(nrows, ncols, seed, |_, g, out| {
        for _ in 0..per_row {
            out.push((g.below(ncols as u64) as u32, value(g)));
        }
    })
}

/// Erdős–Rényi-style square matrix: `n` rows of `per_row` random columns.
///
/// # Errors
/// As [`uniform`].
pub fn erdos_renyi<T: Scalar>(n: usize, per_row: usize, seed: u64) -> Result<CsrMatrix<T>> {
    uniform(n, n, per_row, seed)
}

/// `nrows` square rows of `short` random columns, plus `nlong` rows (evenly
/// spread) of `long` random columns: the load-imbalance case on which
/// OpSparse's global-memory path for long rows took about 3 s where
/// cuSPARSE took 6 ms (H200, 524,288 rows with 24 of 40,000 entries).
///
/// # Errors
/// As [`uniform`].
pub fn short_and_long_rows<T: Scalar>(
    n: usize,
    short: usize,
    nlong: usize,
    long: usize,
    seed: u64,
) -> Result<CsrMatrix<T>> {
    let stride = n.checked_div(nlong).map_or(usize::MAX, |s| s.max(1));
    by_rows(n, n, seed, |i, g, out| {
        let len = if i % stride == 0 && i / stride < nlong {
            long
        } else {
            short
        };
        for _ in 0..len {
            out.push((g.below(n as u64) as u32, value(g)));
        }
    })
}

/// 3D Laplacian-like stencil on an `n×n×n` grid with 7 (faces) or 27 (full
/// cube) points; `n³` rows.
///
/// # Errors
/// [`Error::Unsupported`] unless `points` is 7 or 27; [`Error::TooLarge`].
pub fn stencil_3d<T: Scalar>(n: usize, points: usize, seed: u64) -> Result<CsrMatrix<T>> {
    if points != 7 && points != 27 {
        return Err(Error::Unsupported(format!(
            "{points}-point stencil (7 or 27)"
        )));
    }
    let total = n.checked_pow(3).ok_or(Error::TooLarge {
        what: "grid size n^3",
        value: (n as u128).pow(3),
        limit: usize::MAX as u128,
    })?;
    by_rows(total, total, seed, |i, g, out| {
        let (x, y, z) = ((i % n) as i64, ((i / n) % n) as i64, (i / (n * n)) as i64);
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let manhattan = dx.abs() + dy.abs() + dz.abs();
                    if points == 7 && manhattan > 1 {
                        continue;
                    }
                    let (a, b, c) = (x + dx, y + dy, z + dz);
                    let n = n as i64;
                    if (0..n).contains(&a) && (0..n).contains(&b) && (0..n).contains(&c) {
                        out.push((((c * n + b) * n + a) as u32, value(g)));
                    }
                }
            }
        }
    })
}

/// The Graph500 R-MAT quadrant probabilities `(a, b, c)` (d = 1 − a − b − c).
pub const GRAPH500: (f64, f64, f64) = (0.57, 0.19, 0.19);

/// R-MAT / Graph500 graph: `2^scale` vertices, `edge_factor · 2^scale`
/// directed edges drawn with the Graph500 probabilities ([`GRAPH500`]);
/// duplicate edges are merged.
///
/// # Errors
/// [`Error::TooLarge`] for `scale > 31`; [`Error::HostOutOfMemory`].
pub fn rmat<T: Scalar>(scale: u32, edge_factor: usize, seed: u64) -> Result<CsrMatrix<T>> {
    rmat_with(scale, edge_factor, GRAPH500, seed)
}

/// R-MAT with quadrant probabilities `(a, b, c)`, d = 1 − a − b − c
/// (e.g. the milder skew `(0.45, 0.22, 0.22)`).
///
/// # Errors
/// [`Error::Unsupported`] unless the probabilities are non-negative and
/// sum to at most 1; as [`rmat`].
pub fn rmat_with<T: Scalar>(
    scale: u32,
    edge_factor: usize,
    (pa, pb, pc): (f64, f64, f64),
    seed: u64,
) -> Result<CsrMatrix<T>> {
    if !(pa >= 0.0 && pb >= 0.0 && pc >= 0.0 && pa + pb + pc <= 1.0) {
        return Err(Error::Unsupported(format!(
            "R-MAT probabilities a={pa}, b={pb}, c={pc} (each at least 0, a+b+c at most 1)"
        )));
    }
    if scale > 31 {
        return Err(Error::TooLarge {
            what: "R-MAT scale",
            value: scale as u128,
            limit: 31,
        });
    }
    let n = 1usize << scale;
    let edges = n * edge_factor;
    let parts: Vec<(Vec<usize>, Vec<u32>, Vec<T>)> = (0..edges.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut g = SplitMix64::new(seed, c as u64);
            let len = CHUNK.min(edges - c * CHUNK);
            let (mut r, mut col, mut v) = (
                Vec::with_capacity(len),
                Vec::with_capacity(len),
                Vec::with_capacity(len),
            );
            for _ in 0..len {
                let (mut i, mut j) = (0usize, 0usize);
                for _ in 0..scale {
                    let p = g.next_f64();
                    let (bi, bj) = if p < pa {
                        (0, 0)
                    } else if p < pa + pb {
                        (0, 1)
                    } else if p < pa + pb + pc {
                        (1, 0)
                    } else {
                        (1, 1)
                    };
                    i = (i << 1) | bi;
                    j = (j << 1) | bj;
                }
                r.push(i);
                col.push(j as u32);
                v.push(value(&mut g));
            }
            (r, col, v)
        })
        .collect();
    let mut rows = Vec::with_capacity(edges);
    let mut cols = Vec::with_capacity(edges);
    let mut vals = Vec::with_capacity(edges);
    for (r, c, v) in parts {
        rows.extend(r);
        cols.extend(c);
        vals.extend(v);
    }
    CsrMatrix::from_triplets(n, n, &rows, &cols, &vals)
}

/// Grid size `n³`, or [`Error::TooLarge`].
fn cube(n: usize) -> Result<usize> {
    n.checked_pow(3).ok_or(Error::TooLarge {
        what: "grid size n^3",
        value: (n as u128).pow(3),
        limit: usize::MAX as u128,
    })
}

/// The grid neighbours of node `i` of an `n³` grid within `points` (7:
/// faces, 27: the cube), itself included.
fn neighbours(i: usize, n: usize, points: usize, out: &mut Vec<usize>) {
    out.clear();
    let (x, y, z) = ((i % n) as i64, ((i / n) % n) as i64, (i / (n * n)) as i64);
    let m = n as i64;
    for dz in -1i64..=1 {
        for dy in -1i64..=1 {
            for dx in -1i64..=1 {
                if points == 7 && dx.abs() + dy.abs() + dz.abs() > 1 {
                    continue;
                }
                let (a, b, c) = (x + dx, y + dy, z + dz);
                if (0..m).contains(&a) && (0..m).contains(&b) && (0..m).contains(&c) {
                    out.push(((c * m + b) * m + a) as usize);
                }
            }
        }
    }
}

/// A finite-element-like matrix with `dof` unknowns per node of an `n³`
/// grid coupled to every node of its 27-point neighbourhood: `dof · n³`
/// rows of up to `27 · dof` random entries (e.g. `n = 30, dof = 3`: 81,000
/// rows, 6.1 M entries).
///
/// # Errors
/// [`Error::TooLarge`], [`Error::HostOutOfMemory`].
pub fn fem_27<T: Scalar>(n: usize, dof: usize, seed: u64) -> Result<CsrMatrix<T>> {
    let rows = cube(n)?.checked_mul(dof).ok_or(Error::TooLarge {
        what: "rows of the FEM matrix",
        value: cube(n)? as u128 * dof as u128,
        limit: usize::MAX as u128,
    })?;
    by_rows(rows, rows, seed, |r, g, out| {
        let mut nb = Vec::with_capacity(27);
        neighbours(r / dof, n, 27, &mut nb);
        for &k in &nb {
            for d in 0..dof {
                out.push(((k * dof + d) as u32, value(g)));
            }
        }
    })
}

/// The 7-point Poisson matrix on an `n³` grid: 6 on the diagonal, −1 for
/// each face neighbour.
///
/// # Errors
/// [`Error::TooLarge`], [`Error::HostOutOfMemory`].
pub fn poisson_7<T: Scalar>(n: usize) -> Result<CsrMatrix<T>> {
    let rows = cube(n)?;
    by_rows(rows, rows, 0, |i, _, out| {
        let mut nb = Vec::with_capacity(7);
        neighbours(i, n, 7, &mut nb);
        out.extend(
            nb.iter()
                .map(|&k| (k as u32, T::from_f64(if k == i { 6.0 } else { -1.0 }))),
        );
    })
}

/// The smoothed-aggregation prolongator of [`poisson_7`] (Vaněk, Mandel
/// and Brezina 1996): aggregates of 3×3×3 nodes give the tentative
/// prolongator `T` (one 1 per row), smoothed by one damped Jacobi step,
/// `P = (I − ω D⁻¹ A) T` with ω = 2/3: `n³` rows, `⌈n/3⌉³` columns, up to
/// 7 entries per row. With [`poisson_7`] it makes the Galerkin products
/// `A·P` and `Pᵀ·(A·P)` of an AMG setup.
///
/// # Errors
/// [`Error::TooLarge`], [`Error::HostOutOfMemory`].
pub fn sa_prolongator<T: Scalar>(n: usize) -> Result<CsrMatrix<T>> {
    let rows = cube(n)?;
    let na = n.div_ceil(3);
    let aggregate = |k: usize| {
        let (x, y, z) = (k % n / 3, k / n % n / 3, k / (n * n) / 3);
        ((z * na + y) * na + x) as u32
    };
    let omega = 2.0 / 3.0;
    by_rows(rows, cube(na)?, 0, |i, _, out| {
        let mut nb = Vec::with_capacity(7);
        neighbours(i, n, 7, &mut nb);
        out.push((aggregate(i), T::ONE));
        for &k in &nb {
            let a_ik = if k == i { 6.0 } else { -1.0 };
            out.push((aggregate(k), T::from_f64(-omega * a_ik / 6.0)));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_generation_is_deterministic() {
        let a = uniform::<f64>(100, 70, 5, 7).unwrap();
        assert_eq!(a, uniform::<f64>(100, 70, 5, 7).unwrap());
        assert_ne!(a, uniform::<f64>(100, 70, 5, 8).unwrap());
    }

    #[test]
    fn stencil_row_lengths() {
        let s = stencil_3d::<f64>(4, 7, 1).unwrap();
        assert_eq!(s.nrows(), 64);
        assert_eq!(s.max_row_nnz(), 7);
        assert_eq!(s.row_nnz(0), 4); // a corner has 3 neighbours and itself
        let s = stencil_3d::<f64>(4, 27, 1).unwrap();
        assert_eq!(s.max_row_nnz(), 27);
        assert_eq!(s.row_nnz(0), 8);
    }

    #[test]
    fn short_and_long() {
        let m = short_and_long_rows::<f32>(1000, 3, 2, 400, 1).unwrap();
        assert!(m.max_row_nnz() > 300 && m.row_nnz(1) <= 3);
    }

    #[test]
    fn galerkin_operands() {
        let a = poisson_7::<f64>(6).unwrap();
        assert_eq!((a.nrows(), a.max_row_nnz()), (216, 7));
        let p = sa_prolongator::<f64>(6).unwrap();
        assert_eq!(p.shape(), (216, 8));
        // Rows of P sum to 1 − ω·(row sum of A)/6: 1 inside the grid.
        let inner = 1 + 6 + 36; // node (1, 1, 1)
        let s: f64 = p.row(inner).1.iter().sum();
        assert!((s - 1.0).abs() < 1e-12, "{s}");
        let f = fem_27::<f32>(3, 3, 1).unwrap();
        assert_eq!((f.nrows(), f.max_row_nnz()), (81, 81));
    }

    #[test]
    fn rmat_shape() {
        let m = rmat::<f64>(8, 4, 3).unwrap();
        assert_eq!(m.shape(), (256, 256));
        assert!(m.nnz() <= 1024 && m.nnz() > 500);
    }
}
