//! What the ranks send each other, and its size in bytes.
//!
//! Every message is a sequence of sections of 8-byte words: indices
//! (4 bytes each where the extent they index fits 32 bits, 8 otherwise),
//! then values, each section padded to a word. The model
//! ([`crate::model`]) and the algorithms size messages with the same
//! functions, so predicted and moved bytes agree by construction; the
//! tests check that the algorithms send what these functions say.
//!
//! Ranks are assumed to share byte order and value layout (one kind of
//! machine), as MPI's byte transfers do.

use crate::{Error, Result};
use spgemm_core::Scalar;

/// Bytes of one count exchanged per peer before a variable-size
/// exchange (an `MPI_Alltoall` of one 64-bit word per rank).
pub const COUNT_BYTES: u64 = 8;

/// Bytes of the header broadcast before a block (its number of entries).
pub const HEADER_BYTES: u64 = 8;

/// Width in bytes of an index below `extent`, or of a count up to it.
pub fn index_bytes(extent: u64) -> u64 {
    if extent <= u64::from(u32::MAX) {
        4
    } else {
        8
    }
}

/// `bytes` rounded up to a whole number of 8-byte words.
pub fn pad(bytes: u64) -> u64 {
    bytes.div_ceil(8) * 8
}

/// A list of `n` indices below `extent` (the 1D algorithm's request for
/// rows of B).
pub fn indices_bytes(n: u64, extent: u64) -> u64 {
    pad(n * index_bytes(extent))
}

/// `rows` rows holding `nnz` entries of a matrix with `ncols` columns:
/// the rows' lengths, their columns, their values (rows of B in the 1D
/// algorithm, blocks in 2D SUMMA).
pub fn rows_bytes(rows: u64, nnz: u64, ncols: u64, value_bytes: u64) -> u64 {
    pad(rows * index_bytes(ncols)) + pad(nnz * index_bytes(ncols)) + pad(nnz * value_bytes)
}

/// `n` entries as their count, rows, columns and values, of a matrix
/// `nrows × ncols` (entries moved to their owners); nothing is sent for
/// no entries.
pub fn triplets_bytes(n: u64, nrows: u64, ncols: u64, value_bytes: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    8 + pad(n * index_bytes(nrows)) + pad(n * index_bytes(ncols)) + pad(n * value_bytes)
}

/// A message under construction.
#[derive(Default)]
pub struct Writer {
    words: Vec<u64>,
}

impl Writer {
    /// Appends `indices`, each `index_bytes(extent)` wide.
    pub fn indices(&mut self, indices: impl ExactSizeIterator<Item = u64>, extent: u64) {
        let n = indices.len();
        let at = self.words.len();
        if index_bytes(extent) == 4 {
            // An odd count leaves half a word: u32::MAX, never an index
            // of 4 bytes, marks it.
            self.words.resize(at + n.div_ceil(2), u64::MAX);
            let out: &mut [u32] = bytemuck::cast_slice_mut(&mut self.words[at..]);
            for (o, i) in out.iter_mut().zip(indices) {
                *o = i as u32;
            }
        } else {
            self.words.extend(indices);
        }
    }

    /// Appends one 8-byte word.
    pub fn word(&mut self, w: u64) {
        self.words.push(w);
    }

    /// Appends `values`.
    pub fn values<T: Scalar>(&mut self, values: &[T]) {
        let bytes: &[u8] = bytemuck::cast_slice(values);
        let at = self.words.len();
        self.words.resize(at + bytes.len().div_ceil(8), 0);
        let out: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words[at..]);
        out[..bytes.len()].copy_from_slice(bytes);
    }

    /// The message's words.
    pub fn finish(self) -> Vec<u64> {
        self.words
    }
}

