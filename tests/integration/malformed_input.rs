//! Malformed Matrix Market input: every fault is a clear error naming the
//! line, never a panic.

use spgemm::mtx;
use spgemm_core::Error;
use std::io::Write;

fn parse(text: &str) -> Error {
    mtx::parse::<f64>(text.as_bytes())
        .map(|_| ())
        .expect_err("must be refused")
}

fn line_of(e: &Error) -> u64 {
    match e {
        Error::Parse { line, .. } => *line,
        other => panic!("expected a parse error, got {other:?}"),
    }
}

const HEAD: &str = "%%MatrixMarket matrix coordinate real general\n";

#[test]
fn truncated_file() {
    let e = parse(&format!("{HEAD}3 3 3\n1 1 1.0\n2 2 2.0\n"));
    assert_eq!(line_of(&e), 4); // the last line of the file
    assert!(e.to_string().contains("2 of the 3 declared"), "{e}");
}

#[test]
fn more_entries_than_declared() {
    let e = parse(&format!("{HEAD}3 3 1\n1 1 1.0\n2 2 2.0\n"));
    assert_eq!(line_of(&e), 4);
}

#[test]
fn index_out_of_range() {
    let e = parse(&format!("{HEAD}3 3 1\n4 1 1.0\n"));
    assert_eq!(line_of(&e), 3);
    assert!(
        e.to_string().contains("row index 4 is out of range 1..=3"),
        "{e}"
    );
    let e = parse(&format!("{HEAD}3 3 1\n1 9 1.0\n"));
    assert!(e.to_string().contains("column index 9"), "{e}");
}

#[test]
fn index_zero() {
    let e = parse(&format!("{HEAD}3 3 1\n0 1 1.0\n"));
    assert!(e.to_string().contains("indices start at 1"), "{e}");
}

#[test]
fn bad_header() {
    for text in [
        "%%MatrixMarket matrix coordinate\n1 1 0\n",
        "%MatrixMarket matrix coordinate real general\n1 1 0\n",
        "%%MatrixMarket matrix sparse real general\n1 1 0\n",
        "%%MatrixMarket matrix coordinate reals general\n1 1 0\n",
        "%%MatrixMarket matrix coordinate real diagonal\n1 1 0\n",
        "",
    ] {
        assert_eq!(line_of(&parse(text)), 1, "{text:?}");
    }
    let e = parse("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n");
    assert!(e.to_string().contains("must be square"), "{e}");
}

#[test]
fn bad_numbers() {
    assert!(parse(&format!("{HEAD}2 2 1\n1 1 abc\n"))
        .to_string()
        .contains("'abc' is not a number"));
    assert!(parse(&format!("{HEAD}2 2 1\n1 x 1\n"))
        .to_string()
        .contains("not a non-negative integer"));
    assert!(parse(&format!("{HEAD}2 -2 1\n"))
        .to_string()
        .contains("number of columns"));
    assert!(parse(&format!("{HEAD}2 2 1\n1 1 1e999\n"))
        .to_string()
        .contains("overflows"));
    assert!(parse(&format!("{HEAD}2 2 1\n1 1\n"))
        .to_string()
        .contains("missing value"));
    assert!(parse(&format!("{HEAD}2 2 1\n1 1 1 1\n"))
        .to_string()
        .contains("extra token"));
    let e = parse("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n");
    assert!(e.to_string().contains("not an integer"), "{e}");
}

#[test]
fn symmetric_file_with_both_triangles() {
    let e = parse("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n");
    assert!(e.to_string().contains("both sides of the diagonal"), "{e}");
}

#[test]
fn complex_is_refused_until_supported() {
    let e = parse("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n");
    assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/matrices/young1c.mtx.gz");
    let e = mtx::read_path::<f64>(&path).unwrap_err();
    assert!(e.to_string().contains("complex"), "{e}");
}

#[test]
fn cut_gzip_stream() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    write!(gz, "{HEAD}3 3 3\n1 1 1\n2 2 2\n3 3 3\n").unwrap();
    let bytes = gz.finish().unwrap();
    for cut in [bytes.len() - 4, bytes.len() / 2, 12] {
        let e = mtx::read::<f64>(&bytes[..cut]).map(|_| ()).unwrap_err();
        assert!(
            e.to_string().contains("gzip") || e.to_string().contains("declared"),
            "cut at {cut}: {e}"
        );
    }
}

#[test]
fn header_declaring_billions_of_entries_does_not_allocate_them() {
    let e = parse(&format!("{HEAD}100000 100000 9999999999\n1 1 1\n"));
    assert!(e.to_string().contains("1 of the 9999999999"), "{e}");
}

#[test]
fn missing_file_names_the_path() {
    let e = mtx::read_path::<f64>("/no/such/file.mtx").unwrap_err();
    assert!(e.to_string().contains("/no/such/file.mtx"), "{e}");
}

#[test]
fn garbage_bytes_never_panic() {
    let mut g = spgemm::generate::SplitMix64::new(42, 0);
    for len in [0usize, 1, 7, 64, 500] {
        for _ in 0..200 {
            let mut bytes: Vec<u8> = HEAD.bytes().collect();
            bytes.extend((0..len).map(|_| b"0123456789 \n.-e%x"[g.below(17) as usize]));
            let _ = mtx::parse::<f64>(&bytes);
        }
    }
}

#[test]
fn billions_of_declared_rows_are_an_error_not_an_abort() {
    // One valid entry, but offsets for 4·10^18 rows cannot be allocated.
    let e = parse(&format!("{HEAD}4000000000000000000 1 1\n1 1 1\n"));
    assert!(matches!(e, Error::HostOutOfMemory { .. }), "{e:?}");
    assert!(e.to_string().contains("row offsets"), "{e}");
}
