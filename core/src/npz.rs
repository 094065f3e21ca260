//! SciPy's sparse `.npz` files (`scipy.sparse.save_npz` / `load_npz`):
//! a zip archive (the `zip` crate) of `.npy` arrays (headers by `npyz`)
//! named `indptr`, `indices`, `data`, `shape` and `format`, stored or
//! deflated. It is how Python users exchange CSR matrices, and it loads at
//! copy speed: each array is read straight into its vector.
//!
//! Read: `format` `csr` (or `csc`, read as the CSR of the transpose and
//! transposed), indices and row offsets `int32` or `int64` (any integer
//! type), values `float32` or `float64` (or integers, converted), little
//! endian. Rows are returned as stored (SciPy allows unsorted rows and
//! duplicates; so does [`CsrMatrix::new`]). Written: `format` `csr`,
//! `shape` `int64`, `indptr` and `indices` `int32` when nnz and the number
//! of columns fit (as SciPy chooses), else `int64`, values of the matrix's
//! type; stored ([`write_path`]) or deflated ([`write_path_compressed`]).

use crate::csr::{CsrMatrix, MAX_COLUMNS};
use crate::error::{try_filled, Error, Result};
use crate::scalar::Scalar;
use npyz::{TypeChar, WriterBuilder};
use rayon::prelude::*;
use std::io::{Read, Seek, Write};
use std::path::Path;

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
    let format = member(&mut zip, "format")?.text()?;
    let shape = member(&mut zip, "shape")?.integers::<u64>("shape")?;
    let &[nrows, ncols] = shape.as_slice() else {
        return Err(err(format!(
            "shape.npy holds {} numbers, not 2",
            shape.len()
        )));
    };
    let (nrows, ncols) = (nrows as usize, ncols as usize);
    let (outer, inner) = match format.as_str() {
        "csr" => (nrows, ncols),
        "csc" => (ncols, nrows),
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

/// One `.npy` member: its element type and its bytes, read whole.
struct Member {
    name: String,
    kind: TypeChar,
    size: usize,
    bytes: Vec<u8>,
}

fn member<R: Read + Seek>(zip: &mut zip::ZipArchive<R>, name: &str) -> Result<Member> {
    let file = format!("{name}.npy");
    let entry = zip.by_name(&file).map_err(|_| {
        err(format!(
            "missing member '{file}' (not a file of scipy.sparse.save_npz?)"
        ))
    })?;
    let npy = npyz::NpyFile::new(entry).map_err(|e| err(format!("{file}: {e}")))?;
    let npyz::DType::Plain(ty) = npy.dtype() else {
        return Err(err(format!("{file}: a record dtype is not supported")));
    };
    if ty.endianness() == npyz::Endianness::Big && ty.num_bytes() != Some(1) {
        return Err(err(format!(
            "{file}: big-endian dtype '{ty}' is not supported"
        )));
    }
    let size = ty.num_bytes().unwrap_or(0);
    let len = npy.len() as usize;
    let total = len
        .checked_mul(size)
        .ok_or_else(|| err(format!("{file}: {len} elements overflow")))?;
    let mut bytes = try_filled(total, 0u8, "npz member")?;
    let mut r = npy.into_inner();
    r.read_exact(&mut bytes)
        .map_err(|e| err(format!("{file}: {len} elements of '{ty}' expected: {e}")))?;
    Ok(Member {
        name: file,
        kind: ty.type_char(),
        size,
        bytes,
    })
}

/// Little-endian elements of `N` bytes as `u64`/`i64` bit patterns.
fn words<const N: usize>(bytes: &[u8]) -> impl IndexedParallelIterator<Item = [u8; N]> + '_ {
    bytes
        .par_chunks_exact(N)
        .map(|c| c.try_into().expect("chunks of N bytes"))
}

