//! `.npz` files whose arrays are stored uncompressed, read in parts:
//! where each array lies in the file ([`StoredCsr::find`]) and any range
//! of rows read from the file's bytes alone ([`StoredCsr::read_rows`]),
//! with the whole reader's checks; the distributed reader's ranks each
//! read their own rows so.

use super::{dtype, err, member_entry, npy_header, shape_of, Elements};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use npyz::TypeChar;
use std::io::{Read, Seek};
use std::ops::Range;

/// An `.npy` array stored uncompressed in an `.npz` file: its element
/// type, its length and where its first element lies in the file, so that
/// a reader can take any range of its elements from the file (each rank
/// of a distributed read, its own rows).
#[derive(Clone, Debug)]
pub struct StoredArray {
    name: String,
    kind: TypeChar,
    size: usize,
    len: usize,
    offset: u64,
    /// The member's bytes in the file (its `.npy` header first).
    member: Range<u64>,
    /// The archive's CRC-32 of them.
    crc32: u32,
}

/// The CRC-32 and length of the bytes of `indptr`, `indices` and `data`
/// that one part of the rows covers ([`StoredCsr::read_rows`]): the parts
/// of consecutive rows cover each member's bytes once, in order, so that
/// [`StoredCsr::check_sums`] checks the archive's checksums from them.
pub type PartSums = [(u32, u64); 3];

/// Rows of a stored `.npz` ([`StoredCsr::read_rows`]).
#[derive(Clone, Debug)]
pub struct StoredRows<T> {
    /// Row offsets, from 0 (rows + 1).
    pub offsets: Vec<usize>,
    /// Column indices.
    pub cols: Vec<u32>,
    /// Values.
    pub values: Vec<T>,
    /// The checksums of the bytes these rows cover.
    pub sums: PartSums,
}

impl StoredArray {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The file's bytes holding elements `range` (within `0..len`).
    pub fn bytes_of(&self, range: Range<usize>) -> Range<u64> {
        let at = |i: usize| self.offset + (i * self.size) as u64;
        at(range.start)..at(range.end)
    }

    fn elements<'a>(&'a self, bytes: &'a [u8], first: usize) -> Elements<'a> {
        Elements {
            name: &self.name,
            kind: self.kind,
            size: self.size,
            bytes,
            first,
        }
    }

    /// Elements `first..` in `bytes` (the file's bytes from
    /// [`StoredArray::bytes_of`]) as integers of type `I`.
    ///
    /// # Errors
    /// [`Error::Npz`] as [`read`](super::read) gives it for a negative or too large
    /// element, naming its index in the whole array.
    pub fn integers<I: TryFrom<u64> + Send>(
        &self,
        bytes: &[u8],
        first: usize,
        what: &str,
    ) -> Result<Vec<I>> {
        self.elements(bytes, first).integers(what)
    }

    /// Elements `first..` in `bytes` as values of type `T`.
    ///
    /// # Errors
    /// As [`StoredArray::integers`], for integer values.
    pub fn values<T: Scalar>(&self, bytes: &[u8], first: usize) -> Result<Vec<T>> {
        self.elements(bytes, first).values()
    }
}

/// The CSR arrays of an `.npz` file whose `indptr`, `indices` and `data`
/// are stored uncompressed (`scipy.sparse.save_npz(…, compressed=False)`,
/// or [`write_path`](super::write_path)): the matrix's shape and where each array lies.
#[derive(Clone, Debug)]
pub struct StoredCsr {
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// `nrows + 1` row offsets.
    pub indptr: StoredArray,
    /// Column indices.
    pub indices: StoredArray,
    /// Values, as many as column indices.
    pub data: StoredArray,
}

