//! The parallel reader against the sequential one, the writer's round
//! trip, and the rules both readers share.

use super::*;
use proptest::prelude::*;

/// Parses with the sequential reader and with the parallel one at several
/// chunk sizes (1 byte cuts at every line), plain and gzip, and checks that
/// all agree: the same matrix, or the same error message.
fn both(text: &[u8]) -> std::result::Result<(Header, CsrMatrix<f64>), String> {
    let seq = parse_sequential::<f64>(text).map_err(|e| e.to_string());
    for chunk in [None, Some(1), Some(7), Some(64)] {
        let opts = ReadOptions {
            chunk_bytes: chunk,
            progress: None,
        };
        let par = parse_with::<f64>(text, &opts).map_err(|e| e.to_string());
        assert_eq!(par, seq, "chunk size {chunk:?}");
        let gz = gzip::member(text).unwrap();
        let par = read_bytes::<f64>(&gz, &opts).map_err(|e| e.to_string());
        assert_eq!(par, seq, "gzip, chunk size {chunk:?}");
    }
    seq
}

fn p(s: &str) -> std::result::Result<CsrMatrix<f64>, String> {
    both(s.as_bytes()).map(|(_, m)| m)
}

#[test]
fn symmetric_is_expanded_and_duplicates_summed() {
    let m = p("%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 4\n1 1 2\n2 1 -1\n3 2 5\n2 1 1\n").unwrap();
    assert_eq!(m.row_offsets(), &[0, 2, 4, 5]);
    assert_eq!(m.col_indices(), &[0, 1, 0, 2, 1]);
    assert_eq!(m.values(), &[2.0, 0.0, 0.0, 5.0, 5.0]);
}

#[test]
fn skew_symmetric_negates_mirror() {
    let m = p("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n").unwrap();
    assert_eq!(m.values(), &[-3.0, 3.0]);
}

#[test]
fn pattern_integer_and_array() {
    let m = p("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n").unwrap();
    assert_eq!(m.values(), &[1.0, 1.0]);
    let m = p("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -7\n").unwrap();
    assert_eq!(m.values(), &[-7.0]);
    let m = p("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n").unwrap();
    assert_eq!(m.row(0), (&[0u32, 1][..], &[1.0, 3.0][..]));
}

#[test]
fn lying_header_is_an_error_not_an_allocation() {
    let e = p("%%MatrixMarket matrix coordinate real general\n4000000000 4000000000 15000000000000000\n1 1 1\n").unwrap_err();
    assert!(e.starts_with("line 3:"), "{e}");
}

#[test]
fn an_array_whose_size_overflows_is_an_error_naming_the_size_line() {
    let e = p("%%MatrixMarket matrix array real general\n% c\n1000000000000000000 252\n4\n")
        .unwrap_err();
    assert!(
        e.contains("line 3") && e.contains("more than 2^64 entries"),
        "{e}"
    );
}

#[test]
fn errors_name_the_same_line_at_every_chunk_size() {
    let head = "%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 3\n";
    for (body, line) in [
        ("1 1 1\n2 1 1\n\n% x\n1 2 1\n", 8), // both triangles
        ("1 1 1\n2 1 1\n3 1 1\n4 1 1\n", 7), // more entries than declared
        ("1 1 1\n2 1 1\n3 1 x\n4 1 1\n", 6), // a bad value
        ("1 1 1\n2 1 1\n3 1 1\n4 1 x\n", 7), // a bad extra line is an extra line
        ("1 1 1\n2 1 1\n", 5),               // truncated
        ("1 1 1\n\n2 1 1\n% end\n", 7),      // truncated, comments counted
        ("1 1 1\n5 1 1\n3 1 1\n", 5),        // row out of range
    ] {
        let e = p(&format!("{head}{body}")).unwrap_err();
        assert!(e.starts_with(&format!("line {line}:")), "{body:?}: {e}");
    }
    let e = p("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n").unwrap_err();
    assert!(e.contains("line 3") && e.contains("diagonal"), "{e}");
}

#[test]
fn gzip_faults_name_a_byte() {
    let gz =
        gzip::member(b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n").unwrap();
    let e = read_bytes::<f64>(&gz[..gz.len() - 5], &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(e, Error::Gzip { .. }) && e.to_string().contains("truncated"),
        "{e}"
    );
    let mut bad = gz.clone();
    bad[12] ^= 0xff;
    bad[13] ^= 0xff;
    let e = read_bytes::<f64>(&bad, &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, Error::Gzip { .. }), "{e}");
}

