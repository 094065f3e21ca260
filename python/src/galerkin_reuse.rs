//! A Galerkin re-setup that refills the C its setup returned (PETSc's
//! `MatPtAP` with `MAT_REUSE_MATRIX`): the plan keeps C's structure as it
//! returned it, and a C offered for refilling must have exactly that
//! structure, or its values would land on the wrong entries.

use crate::arrays::{AnyCsr, AnyGalerkin, IndexSlice, Slices, ValuesMut};
use numpy::PyReadwriteArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use spgemm::Backend;

/// C's row offsets and column indices as a Galerkin plan's setup
/// returned them.
pub(crate) struct CStructure {
    offsets: Vec<usize>,
    cols: Vec<u32>,
}

impl CStructure {
    /// A copy of `c`'s structure.
    pub(crate) fn of(c: &AnyCsr) -> Self {
        let (offsets, cols) = match c {
            AnyCsr::F32(c) => (c.row_offsets(), c.col_indices()),
            AnyCsr::F64(c) => (c.row_offsets(), c.col_indices()),
            AnyCsr::I32(c) => (c.row_offsets(), c.col_indices()),
            AnyCsr::I64(c) => (c.row_offsets(), c.col_indices()),
        };
        Self {
            offsets: offsets.par_iter().copied().collect(),
            cols: cols.par_iter().copied().collect(),
        }
    }

    /// `Ok` when `indptr` and `indices` are the structure kept, or a
    /// `ValueError` saying which differs.
    fn check(&self, indptr: IndexSlice<'_>, indices: IndexSlice<'_>) -> PyResult<()> {
        let what = if !indptr.equals(&self.offsets) {
            "indptr"
        } else if !indices.equals(&self.cols) {
            "indices"
        } else {
            return Ok(());
        };
        Err(PyValueError::new_err(format!(
            "out is not the C this Galerkin plan returned: its {what} differ from C's \
             ({} rows, {} entries)",
            self.offsets.len().saturating_sub(1),
            self.cols.len()
        )))
    }
}

/// C's values for `a` written into `data`, once `indptr` and `indices`
/// (the C to refill) are checked against `kept`. Releases the GIL for
/// the product.
pub(crate) fn refill(
    py: Python<'_>,
    backend: &Backend,
    plan: &AnyGalerkin,
    kept: &CStructure,
    a: Slices<'_>,
    (indptr, indices, data): (IndexSlice<'_>, IndexSlice<'_>, &Bound<'_, PyAny>),
) -> PyResult<()> {
    kept.check(indptr, indices)?;
    let not_writable = || {
        PyValueError::new_err("out.data must be a contiguous, writeable array of the plan's dtype")
    };
    if let Ok(mut d) = data.extract::<PyReadwriteArray1<'_, f64>>() {
        let out = ValuesMut::F64(d.as_slice_mut().map_err(|_| not_writable())?);
        return py
            .detach(|| crate::on_pool(|| plan.numeric_values(backend, a, out)))
            .map_err(crate::to_py);
    }
    if let Ok(mut d) = data.extract::<PyReadwriteArray1<'_, f32>>() {
        let out = ValuesMut::F32(d.as_slice_mut().map_err(|_| not_writable())?);
        return py
            .detach(|| crate::on_pool(|| plan.numeric_values(backend, a, out)))
            .map_err(crate::to_py);
    }
    Err(not_writable())
}
