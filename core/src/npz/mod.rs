//! SciPy's sparse `.npz` files (`scipy.sparse.save_npz` / `load_npz`):
//! a zip archive (the `zip` crate) of `.npy` arrays (headers by `npyz`)
//! named `indptr`, `indices`, `data`, `shape` and `format`, stored or
//! deflated. It is how Python users exchange CSR matrices, and it loads at
//! copy speed: each array is read straight into its vector.
//!
//! Read: `format` `csr` (or `csc`, read as the CSR of the transpose and
//! transposed), indices and row offsets `int32` or `int64` (any integer
//! type), values of any float, integer or boolean type, converted to the
//! matrix's type (a value that type cannot hold exactly, such as 2.5 or
//! 2³¹ read as `i32`, is refused naming its index), little endian. Rows are returned as stored (SciPy allows unsorted rows and
//! duplicates; so does [`CsrMatrix::new`]). Written: `format` `csr`,
//! `shape` `int64`, `indptr` and `indices` `int32` when nnz and the number
//! of columns fit (as SciPy chooses), else `int64`, values of the matrix's
//! type; stored ([`write_path`]) or deflated ([`write_path_compressed`]).

use crate::csr::{CsrMatrix, MAX_COLUMNS};
use crate::error::{try_reserve, Error, Result};
use crate::scalar::Scalar;
use npyz::{TypeChar, WriterBuilder};
use rayon::prelude::*;
use std::io::{Read, Seek, Write};
use std::path::Path;

mod parts;
mod stored;
pub use parts::{PartBytes, PartsLayout};
pub use stored::{PartSums, StoredArray, StoredCsr, StoredRows};

fn err(message: impl Into<String>) -> Error {
    Error::Npz(message.into())
}

