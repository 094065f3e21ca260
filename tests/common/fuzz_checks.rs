// The checks behind the fuzz targets (`fuzz/fuzz_targets/`), shared with
// the regression test `tests/integration/fuzz_regressions.rs`, which replays the corpus
// and every saved crash input on stable Rust in CI. Each check panics only
// on a bug: bad input must come back as an error.

/// Matrix Market bytes (plain or gzip), read by the parallel reader with
/// chunks of 1 to 64 bytes (chosen by the first byte, so chunk boundaries
/// fall everywhere): reading never panics, gives exactly the matrix or the
/// error message of the sequential reader on the same text, and a matrix
/// read satisfies every CSR invariant, sorted. Gzip input that does not
/// decompress must be a gzip error naming a byte. Read as `f64` and as
/// `i64` (whose reader refuses values that are not integers).
pub fn mtx_read(data: &[u8]) {
    mtx_read_as::<f64>(data);
    mtx_read_as::<i64>(data);
}

fn mtx_read_as<T: spgemm_core::Scalar>(data: &[u8]) {
    use spgemm_core::mtx;
    use std::io::Read;
    let chunk = 1 + data.first().map_or(0, |&b| b as usize % 64);
    let opts = mtx::ReadOptions {
        chunk_bytes: Some(chunk),
        progress: None,
    };
    let par = mtx::read_bytes::<T>(data, &opts);
    let text = if data.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        if flate2::read::MultiGzDecoder::new(data)
            .read_to_end(&mut out)
            .is_err()
        {
            assert!(
                matches!(par, Err(spgemm_core::Error::Gzip { .. })),
                "a bad gzip stream gave {:?}",
                par.map(|_| ())
            );
            return;
        }
        out
    } else {
        data.to_vec()
    };
    let seq = mtx::parse_sequential::<T>(&text);
    match (&par, &seq) {
        (Ok((hp, p)), Ok((hs, s))) => {
            assert_eq!(hp, hs);
            assert_identical(p, s);
        }
        (Err(p), Err(s)) => assert_eq!(p.to_string(), s.to_string()),
        _ => panic!(
            "parallel {:?} but sequential {:?}",
            par.as_ref().map(|_| ()),
            seq.as_ref().map(|_| ())
        ),
    }
    if let Ok((header, m)) = par {
        assert_eq!((m.nrows(), m.ncols()), (header.nrows, header.ncols));
        m.check_sorted()
            .expect("the reader sorts and sums duplicates");
        assert_checked(&m);
    }
}