impl StoredCsr {
    /// The layout of the `.npz` file whose bytes are `file` when it is a
    /// CSR matrix with `indptr`, `indices` and `data` stored uncompressed;
    /// `None` when any of them is compressed or the format is `csc` (read
    /// those whole, with [`read`](super::read)). Reads the zip directory and the
    /// arrays' headers only.
    ///
    /// # Errors
    /// As [`read`](super::read) for the archive, `format`, `shape`, the number of
    /// columns and the arrays' types; an `indptr` of another length than
    /// `nrows + 1`; [`Error::ValuesLength`] when `indices` and `data`
    /// differ in length.
    pub fn find(file: &[u8]) -> Result<Option<StoredCsr>> {
        stored_layout(std::io::Cursor::new(file))
    }

    /// Rows `rows` (within `0..nrows`) of the file `file` laid out as
    /// `self`: their row offsets (from 0), columns and values, reading
    /// only their bytes. Checked as [`read`](super::read) checks the whole: offsets
    /// from 0 (where `rows` starts at 0), never decreasing, ending at the
    /// number of column indices (where `rows` ends at `nrows`, or passing
    /// it anywhere), columns below `ncols`, elements of their types; the
    /// errors name the global row or element.
    ///
    /// # Errors
    /// Those of [`read`](super::read) for the same faults ([`Error::RowOffsetsStart`],
    /// [`Error::RowOffsetsDecrease`], [`Error::RowOffsetsEnd`],
    /// [`Error::ColumnOutOfRange`], [`Error::Npz`]); where a file has
    /// several faults, the one named may differ from [`read`](super::read)'s.
    pub fn read_rows<T: Scalar>(&self, file: &[u8], rows: Range<usize>) -> Result<StoredRows<T>> {
        let bytes = |r: Range<u64>| -> Result<&[u8]> {
            file.get(r.start as usize..r.end as usize).ok_or_else(|| {
                err(format!(
                    "bytes {}..{} lie past the end of the file",
                    r.start, r.end
                ))
            })
        };
        let (lo, hi) = (rows.start, rows.end);
        let ptr = &self.indptr;
        let indptr: Vec<usize> = ptr.integers(bytes(ptr.bytes_of(lo..hi + 1))?, lo, "indptr")?;
        let nnz = self.indices.len();
        if lo == 0 && indptr[0] != 0 {
            return Err(Error::RowOffsetsStart(indptr[0]));
        }
        if let Some(i) = (0..hi - lo).find(|&i| indptr[i + 1] < indptr[i]) {
            return Err(Error::RowOffsetsDecrease {
                row: lo + i,
                start: indptr[i],
                end: indptr[i + 1],
            });
        }
        let (first, last) = (indptr[0], indptr[hi - lo]);
        // Past nnz anywhere, the offsets must later decrease or end wrong.
        if (hi == self.nrows && last != nnz) || last > nnz {
            return Err(Error::RowOffsetsEnd { last, nnz });
        }
        let ind = &self.indices;
        let cols: Vec<u32> = ind.integers(bytes(ind.bytes_of(first..last))?, first, "indices")?;
        let values: Vec<T> = self
            .data
            .values(bytes(self.data.bytes_of(first..last))?, first)?;
        let offsets: Vec<usize> = indptr.iter().map(|&o| o - first).collect();
        for i in 0..hi - lo {
            let row = &cols[offsets[i]..offsets[i + 1]];
            if let Some(&c) = row.iter().find(|&&c| c as usize >= self.ncols) {
                return Err(Error::ColumnOutOfRange {
                    row: lo + i,
                    col: c as u64,
                    ncols: self.ncols,
                });
            }
        }
        let sum = |a: &StoredArray, elements: Range<usize>| -> Result<(u32, u64)> {
            let b = bytes(a.bytes_of(elements))?;
            Ok((crc32fast::hash(b), b.len() as u64))
        };
        let sums = [
            sum(ptr, lo..hi)?,
            sum(ind, first..last)?,
            sum(&self.data, first..last)?,
        ];
        Ok(StoredRows {
            offsets,
            cols,
            values,
            sums,
        })
    }

