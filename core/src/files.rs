//! Matrix files by extension: `.npz` is SciPy's sparse format
//! ([`crate::npz`]); anything else is read as Matrix Market
//! ([`crate::mtx`]), gzip recognised by its magic bytes whatever the name.
//! Written files must be named `.mtx`, `.mtx.gz` (compressed) or `.npz`
//! ([`output_format`]).

use crate::csr::CsrMatrix;
use crate::error::{Error, Result};
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

/// The formats [`write()`] writes, chosen by the file name's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// `.mtx`: Matrix Market text.
    MatrixMarket,
    /// `.mtx.gz`: Matrix Market text, gzip-compressed.
    MatrixMarketGzip,
    /// `.npz`: SciPy's sparse format (uncompressed).
    Npz,
}

/// The format of an output file named `path`, by its extension (ASCII
/// case ignored).
///
/// # Errors
/// [`Error::Output`] naming the path and the extensions known (`.mtx`,
/// `.mtx.gz`, `.npz`).
pub fn output_format(path: &Path) -> Result<OutputFormat> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".npz") {
        Ok(OutputFormat::Npz)
    } else if name.ends_with(".mtx.gz") {
        Ok(OutputFormat::MatrixMarketGzip)
    } else if name.ends_with(".mtx") {
        Ok(OutputFormat::MatrixMarket)
    } else {
        Err(Error::Output {
            path: path.to_path_buf(),
            message: "unknown extension: name it .mtx, .mtx.gz or .npz".into(),
        })
    }
}

/// Checks, before any work, that `path` can be written: a known extension
/// (when `matrix`: see [`output_format`]), an existing folder, not a folder
/// itself, and writable (a file that does not exist yet is created and
/// removed again to find out; an existing one is opened for writing but
/// not changed).
///
/// # Errors
/// [`Error::Output`] naming the path and what is wrong.
pub fn check_output(path: &Path, matrix: bool) -> Result<()> {
    if matrix {
        output_format(path)?;
    }
    let fail = |message: String| Error::Output {
        path: path.to_path_buf(),
        message,
    };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(fail(format!("folder {} does not exist", folder.display())));
    }
    if path.is_dir() {
        return Err(fail("is a folder".into()));
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| fail(format!("cannot be written: {e}")))?;
    if !existed {
        std::fs::remove_file(path).map_err(|e| fail(format!("cannot be written: {e}")))?;
    }
    Ok(())
}

/// Writes `m` to `path` in the format its extension names
/// ([`output_format`]): `.npz` (uncompressed) with [`npz::write_path`],
/// `.mtx` and `.mtx.gz` with [`mtx::write_path_with`], calling `progress`
/// with the entries written so far.
///
/// # Errors
/// [`Error::Output`] for an unknown extension; [`crate::Error::Io`] naming
/// the path.
pub fn write<T: Scalar>(
    path: impl AsRef<Path>,
    m: &CsrMatrix<T>,
    progress: Option<Progress<'_>>,
) -> Result<()> {
    let path = path.as_ref();
    match output_format(path)? {
        OutputFormat::Npz => npz::write_path(path, m),
        OutputFormat::MatrixMarket | OutputFormat::MatrixMarketGzip => {
            mtx::write_path_with(path, m, progress)
        }
    }
}
