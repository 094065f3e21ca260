//! Multiplying matrices held by sprs, faer and nalgebra-sparse, reading
//! their arrays in place: `cargo run --example interop --features sprs,faer,nalgebra-sparse`.
use spgemm::interop::CsrCow;
use spgemm::{Backend, BackendKind, CsrMatrix, CsrView};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (backend, _) = Backend::select(BackendKind::Auto)?;
    // sprs with u32 column indices has our arrays: a view, no copy.
    let a: sprs::CsMatI<f64, u32, usize> = sprs::CsMatI::eye(4);
    let c: CsrMatrix<f64> = backend.multiply(CsrView::try_from(&a)?, CsrView::try_from(&a)?)?;
    let c: sprs::CsMatI<f64, u32, usize> = c.try_into()?; // arrays moved back
    assert_eq!(c.nnz(), 4);
    // faer keeps one index type: u32 offsets are widened, the rest is borrowed.
    let f: faer::sparse::SparseRowMat<u32, f64> = CsrMatrix::<f64>::zeros(3, 3)?.try_into()?;
    let f = CsrCow::try_from(f.as_ref())?;
    assert_eq!(backend.multiply(&f, &f)?.nnz(), 0);
    // nalgebra-sparse: usize offsets borrowed, column indices narrowed to u32.
    let n = nalgebra_sparse::CsrMatrix::<f64>::identity(5);
    let n = CsrCow::try_from(&n)?;
    let c: nalgebra_sparse::CsrMatrix<f64> = backend.multiply(&n, &n)?.try_into()?;
    assert_eq!(c.nnz(), 5);
    Ok(())
}