/// Reads a `.npz` file written by `scipy.sparse.save_npz` (or
/// [`write_path`]).
///
/// Shapes: as stored; `indptr` of `nrows + 1` entries, `indices` and
/// `data` of nnz.
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::Npz`] naming the
/// member and fault (not a zip, a missing member, an unsupported format or
/// dtype, a negative or too large index, lengths that disagree); the
/// structural errors of [`CsrMatrix::new`] naming the row; host out of
/// memory.
pub fn read_path<T: Scalar>(path: impl AsRef<Path>) -> Result<CsrMatrix<T>> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read(std::io::BufReader::with_capacity(1 << 20, file)).map_err(|e| e.in_file(path))
}

/// Reads a `.npz` archive from `r`. See [`read_path`].
///
/// # Errors
/// As [`read_path`].
pub fn read<T: Scalar>(r: impl Read + Seek) -> Result<CsrMatrix<T>> {
    let mut zip = zip::ZipArchive::new(r).map_err(|e| err(format!("not a zip archive: {e}")))?;
    let (format, nrows, ncols) = shape_of(&mut zip)?;
    let (outer, inner) = if format == "csc" {
        (ncols, nrows)
    } else {
        (nrows, ncols)
    };
    let offsets = member(&mut zip, "indptr")?.integers::<usize>("indptr")?;
    let cols = member(&mut zip, "indices")?.integers::<u32>("indices")?;
    let vals = member(&mut zip, "data")?.values::<T>()?;
    if offsets.len() != outer + 1 {
        return Err(err(format!(
            "indptr has {} entries, but a {format} matrix of shape ({nrows}, {ncols}) needs {}",
            offsets.len(),
            outer + 1
        )));
    }
    let m = CsrMatrix::new(outer, inner, offsets, cols, vals)?;
    if format == "csc" {
        m.transpose()
    } else {
        Ok(m)
    }
}

/// The archive's `format` (`csr` or `csc`) and `shape`, after checking
/// that the stored matrix's columns (`csr`) or rows (`csc`), the CSR
/// columns of what is read, fit this library.
fn shape_of<R: Read + Seek>(zip: &mut zip::ZipArchive<R>) -> Result<(String, usize, usize)> {
    let format = member(zip, "format")?.text()?;
    let shape = member(zip, "shape")?.integers::<u64>("shape")?;
    let &[nrows, ncols] = shape.as_slice() else {
        return Err(err(format!(
            "shape.npy holds {} numbers, not 2",
            shape.len()
        )));
    };
    let (nrows, ncols) = (nrows as usize, ncols as usize);
    let inner = match format.as_str() {
        "csr" => ncols,
        "csc" => nrows,
        f => {
            return Err(err(format!(
                "format '{f}' is not supported (csr or csc; call .tocsr() before saving)"
            )))
        }
    };
    if inner > MAX_COLUMNS {
        return Err(Error::TooLarge {
            what: "number of columns",
            value: inner as u128,
            limit: MAX_COLUMNS as u128,
        });
    }
    Ok((format, nrows, ncols))
}

/// One `.npy` member: its element type and its bytes, read whole.
struct Member {
    name: String,
    kind: TypeChar,
    size: usize,
    bytes: Vec<u8>,
}

/// The archive's member `file`, or the error naming it as missing, or as
/// stored (not compressed) with two different sizes: which bytes are its
/// own is then unclear (the zip reader takes its compressed size).
fn member_entry<'z, R: Read + Seek>(
    zip: &'z mut zip::ZipArchive<R>,
    file: &str,
) -> Result<zip::read::ZipFile<'z, R>> {
    let entry = zip.by_name(file).map_err(|_| {
        err(format!(
            "missing member '{file}' (not a file of scipy.sparse.save_npz?)"
        ))
    })?;
    let (held, claimed) = (entry.compressed_size(), entry.size());
    if entry.compression() == zip::CompressionMethod::Stored && held != claimed {
        return Err(err(format!(
            "{file}: a stored member of {held} bytes claims {claimed} bytes uncompressed"
        )));
    }
    Ok(entry)
}

fn member<R: Read + Seek>(zip: &mut zip::ZipArchive<R>, name: &str) -> Result<Member> {
    let file = format!("{name}.npy");
    let mut entry = member_entry(zip, &file)?;
    let stored = usize::try_from(entry.size()).unwrap_or(usize::MAX);
    let head = npy_header(&mut entry).map_err(|e| err(format!("{file}: {e}")))?;
    let (ty, len) = dtype(&file, &head)?;
    let size = ty.num_bytes().unwrap_or(0);
    let total = len
        .checked_mul(size)
        .ok_or_else(|| err(format!("{file}: {len} elements overflow")))?;
    let bytes = read_at_most(&mut entry, total, stored)
        .map_err(|e| err(format!("{file}: {len} elements of '{ty}' expected: {e}")))?;
    if bytes.len() != total {
        return Err(err(format!(
            "{file}: {len} elements of '{ty}' ({total} bytes) expected, the member holds {} bytes",
            bytes.len()
        )));
    }
    // The rest of the member (bytes past the array, normally none), read
    // so that the archive's checksum of the whole member is checked.
    std::io::copy(&mut entry, &mut std::io::sink()).map_err(|e| err(format!("{file}: {e}")))?;
    Ok(Member {
        name: file,
        kind: ty.type_char(),
        size,
        bytes,
    })
}

/// The element type and length of the `.npy` array whose preamble and
/// header are `head` (from [`npy_header`]), of member `file`.
fn dtype(file: &str, head: &[u8]) -> Result<(npyz::TypeStr, usize)> {
    let npy = npyz::NpyFile::new(head).map_err(|e| err(format!("{file}: {e}")))?;
    let npyz::DType::Plain(ty) = npy.dtype() else {
        return Err(err(format!("{file}: a record dtype is not supported")));
    };
    if ty.endianness() == npyz::Endianness::Big && ty.num_bytes() != Some(1) {
        return Err(err(format!(
            "{file}: big-endian dtype '{ty}' is not supported"
        )));
    }
    Ok((ty, npy.len() as usize))
}

/// Longest `.npy` header read (NumPy writes plain dtypes' headers in 128
/// bytes; only structured dtypes, which SciPy never saves, need more).
const MAX_NPY_HEADER: usize = 4096;

/// The `.npy` preamble and header at the start of `r` (magic, version,
/// length, the header's dictionary), after checking that the dictionary
/// nests brackets at most two deep (the dict and its shape tuple) and is
/// printable ASCII of at most [`MAX_NPY_HEADER`] bytes. `npyz` parses the
/// header with a backtracking grammar that took over 20 minutes on a 1 KB
/// header of nested braces (found by the `npz_read` fuzz target).
fn npy_header(r: &mut impl Read) -> std::result::Result<Vec<u8>, String> {
    let mut head = vec![0u8; 10];
    r.read_exact(&mut head)
        .map_err(|_| "shorter than an .npy preamble".to_string())?;
    if &head[..6] != b"\x93NUMPY" {
        return Err("not an .npy array (no magic string)".into());
    }
    let len = match head[6] {
        1 => u16::from_le_bytes([head[8], head[9]]) as usize,
        2 | 3 => {
            let mut more = [0u8; 2];
            r.read_exact(&mut more)
                .map_err(|_| "shorter than an .npy preamble".to_string())?;
            head.extend_from_slice(&more);
            u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize
        }
        v => return Err(format!(".npy format version {v} is not supported")),
    };
    if len > MAX_NPY_HEADER {
        return Err(format!(
            "an .npy header of {len} bytes (at most {MAX_NPY_HEADER} for the plain dtypes of scipy.sparse)"
        ));
    }
    let start = head.len();
    head.resize(start + len, 0);
    r.read_exact(&mut head[start..])
        .map_err(|_| format!("the .npy header is shorter than its {len} bytes"))?;
    let mut depth = 0usize;
    for (i, &c) in head[start..].iter().enumerate() {
        match c {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => depth = depth.saturating_sub(1),
            b'\n' | b' '..=b'~' => {}
            _ => {
                return Err(format!(
                    "byte {c:#04x} at {i} of the .npy header is not printable ASCII"
                ))
            }
        }
        if depth > 2 {
            return Err(format!(
                "brackets nest more than two deep at byte {i} of the .npy header"
            ));
        }
    }
    Ok(head)
}

/// Up to `limit` bytes of `r`, fewer when it ends first, into a vector
/// reserved for `min(limit, expected)` bytes (the zip entry's size: one
/// allocation for an honest file). Pages are written only as bytes arrive,
/// 64 MiB at a time, so a header that claims more than the member holds
/// costs what it holds, never what it claims.
fn read_at_most(r: impl Read, limit: usize, expected: usize) -> Result<Vec<u8>> {
    const STEP: usize = 64 << 20;
    let mut r = r.take(limit as u64);
    let mut bytes = Vec::new();
    try_reserve(&mut bytes, limit.min(expected), "npz member")?;
    loop {
        let want = (limit - bytes.len()).min(STEP);
        if want == 0 {
            return Ok(bytes);
        }
        try_reserve(&mut bytes, want, "npz member")?;
        let start = bytes.len();
        bytes.resize(start + want, 0);
        let mut filled = 0;
        while filled < want {
            match r.read(&mut bytes[start + filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(err(e.to_string())),
            }
        }
        bytes.truncate(start + filled);
        if filled < want {
            return Ok(bytes);
        }
    }
}

/// Little-endian elements of `N` bytes as `u64`/`i64` bit patterns.
fn words<const N: usize>(bytes: &[u8]) -> impl IndexedParallelIterator<Item = [u8; N]> + '_ {
    bytes
        .par_chunks_exact(N)
        .map(|c| c.try_into().expect("chunks of N bytes"))
}

/// Elements `first..` of an `.npy` array: their type and little-endian
/// bytes (a whole member read into memory, or a slice of a stored one in
/// a mapped file).
struct Elements<'a> {
    name: &'a str,
    kind: TypeChar,
    size: usize,
    bytes: &'a [u8],
    /// The index of the first element in the array (errors name indices
    /// in the whole array).
    first: usize,
}

impl Elements<'_> {
    /// The array's integers, widened: `None` unless it holds integers of
    /// 1, 2, 4 or 8 bytes.
    fn wide_integers(&self) -> Option<Vec<i128>> {
        let signed = match self.kind {
            TypeChar::Int => true,
            TypeChar::Uint => false,
            _ => return None,
        };
        Some(match (self.size, signed) {
            (1, s) => self
                .bytes
                .par_iter()
                .map(|&b| if s { b as i8 as i128 } else { b as i128 })
                .collect(),
            (2, s) => words::<2>(self.bytes)
                .map(|w| {
                    if s {
                        i16::from_le_bytes(w) as i128
                    } else {
                        u16::from_le_bytes(w) as i128
                    }
                })
                .collect(),
            (4, s) => words::<4>(self.bytes)
                .map(|w| {
                    if s {
                        i32::from_le_bytes(w) as i128
                    } else {
                        u32::from_le_bytes(w) as i128
                    }
                })
                .collect(),
            (8, s) => words::<8>(self.bytes)
                .map(|w| {
                    if s {
                        i64::from_le_bytes(w) as i128
                    } else {
                        u64::from_le_bytes(w) as i128
                    }
                })
                .collect(),
            _ => return None,
        })
    }

    /// The array as integers of type `I`, refusing negative or too large ones.
    fn integers<I: TryFrom<u64> + Send>(&self, what: &str) -> Result<Vec<I>> {
        let wide = self.wide_integers().ok_or_else(|| {
            err(format!(
                "{}: {what} must be integers, not '{:?}' of {} bytes",
                self.name, self.kind, self.size
            ))
        })?;
        wide.into_par_iter()
            .enumerate()
            .map(|(i, v)| {
                let i = self.first + i;
                let v = u64::try_from(v)
                    .map_err(|_| err(format!("{}: {what}[{i}] = {v} is negative", self.name)))?;
                I::try_from(v).map_err(|_| {
                    err(format!(
                        "{}: {what}[{i}] = {v} is too large for this library",
                        self.name
                    ))
                })
            })
            .collect()
    }

    /// The array as values of type `T`: floats converted (refused for an
    /// integer `T` unless integral and in range), integers of any width
    /// (refused when they do not fit `T`), booleans as 0 and 1.
    fn values<T: Scalar>(&self) -> Result<Vec<T>> {
        let unfit = |i: usize, v: &dyn std::fmt::Display| {
            err(format!(
                "{}: data[{}] = {v} is not a value of {}",
                self.name,
                self.first + i,
                T::NAME
            ))
        };
        let floats = |v: Vec<f64>| -> Result<Vec<T>> {
            v.into_par_iter()
                .enumerate()
                .map(|(i, x)| T::try_from_f64(x).ok_or_else(|| unfit(i, &x)))
                .collect()
        };
        match (self.kind, self.size) {
            (TypeChar::Float, 8) => floats(words::<8>(self.bytes).map(f64::from_le_bytes).collect()),
            (TypeChar::Float, 4) => floats(
                words::<4>(self.bytes)
                    .map(|w| f32::from_le_bytes(w) as f64)
                    .collect(),
            ),
            (TypeChar::Bool, 1) => Ok(self
                .bytes
                .par_iter()
                .map(|&b| if b != 0 { T::ONE } else { T::ZERO })
                .collect()),
            _ => match self.wide_integers() {
                Some(wide) => wide
                    .into_par_iter()
                    .enumerate()
                    .map(|(i, v)| {
                        i64::try_from(v)
                            .ok()
                            .and_then(T::try_from_i64)
                            .ok_or_else(|| unfit(i, &v))
                    })
                    .collect(),
                None => Err(err(format!(
                    "{}: values of type '{:?}' with {} bytes are not supported (floats, integers or booleans)",
                    self.name, self.kind, self.size
                ))),
            },
        }
    }
}

impl Member {
    /// Its elements.
    fn elements(&self) -> Elements<'_> {
        Elements {
            name: &self.name,
            kind: self.kind,
            size: self.size,
            bytes: &self.bytes,
            first: 0,
        }
    }

    /// The array as integers of type `I`, refusing negative or too large ones.
    fn integers<I: TryFrom<u64> + Send>(&self, what: &str) -> Result<Vec<I>> {
        self.elements().integers(what)
    }

    /// The array as values of type `T`.
    fn values<T: Scalar>(&self) -> Result<Vec<T>> {
        self.elements().values()
    }

    /// A 0-d byte or unicode string array (the `format` member).
    fn text(&self) -> Result<String> {
        let s = match self.kind {
            TypeChar::ByteStr => String::from_utf8_lossy(&self.bytes).into_owned(),
            TypeChar::UnicodeStr => self
                .bytes
                .chunks_exact(4)
                .filter_map(|c| char::from_u32(u32::from_le_bytes(c.try_into().expect("4 bytes"))))
                .collect(),
            _ => return Err(err(format!("{}: not a string", self.name))),
        };
        Ok(s.trim_end_matches('\0').to_string())
    }
}

/// Writes `m` as an uncompressed `.npz` file that `scipy.sparse.load_npz`
/// reads (see the module docs for the dtypes).
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_path<T: Scalar>(path: impl AsRef<Path>, m: &CsrMatrix<T>) -> Result<()> {
    write_file(path.as_ref(), m, false)
}

/// As [`write_path`], with every member deflated (as
/// `save_npz(..., compressed=True)`, SciPy's default).
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_path_compressed<T: Scalar>(path: impl AsRef<Path>, m: &CsrMatrix<T>) -> Result<()> {
    write_file(path.as_ref(), m, true)
}

fn write_file<T: Scalar>(path: &Path, m: &CsrMatrix<T>, compressed: bool) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    write(
        std::io::BufWriter::with_capacity(1 << 20, file),
        m,
        compressed,
    )
    .map_err(io)
}

/// The `.npy` header of an array of `E` of `shape`.
fn npy_head<E: npyz::AutoSerialize>(shape: &[u64]) -> Vec<u8> {
    let mut head = Vec::new();
    npyz::WriteOptions::<E>::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut head)
        .write_header_only()
        .expect("a header written to memory");
    head
}

/// The `.npy` header of `n` values of type `T` (`T::NPY_DESCR`).
pub(crate) fn values_head<T: Scalar>(n: u64) -> Vec<u8> {
    let mut head = Vec::new();
    let dtype = npyz::DType::Plain(T::NPY_DESCR.parse().expect("a valid type string"));
    npyz::WriteOptions::new_header_only()
        .dtype(dtype)
        .shape(&[n])
        .writer(&mut head)
        .write_header_only()
        .expect("a header written to memory");
    head
}

/// The `.npy` header of `format`: a 3-byte string, shape `()`.
fn format_head() -> Vec<u8> {
    let mut head = Vec::new();
    let dtype = npyz::DType::Plain("|S3".parse().expect("a valid type string"));
    npyz::WriteOptions::new_header_only()
        .dtype(dtype)
        .shape(&[])
        .writer(&mut head)
        .write_header_only()
        .expect("a header written to memory");
    head
}

/// Writes `m` as a `.npz` archive to `w`; deflated when `compressed`.
///
/// # Errors
/// Any error of `w`.
pub fn write<T: Scalar>(
    w: impl Write + Seek,
    m: &CsrMatrix<T>,
    compressed: bool,
) -> std::io::Result<()> {
    let to_io = |e: zip::result::ZipError| std::io::Error::other(e.to_string());
    let mut zip = zip::ZipWriter::new(w);
    let method = if compressed {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(method)
        .large_file(true);
    let wide = m.nnz() > i32::MAX as usize || m.ncols() > i32::MAX as usize;
    let mut put = |name: &str, head: Vec<u8>, bytes: &[u8]| -> std::io::Result<()> {
        zip.start_file(format!("{name}.npy"), options)
            .map_err(to_io)?;
        zip.write_all(&head)?;
        zip.write_all(bytes)
    };
    let n = m.nnz() as u64;
    let rows = m.nrows() as u64 + 1;
    if wide {
        let offsets: Vec<i64> = m.row_offsets().par_iter().map(|&o| o as i64).collect();
        let cols: Vec<i64> = m.col_indices().par_iter().map(|&c| c as i64).collect();
        put(
            "indices",
            npy_head::<i64>(&[n]),
            bytemuck::cast_slice(&cols),
        )?;
        put(
            "indptr",
            npy_head::<i64>(&[rows]),
            bytemuck::cast_slice(&offsets),
        )?;
    } else {
        let offsets: Vec<i32> = m.row_offsets().par_iter().map(|&o| o as i32).collect();
        let cols: Vec<i32> = m.col_indices().par_iter().map(|&c| c as i32).collect();
        put(
            "indices",
            npy_head::<i32>(&[n]),
            bytemuck::cast_slice(&cols),
        )?;
        put(
            "indptr",
            npy_head::<i32>(&[rows]),
            bytemuck::cast_slice(&offsets),
        )?;
    }
    put("format", format_head(), b"csr")?;
    let shape = [m.nrows() as i64, m.ncols() as i64];
    put("shape", npy_head::<i64>(&[2]), bytemuck::cast_slice(&shape))?;
    put(
        "data",
        values_head::<T>(n),
        bytemuck::cast_slice(m.values()),
    )?;
    zip.finish().map_err(to_io)?.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_both_widths_and_compressions() {
        let m = CsrMatrix::from_triplets(3, 4, &[0, 2, 2], &[3, 0, 1], &[0.1f64, -2.0, 5e-324])
            .unwrap();
        for compressed in [false, true] {
            let mut buf = std::io::Cursor::new(Vec::new());
            write(&mut buf, &m, compressed).unwrap();
            buf.set_position(0);
            assert_eq!(read::<f64>(&mut buf).unwrap(), m);
            buf.set_position(0);
            let f: CsrMatrix<f32> = read(&mut buf).unwrap();
            assert_eq!(f.col_indices(), m.col_indices());
        }
    }

    #[test]
    fn a_member_claiming_more_than_it_holds_is_an_error_without_allocating_it() {
        // indptr.npy says 2^40 int32 elements (4 TiB) but holds 2.
        let mut buf = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut buf);
        let options = zip::write::SimpleFileOptions::default();
        let npy = |w: &mut zip::ZipWriter<_>, shape: &[u64], data: &[u8]| {
            npyz::WriteOptions::<i32>::new()
                .default_dtype()
                .shape(shape)
                .writer(&mut *w)
                .write_header_only()
                .unwrap();
            w.write_all(data).unwrap();
        };
        zip.start_file("format.npy", options).unwrap();
        let dtype = npyz::DType::Plain("|S3".parse().unwrap());
        npyz::WriteOptions::new_header_only()
            .dtype(dtype)
            .shape(&[])
            .writer(&mut zip)
            .write_header_only()
            .unwrap();
        zip.write_all(b"csr").unwrap();
        zip.start_file("shape.npy", options).unwrap();
        npy(&mut zip, &[2], bytemuck::cast_slice(&[1i32, 1]));
        zip.start_file("indptr.npy", options).unwrap();
        npy(&mut zip, &[1 << 40], bytemuck::cast_slice(&[0i32, 0]));
        zip.finish().unwrap();
        buf.set_position(0);
        let e = read::<f64>(&mut buf).unwrap_err().to_string();
        assert!(
            e.contains("indptr.npy: 1099511627776 elements") && e.contains("holds 8 bytes"),
            "{e}"
        );
    }

    #[test]
    fn npy_headers_nested_too_deep_are_refused_before_parsing() {
        let npy = |dict: &str| {
            let mut v = b"\x93NUMPY\x01\x00".to_vec();
            v.extend_from_slice(&(dict.len() as u16).to_le_bytes());
            v.extend_from_slice(dict.as_bytes());
            v
        };
        let ok = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n";
        assert!(npy_header(&mut &npy(ok)[..]).is_ok());
        let deep = format!(
            "{{'descr': '<i8', 'fortran_order': False, 'shape': ({}, }}\n",
            "{".repeat(300)
        );
        let e = npy_header(&mut &npy(&deep)[..]).unwrap_err();
        assert!(e.contains("nest more than two deep at byte 51"), "{e}");
        let long = npy(&" ".repeat(5000));
        assert!(npy_header(&mut &long[..])
            .unwrap_err()
            .contains("5000 bytes"));
        assert!(npy_header(&mut &b"\x93NUMPY\x01"[..]).is_err());
        assert!(npy_header(&mut &npy("{\u{7f}")[..])
            .unwrap_err()
            .contains("0x7f at 1"));
    }

    #[test]
    fn stored_arrays_are_read_in_parts_and_compressed_ones_whole() {
        let m: CsrMatrix<f64> = crate::generate::uniform(300, 70, 5, 3).unwrap();
        let mut stored = std::io::Cursor::new(Vec::new());
        write(&mut stored, &m, false).unwrap();
        let file = stored.into_inner();
        let layout = StoredCsr::find(&file).unwrap().expect("stored arrays");
        assert_eq!(
            (layout.nrows, layout.ncols, layout.indices.len()),
            (300, 70, m.nnz())
        );
        let (mut offsets, mut cols, mut vals) = (vec![0usize], Vec::new(), Vec::new());
        let mut sums = Vec::new();
        for rows in [0..0, 0..120, 120..121, 121..300, 300..300] {
            let part = layout.read_rows::<f64>(&file, rows).unwrap();
            let base = *offsets.last().unwrap();
            offsets.extend(part.offsets[1..].iter().map(|x| x + base));
            cols.extend(part.cols);
            vals.extend(part.values);
            sums.push(part.sums);
        }
        assert_eq!(CsrMatrix::new(300, 70, offsets, cols, vals).unwrap(), m);
        layout.check_sums(&file, &sums).unwrap();
        sums[2][1].0 ^= 1;
        let e = layout.check_sums(&file, &sums).unwrap_err().to_string();
        assert_eq!(e, "npz: indices.npy: invalid checksum");
        let mut deflated = std::io::Cursor::new(Vec::new());
        write(&mut deflated, &m, true).unwrap();
        assert!(StoredCsr::find(&deflated.into_inner()).unwrap().is_none());
    }

    #[test]
    fn not_a_zip_is_an_npz_error() {
        let e = read::<f64>(std::io::Cursor::new(b"hello".to_vec())).unwrap_err();
        assert!(matches!(e, Error::Npz(_)), "{e}");
    }
}
