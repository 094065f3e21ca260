//! One stored `.npz` archive written in parts by several writers (the
//! ranks of a distributed matrix, each its own rows): where every byte of
//! the archive goes, so that each writer puts its rows' elements of
//! `indptr`, `indices` and `data` at their offsets ([`PartsLayout::part`])
//! and one writer puts the rest ([`PartsLayout::headers`]): the zip
//! headers, the `.npy` headers, `format` and `shape`, and the central
//! directory, once the members' CRC-32 are known from every part's
//! (crc32fast's `combine`). No zip crate writes one archive from several
//! processes, so the container is laid out here, as the `zip` crate lays
//! out stored ZIP64 members (PKWARE's APPNOTE.TXT 6.3, §4.3 and §4.5.3):
//! the archive is the one [`super::write`] makes of the same matrix, but
//! for the zip headers' fields, and reads back through the same reader.

use super::{format_head, npy_head, PartSums};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// A member: its name, where its local header starts, its `.npy` header,
/// and the bytes of its array after that header.
struct Member {
    name: &'static str,
    at: u64,
    head: Vec<u8>,
    array: u64,
}

impl Member {
    /// Where the member's `.npy` header starts (after its local header).
    fn data(&self) -> u64 {
        self.at + LOCAL_HEADER + self.name.len() as u64 + LOCAL_EXTRA
    }

    /// Where element `k` of its array (of `size` bytes each) lies.
    fn element(&self, k: u64, size: u64) -> u64 {
        self.data() + self.head.len() as u64 + k * size
    }

    /// The member's bytes in the archive (`.npy` header and array).
    fn len(&self) -> u64 {
        self.head.len() as u64 + self.array
    }
}

/// Fixed part of a local file header, and its ZIP64 extra field (both
/// sizes).
const LOCAL_HEADER: u64 = 30;
const LOCAL_EXTRA: u64 = 20;
/// Fixed part of a central directory header, and its ZIP64 extra field
/// (both sizes and the local header's offset).
const CENTRAL_HEADER: u64 = 46;
const CENTRAL_EXTRA: u64 = 28;
/// Version needed to extract ZIP64 (4.5).
const VERSION: u16 = 45;
/// DOS date of 1980-01-01 (the earliest a zip can name), time 00:00.
const DOS_DATE: u16 = (1 << 5) | 1;

/// The layout of a stored `.npz` of a CSR matrix written in parts of
/// consecutive rows: `indices`, `indptr`, `format`, `shape`, `data`, in
/// the order and with the dtypes [`super::write`] gives them.
pub struct PartsLayout {
    nrows: u64,
    ncols: u64,
    /// `indptr` and `indices` as int64 (else int32).
    wide: bool,
    value_size: u64,
    /// Each part's first row and first entry, and the totals after the
    /// last.
    starts: Vec<(u64, u64)>,
    members: [Member; 5],
    /// Where the central directory starts.
    directory: u64,
}

/// One part's elements of `indptr`, `indices` and `data`: each with its
/// offset in the file, and their checksums.
pub struct PartBytes {
    /// `(offset, bytes)` of `indptr`, `indices` and `data`.
    pub pieces: [(u64, Vec<u8>); 3],
    /// CRC-32 and length of each, in the same order.
    pub sums: PartSums,
}

impl PartsLayout {
    /// The layout of an `nrows × ncols` matrix of `T` whose parts have
    /// `parts[k] = (rows, entries)`, in order.
    ///
    /// # Errors
    /// [`Error::Npz`] when the parts' rows do not add up to `nrows`.
    pub fn new<T: Scalar>(nrows: u64, ncols: u64, parts: &[(u64, u64)]) -> Result<Self> {
        let mut starts = Vec::with_capacity(parts.len() + 1);
        let (mut row, mut entry) = (0u64, 0u64);
        for &(rows, entries) in parts {
            starts.push((row, entry));
            row += rows;
            entry += entries;
        }
        starts.push((row, entry));
        if row != nrows {
            return Err(Error::Npz(format!(
                "parts of {row} rows in all for a matrix of {nrows}"
            )));
        }
        let nnz = entry;
        let wide = nnz > i32::MAX as u64 || ncols > i32::MAX as u64;
        let index = if wide { 8 } else { 4 };
        let value_size = std::mem::size_of::<T>() as u64;
        let index_head = |n: u64| {
            if wide {
                npy_head::<i64>(&[n])
            } else {
                npy_head::<i32>(&[n])
            }
        };
        let value_head = super::values_head::<T>(nnz);
        let specs = [
            ("indices.npy", index_head(nnz), index * nnz),
            ("indptr.npy", index_head(nrows + 1), index * (nrows + 1)),
            ("format.npy", format_head(), 3),
            ("shape.npy", npy_head::<i64>(&[2]), 16),
            ("data.npy", value_head, value_size * nnz),
        ];
        let mut at = 0u64;
        let members = specs.map(|(name, head, array)| {
            let m = Member {
                name,
                at,
                head,
                array,
            };
            at = m.data() + m.len();
            m
        });
        Ok(Self {
            nrows,
            ncols,
            wide,
            value_size,
            starts,
            members,
            directory: at,
        })
    }

