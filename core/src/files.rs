//! Matrix files by extension: `.npz` is SciPy's sparse format
//! ([`crate::npz`]); anything else is Matrix Market ([`crate::mtx`]),
//! gzip-compressed when it ends in `.gz` (on reading, gzip is recognised by
//! its magic bytes whatever the name).

use crate::csr::CsrMatrix;
use crate::error::Result;
use crate::mtx::{self, Progress, ReadOptions};
use crate::npz;
use crate::scalar::Scalar;
use std::path::Path;

/// Whether `path` names a `.npz` file.
pub fn is_npz(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npz"))
}

/// Reads the matrix in `path`: `.npz` with [`npz::read_path`], else
/// Matrix Market with [`mtx::read_path_with`] and `opts`.
///
/// # Errors
/// Those of the reader used.
pub fn read<T: Scalar>(path: impl AsRef<Path>, opts: &ReadOptions<'_>) -> Result<CsrMatrix<T>> {
    let path = path.as_ref();
    if is_npz(path) {
        npz::read_path(path)
    } else {
        mtx::read_path_with(path, opts).map(|(_, m)| m)
    }
}

/// Writes `m` to `path`: `.npz` (uncompressed) with [`npz::write_path`],
/// else Matrix Market with [`mtx::write_path_with`] (`.gz` compressed),
/// calling `progress` with the entries written so far.
///
/// # Errors
/// [`crate::Error::Io`] naming the path.
pub fn write<T: Scalar>(
    path: impl AsRef<Path>,
    m: &CsrMatrix<T>,
    progress: Option<Progress<'_>>,
) -> Result<()> {
    let path = path.as_ref();
    if is_npz(path) {
        npz::write_path(path, m)
    } else {
        mtx::write_path_with(path, m, progress)
    }
}