impl Member {
    /// The array as integers of type `I`, refusing negative or too large ones.
    fn integers<I: TryFrom<u64> + Send>(&self, what: &str) -> Result<Vec<I>> {
        let signed = match self.kind {
            TypeChar::Int => true,
            TypeChar::Uint => false,
            _ => {
                return Err(err(format!(
                    "{}: {what} must be integers, not '{:?}' of {} bytes",
                    self.name, self.kind, self.size
                )))
            }
        };
        let widen = |v: i128| -> std::result::Result<u64, i128> { u64::try_from(v).map_err(|_| v) };
        let wide: Vec<std::result::Result<u64, i128>> = match (self.size, signed) {
            (1, s) => self
                .bytes
                .par_iter()
                .map(|&b| widen(if s { b as i8 as i128 } else { b as i128 }))
                .collect(),
            (2, s) => words::<2>(&self.bytes)
                .map(|w| {
                    widen(if s {
                        i16::from_le_bytes(w) as i128
                    } else {
                        u16::from_le_bytes(w) as i128
                    })
                })
                .collect(),
            (4, s) => words::<4>(&self.bytes)
                .map(|w| {
                    widen(if s {
                        i32::from_le_bytes(w) as i128
                    } else {
                        u32::from_le_bytes(w) as i128
                    })
                })
                .collect(),
            (8, s) => words::<8>(&self.bytes)
                .map(|w| {
                    widen(if s {
                        i64::from_le_bytes(w) as i128
                    } else {
                        u64::from_le_bytes(w) as i128
                    })
                })
                .collect(),
            (n, _) => {
                return Err(err(format!(
                    "{}: integers of {n} bytes are not supported",
                    self.name
                )))
            }
        };
        wide.into_par_iter()
            .enumerate()
            .map(|(i, v)| {
                let v =
                    v.map_err(|v| err(format!("{}: {what}[{i}] = {v} is negative", self.name)))?;
                I::try_from(v).map_err(|_| {
                    err(format!(
                        "{}: {what}[{i}] = {v} is too large for this library",
                        self.name
                    ))
                })
            })
            .collect()
    }

    /// The array as values of type `T`.
    fn values<T: Scalar>(&self) -> Result<Vec<T>> {
        match (self.kind, self.size) {
            (TypeChar::Float, 8) => Ok(words::<8>(&self.bytes)
                .map(|w| T::from_f64(f64::from_le_bytes(w)))
                .collect()),
            (TypeChar::Float, 4) => Ok(words::<4>(&self.bytes)
                .map(|w| T::from_f64(f32::from_le_bytes(w) as f64))
                .collect()),
            (TypeChar::Int | TypeChar::Uint, _) => Ok(self
                .integers::<u64>("data")
                .map_err(|_| {
                    err(format!(
                        "{}: negative or too wide integer values are not supported",
                        self.name
                    ))
                })?
                .into_par_iter()
                .map(|v| T::from_f64(v as f64))
                .collect()),
            (k, n) => Err(err(format!(
                "{}: values of type '{k:?}' with {n} bytes are not supported (float32 or float64)",
                self.name
            ))),
        }
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
    let mut put = |name: &str,
                   bytes: &[u8],
                   head: &dyn Fn(&mut dyn Write) -> std::io::Result<()>|
     -> std::io::Result<()> {
        zip.start_file(format!("{name}.npy"), options)
            .map_err(to_io)?;
        head(&mut zip)?;
        zip.write_all(bytes)
    };
    fn header<E: npyz::AutoSerialize>(
        shape: &[u64],
    ) -> impl Fn(&mut dyn Write) -> std::io::Result<()> + '_ {
        move |w| {
            npyz::WriteOptions::<E>::new()
                .default_dtype()
                .shape(shape)
                .writer(w)
                .write_header_only()
                .map(|_| ())
        }
    }
    let n = m.nnz() as u64;
    let rows = m.nrows() as u64 + 1;
    if wide {
        let offsets: Vec<i64> = m.row_offsets().par_iter().map(|&o| o as i64).collect();
        let cols: Vec<i64> = m.col_indices().par_iter().map(|&c| c as i64).collect();
        put("indices", bytemuck::cast_slice(&cols), &header::<i64>(&[n]))?;
        put(
            "indptr",
            bytemuck::cast_slice(&offsets),
            &header::<i64>(&[rows]),
        )?;
    } else {
        let offsets: Vec<i32> = m.row_offsets().par_iter().map(|&o| o as i32).collect();
        let cols: Vec<i32> = m.col_indices().par_iter().map(|&c| c as i32).collect();
        put("indices", bytemuck::cast_slice(&cols), &header::<i32>(&[n]))?;
        put(
            "indptr",
            bytemuck::cast_slice(&offsets),
            &header::<i32>(&[rows]),
        )?;
    }
    let format_head = |w: &mut dyn Write| -> std::io::Result<()> {
        let dtype = npyz::DType::Plain("|S3".parse().expect("a valid type string"));
        npyz::WriteOptions::new_header_only()
            .dtype(dtype)
            .shape(&[])
            .writer(w)
            .write_header_only()
            .map(|_| ())
    };
    put("format", b"csr", &format_head)?;
    let shape = [m.nrows() as i64, m.ncols() as i64];
    put("shape", bytemuck::cast_slice(&shape), &header::<i64>(&[2]))?;
    put("data", bytemuck::cast_slice(m.values()), &|w| {
        if T::NAME == "f32" {
            header::<f32>(&[n])(w)
        } else {
            header::<f64>(&[n])(w)
        }
    })?;
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
    fn not_a_zip_is_an_npz_error() {
        let e = read::<f64>(std::io::Cursor::new(b"hello".to_vec())).unwrap_err();
        assert!(matches!(e, Error::Npz(_)), "{e}");
    }
}
