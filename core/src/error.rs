//! The error type of `spgemm-core`; the policy is in `docs/errors.md`.

use rayon::prelude::*;
use std::path::PathBuf;

/// Result alias used throughout `spgemm-core`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `spgemm-core`: malformed CSR data, bad
/// Matrix Market files, mismatched shapes, sizes beyond the index types, and
/// failures reported by a device backend.
///
/// Every variant names the row, column, line or size at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `row_offsets.len()` is not `nrows + 1`.
    #[error("row offsets have length {got}, expected nrows + 1 = {expected}")]
    RowOffsetsLength {
        /// `nrows + 1`.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// The first row offset is not zero.
    #[error("row offsets must start at 0, found {0}")]
    RowOffsetsStart(usize),
    /// `row_offsets[row] > row_offsets[row + 1]`.
    #[error("row offsets decrease at row {row}: {start} > {end}")]
    RowOffsetsDecrease {
        /// The row whose end lies before its start.
        row: usize,
        /// `row_offsets[row]`.
        start: usize,
        /// `row_offsets[row + 1]`.
        end: usize,
    },
    /// The last row offset differs from the number of column indices.
    #[error("last row offset is {last} but there are {nnz} column indices")]
    RowOffsetsEnd {
        /// `row_offsets[nrows]`.
        last: usize,
        /// `col_indices.len()`.
        nnz: usize,
    },
    /// Column indices and values differ in length.
    #[error("{columns} column indices but {values} values")]
    ValuesLength {
        /// `col_indices.len()`.
        columns: usize,
        /// `values.len()`.
        values: usize,
    },
    /// A column index is not below the number of columns.
    #[error("column index {col} in row {row} is out of range for {ncols} columns")]
    ColumnOutOfRange {
        /// Row holding the entry.
        row: usize,
        /// The offending column index.
        col: u64,
        /// Number of columns of the matrix.
        ncols: usize,
    },
    /// A row's column indices are not strictly increasing (unsorted or duplicated).
    #[error("row {row} is not sorted without duplicates: column {col} follows column {prev}")]
    UnsortedRow {
        /// The row at fault.
        row: usize,
        /// The column before `col`.
        prev: u32,
        /// The first column not greater than its predecessor.
        col: u32,
    },
    /// The inner dimensions of a product disagree.
    #[error("dimension mismatch: A is {a_rows}x{a_cols} but B is {b_rows}x{b_cols} (A's columns must equal B's rows)")]
    DimensionMismatch {
        /// Rows of A.
        a_rows: usize,
        /// Columns of A.
        a_cols: usize,
        /// Rows of B.
        b_rows: usize,
        /// Columns of B.
        b_cols: usize,
    },
    /// A size does not fit the index type that has to hold it.
    #[error("{what} is {value}, more than the supported maximum {limit}")]
    TooLarge {
        /// What was counted.
        what: &'static str,
        /// The size found.
        value: u128,
        /// The largest supported size.
        limit: u128,
    },
    /// An index held in another library's type (a negative or too large
    /// row offset or column index) does not fit ours (`usize` offsets,
    /// `u32` column indices), or ours does not fit the other library's.
    #[error("{what} at position {position} is {value}, outside 0..={limit}")]
    IndexOutOfRange {
        /// Which array: "row offset" or "column index".
        what: &'static str,
        /// Its position in the array.
        position: usize,
        /// The value found.
        value: String,
        /// The largest value the target type holds.
        limit: u128,
    },
    /// A file could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An output file cannot be written where or as asked: an unknown
    /// extension, a missing folder, a folder in its place, no permission.
    #[error("output {}: {message}", path.display())]
    Output {
        /// The output file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A Matrix Market file is malformed.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line number in the (decompressed) file; 0 when the fault is not on a line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A gzip stream is corrupt or truncated.
    #[error("gzip data, byte {offset}: {message}")]
    Gzip {
        /// Byte offset in the compressed file at or before which the fault lies.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A `.npz` file (SciPy's `save_npz` format) is malformed.
    #[error("npz: {0}")]
    Npz(String),
    /// A Matrix Market feature this library does not support.
    #[error("unsupported Matrix Market file: {0}")]
    Unsupported(String),
    /// Runs of rows for a matrix assembled on the device
    /// (`GpuEngine::assemble`) that overlap, leave its bounds or do not
    /// add up to its entries.
    #[error("row runs: {0}")]
    RowRuns(String),
    /// A mask whose shape is not the product's.
    #[error("the mask is {}x{} but the product is {}x{}", mask.0, mask.1, product.0, product.1)]
    MaskShape {
        /// The mask's `(rows, columns)`.
        mask: (usize, usize),
        /// C's `(rows, columns)`.
        product: (usize, usize),
    },
    /// Pruning that cannot be applied (a negative or NaN threshold).
    #[error("prune: {0}")]
    Prune(String),
    /// A product this backend does not run (a semiring, mask or pruning
    /// on a backend without kernels for them).
    #[error("{0}")]
    NotOnBackend(String),
    /// A graph search given no square adjacency matrix, or a source that
    /// is not one of its vertices.
    #[error("graph: {0}")]
    Graph(String),
    /// A plan was given matrices whose structure differs from the one it was built for.
    #[error("structure mismatch: {0}")]
    StructureMismatch(String),
    /// A host allocation failed.
    #[error("out of host memory: {bytes} bytes for {what} did not fit")]
    HostOutOfMemory {
        /// What was being allocated.
        what: &'static str,
        /// Requested size in bytes.
        bytes: u128,
    },
    /// A kernel table chosen by name needs more threads or shared memory a
    /// block than the device allows (names the table, the bin and both sizes).
    #[error("kernel table does not fit the device: {0}")]
    TableDoesNotFit(String),
    /// A kernel launch refused on the host before it reached the device:
    /// the arguments are another kernel's, or the compiled program lacks
    /// the kernel. A bug of spgemm, never of its input.
    #[error("kernel {kernel}: {message} (launch refused before it reached the device)")]
    KernelArguments {
        /// The kernel's name.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// A list of devices to spread work over was empty.
    #[error("no devices were given")]
    NoDevices,
    /// A device backend reported a failure.
    #[error(transparent)]
    Device(#[from] crate::device::DeviceError),
}

impl Error {
    /// `self` with `path` in front of its message where it describes a
    /// file's contents (parse, gzip, `.npz`, unsupported-feature errors),
    /// as the file readers name it; other errors unchanged.
    pub fn in_file(self, path: &std::path::Path) -> Error {
        match self {
            Error::Parse { line, message } => Error::Parse {
                line,
                message: format!("{}: {message}", path.display()),
            },
            Error::Gzip { offset, message } => Error::Gzip {
                offset,
                message: format!("{}: {message}", path.display()),
            },
            Error::Npz(message) => Error::Npz(format!("{}: {message}", path.display())),
            Error::Unsupported(message) => {
                Error::Unsupported(format!("{}: {message}", path.display()))
            }
            Error::Io { source, .. } => Error::Io {
                path: path.to_path_buf(),
                source,
            },
            other => other,
        }
    }
}

/// Reserves `additional` elements in `v`, turning allocation failure into
/// [`Error::HostOutOfMemory`] instead of an abort.
pub(crate) fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &'static str) -> Result<()> {
    v.try_reserve_exact(additional)
        .map_err(|_| Error::HostOutOfMemory {
            what,
            bytes: additional as u128 * std::mem::size_of::<T>() as u128,
        })
}

/// A vector of `len` copies of `value`, or [`Error::HostOutOfMemory`].
/// For the backend crates; not part of the library's interface.
#[doc(hidden)]
pub fn try_filled<T: Clone>(len: usize, value: T, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    try_reserve(&mut v, len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// An empty vector with room for `n` elements, or [`Error::HostOutOfMemory`].
/// For the backend crates; not part of the library's interface.
#[doc(hidden)]
pub fn try_with_capacity<T>(n: usize, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    try_reserve(&mut v, n, what)?;
    Ok(v)
}

/// A vector of `len` zeros of a plain-data type, or
/// [`Error::HostOutOfMemory`]. The zeros come from the allocator's zeroed
/// pages (not written here), so a large vector costs nothing until its
/// pages are first written: by the threads that fill it, in parallel.
pub(crate) fn try_zeroed<T: bytemuck::Zeroable>(len: usize, what: &'static str) -> Result<Vec<T>> {
    let oom = || Error::HostOutOfMemory {
        what,
        bytes: len as u128 * std::mem::size_of::<T>() as u128,
    };
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| oom())?;
    if layout.size() == 0 {
        let mut v = Vec::new();
        v.resize_with(len, T::zeroed);
        return Ok(v);
    }
    // SAFETY: a non-zero size; the pointer is checked for null; all-zero
    // bytes are a valid `T` (`Zeroable`); the vector owns the allocation
    // with exactly this layout (capacity = length = `len`).
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut T;
        if p.is_null() {
            return Err(oom());
        }
        huge_pages(p as *mut u8, layout.size());
        Ok(Vec::from_raw_parts(p, len, len))
    }
}

/// A copy of `src` in a vector from [`try_zeroed`] (huge pages where the
/// kernel grants them), written on all cores: one fault per 2 MiB instead
/// of per 4 KiB, which a copy by `to_vec` pays on hosts with slow faults.
/// For the backend crates; not part of the library's interface.
#[doc(hidden)]
pub fn try_copied<T: bytemuck::Pod + Send + Sync>(src: &[T], what: &'static str) -> Result<Vec<T>> {
    const BLOCK: usize = 1 << 16;
    let mut v: Vec<T> = try_zeroed(src.len(), what)?;
    v.par_chunks_mut(BLOCK)
        .zip(src.par_chunks(BLOCK))
        .for_each(|(d, s)| d.copy_from_slice(s));
    Ok(v)
}

/// Asks the kernel to back the 2 MiB-aligned part of `len` bytes at `p`
/// with transparent huge pages before they are first touched: one fault per
/// 2 MiB instead of per 4 KiB when large results are filled. Only a hint;
/// ignored where unsupported.
fn huge_pages(p: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (p as usize).next_multiple_of(HUGE);
        let end = (p as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside an allocation owned by the
            // caller; MADV_HUGEPAGE changes no contents, only how pages
            // not yet touched are backed.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, len);
}
