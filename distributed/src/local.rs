//! The products each rank computes on its own, and the sums of their
//! results.

use crate::{Error, Result};
use rayon::prelude::*;
use spgemm_core::{CsrMatrix, CsrView, Scalar};

/// A backend that multiplies on one rank: the CPU backend, or a GPU
/// engine (the facade implements this for `spgemm::Backend`). The rank
/// chooses its device; the distributed algorithms only call `multiply`.
pub trait LocalProduct<T: Scalar> {
    /// `C = A·B` with sorted rows (A `M×K`, B `K×N`).
    ///
    /// # Errors
    /// The backend's error as text (out of memory, device failure).
    fn multiply(&self, a: CsrView<'_, T>, b: CsrView<'_, T>) -> Result<CsrMatrix<T>, String>;
}

impl<T: Scalar> LocalProduct<T> for spgemm_cpu::CpuBackend {
    fn multiply(&self, a: CsrView<'_, T>, b: CsrView<'_, T>) -> Result<CsrMatrix<T>, String> {
        spgemm_cpu::CpuBackend::multiply(self, a, b).map_err(|e| e.to_string())
    }
}

/// `a·b` by `backend`, without calling it when either has no entries.
pub(crate) fn product<T: Scalar>(
    backend: &dyn LocalProduct<T>,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
) -> Result<CsrMatrix<T>> {
    if a.nnz() == 0 || b.nnz() == 0 {
        return Ok(CsrMatrix::zeros(a.nrows(), b.ncols())?);
    }
    backend.multiply(a, b).map_err(Error::Local)
}

/// `x + y`, both with sorted rows over the same columns: rows merged in
/// parallel chunks.
pub(crate) fn add<T: Scalar>(x: &CsrMatrix<T>, y: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
    const ROWS: usize = 1 << 12;
    let pieces: Vec<(Vec<usize>, Vec<u32>, Vec<T>)> = (0..x.nrows().div_ceil(ROWS))
        .into_par_iter()
        .map(|k| {
            let rows = k * ROWS..((k + 1) * ROWS).min(x.nrows());
            let mut lens = Vec::with_capacity(rows.len());
            let (mut cols, mut values) = (Vec::new(), Vec::new());
            for i in rows {
                let before = cols.len();
                let (xc, xv) = x.row(i);
                let (yc, yv) = y.row(i);
                let (mut p, mut q) = (0, 0);
                while p < xc.len() && q < yc.len() {
                    match xc[p].cmp(&yc[q]) {
                        std::cmp::Ordering::Equal => {
                            cols.push(xc[p]);
                            values.push(xv[p] + yv[q]);
                            p += 1;
                            q += 1;
                        }
                        std::cmp::Ordering::Less => {
                            cols.push(xc[p]);
                            values.push(xv[p]);
                            p += 1;
                        }
                        std::cmp::Ordering::Greater => {
                            cols.push(yc[q]);
                            values.push(yv[q]);
                            q += 1;
                        }
                    }
                }
                cols.extend_from_slice(&xc[p..]);
                values.extend_from_slice(&xv[p..]);
                cols.extend_from_slice(&yc[q..]);
                values.extend_from_slice(&yv[q..]);
                lens.push(cols.len() - before);
            }
            (lens, cols, values)
        })
        .collect();
    let mut offsets = Vec::with_capacity(x.nrows() + 1);
    offsets.push(0usize);
    for (lens, _, _) in &pieces {
        for l in lens {
            offsets.push(offsets.last().unwrap() + l);
        }
    }
    let cols = pieces.iter().flat_map(|p| p.1.iter().copied()).collect();
    let values = pieces.into_iter().flat_map(|p| p.2).collect();
    Ok(CsrMatrix::new(x.nrows(), x.ncols(), offsets, cols, values)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_sorted_rows() {
        let x = CsrMatrix::new(2, 10, vec![0, 2, 3], vec![2, 7, 7], vec![1.0, 2.0, 3.0]).unwrap();
        let y = CsrMatrix::new(2, 10, vec![0, 2, 2], vec![5, 7], vec![10.0, 20.0]).unwrap();
        let s = add(&x, &y).unwrap();
        assert_eq!(s.row_offsets(), &[0, 3, 4]);
        assert_eq!(s.col_indices(), &[2, 5, 7, 7]);
        assert_eq!(s.values(), &[1.0, 10.0, 22.0, 3.0]);
    }
}
