//! Masked and complemented semiring products on the GPU backends against
//! the sequential reference (`reference::multiply_spec`): structural masks
//! by dot products, from the host and on matrices already on the device,
//! and complemented masks (the product, then the mask's entries dropped on
//! the device).

use crate::common;
use crate::semirings::{assert_close, lower_and_upper, mask_for};
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{generate, reference, BackendKind, CsrMatrix};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = Vec::new();
    for (kind, name) in [(BackendKind::Cuda, "cuda"), (BackendKind::Hip, "hip")] {
        trials.push(common::trial(
            kind,
            format!("{name}::semirings::masked_products_by_dot_products"),
            move || masked_products_by_dot_products(kind),
        ));
        trials.push(common::trial(
            kind,
            format!("{name}::semirings::masked_products_of_device_matrices"),
            move || masked_products_of_device_matrices(kind),
        ));
        trials.push(common::trial(
            kind,
            format!("{name}::semirings::complemented_masks_on_the_device"),
            move || complemented_masks_on_the_device(kind),
        ));
    }
    trials
}

/// Every semiring under a structural mask on a GPU backend (dot products)
/// against the reference: the same entries, the same values (within
/// rounding for `plus_times`, whose sums are combined in another order);
/// rows of the mask empty, longer than the products, or meeting none;
/// unsorted rows of A; hubs of R-MAT longer than a warp; `f32`; pruning
/// after; the triangles of ca-GrQc.
fn masked_products_by_dot_products(kind: BackendKind) {
    let (gpu, _) = spgemm::Backend::select(kind).unwrap();
    let a: CsrMatrix<f64> = generate::uniform(300, 170, 12, 31).unwrap();
    let a = a.map(|v| if v < 0.2 { 0.0 } else { v - 0.4 });
    let b: CsrMatrix<f64> = generate::uniform(170, 410, 40, 32).unwrap();
    let b = b.map(|v| v - 0.5);
    // Rows 0..10 of the mask empty, row 10 every column.
    let m = mask_for(300, 410, 60, 33).retain(|i, _, _| i >= 10);
    let full: Vec<u32> = (0..410).collect();
    let mut rows: Vec<(usize, u32)> = Vec::new();
    for i in 0..300 {
        let cols: &[u32] = if i == 10 { &full } else { m.row(i).0 };
        rows.extend(cols.iter().map(|&j| (i, j)));
    }
    let (ri, ci): (Vec<usize>, Vec<u32>) = rows.into_iter().unzip();
    let m = CsrMatrix::from_triplets(300, 410, &ri, &ci, &vec![1.0; ri.len()]).unwrap();
    let close = |x: f64, y: f64, ring: Semiring| {
        x == y
            || (x.is_nan() && y.is_nan())
            || (ring == Semiring::PlusTimes && (x - y).abs() <= 1e-12 * (1.0 + y.abs()))
    };
    let compare = |got: &CsrMatrix<f64>, want: &CsrMatrix<f64>, ring: Semiring, what: &str| {
        assert_eq!(got.row_offsets(), want.row_offsets(), "{what} {ring}: rows");
        assert_eq!(
            got.col_indices(),
            want.col_indices(),
            "{what} {ring}: columns"
        );
        let bad = got
            .values()
            .iter()
            .zip(want.values())
            .position(|(&x, &y)| !close(x, y, ring));
        assert_eq!(bad, None, "{what} {ring}: values");
    };
    for ring in Semiring::ALL {
        let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
        let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
        assert!(want.nnz() > 1000, "{ring}: {} entries", want.nnz());
        compare(
            &gpu.multiply_spec(&a, &b, &spec).unwrap(),
            &want,
            ring,
            "random",
        );
    }
    // Unsorted rows of A: each row reversed.
    let (o, c, v) = (a.row_offsets(), a.col_indices(), a.values());
    let (mut rc, mut rv) = (c.to_vec(), v.to_vec());
    for i in 0..a.nrows() {
        rc[o[i]..o[i + 1]].reverse();
        rv[o[i]..o[i + 1]].reverse();
    }
    let reversed = CsrMatrix::new(300, 170, o.to_vec(), rc, rv).unwrap();
    let spec = ProductSpec::new()
        .semiring(Semiring::MinPlus)
        .mask(m.view(), false);
    compare(
        &gpu.multiply_spec(&reversed, &b, &spec).unwrap(),
        &reference::multiply_spec(a.view(), b.view(), &spec).unwrap(),
        Semiring::MinPlus,
        "unsorted A",
    );
    // Hubs: C⟨G⟩ = G ⊕.⊗ G of an R-MAT graph, and pruning after.
    let g: CsrMatrix<f64> = generate::rmat(11, 16, 34).unwrap();
    assert!(g.max_row_nnz() > 256);
    for ring in [Semiring::MaxTimes, Semiring::PlusPair, Semiring::OrAnd] {
        let spec = ProductSpec::new().semiring(ring).mask(g.view(), false);
        let want = reference::multiply_spec(g.view(), g.view(), &spec).unwrap();
        compare(
            &gpu.multiply_spec(&g, &g, &spec).unwrap(),
            &want,
            ring,
            "R-MAT",
        );
    }
    let spec = ProductSpec::new()
        .semiring(Semiring::PlusPair)
        .mask(g.view(), false)
        .keep(3);
    let want = reference::multiply_spec(g.view(), g.view(), &spec).unwrap();
    assert_eq!(gpu.multiply_spec(&g, &g, &spec).unwrap(), want, "pruned");
    // f32.
    let (a32, b32, m32) = (
        a.map(|v| v as f32),
        b.map(|v| v as f32),
        m.map(|v| v as f32),
    );
    let spec = ProductSpec::new()
        .semiring(Semiring::MaxPlus)
        .mask(m32.view(), false);
    assert_eq!(
        gpu.multiply_spec(&a32, &b32, &spec).unwrap(),
        reference::multiply_spec(a32.view(), b32.view(), &spec).unwrap(),
        "f32"
    );
    // Triangles: 48,260 in ca-GrQc.
    let (l, u) = lower_and_upper("ca-GrQc");
    let spec = ProductSpec::new()
        .semiring(Semiring::PlusPair)
        .mask(l.view(), false);
    let c = gpu.multiply_spec(&l, &u, &spec).unwrap();
    assert_eq!(c.values().iter().sum::<f64>(), 48260.0);
}