    /// The archive's length in bytes.
    pub fn file_bytes(&self) -> u64 {
        let names: u64 = self.members.iter().map(|m| m.name.len() as u64).sum();
        self.directory + 5 * (CENTRAL_HEADER + CENTRAL_EXTRA) + names + 56 + 20 + 22
    }

    /// Part `k`'s elements, from its rows' `offsets` (from 0, rows + 1),
    /// their columns (`global` of each of `cols`) and `values`; the last
    /// part also writes `indptr`'s final element.
    ///
    /// # Errors
    /// [`Error::Npz`] when the part's sizes are not those of the layout.
    pub fn part<T: Scalar>(
        &self,
        k: usize,
        offsets: &[usize],
        cols: &[u32],
        global: impl Fn(u32) -> u64 + Sync,
        values: &[T],
    ) -> Result<PartBytes> {
        let ((row, entry), (next_row, next_entry)) =
            match (self.starts.get(k), self.starts.get(k + 1)) {
                (Some(&s), Some(&e)) => (s, e),
                _ => {
                    return Err(Error::Npz(format!(
                        "no part {k} in a layout of {}",
                        self.starts.len() - 1
                    )))
                }
            };
        let rows = (next_row - row) as usize;
        let entries = (next_entry - entry) as usize;
        if offsets.len() != rows + 1 || cols.len() != entries || values.len() != entries {
            return Err(Error::Npz(format!(
                "part {k}: {} row offsets, {} columns and {} values for {rows} rows and {entries} entries",
                offsets.len(),
                cols.len(),
                values.len()
            )));
        }
        let last = k + 2 == self.starts.len();
        let ptrs = &offsets[..if last { rows + 1 } else { rows }];
        let (indptr, indices) = if self.wide {
            (
                ptrs.par_iter()
                    .flat_map_iter(|&o| (entry as i64 + o as i64).to_le_bytes())
                    .collect::<Vec<u8>>(),
                cols.par_iter()
                    .flat_map_iter(|&c| (global(c) as i64).to_le_bytes())
                    .collect::<Vec<u8>>(),
            )
        } else {
            (
                ptrs.par_iter()
                    .flat_map_iter(|&o| ((entry + o as u64) as i32).to_le_bytes())
                    .collect::<Vec<u8>>(),
                cols.par_iter()
                    .flat_map_iter(|&c| (global(c) as i32).to_le_bytes())
                    .collect::<Vec<u8>>(),
            )
        };
        let data = bytemuck::cast_slice::<T, u8>(values).to_vec();
        let index = if self.wide { 8 } else { 4 };
        let [indices_m, indptr_m, _, _, data_m] = &self.members;
        let pieces = [
            (indptr_m.element(row, index), indptr),
            (indices_m.element(entry, index), indices),
            (data_m.element(entry, self.value_size), data),
        ];
        let sums = [0, 1, 2].map(|i| {
            let bytes = &pieces[i].1;
            (crc32fast::hash(bytes), bytes.len() as u64)
        });
        Ok(PartBytes { pieces, sums })
    }