/// Indices read from a message, 4 or 8 bytes wide.
pub enum Indices<'a> {
    /// 32-bit indices.
    Narrow(&'a [u32]),
    /// 64-bit indices.
    Wide(&'a [u64]),
}

impl Indices<'_> {
    /// Index `i`.
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Indices::Narrow(s) => u64::from(s[i]),
            Indices::Wide(s) => s[i],
        }
    }

    /// Appends all of them to `out`.
    pub fn extend_into(&self, out: &mut Vec<u64>) {
        match self {
            Indices::Narrow(s) => out.extend(s.iter().map(|&i| u64::from(i))),
            Indices::Wide(s) => out.extend_from_slice(s),
        }
    }

    /// All of them, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many.
    pub fn len(&self) -> usize {
        match self {
            Indices::Narrow(s) => s.len(),
            Indices::Wide(s) => s.len(),
        }
    }
}

/// A received message, read section by section.
pub struct Reader<'a> {
    words: &'a [u64],
    from: usize,
}

impl<'a> Reader<'a> {
    /// Reads `words`, received from rank `from`.
    pub fn new(words: &'a [u64], from: usize) -> Self {
        Self { words, from }
    }

    fn take(&mut self, words: usize) -> Result<&'a [u64]> {
        if words > self.words.len() {
            return Err(Error::Protocol(format!(
                "a message from rank {} is {} words short",
                self.from,
                words - self.words.len()
            )));
        }
        let (head, rest) = self.words.split_at(words);
        self.words = rest;
        Ok(head)
    }

    /// The next 8-byte word.
    pub fn word(&mut self) -> Result<u64> {
        Ok(self.take(1)?[0])
    }

    /// The next `n` indices below `extent`.
    pub fn indices(&mut self, n: usize, extent: u64) -> Result<Indices<'a>> {
        if index_bytes(extent) == 4 {
            let w = self.take(n.div_ceil(2))?;
            Ok(Indices::Narrow(&bytemuck::cast_slice(w)[..n]))
        } else {
            Ok(Indices::Wide(self.take(n)?))
        }
    }

    /// All the remaining words as indices below `extent` (a list whose
    /// length the sender did not send).
    pub fn rest_indices(&mut self, extent: u64) -> Indices<'a> {
        let words = std::mem::take(&mut self.words);
        if index_bytes(extent) == 4 {
            let all: &[u32] = bytemuck::cast_slice(words);
            let n = all.len() - usize::from(all.last() == Some(&u32::MAX));
            Indices::Narrow(&all[..n])
        } else {
            Indices::Wide(words)
        }
    }

    /// The next `n` values.
    pub fn values<T: Scalar>(&mut self, n: usize) -> Result<&'a [T]> {
        let w = self.take((n * std::mem::size_of::<T>()).div_ceil(8))?;
        let bytes: &[u8] = bytemuck::cast_slice(w);
        Ok(bytemuck::cast_slice(&bytes[..n * std::mem::size_of::<T>()]))
    }

    /// Whether every word was read.
    pub fn is_done(&self) -> bool {
        self.words.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_round_trip_at_the_sizes_the_model_counts() {
        for extent in [10u64, 1 << 40] {
            let mut w = Writer::default();
            w.indices([1u64, 2].into_iter(), extent);
            w.indices([9u64, 2, 5].into_iter(), extent);
            w.values(&[1.5f32, 2.5, 3.5]);
            let words = w.finish();
            assert_eq!(words.len() as u64 * 8, rows_bytes(2, 3, extent, 4));
            let mut r = Reader::new(&words, 0);
            let lens: Vec<u64> = r.indices(2, extent).unwrap().iter().collect();
            assert_eq!(lens, [1, 2]);
            let cols: Vec<u64> = r.indices(3, extent).unwrap().iter().collect();
            assert_eq!(cols, [9, 2, 5]);
            assert_eq!(r.values::<f32>(3).unwrap(), &[1.5, 2.5, 3.5]);
            assert!(r.is_done());
            for n in [0u64, 1, 2, 3] {
                let mut w = Writer::default();
                w.indices((0..n as usize).map(|i| i as u64), extent);
                let words = w.finish();
                assert_eq!(words.len() as u64 * 8, indices_bytes(n, extent));
                let got: Vec<u64> = Reader::new(&words, 0).rest_indices(extent).iter().collect();
                assert_eq!(got, (0..n).collect::<Vec<_>>());
            }
            assert!(r.values::<f64>(1).is_err());
        }
    }
}
