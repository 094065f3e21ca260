//! The readers and writers on every real matrix of `data/matrices`:
//! the parallel reader (memory-mapped gzip path, and plain text cut into
//! small chunks) against the sequential one, and files written in every
//! format (`.mtx`, `.mtx.gz`, `.npz`) read back exactly.

use crate::common;

use spgemm::mtx::{self, ReadOptions};
use spgemm::CsrMatrix;
use std::io::Read;

fn bits(m: &CsrMatrix<f64>) -> Vec<u64> {
    m.values().iter().map(|v| v.to_bits()).collect()
}

fn same(a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) -> bool {
    a.shape() == b.shape()
        && a.row_offsets() == b.row_offsets()
        && a.col_indices() == b.col_indices()
        && bits(a) == bits(b)
}

#[test]
fn parallel_reader_equals_sequential_on_every_real_matrix() {
    let names = common::real_matrices();
    for name in &names {
        let path = common::matrices_dir().join(format!("{name}.mtx.gz"));
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_end(&mut text)
            .unwrap();
        let (h, want) = mtx::parse_sequential::<f64>(&text).unwrap();
        let (hp, gz) = mtx::read_path_with::<f64>(&path, &ReadOptions::default()).unwrap();
        assert_eq!(h, hp, "{name}");
        assert!(same(&gz, &want), "{name}: gzip path differs");
        for chunk in [997, 64 << 10] {
            let opts = ReadOptions {
                chunk_bytes: Some(chunk),
                progress: None,
            };
            let (_, plain) = mtx::parse_with::<f64>(&text, &opts).unwrap();
            assert!(
                same(&plain, &want),
                "{name}: chunks of {chunk} bytes differ"
            );
        }
    }
    assert!(names.len() >= 50);
}

#[test]
fn every_format_round_trips_every_real_matrix() {
    for name in common::real_matrices() {
        let a: CsrMatrix<f64> = common::load(&name);
        for ext in ["mtx", "mtx.gz", "npz"] {
            let p = common::temp_file("matrix-files", &format!("{name}.{ext}"));
            spgemm::files::write(&p, &a, None).unwrap();
            let back: CsrMatrix<f64> = spgemm::files::read(&p, &ReadOptions::default()).unwrap();
            assert!(same(&back, &a), "{name}.{ext}");
            std::fs::remove_file(&p).unwrap();
        }
    }
}