/// `a` and `b` have the same shape, structure and values, bit for bit.
/// Plain Matrix Market bytes read as the distributed reader reads them:
/// the body cut into 1 to 8 parts at line starts (after byte positions
/// chosen by the first bytes), each part parsed alone, the first error
/// decided from the parts' summaries and the entries built in file order.
/// Gives exactly the matrix or the error message of the sequential reader.
pub fn mtx_read_parts(data: &[u8]) {
    use spgemm_core::mtx::{self, part};
    let Ok((h, size_line, start)) = part::header(data) else {
        return;
    };
    if !h.coordinate {
        return;
    }
    let body = &data[start..];
    let parts = 1 + data.first().map_or(0, |&b| b as usize % 8);
    let mut cuts = vec![0usize];
    for k in 1..parts {
        let raw = data.get(k).map_or(0, |&b| b as usize * body.len() / 256);
        let at = if raw == 0 {
            0
        } else {
            body[raw - 1..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(body.len(), |q| raw + q)
        };
        cuts.push(at.max(*cuts.last().unwrap()));
    }
    cuts.push(body.len());
    let texts: Vec<&[u8]> = cuts.windows(2).map(|w| &body[w[0]..w[1]]).collect();
    let mut pieces: Vec<part::Part<f64>> = texts.iter().map(|t| part::parse_part(t, &h)).collect();
    let summaries: Vec<part::Summary> = pieces.iter().map(|p| p.summary).collect();
    let before = |k: usize| size_line + summaries[..k].iter().map(|s| s.lines).sum::<u64>();
    let first = part::first_error(&h, size_line, &summaries, |k, entry| {
        Ok(before(k) + part::entry_line(texts[k], entry))
    })
    .unwrap();
    // The parts' result first, the sequential reader's after, so that a
    // header declaring millions of rows holds two row-offset arrays at
    // once at most (as the `mtx_read` check does).
    let got = match first {
        Some(f) => Err(f
            .into_error(&h, |k, line| match pieces[k].error.take() {
                Some(spgemm_core::Error::Parse { message, .. }) => {
                    spgemm_core::Error::Parse { line, message }
                }
                other => other.expect("a part with an error line has an error"),
            })
            .to_string()),
        None => {
            let entries = pieces
                .into_iter()
                .map(|p| (p.rows, p.cols, p.values))
                .collect();
            match part::build_rows(h.nrows, h.ncols, entries) {
                Ok(m) => Ok(m),
                // Only the host's memory can refuse a parsed file here (a
                // header declaring more rows than fit, when the fuzzer
                // lets allocations fail): the whole read fails alike.
                Err(e) => {
                    assert!(
                        matches!(e, spgemm_core::Error::HostOutOfMemory { .. }),
                        "{e}"
                    );
                    assert!(mtx::parse_sequential::<f64>(data).is_err());
                    return;
                }
            }
        }
    };
    match (got, mtx::parse_sequential::<f64>(data)) {
        (Err(p), Err(s)) => assert_eq!(p, s.to_string()),
        (Ok(p), Ok((_, s))) => assert_identical(&p, &s),
        (p, s) => panic!(
            "parts {:?} but sequential {:?}",
            p.map(|_| ()),
            s.map(|_| ())
        ),
    }
}

fn assert_identical<T: spgemm_core::Scalar>(
    a: &spgemm_core::CsrMatrix<T>,
    b: &spgemm_core::CsrMatrix<T>,
) {
    assert_eq!(a.shape(), b.shape());
    assert_eq!(a.row_offsets(), b.row_offsets());
    assert_eq!(a.col_indices(), b.col_indices());
    let bytes =
        |m: &spgemm_core::CsrMatrix<T>| -> Vec<u8> { bytemuck::cast_slice(m.values()).to_vec() };
    assert_eq!(bytes(a), bytes(b), "values differ");
}

/// A matrix read from a file passes the checked constructor.
fn assert_checked<T: spgemm_core::Scalar>(m: &spgemm_core::CsrMatrix<T>) {
    let again = spgemm_core::CsrMatrix::new(
        m.nrows(),
        m.ncols(),
        m.row_offsets().to_vec(),
        m.col_indices().to_vec(),
        m.values().to_vec(),
    );
    assert!(
        again.is_ok(),
        "a matrix read from a file fails the checked constructor"
    );
}

/// Bytes read as a SciPy `.npz` archive: reading never panics nor
/// allocates for sizes the archive does not hold; a matrix read satisfies
/// every CSR invariant and comes back equal, bit for bit, after our own
/// writer (compressed and stored) and reader. Read as `f64` and as `i64`.
pub fn npz_read(data: &[u8]) {
    npz_read_as::<f64>(data);
    npz_read_as::<i64>(data);
}

fn npz_read_as<T: spgemm_core::Scalar>(data: &[u8]) {
    use spgemm_core::npz;
    use std::io::Cursor;
    let Ok(m) = npz::read::<T>(Cursor::new(data)) else {
        return;
    };
    assert_checked(&m);
    for compressed in [false, true] {
        let mut out = Cursor::new(Vec::new());
        npz::write(&mut out, &m, compressed).expect("writing to memory");
        let back = npz::read::<T>(Cursor::new(out.into_inner())).expect("our own archive");
        assert_identical(&back, &m);
    }
}

/// An `.npz` file read as the distributed reader reads one with stored
/// arrays: its rows cut into 1 to 8 parts (at rows chosen by the first
/// bytes), each read alone from the file's bytes. The parts give the
/// sequential reader's matrix when it reads one and fail when it fails
/// (with several faults in a file, the first named may differ).
pub fn npz_read_parts(data: &[u8]) {
    use spgemm_core::npz::{self, StoredCsr};
    let sequential = || npz::read::<f64>(std::io::Cursor::new(data));
    let layout = match StoredCsr::find(data) {
        Ok(Some(layout)) => layout,
        Ok(None) => return,
        Err(e) => {
            assert!(
                sequential().is_err(),
                "the layout failed ({e}), the whole read did not"
            );
            return;
        }
    };
    let n = layout.nrows;
    let parts = 1 + data.first().map_or(0, |&b| b as usize % 8);
    let mut cuts: Vec<usize> = (1..parts)
        .map(|k| data.get(k).map_or(0, |&b| b as usize * n / 256))
        .collect();
    cuts.sort_unstable();
    cuts.insert(0, 0);
    cuts.push(n);
    let got = (|| {
        let (mut offsets, mut cols, mut vals) = (vec![0usize], Vec::new(), Vec::new());
        let mut sums = Vec::new();
        for w in cuts.windows(2) {
            let part = layout.read_rows::<f64>(data, w[0]..w[1])?;
            let base = *offsets.last().expect("one offset at least");
            offsets.extend(part.offsets[1..].iter().map(|x| x + base));
            cols.extend(part.cols);
            vals.extend(part.values);
            sums.push(part.sums);
        }
        layout.check_sums(data, &sums)?;
        spgemm_core::CsrMatrix::new(n, layout.ncols, offsets, cols, vals)
    })();
    match (got, sequential()) {
        (Ok(p), Ok(s)) => assert_identical(&p, &s),
        (Err(_), Err(_)) => {}
        (p, s) => panic!(
            "parts {:?} but sequential {:?}",
            p.map(|_| ()),
            s.map(|_| ())
        ),
    }
}

/// `m` written as one stored `.npz` in parts of rows cut at `cuts` (0 to
/// its rows, ascending; parts may be empty), as the distributed writer
/// writes it: every part's pieces, then the headers, placed into one
/// buffer of the archive's length.
pub fn npz_in_parts(m: &spgemm_core::CsrMatrix<f64>, cuts: &[usize]) -> Vec<u8> {
    use spgemm_core::npz::PartsLayout;
    let off = m.row_offsets();
    let sizes: Vec<(u64, u64)> = cuts
        .windows(2)
        .map(|w| ((w[1] - w[0]) as u64, (off[w[1]] - off[w[0]]) as u64))
        .collect();
    let layout = PartsLayout::new::<f64>(m.nrows() as u64, m.ncols() as u64, &sizes)
        .expect("parts covering the rows");
    let mut file = vec![0u8; layout.file_bytes() as usize];
    let mut place = |at: u64, bytes: &[u8]| {
        file[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    };
    let mut sums = Vec::new();
    for (k, w) in cuts.windows(2).enumerate() {
        let offsets: Vec<usize> = off[w[0]..=w[1]].iter().map(|&o| o - off[w[0]]).collect();
        let r = off[w[0]]..off[w[1]];
        let part = layout
            .part(
                k,
                &offsets,
                &m.col_indices()[r.clone()],
                u64::from,
                &m.values()[r],
            )
            .expect("a part of the layout's sizes");
        for (at, bytes) in &part.pieces {
            place(*at, bytes);
        }
        sums.push(part.sums);
    }
    for (at, bytes) in layout.headers(&sums).expect("every part's sums") {
        place(at, &bytes);
    }
    file
}

/// Bytes read as a small matrix (its shape, how many parts of rows and
/// where they are cut, then entries of 10 bytes: row, column, value) and
/// written in those parts as the distributed writer writes a stored
/// `.npz` (empty parts too): the archive reads back as the matrix, bit for
/// bit, whole and in the same parts with its checksums, as the sequential
/// writer's archive does.
pub fn npz_write_parts(data: &[u8]) {
    use spgemm_core::npz::{self, StoredCsr};
    use spgemm_core::CsrMatrix;
    let byte = |k: usize| data.get(k).map_or(0, |&b| b as usize);
    let (nrows, ncols) = (byte(0) % 48, 1 + byte(1) % 48);
    let parts = 1 + byte(2) % 8;
    let mut cuts: Vec<usize> = (0..parts - 1)
        .map(|k| byte(3 + k) * (nrows + 1) / 256)
        .collect();
    cuts.sort_unstable();
    cuts.insert(0, 0);
    cuts.push(nrows);
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    if nrows > 0 {
        for t in data.get(2 + parts..).unwrap_or(&[]).chunks_exact(10) {
            rows.push(t[0] as usize % nrows);
            cols.push(t[1] as u32 % ncols as u32);
            vals.push(f64::from_le_bytes(t[2..].try_into().expect("8 bytes")));
        }
    }
    let m = CsrMatrix::from_triplets(nrows, ncols, &rows, &cols, &vals)
        .expect("entries inside the shape");
    let file = npz_in_parts(&m, &cuts);
    let whole = npz::read::<f64>(std::io::Cursor::new(&file)).expect("the archive reads back");
    assert_identical(&whole, &m);
    let stored = StoredCsr::find(&file)
        .expect("a layout")
        .expect("stored members");
    let mut sums = Vec::new();
    let mut back = (vec![0usize], Vec::new(), Vec::new());
    for w in cuts.windows(2) {
        let part = stored
            .read_rows::<f64>(&file, w[0]..w[1])
            .expect("its rows read");
        let base = *back.0.last().expect("one offset at least");
        back.0.extend(part.offsets[1..].iter().map(|x| x + base));
        back.1.extend(part.cols);
        back.2.extend(part.values);
        sums.push(part.sums);
    }
    stored.check_sums(&file, &sums).expect("the checksums");
    let parts = CsrMatrix::new(nrows, ncols, back.0, back.1, back.2).expect("a matrix");
    assert_identical(&parts, &m);
    let mut sequential = std::io::Cursor::new(Vec::new());
    npz::write(&mut sequential, &m, false).expect("written to memory");
    let again = npz::read::<f64>(std::io::Cursor::new(sequential.into_inner()))
        .expect("the sequential archive reads back");
    assert_identical(&again, &whole);
}

/// Bytes read as a small CSR matrix (shape, offsets, columns, values in
/// turn): the checked constructors never panic; when one accepts, the CPU
/// backend's product of the matrix with its transpose matches the reference.
pub fn csr_multiply(data: &[u8]) {
    let mut it = data.iter().copied();
    let mut next = || it.next().unwrap_or(0);
    let nrows = (next() % 24) as usize;
    let ncols = (next() % 24) as usize;
    let mut offsets = vec![0usize];
    for _ in 0..nrows {
        let step = (next() % 6) as usize;
        // An occasional bad offset exercises the constructor's checks.
        let o = if step == 5 {
            offsets.last().unwrap().wrapping_sub(1)
        } else {
            offsets.last().unwrap().wrapping_add(step)
        };
        offsets.push(o);
    }
    let nnz = offsets.last().copied().unwrap_or(0).min(200);
    let cols: Vec<u32> = (0..nnz).map(|_| (next() % 26) as u32).collect();
    let vals: Vec<f64> = (0..nnz).map(|_| (next() as i8) as f64 / 4.0).collect();
    let sorted = spgemm_core::CsrMatrix::new_sorted(
        nrows,
        ncols,
        offsets.clone(),
        cols.clone(),
        vals.clone(),
    );
    let Ok(a) = spgemm_core::CsrMatrix::new(nrows, ncols, offsets, cols, vals) else {
        assert!(sorted.is_err(), "new_sorted accepted what new refused");
        return;
    };
    assert_eq!(sorted.is_ok(), a.is_sorted());
    let at = a.transpose().expect("transpose of a valid matrix");
    let c = spgemm_cpu::CpuBackend::new()
        .multiply(&a, &at)
        .expect("valid shapes");
    spgemm_core::verify::check_product(&a, &at, &c)
        .expect("reference")
        .expect("CPU backend agrees with the reference");
}
