//! The reference SpGEMM against an independent oracle, `sprs`, on every
//! real matrix and on seeded random ones.

use crate::common;

use spgemm::{generate, reference, CsrMatrix};
use std::collections::BTreeMap;

fn to_sprs(m: &CsrMatrix<f64>) -> sprs::CsMat<f64> {
    let offsets: Vec<usize> = m.row_offsets().to_vec();
    let cols: Vec<usize> = m.col_indices().iter().map(|&c| c as usize).collect();
    sprs::CsMat::new((m.nrows(), m.ncols()), offsets, cols, m.values().to_vec())
}

/// Compares `ours` with sprs' product entry by entry; exact zeros may be
/// present on one side only (libraries differ on keeping cancellations).
fn agree(name: &str, a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) {
    let ours = reference::multiply(a, b).unwrap();
    let scale = reference::multiply_abs(a, b).unwrap();
    let theirs = &to_sprs(a) * &to_sprs(b);
    let tol = 8.0 * f64::EPSILON * (a.max_row_nnz() as f64 + 1.0);
    for i in 0..ours.nrows() {
        let mut mine: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
        let (c, v) = ours.row(i);
        let (_, s) = scale.row(i);
        for p in 0..c.len() {
            mine.insert(c[p], (v[p], s[p]));
        }
        let row = theirs.outer_view(i).expect("row");
        let mut seen = 0;
        for (j, &x) in row.iter() {
            let (y, s) = mine.get(&(j as u32)).copied().unwrap_or((0.0, x.abs()));
            assert!(
                (x - y).abs() <= tol * s + 1e-300,
                "{name}: ({i},{j}) sprs {x} vs reference {y}"
            );
            seen += 1;
        }
        let nonzero_mine = mine.values().filter(|(v, _)| *v != 0.0).count();
        assert!(
            seen >= nonzero_mine,
            "{name}: row {i}: reference has {nonzero_mine} nonzeros, sprs {seen} entries"
        );
    }
}

#[test]
fn reference_agrees_with_sprs_on_every_real_matrix() {
    for name in common::real_matrices() {
        let a = common::load::<f64>(&name);
        let b = common::partner(&a);
        agree(&name, &a, &b);
    }
}

#[test]
fn reference_agrees_with_sprs_on_seeded_random_matrices() {
    for seed in 0..6u64 {
        let a = generate::uniform::<f64>(150 + 37 * seed as usize, 211, 6, seed).unwrap();
        let b = generate::uniform::<f64>(211, 97 + seed as usize, 9, seed + 50).unwrap();
        agree(&format!("random seed {seed}"), &a, &b);
    }
}
