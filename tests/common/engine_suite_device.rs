//! The engine-level tests of matrices that lie on the device (their
//! arrays of every index width checked where they lie, the operands'
//! checks answered with a product's first read, rows assembled from runs
//! of another matrix), part of [`engine_suite!`](crate::engine_suite),
//! which expands this macro in its own module: the cases it lists in
//! `CASES` are defined here.

#[macro_export]
macro_rules! engine_suite_device_arrays {
    ($device:ty) => {
        /// `offsets` and `cols` in device arrays of the given widths and
        /// `values` beside them, as a `DeviceCsr` of `nrows x ncols`; the
        /// buffers must outlive every matrix borrowed over them.
        fn device_csr(
            e: &spgemm::gpu::GpuEngine<$device>,
            shape: (usize, usize),
            offsets: &[i64],
            cols: &[i64],
            values: &[f64],
            widths: (spgemm::gpu::IndexWidth, spgemm::gpu::IndexWidth),
        ) -> (
            Vec<<$device as spgemm::device::Device>::Buffer>,
            spgemm::gpu::DeviceCsr,
        ) {
            use spgemm::device::{Device, DeviceBuffer};
            use spgemm::gpu::IndexWidth;
            let bytes = |v: &[i64], w: IndexWidth| -> Vec<u8> {
                match w {
                    IndexWidth::I32 => v.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect(),
                    IndexWidth::I64 => v.iter().flat_map(|&x| x.to_le_bytes()).collect(),
                }
            };
            let dev = e.device();
            let s = dev.create_stream().unwrap();
            let host = [
                bytes(offsets, widths.0),
                bytes(cols, widths.1),
                values.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ];
            let bufs: Vec<_> = host
                .iter()
                .map(|h| {
                    let b = dev.alloc(&s, h.len().max(1)).unwrap();
                    dev.copy_to_device(&s, h, &b, 0).unwrap();
                    b
                })
                .collect();
            dev.synchronize(&s).unwrap();
            let arrays = spgemm::gpu::DeviceCsr {
                nrows: shape.0,
                ncols: shape.1,
                nnz: cols.len(),
                row_offsets: bufs[0].device_ptr(),
                offsets_width: widths.0,
                col_indices: bufs[1].device_ptr(),
                indices_width: widths.1,
                values: bufs[2].device_ptr(),
            };
            (bufs, arrays)
        }

        fn device_arrays_of_every_index_width_are_checked_where_they_lie() {
            use spgemm::gpu::IndexWidth::{I32, I64};
            let e = engine();
            let a = generate::uniform::<f64>(700, 500, 9, 31).unwrap();
            let b = generate::uniform::<f64>(500, 300, 7, 32).unwrap();
            let gb = e.upload(&b).unwrap();
            let wide = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
            let cols: Vec<i64> = a.col_indices().iter().map(|&c| c as i64).collect();
            for widths in [(I32, I32), (I32, I64), (I64, I32), (I64, I64)] {
                let (_bufs_a, arrays_a) = device_csr(
                    &e,
                    (700, 500),
                    &wide(a.row_offsets()),
                    &cols,
                    a.values(),
                    widths,
                );
                // SAFETY: the buffers live to the end of this iteration.
                let ga = unsafe { e.borrow_device::<f64>(arrays_a, true) }.unwrap();
                let c = e.download(&e.multiply(&ga, &gb).unwrap().0).unwrap();
                spgemm::verify::check_product(&a, &b, &c).unwrap().unwrap();
                // Every fault, named as the host checks name it.
                let faults: [(&[i64], &[i64], &str); 8] = [
                    (
                        &[-1, 1, 2],
                        &[0, 1],
                        "row offset at position 0 is -1, outside 0..=2",
                    ),
                    (
                        &[0, -1, 2],
                        &[0, 1],
                        "row offset at position 1 is -1, outside 0..=2",
                    ),
                    (&[1, 1, 2], &[0, 1], "row offsets must start at 0, found 1"),
                    (&[0, 2, 1], &[0, 1], "row offsets decrease at row 1: 2 > 1"),
                    (
                        &[0, 1, 2],
                        &[0, 5],
                        "column index 5 in row 1 is out of range for 3 columns",
                    ),
                    (
                        &[0, 1, 2],
                        &[0, -1],
                        "column index at position 1 is -1, outside 0..=2",
                    ),
                    (
                        &[0, 2, 2],
                        &[1, 1],
                        "row 0 is not sorted without duplicates: column 1 follows column 1",
                    ),
                    (
                        &[0, 1, 1],
                        &[0, 1],
                        "last row offset is 1 but there are 2 column indices",
                    ),
                ];
                for (offsets, cols, message) in faults {
                    let (_bufs, arrays) =
                        device_csr(&e, (2, 3), offsets, cols, &[1.0, 2.0], widths);
                    // SAFETY: as above.
                    let err = unsafe { e.borrow_device::<f64>(arrays, true) }.err();
                    assert_eq!(
                        err.map(|e| e.to_string()).as_deref(),
                        Some(message),
                        "{widths:?}"
                    );
                }
                // Without the order check, an unsorted row is accepted.
                let (_bufs, arrays) =
                    device_csr(&e, (2, 3), &[0, 2, 2], &[2, 0], &[1.0, 2.0], widths);
                // SAFETY: as above.
                assert!(unsafe { e.borrow_device::<f64>(arrays, false) }.is_ok());
                // Two operands checked in one pass (A's arrays again): both
                // borrowed when sound, the first fault named otherwise, in
                // order.
                let b_cols: Vec<i64> = b.col_indices().iter().map(|&c| c as i64).collect();
                let (_bufs_b, arrays_b) = device_csr(
                    &e,
                    (500, 300),
                    &wide(b.row_offsets()),
                    &b_cols,
                    b.values(),
                    widths,
                );
                // SAFETY: as above.
                let [ga, gb2] =
                    unsafe { e.borrow_devices::<f64, 2>([(arrays_a, false), (arrays_b, true)]) }
                        .unwrap();
                let gc = e.multiply(&ga, &gb2).unwrap().0;
                let c = e.download(&gc).unwrap();
                spgemm::verify::check_product(&a, &b, &c).unwrap().unwrap();
                // C's row offsets narrowed to int32 for the caller's library.
                let narrow = e.row_offsets_i32(&gc).unwrap().unwrap();
                let mut got = vec![0u8; 4 * (c.nrows() + 1)];
                {
                    use spgemm::device::Device;
                    let dev = e.device();
                    let s = dev.create_stream().unwrap();
                    // SAFETY: `narrow` holds nrows + 1 int32 and outlives the copy.
                    let view = unsafe { dev.borrow(narrow.device_ptr(), got.len()) };
                    dev.copy_to_host(&s, &view, 0, &mut got).unwrap();
                }
                let want: Vec<u8> = c
                    .row_offsets()
                    .iter()
                    .flat_map(|&x| (x as i32).to_le_bytes())
                    .collect();
                assert_eq!((narrow.len(), got), (c.nrows() + 1, want));
                // Left running in the order of the legacy default stream
                // (handle 0), from scratch and from a plan: C again, int32
                // offsets when asked for, times once it has ended.
                let plan = e.symbolic(&ga, &gb2).unwrap();
                for (p, int32) in [(None, true), (Some(&plan), false)] {
                    // SAFETY: stream 0 is the legacy default stream; the
                    // operands outlive the product (times() waits for it).
                    let run = unsafe { e.multiply_ordered(&ga, &gb2, p, 0, int32) }.unwrap();
                    assert!(run.events.times(e.device()).unwrap().total_ms > 0.0);
                    assert_eq!(
                        run.offsets_i32.map(|o| o.len()),
                        int32.then_some(c.nrows() + 1)
                    );
                    // The same structure; values summed in another order
                    // when C came in one pass and the plan's does not.
                    let got = e.download(&run.c).unwrap();
                    assert!(got.same_structure(&c));
                    spgemm::verify::check_product(&a, &b, &got)
                        .unwrap()
                        .unwrap();
                }
                // SAFETY: as above.
                let err = unsafe { e.multiply_ordered(&gb2, &ga, Some(&plan), 0, true) }.err();
                assert!(
                    matches!(err, Some(spgemm::error::Error::StructureMismatch(_))),
                    "{err:?}"
                );
                let (_bad, bad) = device_csr(&e, (2, 3), &[0, 1, 2], &[0, 5], &[1.0, 2.0], widths);
                let (_bad2, bad2) =
                    device_csr(&e, (2, 3), &[0, 2, 1], &[0, 1], &[1.0, 2.0], widths);
                for (pair, message) in [
                    (
                        [(arrays_b, true), (bad, true)],
                        "column index 5 in row 1 is out of range for 3 columns",
                    ),
                    (
                        [(bad2, true), (bad, true)],
                        "row offsets decrease at row 1: 2 > 1",
                    ),
                ] {
                    // SAFETY: as above.
                    let err = unsafe { e.borrow_devices::<f64, 2>(pair) }.err();
                    assert_eq!(
                        err.map(|e| e.to_string()).as_deref(),
                        Some(message),
                        "{widths:?}"
                    );
                }
            }
        }

        fn device_products_answer_the_operands_checks_with_their_first_read() {
            use spgemm::gpu::IndexWidth::{I32, I64};
            let e = engine();
            let wide = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
            let cols = |m: &spgemm::CsrMatrix<f64>| {
                m.col_indices()
                    .iter()
                    .map(|&c| c as i64)
                    .collect::<Vec<_>>()
            };
            let a = generate::uniform::<f64>(700, 500, 9, 41).unwrap();
            let b = generate::uniform::<f64>(500, 300, 7, 42).unwrap();
            let sq = generate::uniform::<f64>(500, 500, 40, 43).unwrap();
            let (left, right) = (
                generate::uniform::<f64>(5, 2, 2, 44).unwrap(),
                generate::uniform::<f64>(3, 4, 3, 45).unwrap(),
            );
            for widths in [(I32, I32), (I32, I64), (I64, I32), (I64, I64)] {
                let on_device = |m: &spgemm::CsrMatrix<f64>| {
                    device_csr(
                        &e,
                        (m.nrows(), m.ncols()),
                        &wide(m.row_offsets()),
                        &cols(m),
                        m.values(),
                        widths,
                    )
                };
                let (_ba, arrays_a) = on_device(&a);
                let (_bb, arrays_b) = on_device(&b);
                let (_bs, arrays_sq) = on_device(&sq);
                let (_bl, arrays_left) = on_device(&left);
                let (_br, arrays_right) = on_device(&right);
                // Sound operands: C as the host computes it, A·B and A·A.
                let sound = |x: &spgemm::CsrMatrix<f64>, y: &spgemm::CsrMatrix<f64>, operands| {
                    let (ax, ay) = operands;
                    // SAFETY: the buffers live to the end of this
                    // iteration; times() waits for the product.
                    let run =
                        unsafe { e.multiply_borrowed_ordered::<f64>(ax, ay, 0, true) }.unwrap();
                    assert!(run.events.times(e.device()).unwrap().total_ms > 0.0);
                    assert_eq!(run.offsets_i32.map(|o| o.len()), Some(x.nrows() + 1));
                    let c = e.download(&run.c).unwrap();
                    spgemm::verify::check_product(x, y, &c).unwrap().unwrap();
                };
                sound(&a, &b, ((arrays_a, true), Some((arrays_b, false))));
                sound(&sq, &sq, ((arrays_sq, true), None));
                // Every fault of either operand named as borrowing names
                // it, offsets and columns far outside the arrays among
                // them (setup indexes nothing on a fault), and the
                // engine multiplies on after each.
                let far = 1i64 << 30;
                let faults: [(&[i64], &[i64], String); 5] = [
                    (
                        &[0, 1, 2],
                        &[0, 5],
                        "column index 5 in row 1 is out of range for 3 columns".into(),
                    ),
                    (
                        &[0, 1, 2],
                        &[0, far],
                        format!("column index {far} in row 1 is out of range for 3 columns"),
                    ),
                    (
                        &[0, far, 2],
                        &[0, 1],
                        format!("row offsets decrease at row 1: {far} > 2"),
                    ),
                    (
                        &[0, 2, 2],
                        &[1, 1],
                        "row 0 is not sorted without duplicates: column 1 follows column 1".into(),
                    ),
                    (
                        &[0, 1, 1],
                        &[0, 1],
                        "last row offset is 1 but there are 2 column indices".into(),
                    ),
                ];
                for (offsets, bad_cols, message) in &faults {
                    let (_bad, bad) =
                        device_csr(&e, (2, 3), offsets, bad_cols, &[1.0, 2.0], widths);
                    for operands in [
                        ((bad, true), Some((arrays_right, true))),
                        ((arrays_left, true), Some((bad, true))),
                    ] {
                        // SAFETY: as above; an error returns after the
                        // checks are done.
                        let err = unsafe {
                            e.multiply_borrowed_ordered::<f64>(operands.0, operands.1, 0, true)
                        }
                        .err();
                        assert_eq!(
                            err.map(|e| e.to_string()).as_deref(),
                            Some(message.as_str()),
                            "{widths:?}"
                        );
                    }
                    sound(&a, &b, ((arrays_a, true), Some((arrays_b, false))));
                }
            }
        }

        fn rows_assembled_from_runs_of_another_matrix() {
            use spgemm::device::Device;
            use spgemm::gpu::RowRun;
            let e = engine();
            let src = generate::uniform::<f64>(500, 300, 7, 51).unwrap();
            let g = e.upload(&src).unwrap();
            let (rpt, col, val) = g.device_pointers();
            let o = src.row_offsets();
            let dev = e.device();
            let stream = dev.create_stream().unwrap();
            // Rows 10..60 and 450..500 of `src` as rows 0..50 and 300..350
            // of a 400-row matrix, row 460 alone as row 399.
            let pieces = [(10usize, 50usize, 0usize), (450, 50, 300), (460, 1, 399)];
            let mut runs = Vec::new();
            let mut want_rows = vec![0usize; 401];
            for &(from, rows, to) in &pieces {
                let entries = o[from + rows] - o[from];
                runs.push(RowRun {
                    first_row: to,
                    rows,
                    source_offset: o[from] as u64,
                    entries: entries as u64,
                });
                for r in 0..rows {
                    want_rows[to + r + 1] = o[from + r + 1] - o[from + r];
                }
            }
            for r in 0..400 {
                want_rows[r + 1] += want_rows[r];
            }
            let nnz = want_rows[400];
            let assemble = |runs: &[RowRun], check: Option<bool>| {
                let asm = e.assembly::<f64>(400, 300, nnz).unwrap();
                let mut at = 0;
                for (&(from, rows, to), run) in pieces.iter().zip(runs) {
                    let n = run.entries as usize;
                    let copies = [
                        (asm.row_ends_at(to), rpt + 8 * (from as u64 + 1), 8 * rows),
                        (asm.columns_at(at), col + 4 * o[from] as u64, 4 * n),
                        (asm.values_at(at), val + 8 * o[from] as u64, 8 * n),
                    ];
                    for (dst, src, bytes) in copies {
                        // SAFETY: both ranges lie in live arrays of this
                        // device, unused elsewhere until the stream is
                        // synchronised below.
                        unsafe {
                            let (d, s) = (dev.borrow(dst, bytes), dev.borrow(src, bytes));
                            dev.copy_device(&stream, &s, 0, &d, 0, bytes).unwrap();
                            dev.synchronize(&stream).unwrap();
                        }
                    }
                    at += n;
                }
                e.assemble(asm, runs, check)
            };
            for check in [None, Some(g.sorted_rows())] {
                let m = e.download(&assemble(&runs, check).unwrap()).unwrap();
                assert_eq!(m.row_offsets(), &want_rows[..], "{check:?}");
                for &(from, rows, to) in &pieces {
                    for r in 0..rows {
                        assert_eq!(m.row(to + r), src.row(from + r), "{check:?} row {}", to + r);
                    }
                }
            }
            // A run said to start further into its source than it does
            // (past its first row) leaves offsets that decrease where it
            // begins: an error with either check.
            let mut wrong = runs.clone();
            let first_len = o[451] - o[450];
            wrong[1].source_offset += first_len as u64 + 1;
            let before = want_rows[300];
            let message = format!("row offsets decrease at row 300: {before} > {}", before - 1);
            for check in [None, Some(true)] {
                let err = assemble(&wrong, check).err().expect("an error").to_string();
                assert!(err.contains(&message), "{check:?}: {err}");
            }
            // Runs that overlap are refused before any launch.
            let mut overlapping = runs.clone();
            overlapping[2].first_row = 349;
            let err = assemble(&overlapping, None)
                .err()
                .expect("an error")
                .to_string();
            assert!(
                err.contains("row runs: run 2 (rows 349..350 of 400) overlaps"),
                "{err}"
            );
        }
    };
}