    /// Checks each member's CRC-32 in the archive against its `.npy`
    /// header and bytes past the array, read from `file`, and the sums of
    /// the parts that cover its elements, `parts` in the order of their
    /// rows (every row in one part; the last row offset goes with the
    /// bytes past the array).
    ///
    /// # Errors
    /// [`Error::Npz`] naming the first member whose checksum differs.
    pub fn check_sums(&self, file: &[u8], parts: &[PartSums]) -> Result<()> {
        let arrays = [
            (&self.indptr, self.nrows),
            (&self.indices, self.indices.len),
            (&self.data, self.data.len),
        ];
        for (k, (array, covered)) in arrays.into_iter().enumerate() {
            let hash = |r: Range<u64>| -> Result<crc32fast::Hasher> {
                let b = file
                    .get(r.start as usize..r.end as usize)
                    .ok_or_else(|| err(format!("{}: past the end of the file", array.name)))?;
                let mut h = crc32fast::Hasher::new();
                h.update(b);
                Ok(h)
            };
            let mut whole = hash(array.member.start..array.offset)?;
            for p in parts {
                whole.combine(&crc32fast::Hasher::new_with_initial_len(p[k].0, p[k].1));
            }
            whole.combine(&hash(
                array.bytes_of(covered..covered).start..array.member.end,
            )?);
            if whole.finalize() != array.crc32 {
                return Err(err(format!("{}: invalid checksum", array.name)));
            }
        }
        Ok(())
    }
}

/// [`StoredCsr::find`] over `r`.
fn stored_layout(r: impl Read + Seek) -> Result<Option<StoredCsr>> {
    let mut zip = zip::ZipArchive::new(r).map_err(|e| err(format!("not a zip archive: {e}")))?;
    let (format, nrows, ncols) = shape_of(&mut zip)?;
    if format == "csc" {
        return Ok(None);
    }
    let mut arrays = Vec::with_capacity(3);
    for name in ["indptr", "indices", "data"] {
        let file = format!("{name}.npy");
        let mut entry = member_entry(&mut zip, &file)?;
        if entry.compression() != zip::CompressionMethod::Stored {
            return Ok(None);
        }
        // Stored: its compressed and claimed sizes are equal (checked).
        let (Some(start), stored, crc32) = (entry.data_start(), entry.size(), entry.crc32()) else {
            return Ok(None);
        };
        let head = npy_header(&mut entry).map_err(|e| err(format!("{file}: {e}")))?;
        let (ty, len) = dtype(&file, &head)?;
        let size = ty.num_bytes().unwrap_or(0);
        let total = len
            .checked_mul(size)
            .filter(|&t| (head.len() + t) as u64 <= stored);
        if total.is_none() {
            return Err(err(format!(
                "{file}: {len} elements of '{ty}' expected, the member holds {} bytes",
                stored.saturating_sub(head.len() as u64)
            )));
        }
        let array = StoredArray {
            name: file,
            kind: ty.type_char(),
            size,
            len,
            offset: start + head.len() as u64,
            member: start..start + stored,
            crc32,
        };
        // The type checks of the conversions, on no elements.
        if name == "data" {
            array.values::<f64>(&[], 0)?;
        } else {
            array.integers::<u64>(&[], 0, name)?;
        }
        arrays.push(array);
    }
    let [indptr, indices, data] = <[StoredArray; 3]>::try_from(arrays).expect("three arrays");
    if indptr.len != nrows + 1 {
        return Err(err(format!(
            "indptr has {} entries, but a csr matrix of shape ({nrows}, {ncols}) needs {}",
            indptr.len,
            nrows + 1
        )));
    }
    if indices.len != data.len {
        return Err(Error::ValuesLength {
            columns: indices.len,
            values: data.len,
        });
    }
    Ok(Some(StoredCsr {
        nrows,
        ncols,
        indptr,
        indices,
        data,
    }))
}