/// `GpuEngine::masked_dot_device` on matrices already on the device, C
/// left there: a mask of its own, the mask as A's arrays, a mask every
/// entry of which a product meets (C is the mask's structure, nothing to
/// compact), an empty mask; A with unsorted rows refused; and, through
/// the host path, A repeating a column in a row refused by name.
#[allow(unreachable_code)] // without a GPU feature only the last arm is there
fn masked_products_of_device_matrices(kind: BackendKind) {
    let (gpu, _) = spgemm::Backend::select(kind).unwrap();
    match &gpu {
        #[cfg(feature = "cuda")]
        spgemm::Backend::Cuda(m) => masked_on_engine(&m.engines()[0]),
        #[cfg(feature = "hip")]
        spgemm::Backend::Hip(m) => masked_on_engine(&m.engines()[0]),
        _ => unreachable!("{kind:?} opened another backend"),
    }
    let a: CsrMatrix<f64> = generate::uniform(40, 30, 6, 41).unwrap();
    let (o, mut c, v) = (
        a.row_offsets().to_vec(),
        a.col_indices().to_vec(),
        a.values(),
    );
    let twice = c[o[5]];
    c[o[5] + 1] = twice;
    let repeated = CsrMatrix::new(40, 30, o, c, v.to_vec()).unwrap();
    let m = mask_for(40, 40, 6, 47);
    let spec = ProductSpec::new()
        .semiring(Semiring::PlusPair)
        .mask(m.view(), false);
    let b: CsrMatrix<f64> = generate::uniform(30, 40, 6, 42).unwrap();
    let err = gpu.multiply_spec(&repeated, &b, &spec).unwrap_err();
    let want = format!("row 5 of A repeats column {twice}");
    assert!(err.to_string().contains(&want), "{err}");
}