    /// Everything but the parts' elements, as `(offset, bytes)`: each
    /// member's local header and `.npy` header (`format` and `shape`
    /// whole), and the central directory with the ZIP64 end records, given
    /// every part's checksums in order.
    ///
    /// # Errors
    /// [`Error::Npz`] when `sums` has not one entry per part.
    pub fn headers(&self, sums: &[PartSums]) -> Result<Vec<(u64, Vec<u8>)>> {
        if sums.len() + 1 != self.starts.len() {
            return Err(Error::Npz(format!(
                "checksums of {} parts for a layout of {}",
                sums.len(),
                self.starts.len() - 1
            )));
        }
        let small = [b"csr".to_vec(), {
            let shape = [self.nrows as i64, self.ncols as i64];
            bytemuck::cast_slice::<i64, u8>(&shape).to_vec()
        }];
        let mut out = Vec::new();
        let mut crcs = [0u32; 5];
        for (i, m) in self.members.iter().enumerate() {
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(&m.head);
            // Indices, indptr and data come in parts (sums' order: indptr,
            // indices, data); format and shape whole.
            match i {
                0 | 1 | 4 => {
                    let j = [1, 0, 0, 0, 2][i];
                    for s in sums {
                        hasher.combine(&crc32fast::Hasher::new_with_initial_len(s[j].0, s[j].1));
                    }
                }
                _ => hasher.update(&small[i - 2]),
            }
            crcs[i] = hasher.finalize();
            let mut bytes = local_header(m, crcs[i]);
            bytes.extend_from_slice(&m.head);
            if let 2 | 3 = i {
                bytes.extend_from_slice(&small[i - 2]);
            }
            out.push((m.at, bytes));
        }
        let mut dir = Vec::new();
        for (m, &crc) in self.members.iter().zip(&crcs) {
            dir.extend(central_header(m, crc));
        }
        let (start, size) = (self.directory, dir.len() as u64);
        let end64 = start + size;
        // ZIP64 end of central directory record (§4.3.14).
        put32(&mut dir, 0x0606_4b50);
        put64(&mut dir, 44);
        put16(&mut dir, VERSION);
        put16(&mut dir, VERSION);
        put32(&mut dir, 0);
        put32(&mut dir, 0);
        put64(&mut dir, 5);
        put64(&mut dir, 5);
        put64(&mut dir, size);
        put64(&mut dir, start);
        // Its locator (§4.3.15).
        put32(&mut dir, 0x0706_4b50);
        put32(&mut dir, 0);
        put64(&mut dir, end64);
        put32(&mut dir, 1);
        // End of central directory record (§4.3.16), pointing on to ZIP64.
        put32(&mut dir, 0x0605_4b50);
        put16(&mut dir, 0);
        put16(&mut dir, 0);
        put16(&mut dir, 5);
        put16(&mut dir, 5);
        put32(&mut dir, u32::MAX);
        put32(&mut dir, u32::MAX);
        put16(&mut dir, 0);
        debug_assert_eq!(start + dir.len() as u64, self.file_bytes());
        out.push((start, dir));
        Ok(out)
    }
}

fn put16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// A stored member's local file header (§4.3.7) with its ZIP64 extra
/// field giving both sizes.
fn local_header(m: &Member, crc: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity((LOCAL_HEADER + LOCAL_EXTRA) as usize + m.name.len());
    put32(&mut v, 0x0403_4b50);
    put16(&mut v, VERSION);
    put16(&mut v, 0);
    put16(&mut v, 0);
    put16(&mut v, 0);
    put16(&mut v, DOS_DATE);
    put32(&mut v, crc);
    put32(&mut v, u32::MAX);
    put32(&mut v, u32::MAX);
    put16(&mut v, m.name.len() as u16);
    put16(&mut v, LOCAL_EXTRA as u16);
    v.extend_from_slice(m.name.as_bytes());
    put16(&mut v, 1);
    put16(&mut v, 16);
    put64(&mut v, m.len());
    put64(&mut v, m.len());
    v
}

/// A stored member's central directory header (§4.3.12) with its ZIP64
/// extra field giving both sizes and the local header's offset.
fn central_header(m: &Member, crc: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity((CENTRAL_HEADER + CENTRAL_EXTRA) as usize + m.name.len());
    put32(&mut v, 0x0201_4b50);
    put16(&mut v, VERSION);
    put16(&mut v, VERSION);
    put16(&mut v, 0);
    put16(&mut v, 0);
    put16(&mut v, 0);
    put16(&mut v, DOS_DATE);
    put32(&mut v, crc);
    put32(&mut v, u32::MAX);
    put32(&mut v, u32::MAX);
    put16(&mut v, m.name.len() as u16);
    put16(&mut v, CENTRAL_EXTRA as u16);
    put16(&mut v, 0);
    put16(&mut v, 0);
    put16(&mut v, 0);
    put32(&mut v, 0);
    put32(&mut v, u32::MAX);
    v.extend_from_slice(m.name.as_bytes());
    put16(&mut v, 1);
    put16(&mut v, 24);
    put64(&mut v, m.len());
    put64(&mut v, m.len());
    put64(&mut v, m.at);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_that_miss_rows_are_refused() {
        assert!(PartsLayout::new::<f64>(10, 3, &[(4, 2), (5, 1)]).is_err());
        let layout = PartsLayout::new::<f64>(2, 2, &[(1, 1), (1, 1)]).unwrap();
        assert!(layout
            .part(0, &[0, 1], &[0, 1], u64::from, &[1.0, 2.0])
            .is_err());
        assert!(layout.part(2, &[0], &[], u64::from, &[] as &[f64]).is_err());
        assert!(layout.headers(&[]).is_err());
    }
}
