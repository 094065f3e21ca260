//! Rows of C held in their windows on the GPU: in a banded product, a row
//! of A's products reach only the columns from its first column less B's
//! lower bandwidth to its last plus the upper; where those fit a table's
//! slots, the symbolic phase counts the row and the numeric phase (in the
//! bins of a warp a row) sums it with a column's slot its order, no hash
//! and no sort. The conformance suite checks plus-times `f64`; here every
//! other semiring, `f32` values and a pruned product (whose numeric
//! kernels keep the hash tables, after the symbolic phase's windows) on
//! banded matrices with holes, against the reference.

use crate::common;
use crate::common::conformance::banded_with_holes;
use spgemm::BackendKind;

pub fn trials() -> Vec<libtest_mimic::Trial> {
    common::BACKENDS
        .into_iter()
        .filter(|(kind, _)| *kind != BackendKind::Cpu)
        .map(|(kind, name)| {
            common::trial(
                kind,
                format!("{name}::windows::every_semiring_f32_and_pruning"),
                move || every_semiring_f32_and_pruning(kind),
            )
        })
        .collect()
}

/// Every semiring but plus-times, `f32` values and a pruned product
/// ([`every_semiring_f32_and_pruning`](crate::same_rows::every_semiring_f32_and_pruning))
/// on 17 diagonals with a fifth of the entries left out (rows of C up to
/// 33 entries, with gaps), large enough (2^25 products and more) for B's
/// bandwidths to be found.
fn every_semiring_f32_and_pruning(kind: BackendKind) {
    let band = banded_with_holes(220_000, 220_000, 17, 200, 4);
    crate::same_rows::every_semiring_f32_and_pruning(kind, &band);
}
