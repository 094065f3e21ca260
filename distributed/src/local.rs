//! The products each rank computes on its own, and the sums of their
//! results.

use crate::{Error, Result};
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

/// `x + y`, both with sorted rows, whose columns index the sorted global
/// lists `x_map` and `y_map`; the sum's columns index the union of the
/// lists, which is returned with it.
pub(crate) fn add<T: Scalar>(
    x: &CsrMatrix<T>,
    x_map: &[u64],
    y: &CsrMatrix<T>,
    y_map: &[u64],
) -> Result<(CsrMatrix<T>, Vec<u64>)> {
    let mut map = Vec::with_capacity(x_map.len() + y_map.len());
    map.extend_from_slice(x_map);
    map.extend_from_slice(y_map);
    map.sort_unstable();
    map.dedup();
    let at = |m: &[u64]| -> Vec<u32> {
        m.iter()
            .map(|g| map.partition_point(|v| v < g) as u32)
            .collect()
    };
    let (xs, ys) = (at(x_map), at(y_map));
    let mut offsets = Vec::with_capacity(x.nrows() + 1);
    offsets.push(0usize);
    let mut cols = Vec::with_capacity(x.nnz() + y.nnz());
    let mut values = Vec::with_capacity(x.nnz() + y.nnz());
    for i in 0..x.nrows() {
        let (xc, xv) = x.row(i);
        let (yc, yv) = y.row(i);
        let (mut p, mut q) = (0, 0);
        while p < xc.len() || q < yc.len() {
            let a = xc.get(p).map(|&c| xs[c as usize]);
            let b = yc.get(q).map(|&c| ys[c as usize]);
            match (a, b) {
                (Some(a), Some(b)) if a == b => {
                    cols.push(a);
                    values.push(xv[p] + yv[q]);
                    p += 1;
                    q += 1;
                }
                (Some(a), Some(b)) if a < b => {
                    cols.push(a);
                    values.push(xv[p]);
                    p += 1;
                }
                (Some(a), None) => {
                    cols.push(a);
                    values.push(xv[p]);
                    p += 1;
                }
                (_, Some(b)) => {
                    cols.push(b);
                    values.push(yv[q]);
                    q += 1;
                }
                (None, None) => unreachable!("the loop runs while one row has entries"),
            }
        }
        offsets.push(cols.len());
    }
    let sum = CsrMatrix::new(x.nrows(), map.len(), offsets, cols, values)?;
    Ok((sum, map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_rows_over_different_column_lists() {
        // x: columns {2, 7}, y: columns {5, 7, 9} (global).
        let x = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0]).unwrap();
        let y = CsrMatrix::new(2, 3, vec![0, 2, 2], vec![1, 2], vec![10.0, 20.0]).unwrap();
        let (s, map) = add(&x, &[2, 7], &y, &[5, 7, 9]).unwrap();
        assert_eq!(map, [2, 5, 7, 9]);
        assert_eq!(s.row_offsets(), &[0, 3, 4]);
        assert_eq!(s.col_indices(), &[0, 2, 3, 2]);
        assert_eq!(s.values(), &[1.0, 12.0, 20.0, 3.0]);
    }
}