#[test]
fn round_trip_is_exact_for_extreme_values() {
    let v = [0.1f64, -2.5e300, 3.0, 5e-324, f64::MAX, -0.0, f64::INFINITY];
    let m =
        CsrMatrix::from_triplets(3, 3, &[0, 0, 1, 1, 2, 2, 2], &[1, 2, 0, 2, 0, 1, 2], &v).unwrap();
    let mut buf = Vec::new();
    write(&mut buf, &m).unwrap();
    let back = both(&buf).unwrap().1;
    assert_eq!(back, m);
    assert!(back
        .values()
        .iter()
        .zip(&v)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn files_of_many_pieces_read_back_exactly_plain_and_gzip() {
    // 700,000 entries: pieces of 2^18 entries in more than one window.
    let m = crate::generate::uniform::<f64>(70_000, 5_000, 10, 3).unwrap();
    let dir = std::env::temp_dir().join(format!("spgemm-mtx-pieces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["m.mtx", "m.mtx.gz"] {
        let p = dir.join(name);
        let done = std::sync::atomic::AtomicU64::new(0);
        let report = |n: u64| done.store(n, std::sync::atomic::Ordering::Relaxed);
        write_path_with(&p, &m, Some(&report)).unwrap();
        assert_eq!(done.into_inner(), m.nnz() as u64);
        let back: CsrMatrix<f64> = read_path(&p).unwrap();
        assert_eq!(back, m, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A random coordinate file with comments, blank lines, CRLF endings,
/// duplicates and unsorted entries, in any field and symmetry.
fn arb_file() -> impl Strategy<Value = String> {
    let sym = prop_oneof![Just("general"), Just("symmetric"), Just("skew-symmetric")];
    let field = prop_oneof![Just("real"), Just("integer"), Just("pattern")];
    (
        sym,
        field,
        1usize..40,
        proptest::collection::vec((0usize..40, 0usize..40, -1e6f64..1e6, 0u8..12), 0..300),
    )
        .prop_map(|(sym, field, n, entries)| {
            let mut keep = Vec::new();
            for (i, j, v, deco) in entries {
                let (i, j) = (i % n, j % n);
                let (i, j) = if sym == "general" {
                    (i, j)
                } else {
                    (i.max(j), i.min(j))
                };
                if sym == "skew-symmetric" && i == j {
                    continue;
                }
                keep.push((i, j, v, deco));
            }
            keep.truncate(n * n);
            let mut s = format!(
                "%%MatrixMarket matrix coordinate {field} {sym}\n% random\n{n} {n} {}\n",
                keep.len()
            );
            for (i, j, v, deco) in keep {
                let val = match field {
                    "pattern" => String::new(),
                    "integer" => format!(" {}", v as i64),
                    _ => format!(" {v:e}"),
                };
                s += &format!(
                    "{} {}{val}{}",
                    i + 1,
                    j + 1,
                    if deco == 0 { "\r\n" } else { "\n" }
                );
                if deco == 1 {
                    s += "% comment\n";
                }
                if deco == 2 {
                    s += "\n";
                }
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn parallel_reader_equals_sequential(file in arb_file()) {
        let (_, m) = both(file.as_bytes()).unwrap();
        prop_assert!(m.is_sorted());
    }

    #[test]
    fn damaged_files_give_the_same_error(file in arb_file(), cut in 0usize..4000, byte in any::<u8>()) {
        let mut b = file.into_bytes();
        if !b.is_empty() {
            let at = cut % b.len();
            b[at] = byte;
            let _ = both(&b);
            let _ = both(&b[..at]);
        }
    }

    #[test]
    fn written_files_read_back_bit_for_bit(bits in proptest::collection::vec(any::<u64>(), 0..200), bits32 in proptest::collection::vec(any::<u32>(), 0..200)) {
        let n = bits.len();
        let v: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).filter(|x| !x.is_nan()).collect();
        let rows: Vec<usize> = (0..v.len()).collect();
        let cols = vec![0u32; v.len()];
        let m = CsrMatrix::from_triplets(n, 1, &rows, &cols, &v).unwrap();
        let mut buf = Vec::new();
        write(&mut buf, &m).unwrap();
        prop_assert_eq!(&parse::<f64>(&buf).unwrap().1, &m);
        let v: Vec<f32> = bits32.iter().map(|&b| f32::from_bits(b)).filter(|x| !x.is_nan()).collect();
        let rows: Vec<usize> = (0..v.len()).collect();
        let cols = vec![0u32; v.len()];
        let m = CsrMatrix::from_triplets(v.len(), 1, &rows, &cols, &v).unwrap();
        let mut buf = Vec::new();
        write(&mut buf, &m).unwrap();
        let back = parse::<f32>(&buf).unwrap().1;
        prop_assert!(back.values().iter().zip(m.values()).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}
