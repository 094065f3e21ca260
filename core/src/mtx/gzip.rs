//! Gzip in and out. Reading decompresses on one thread (flate2 on
//! zlib-rs) while the cores parse the text already decompressed; writing
//! compresses pieces of the text on all cores as independent gzip members,
//! which every gzip reader (gzip, zlib, Python, SciPy) reads as one stream.

use super::chunks::{assemble, parse_chunk, split_lines};
use super::text::{header, header_in, is_blank, is_comment, Lines};
use super::{sequential, Header, ReadOptions};
use crate::csr::CsrMatrix;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::io::{BufRead, Read};
use std::sync::mpsc;

/// Decompressed bytes handed from the decompressing thread at a time.
const BLOCK: usize = 4 << 20;

/// Whether `data` starts with the gzip magic bytes.
pub(super) fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b])
}

/// The compressed input as a `BufRead` that knows how far the decoder got.
struct Counting<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Read for Counting<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.data.len() - self.pos);
        out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl BufRead for Counting<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(&self.data[self.pos..])
    }
    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

/// A decoder over all gzip members of `data`.
fn decoder(data: &[u8]) -> flate2::bufread::MultiGzDecoder<Counting<'_>> {
    flate2::bufread::MultiGzDecoder::new(Counting { data, pos: 0 })
}

/// The error for a decoder failure after `pos` of `len` compressed bytes.
fn gzip_error(e: &std::io::Error, pos: usize, len: usize) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof || pos >= len {
        Error::Gzip {
            offset: len as u64,
            message: "the stream is truncated (it ends inside a member)".into(),
        }
    } else {
        Error::Gzip {
            offset: pos as u64,
            message: format!("corrupt data at or before this byte ({e})"),
        }
    }
}

/// Fills `buf` from `r` as far as it goes; the bytes read.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Decompresses `data` into blocks sent on `tx`, the last message an
/// error if the stream is bad; stops when the receiver is gone.
fn decompress(data: &[u8], tx: mpsc::SyncSender<Result<Vec<u8>>>, opts: &ReadOptions<'_>) {
    let mut dec = decoder(data);
    loop {
        let mut buf = vec![0u8; BLOCK];
        let n = match fill(&mut dec, &mut buf) {
            Ok(n) => n,
            Err(e) => {
                let _ = tx.send(Err(gzip_error(&e, dec.get_ref().pos, data.len())));
                return;
            }
        };
        if let Some(p) = opts.progress {
            p(dec.get_ref().pos as u64);
        }
        if n == 0 {
            return;
        }
        buf.truncate(n);
        if tx.send(Ok(buf)).is_err() {
            return;
        }
    }
}

/// Reads a gzip-compressed Matrix Market file: decompression on one
/// thread, chunks parsed on the others as soon as they are complete.
pub(super) fn read<T: Scalar>(
    data: &[u8],
    opts: &ReadOptions<'_>,
) -> Result<(Header, CsrMatrix<T>)> {
    let target = opts.chunk_bytes.unwrap_or(BLOCK);
    let (results_tx, results) = mpsc::channel();
    let mut head: Option<(Header, u64)> = None;
    let mut pending: Vec<u8> = Vec::new();
    let mut spawned = 0usize;
    std::thread::scope(|s| -> Result<()> {
        let (tx, blocks) = mpsc::sync_channel(4);
        s.spawn(move || decompress(data, tx, opts));
        rayon::in_place_scope(|rs| -> Result<()> {
            for block in blocks {
                pending.extend_from_slice(&block?);
                if head.is_none() {
                    // The header needs complete lines.
                    let Some(end) = memchr::memrchr(b'\n', &pending) else {
                        continue;
                    };
                    let Some((h, size_line, body)) = header_in(&pending[..end + 1])? else {
                        continue;
                    };
                    head = Some((h, size_line));
                    if !h.coordinate {
                        continue;
                    }
                    pending.drain(..body);
                }
                let Some((h, _)) = head else { continue };
                if !h.coordinate || pending.len() < target {
                    continue;
                }
                let Some(end) = memchr::memrchr(b'\n', &pending) else {
                    continue;
                };
                let rest = pending.split_off(end + 1);
                let text = std::mem::replace(&mut pending, rest);
                let (k, tx) = (spawned, results_tx.clone());
                rs.spawn(move |_| {
                    let _ = tx.send((k, parse_chunk::<T>(&text, &h)));
                });
                spawned += 1;
            }
            Ok(())
        })
    })?;
    let (h, size_line) = match head {
        Some(x) => x,
        None => {
            let (h, size_line, body) = header(&pending)?;
            if h.coordinate {
                pending.drain(..body);
            }
            (h, size_line)
        }
    };
    if !h.coordinate {
        // Dense `array` files (`pending` holds all of the text) are parsed
        // by the sequential reader.
        return sequential::parse_sequential(&pending);
    }
    for piece in split_lines(&pending, target) {
        let _ = results_tx.send((spawned, parse_chunk::<T>(piece, &h)));
        spawned += 1;
    }
    drop(results_tx);
    let mut chunks: Vec<_> = results.into_iter().collect();
    chunks.sort_by_key(|(k, _)| *k);
    let chunks = chunks.into_iter().map(|(_, c)| c).collect();
    let m = assemble(&h, size_line, chunks, |k| line_of_entry(data, size_line, k))?;
    Ok((h, m))
}

/// The line of the `k`-th entry line (1-based) after line `size_line`,
/// decompressing `data` again as a stream.
fn line_of_entry(data: &[u8], size_line: u64, k: u64) -> Result<u64> {
    let mut r = std::io::BufReader::with_capacity(1 << 20, decoder(data));
    let mut line = Vec::new();
    let (mut no, mut seen) = (0u64, 0u64);
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|e| gzip_error(&e, r.get_ref().get_ref().pos, data.len()))?;
        if n == 0 {
            return Ok(no);
        }
        no += 1;
        let text = Lines::new(&line).next().map_or(&[][..], |(_, l)| l);
        if no > size_line && !is_comment(text) && !is_blank(text) {
            seen += 1;
            if seen == k {
                return Ok(no);
            }
        }
    }
}

/// Compresses `text` as one gzip member (zlib-rs, fastest level).
pub(super) fn member(text: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(text.len() / 3),
        flate2::Compression::fast(),
    );
    enc.write_all(text)?;
    enc.finish()
}