#[cfg(any(feature = "cuda", feature = "hip"))]
fn masked_on_engine<D: spgemm::device::Device>(e: &spgemm::gpu::GpuEngine<D>) {
    let a: CsrMatrix<f64> = generate::uniform(300, 170, 12, 43).unwrap();
    let b: CsrMatrix<f64> = generate::uniform(170, 410, 40, 44).unwrap();
    let b = b.map(|v| v - 0.5);
    let m = mask_for(300, 410, 60, 45);
    let (ga, gb, gm) = (
        e.upload(&a).unwrap(),
        e.upload(&b).unwrap(),
        e.upload(&m).unwrap(),
    );
    let exact = |got: &CsrMatrix<f64>, want: &CsrMatrix<f64>, what: &str| {
        assert_eq!(got.row_offsets(), want.row_offsets(), "{what}: rows");
        assert_eq!(got.col_indices(), want.col_indices(), "{what}: columns");
        let bad = got
            .values()
            .iter()
            .zip(want.values())
            .position(|(x, y)| (x - y).abs() > 1e-12 * (1.0 + y.abs()));
        assert_eq!(bad, None, "{what}: values");
    };
    for ring in [
        Semiring::PlusTimes,
        Semiring::MinPlus,
        Semiring::PlusPair,
        Semiring::AnyPair,
    ] {
        let c = e.masked_dot_device(&gm, &ga, &gb, ring).unwrap();
        let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
        let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
        assert!(
            want.nnz() > 1000 && want.nnz() < m.nnz(),
            "{ring}: {}",
            want.nnz()
        );
        exact(&e.download(&c).unwrap(), &want, &format!("own mask {ring}"));
    }
    // The mask is A, and B is A: C⟨G⟩ = G max.times G of R-MAT hubs.
    let g: CsrMatrix<f64> = generate::rmat(11, 16, 46).unwrap();
    let gg = e.upload(&g).unwrap();
    let c = e
        .masked_dot_device(&gg, &gg, &gg, Semiring::MaxTimes)
        .unwrap();
    let spec = ProductSpec::new()
        .semiring(Semiring::MaxTimes)
        .mask(g.view(), false);
    let want = reference::multiply_spec(g.view(), g.view(), &spec).unwrap();
    exact(&e.download(&c).unwrap(), &want, "mask is A");
    // Every entry of the mask met: the masked product's own structure.
    let met = reference::multiply_spec(
        a.view(),
        b.view(),
        &ProductSpec::new()
            .semiring(Semiring::PlusPair)
            .mask(m.view(), false),
    )
    .unwrap();
    let gmet = e.upload(&met).unwrap();
    let c = e
        .masked_dot_device(&gmet, &ga, &gb, Semiring::PlusTimes)
        .unwrap();
    let spec = ProductSpec::new().mask(met.view(), false);
    let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
    assert_eq!(want.nnz(), met.nnz());
    exact(&e.download(&c).unwrap(), &want, "every entry met");
    // An empty mask.
    let empty = e
        .upload(&CsrMatrix::<f64>::zeros(300, 410).unwrap())
        .unwrap();
    let c = e
        .masked_dot_device(&empty, &ga, &gb, Semiring::MinPlus)
        .unwrap();
    let c = e.download(&c).unwrap();
    assert_eq!((c.nrows(), c.ncols(), c.nnz()), (300, 410, 0));
    // Unsorted rows of A: refused, not searched wrongly.
    let (o, cols, vals) = (a.row_offsets(), a.col_indices(), a.values());
    let (mut rc, mut rv) = (cols.to_vec(), vals.to_vec());
    rc[o[7]..o[8]].reverse();
    rv[o[7]..o[8]].reverse();
    let reversed = e
        .upload(&CsrMatrix::new(300, 170, o.to_vec(), rc, rv).unwrap())
        .unwrap();
    let err = e
        .masked_dot_device(&gm, &reversed, &gb, Semiring::PlusTimes)
        .err()
        .expect("unsorted rows refused");
    assert!(err.to_string().contains("A's rows sorted"), "{err}");
}

/// Every semiring under a complemented mask on a GPU backend (the product,
/// then the mask's entries dropped on the device) against the reference:
/// empty and full mask rows, unsorted mask rows (sorted on the host), the
/// mask as A (`C⟨¬G⟩ = G any.pair G`: two hops, not adjacent, over R-MAT
/// hubs), pruning after; on the device, a mask of its own and unsorted
/// mask rows refused.
fn complemented_masks_on_the_device(kind: BackendKind) {
    let (gpu, _) = spgemm::Backend::select(kind).unwrap();
    let a: CsrMatrix<f64> = generate::uniform(300, 170, 12, 51).unwrap();
    let b: CsrMatrix<f64> = generate::uniform(170, 410, 40, 52).unwrap();
    let b = b.map(|v| v - 0.5);
    // Rows 0..10 of the mask empty, row 10 every column, every row reversed.
    let m = mask_for(300, 410, 60, 53);
    let mut rows: Vec<(usize, u32)> = Vec::new();
    for i in 10..300 {
        let cols: Vec<u32> = if i == 10 {
            (0..410).rev().collect()
        } else {
            m.row(i).0.iter().rev().copied().collect()
        };
        rows.extend(cols.into_iter().map(|j| (i, j)));
    }
    let offsets: Vec<usize> = (0..=300)
        .map(|i| rows.iter().filter(|&&(r, _)| r < i).count())
        .collect();
    let cols: Vec<u32> = rows.iter().map(|&(_, j)| j).collect();
    let m = CsrMatrix::new(300, 410, offsets, cols, vec![1.0; rows.len()]).unwrap();
    for ring in Semiring::ALL {
        let spec = ProductSpec::new().semiring(ring).mask(m.view(), true);
        let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
        assert!(want.nnz() > 1000 && want.row(10).0.is_empty(), "{ring}");
        let got = gpu.multiply_spec(&a, &b, &spec).unwrap();
        assert_close(&got, &want, ring, "random");
    }
    let g: CsrMatrix<f64> = generate::rmat(11, 16, 54).unwrap();
    let spec = ProductSpec::new()
        .semiring(Semiring::AnyPair)
        .mask(g.view(), true)
        .keep(5);
    let want = reference::multiply_spec(g.view(), g.view(), &spec).unwrap();
    assert_eq!(gpu.multiply_spec(&g, &g, &spec).unwrap(), want, "R-MAT");
    match &gpu {
        #[cfg(feature = "cuda")]
        spgemm::Backend::Cuda(e) => complement_on_engine(&e.engines()[0], &a, &b),
        #[cfg(feature = "hip")]
        spgemm::Backend::Hip(e) => complement_on_engine(&e.engines()[0], &a, &b),
        _ => unreachable!("{kind:?} opened another backend"),
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
fn complement_on_engine<D: spgemm::device::Device>(
    e: &spgemm::gpu::GpuEngine<D>,
    a: &CsrMatrix<f64>,
    b: &CsrMatrix<f64>,
) {
    let m = mask_for(300, 410, 60, 55);
    let (ga, gb, gm) = (
        e.upload(a).unwrap(),
        e.upload(b).unwrap(),
        e.upload(&m).unwrap(),
    );
    let c = e
        .complement_device(&gm, &ga, &gb, Semiring::MaxPlus)
        .unwrap();
    let spec = ProductSpec::new()
        .semiring(Semiring::MaxPlus)
        .mask(m.view(), true);
    let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
    assert_close(&e.download(&c).unwrap(), &want, Semiring::MaxPlus, "device");
    // A mask whose rows are unsorted: refused, not searched wrongly.
    let (o, cols) = (m.row_offsets(), m.col_indices());
    let mut rc = cols.to_vec();
    rc[o[3]..o[4]].reverse();
    let unsorted = CsrMatrix::new(300, 410, o.to_vec(), rc, m.values().to_vec()).unwrap();
    let gu = e.upload(&unsorted).unwrap();
    let err = e
        .complement_device(&gu, &ga, &gb, Semiring::MaxPlus)
        .err()
        .expect("unsorted mask rows refused");
    assert!(err.to_string().contains("needs its rows sorted"), "{err}");
}
