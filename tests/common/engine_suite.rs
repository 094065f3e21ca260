//! The engine-level tests (memory budgets and chunks, threads sharing an
//! engine, plans, every long-row variant, both accumulators, the sorts,
//! large outputs through the staging buffers), written once over
//! `GpuEngine<D>` and instantiated per backend with [`engine_suite!`]:
//! `engine_suite!(spgemm_cuda::open, spgemm::CudaDevice, "CUDA")` gives a
//! module's `CASES`, which the `backends` test binary runs where the
//! backend opens a device and reports as ignored elsewhere. The cases of
//! matrices that lie on the device are in `engine_suite_device.rs`.

#[macro_export]
macro_rules! engine_suite {
    ($open:path, $device:ty, $name:literal) => {
        use spgemm::generate;
        use spgemm::GpuConfig;

        /// The engine of GPU 0; the `backends` test binary runs these
        /// cases only where one opens, so failing to open is a failure.
        fn engine() -> spgemm::gpu::GpuEngine<$device> {
            $open(0).unwrap_or_else(|e| panic!(concat!($name, " GPU 0: {}"), e))
        }

        /// Every case of the suite, by name.
        pub const CASES: &[(&str, fn())] = &[
            ("product_over_the_memory_budget_runs_in_chunks", product_over_the_memory_budget_runs_in_chunks),
            ("chunks_of_uneven_work_and_empty_chunks_land_in_their_places", chunks_of_uneven_work_and_empty_chunks_land_in_their_places),
            ("memory_budget_decides_between_whole_and_chunks", memory_budget_decides_between_whole_and_chunks),
            ("one_engine_shared_by_threads_multiplying_at_once", one_engine_shared_by_threads_multiplying_at_once),
            ("plan_reruns_numeric_with_new_values_and_refuses_other_structure", plan_reruns_numeric_with_new_values_and_refuses_other_structure),
            ("every_long_row_variant_on_few_and_many_long_rows", every_long_row_variant_on_few_and_many_long_rows),
            ("long_rows_split_by_products_whose_products_sit_in_few_entries", long_rows_split_by_products_whose_products_sit_in_few_entries),
            ("ranked_and_dense_long_rows_of_a_narrow_c", ranked_and_dense_long_rows_of_a_narrow_c),
            ("dense_accumulators_and_hash_tables_agree_on_a_narrow_c", dense_accumulators_and_hash_tables_agree_on_a_narrow_c),
            ("packed_and_plain_symbolic_tables_agree_on_meshes", packed_and_plain_symbolic_tables_agree_on_meshes),
            ("ranked_bitmaps_and_hash_tables_agree_on_a_c_of_middle_width", ranked_bitmaps_and_hash_tables_agree_on_a_c_of_middle_width),
            ("rows_without_repeated_columns_around_the_distinct_bins_limit", rows_without_repeated_columns_around_the_distinct_bins_limit),
            ("rows_of_thousands_of_entries_that_use_hubs_of_b", rows_of_thousands_of_entries_that_use_hubs_of_b),
            ("every_sort_variant_and_output_rows_over_a_million_entries", every_sort_variant_and_output_rows_over_a_million_entries),
            ("host_products_with_large_arrays_of_c_are_exact", host_products_with_large_arrays_of_c_are_exact),
            ("host_products_computed_and_downloaded_in_many_chunks_of_rows", host_products_computed_and_downloaded_in_many_chunks_of_rows),
            ("device_arrays_of_every_index_width_are_checked_where_they_lie", device_arrays_of_every_index_width_are_checked_where_they_lie),
            ("device_products_answer_the_operands_checks_with_their_first_read", device_products_answer_the_operands_checks_with_their_first_read),
            ("rows_assembled_from_runs_of_another_matrix", rows_assembled_from_runs_of_another_matrix),
        ];

        fn product_over_the_memory_budget_runs_in_chunks() {
            let e = engine();
            let a = generate::uniform::<f64>(20_000, 20_000, 10, 5).unwrap();
            let (c, chunks) = e.multiply_chunked(&a, &a, 8 << 20).unwrap();
            assert!(chunks >= 8, "{chunks} chunks");
            spgemm::verify::check_product(&a, &a, &c).unwrap().unwrap();
            assert!(c.same_structure(&e.multiply_host(&a, &a).unwrap()));
            // A budget that cannot hold B is an error naming what did not fit.
            let err = e.multiply_chunked(&a, &a, 1 << 20).unwrap_err();
            assert!(err.to_string().contains("device bytes of B"), "{err}");
        }

        fn chunks_of_uneven_work_and_empty_chunks_land_in_their_places() {
            let e = engine();
            // Rows 0..4000 with 40 entries, then 6000 empty rows (chunks
            // whose C has no entries), then rows of one entry: chunks of
            // very different sizes, finishing out of order, each
            // downloaded into its own place in C.
            let (n, heavy) = (14_000usize, generate::uniform::<f64>(4000, 14_000, 40, 11).unwrap());
            let light = generate::uniform::<f64>(4000, n, 1, 12).unwrap();
            let mut offsets = heavy.row_offsets().to_vec();
            let last = *offsets.last().unwrap();
            offsets.extend(std::iter::repeat(last).take(6000));
            offsets.extend(light.row_offsets()[1..].iter().map(|&o| o + last));
            let cols = [heavy.col_indices(), light.col_indices()].concat();
            let vals = [heavy.values(), light.values()].concat();
            let a = spgemm::CsrMatrix::new(n, n, offsets, cols, vals).unwrap();
            let (c, chunks) = e.multiply_chunked(&a, &a, 6 << 20).unwrap();
            assert!(chunks >= 6, "{chunks} chunks");
            spgemm::verify::check_product(&a, &a, &c).unwrap().unwrap();
            assert!(c.same_structure(&e.multiply_host(&a, &a).unwrap()));
            assert!((4000..10_000).all(|i| c.row(i).0.is_empty()));
        }

        fn memory_budget_decides_between_whole_and_chunks() {
            use spgemm::gpu::Placement;
            let e = engine();
            let a = generate::uniform::<f64>(20_000, 20_000, 10, 6).unwrap();
            let small = e.with_config(GpuConfig {
                memory_budget: Some(8 << 20),
                ..GpuConfig::default()
            });
            let (c, how) = small.multiply_host_placed(&a, &a).unwrap();
            assert!(
                matches!(how, Placement::Chunked { chunks, budget: 8_388_608, after_out_of_memory: false } if chunks >= 8),
                "{how:?}"
            );
            spgemm::verify::check_product(&a, &a, &c).unwrap().unwrap();
            let e = engine();
            let (whole, how) = e
                .with_config(GpuConfig {
                    memory_budget: Some(1 << 30),
                    ..GpuConfig::default()
                })
                .multiply_host_placed(&a, &a)
                .unwrap();
            assert_eq!(how, Placement::Whole);
            assert!(whole.same_structure(&c));
        }

        fn one_engine_shared_by_threads_multiplying_at_once() {
            fn send_sync<T: Send + Sync>() {}
            send_sync::<spgemm::gpu::GpuEngine<$device>>();
            send_sync::<spgemm::gpu::GpuMatrix<$device, f64>>();
            send_sync::<spgemm::gpu::GpuPlan<$device, f64>>();
            let e = engine();
            let e = std::sync::Arc::new(e);
            let handles: Vec<_> = (0..8u64)
                .map(|seed| {
                    let e = e.clone();
                    std::thread::spawn(move || {
                        for round in 0..4 {
                            let a = generate::uniform::<f64>(
                                3000 + 100 * seed as usize,
                                2000,
                                12,
                                seed * 10 + round,
                            )
                            .unwrap();
                            let b = generate::uniform::<f64>(
                                2000,
                                2500,
                                9 + seed as usize,
                                seed * 10 + round + 100,
                            )
                            .unwrap();
                            let c = e.multiply_host(&a, &b).unwrap();
                            spgemm::verify::check_product(&a, &b, &c).unwrap().unwrap();
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        }

        fn plan_reruns_numeric_with_new_values_and_refuses_other_structure() {
            let e = engine();
            let a = generate::uniform::<f64>(3000, 3000, 12, 1).unwrap();
            let ga = e.upload(&a).unwrap();
            let plan = e.symbolic(&ga, &ga).unwrap();
            let mut a2 = a.clone();
            a2.values_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v = (i % 7) as f64 - 3.0);
            let ga2 = e.with_values(&ga, a2.values()).unwrap();
            let (c, _) = e.numeric(&plan, &ga2, &ga2).unwrap();
            let c = e.download(&c).unwrap();
            spgemm::verify::check_product(&a2, &a2, &c)
                .unwrap()
                .unwrap();
            assert_eq!(c.nnz(), plan.nnz());
            // A fresh upload of the same structure is accepted too.
            let ga3 = e.upload(&a2).unwrap();
            assert!(e.numeric(&plan, &ga3, &ga3).is_ok());
            let other = e
                .upload(&generate::uniform::<f64>(3000, 3000, 12, 2).unwrap())
                .unwrap();
            let err = e.numeric(&plan, &other, &ga).map(|_| ()).unwrap_err();
            assert!(err.to_string().contains("structure"), "{err}");
        }

        fn every_long_row_variant_on_few_and_many_long_rows() {
            use spgemm::gpu::LongRows;
            let e = engine();
            use spgemm::device::Device;
            let sms = e.device().properties().multiprocessor_count as usize;
            // Few long rows (kernel 8's case under Auto when C is wide), and
            // more than two per multiprocessor (kernel 9's): C is wide (2^22
            // columns), so Auto takes no dense path. About 3 entries of B per
            // entry of A: rows of 12,000-18,000 entries in C, past the largest
            // shared numeric table (about 9,500 on an H200).
            let few = generate::short_and_long_rows::<f64>(1 << 22, 3, 5, 6000, 21).unwrap();
            let many = generate::short_and_long_rows::<f64>(1 << 22, 3, 3 * sms, 4000, 22).unwrap();
            for variant in LongRows::ALL {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    long_rows: variant,
                    ..GpuConfig::default()
                });
                for (what, a) in [("few", &few), ("many", &many)] {
                    let c = eng.multiply_host(a, a).unwrap();
                    let check = spgemm::verify::check_product(a, a, &c).unwrap();
                    assert!(check.is_ok(), "{} {what}: {:?}", variant.name(), check);
                }
            }
        }

        fn long_rows_split_by_products_whose_products_sit_in_few_entries() {
            use spgemm::gpu::{LongRows, SliceSplit};
            // B (k × n): 10 hub rows of 30,000 entries, 990 empty rows, the
            // rest of 2. A: four rows of 20,000 entries whose first 10 are
            // the hubs (nearly all their products in 0.05% of the entries)
            // and the next 990 the empty rows; a row of the empty rows with
            // one hub first (all its products in one entry); short rows.
            // Slices of equal products (`SliceSplit::Products`) then differ
            // from slices of equal entries: most hold part of one entry.
            let (m, k, n) = (3000usize, 50_000usize, 200_000usize);
            let mut next = $crate::common::xorshift(0x2545_f491_4f6c_dd1d);
            let (mut ar, mut ac, mut br, mut bc) = (vec![], vec![], vec![], vec![]);
            for i in 0..m {
                let cols: Vec<u32> = match i {
                    0..=3 => (0..1000).chain((0..19_000).map(|j| 1000 + (j * 13 + i as u32) % 49_000)).collect(),
                    4 => std::iter::once(5).chain(10..1000).collect(),
                    _ => (0..3).map(|_| 1000 + next(k - 1000)).collect(),
                };
                ar.extend(std::iter::repeat(i).take(cols.len()));
                ac.extend(cols);
            }
            for r in 0..k {
                let len = if r < 10 { 30_000 } else if r < 1000 { 0 } else { 2 };
                br.extend(std::iter::repeat(r).take(len));
                bc.extend((0..len).map(|_| next(n)));
            }
            let av: Vec<f64> = (0..ac.len()).map(|t| 1.0 + (t % 7) as f64).collect();
            let bv: Vec<f64> = (0..bc.len()).map(|t| 0.5 + (t % 5) as f64).collect();
            let a = spgemm::CsrMatrix::from_triplets(m, k, &ar, &ac, &av).unwrap();
            let b = spgemm::CsrMatrix::from_triplets(k, n, &br, &bc, &bv).unwrap();
            for (variant, slices) in LongRows::ALL.into_iter().flat_map(|v| SliceSplit::ALL.map(|s| (v, s))) {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    long_rows: variant,
                    slices,
                    ..GpuConfig::default()
                });
                let c = eng.multiply_host(&a, &b).unwrap();
                assert!((0..5).all(|i| c.row_nnz(i) > 25_000), "{} {slices}", variant.name());
                let check = spgemm::verify::check_product(&a, &b, &c).unwrap();
                assert!(check.is_ok(), "{} {slices}: {check:?}", variant.name());
            }
        }

        fn ranked_and_dense_long_rows_of_a_narrow_c() {
            use spgemm::gpu::LongRows;
            let e = engine();
            use spgemm::device::Device;
            let sms = e.device().properties().multiprocessor_count as usize;
            // Three long rows per multiprocessor in a C 300,000 wide (a
            // bitmap of 9,375 words fits a block): rows of A with 15,000
            // entries give rows of C of about 42,000 entries, past what a
            // block holds of their values, so Auto takes ranked bitmaps
            // with the values in C; four rows of 100,000 entries give rows
            // of about 190,000, past Auto's limit for those, which it
            // leaves to the dense slices. Short rows that meet a long row
            // of B become long too.
            let n = 300_000;
            let many = generate::short_and_long_rows::<f64>(n, 3, 3 * sms, 15_000, 23).unwrap();
            let huge = generate::short_and_long_rows::<f64>(n, 3, 4, 100_000, 24).unwrap();
            let (mut offsets, mut cols, mut vals) = (vec![0], Vec::new(), Vec::new());
            for i in 0..n {
                let (c, v) = if huge.row_nnz(i) > 3 { huge.row(i) } else { many.row(i) };
                cols.extend_from_slice(c);
                vals.extend_from_slice(v);
                offsets.push(cols.len());
            }
            let a = spgemm::CsrMatrix::new(n, n, offsets, cols, vals).unwrap();
            for variant in [LongRows::Auto, LongRows::Ranked, LongRows::Dense] {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    long_rows: variant,
                    ..GpuConfig::default()
                });
                let c = eng.multiply_host(&a, &a).unwrap();
                assert!((0..c.nrows()).filter(|&i| c.row_nnz(i) > 35_000).count() >= 3 * sms);
                assert!((0..c.nrows()).filter(|&i| c.row_nnz(i) > 140_000).count() >= 4);
                let check = spgemm::verify::check_product(&a, &a, &c).unwrap();
                assert!(check.is_ok(), "{}: {check:?}", variant.name());
            }
        }

        fn dense_accumulators_and_hash_tables_agree_on_a_narrow_c() {
            use spgemm::gpu::Accumulator;
            // C 12,000 columns wide: a bitmap of 375 words, a dense row of
            // doubles in 94 KB, so the bins with a block per row (rows of about
            // 900 products) accumulate densely under Auto, beside the global
            // paths (20 rows of A with 3,000 entries: rows of C with about
            // 12,000 entries, past the largest shared table) and rows of B of
            // 3,000 entries. f32 as well as f64.
            let a64 = generate::short_and_long_rows::<f64>(12_000, 30, 20, 3000, 31).unwrap();
            let a32 = generate::short_and_long_rows::<f32>(12_000, 30, 20, 3000, 32).unwrap();
            for acc in Accumulator::ALL {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    accumulator: acc,
                    ..GpuConfig::default()
                });
                let c = eng.multiply_host(&a64, &a64).unwrap();
                assert!((0..c.nrows()).any(|i| c.row_nnz(i) > 10_000));
                let check = spgemm::verify::check_product(&a64, &a64, &c).unwrap();
                assert!(check.is_ok(), "{} f64: {check:?}", acc.name());
                let c = eng.multiply_host(&a32, &a32).unwrap();
                let check = spgemm::verify::check_product(&a32, &a32, &c).unwrap();
                assert!(check.is_ok(), "{} f32: {check:?}", acc.name());
            }
        }

        fn packed_and_plain_symbolic_tables_agree_on_meshes() {
            use spgemm::gpu::Accumulator;
            // B packed into words of 32 columns (KokkosKernels §3.2): a
            // 27-point stencil's rows are runs of three columns (a third of
            // its entries), the 3-dof FEM matrix's runs of nine in rows of
            // 81 entries (packed by a warp each). Packed packs both, Auto
            // neither: the same structure of C (the values may differ in
            // their last bits: the numeric kernels add in any order),
            // checked against the reference.
            let stencil = generate::stencil_3d::<f64>(40, 27, 61).unwrap();
            let fem = generate::fem_27::<f64>(12, 3, 62).unwrap();
            for a in [&stencil, &fem] {
                let run = |accumulator| {
                    let eng = $open(0).unwrap().with_config(GpuConfig {
                        accumulator,
                        ..GpuConfig::default()
                    });
                    eng.multiply_host(a, a).unwrap()
                };
                let (packed, plain) = (run(Accumulator::Packed), run(Accumulator::Auto));
                assert_eq!(packed.row_offsets(), plain.row_offsets());
                assert_eq!(packed.col_indices(), plain.col_indices());
                let check = spgemm::verify::check_product(a, a, &packed).unwrap();
                assert!(check.is_ok(), "{check:?}");
            }
        }

        fn ranked_bitmaps_and_hash_tables_agree_on_a_c_of_middle_width() {
            use spgemm::gpu::Accumulator;
            // R-MAT 15 with the milder skew: C 32,768 columns wide, a bitmap
            // of 1,024 words but a dense row of doubles in 266 KB, so the
            // bins of rows from a few hundred entries on (tables of at least
            // 1,024 slots) accumulate by ranked bitmaps under Auto; its
            // hubs give rows of several thousand entries and columns that
            // repeat. f32 as well as f64, every accumulator.
            let mild = (0.45, 0.22, 0.22);
            let a64 = generate::rmat_with::<f64>(15, 16, mild, 41).unwrap();
            let a32 = generate::rmat_with::<f32>(15, 16, mild, 42).unwrap();
            for acc in Accumulator::ALL {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    accumulator: acc,
                    ..GpuConfig::default()
                });
                let c = eng.multiply_host(&a64, &a64).unwrap();
                assert!((0..c.nrows()).filter(|&i| c.row_nnz(i) > 1200).count() > 100);
                let check = spgemm::verify::check_product(&a64, &a64, &c).unwrap();
                assert!(check.is_ok(), "{} f64: {check:?}", acc.name());
                let c = eng.multiply_host(&a32, &a32).unwrap();
                let check = spgemm::verify::check_product(&a32, &a32, &c).unwrap();
                assert!(check.is_ok(), "{} f32: {check:?}", acc.name());
            }
        }

        fn rows_without_repeated_columns_around_the_distinct_bins_limit() {
            use spgemm::gpu::Accumulator;
            // Row j of B holds columns 7j..7j+7 (every third row empty), so
            // a row of A with k entries has up to 7k products in distinct
            // columns: rows of A with 1 to 120 entries give rows of C of up
            // to 560 entries, across the distinct bin's limit (8 per lane:
            // 256 entries on 32-lane warps, 512 on 64-lane ones) and
            // across a warp's 32 or 64 entries of A at a time. Nonzero
            // values, so each entry of C is one product, as on the host.
            let n = 4000usize;
            let mut b_off = vec![0usize];
            let (mut b_col, mut b_val) = (Vec::new(), Vec::new());
            for j in 0..n {
                if j % 3 != 2 {
                    b_col.extend((7 * j as u32)..(7 * j as u32 + 7));
                    b_val.extend((0..7).map(|t| 1.0 + (j * 7 + t) as f64 * 1e-3));
                }
                b_off.push(b_col.len());
            }
            let b = spgemm::CsrMatrix::new(n, 7 * n, b_off, b_col, b_val).unwrap();
            let mut a_off = vec![0usize];
            let (mut a_col, mut a_val) = (Vec::new(), Vec::new());
            for i in 0..3000usize {
                let k = 1 + i % 120;
                let first = (i * 37) % (n - k);
                a_col.extend((first as u32)..(first + k) as u32);
                a_val.extend((0..k).map(|t| 0.5 + ((i + t) % 11) as f64));
                a_off.push(a_col.len());
            }
            let a = spgemm::CsrMatrix::new(3000, n, a_off, a_col, a_val).unwrap();
            let expected = spgemm::reference::multiply(&a, &b).unwrap();
            assert!((0..expected.nrows()).any(|i| expected.row_nnz(i) > 512));
            for acc in Accumulator::ALL {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    accumulator: acc,
                    ..GpuConfig::default()
                });
                let c = eng.multiply_host(&a, &b).unwrap();
                assert_eq!(c.row_offsets(), expected.row_offsets(), "{}", acc.name());
                assert_eq!(c.col_indices(), expected.col_indices(), "{}", acc.name());
                assert_eq!(c.values(), expected.values(), "{}", acc.name());
            }
        }

        fn rows_of_thousands_of_entries_that_use_hubs_of_b() {
            // B: 40 hubs (rows of 2,500 entries) among 3,000 rows of 12.
            // A: rows of 12 entries, 3 of them hubs. Rows of C of about
            // 7,500 entries fall in the shared bins of the longest rows,
            // whose hash kernels walk each hub with the whole block (under
            // Auto, C 200,000 wide takes ranked bitmaps there, whose
            // warps share the hubs).
            let (m, n) = (3040usize, 200_000usize);
            let mut next = $crate::common::xorshift(0x9e37_79b9_7f4a_7c15);
            let (mut ar, mut ac, mut br, mut bc) = (vec![], vec![], vec![], vec![]);
            for i in 0..m {
                for t in 0..12 {
                    ar.push(i);
                    ac.push(if t < 3 { next(40) } else { 40 + next(m - 40) });
                }
                for _ in 0..if i < 40 { 2500 } else { 12 } {
                    br.push(i);
                    bc.push(next(n));
                }
            }
            let av: Vec<f64> = (0..ac.len()).map(|k| 1.0 + (k % 7) as f64).collect();
            let bv: Vec<f64> = (0..bc.len()).map(|k| 0.5 + (k % 5) as f64).collect();
            let a = spgemm::CsrMatrix::from_triplets(m, m, &ar, &ac, &av).unwrap();
            let b = spgemm::CsrMatrix::from_triplets(m, n, &br, &bc, &bv).unwrap();
            for acc in [spgemm::gpu::Accumulator::Auto, spgemm::gpu::Accumulator::Hash] {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    accumulator: acc,
                    ..GpuConfig::default()
                });
                let c = eng.multiply_host(&a, &b).unwrap();
                assert!((0..c.nrows()).filter(|&i| c.row_nnz(i) > 5000).count() > 1000);
                spgemm::verify::check_product(&a, &b, &c).unwrap().unwrap();
            }
        }

        fn every_sort_variant_and_output_rows_over_a_million_entries() {
            let e = engine();
            use spgemm::gpu::SortVariant;
            // Rows of C in every short-row bin (3 to 12 entries of A a row:
            // 9 to 144 products) and in the one-row bins (40 a row), with a
            // row count that leaves the last block of each bin part empty.
            let matrices = [
                generate::uniform::<f64>(3001, 3001, 3, 5).unwrap(),
                generate::uniform::<f64>(3001, 3001, 5, 6).unwrap(),
                generate::uniform::<f64>(3001, 3001, 7, 7).unwrap(),
                generate::uniform::<f64>(3001, 3001, 12, 8).unwrap(),
                generate::uniform::<f64>(2000, 2000, 40, 3).unwrap(),
            ];
            for sort in [
                SortVariant::Auto,
                SortVariant::Bitonic,
                SortVariant::CondenseRank,
                SortVariant::CondenseBitonic,
                SortVariant::Register,
                SortVariant::RegisterHash,
            ] {
                let eng = $open(0).unwrap().with_config(GpuConfig {
                    sort,
                    ..GpuConfig::default()
                });
                for a in &matrices {
                    let c = eng.multiply_host(a, a).unwrap();
                    spgemm::verify::check_product(a, a, &c)
                        .unwrap()
                        .unwrap_or_else(|err| panic!("{sort:?}: {err}"));
                }
            }
            // One row of A touching 300 rows of B with 4,000 distinct columns each:
            // 1.2 million entries in one output row.
            let n = 1_300_000usize;
            let rows: Vec<usize> = (0..300)
                .map(|_| 0)
                .chain((0..300).flat_map(|r| std::iter::repeat_n(r + 1, 4000)))
                .collect();
            let cols: Vec<u32> = (0..300u32)
                .map(|k| k + 1)
                .chain((0..300u32).flat_map(|r| (0..4000u32).map(move |j| r * 4000 + j)))
                .collect();
            let vals = vec![1.0f64; rows.len()];
            let m = spgemm::CsrMatrix::from_triplets(n, n, &rows, &cols, &vals).unwrap();
            let sorted = $open(0).unwrap().with_config(GpuConfig {
                long_rows: spgemm::gpu::LongRows::SortedHash,
                ..GpuConfig::default()
            });
            for eng in [&e, &sorted] {
                let c = eng.multiply_host(&m, &m).unwrap();
                assert_eq!(c.row_nnz(0), 1_200_000);
                spgemm::verify::check_product(&m, &m, &c).unwrap().unwrap();
            }
        }

        fn host_products_with_large_arrays_of_c_are_exact() {
            // C of 7.3 million entries: its columns and values (29 and 58 MB)
            // come back in chunks of rows, each through the pinned staging
            // buffers in several pieces, while later chunks compute.
            let e = engine();
            let a = generate::stencil_3d::<f64>(40, 27, 5).unwrap();
            let c = e.multiply_host(&a, &a).unwrap();
            assert!(c.nnz() * 8 > 32 << 20);
            spgemm::verify::check_product(&a, &a, &c).unwrap().unwrap();
            // Again, with the staging buffers and pinned memory reused.
            let again = e.multiply_host(&a, &a).unwrap();
            assert!(again.same_structure(&c));
            spgemm::verify::check_product(&a, &a, &again)
                .unwrap()
                .unwrap();
        }

        fn host_products_computed_and_downloaded_in_many_chunks_of_rows() {
            // Each product once in one chunk and once in the most chunks
            // (chunks of 1 byte: MAX_DOWNLOAD_CHUNKS of them): rows counts
            // that are no multiple of the chunk alignment, long rows (ranked
            // bitmaps in shared memory, and without them dense rows in
            // global memory), a rectangular pair, empty rows and an empty C.
            for accumulator in [
                spgemm::gpu::Accumulator::Auto,
                spgemm::gpu::Accumulator::Unranked,
            ] {
                let open = |bytes: usize| {
                    $open(0).unwrap().with_config(GpuConfig {
                        download_chunk_bytes: bytes,
                        accumulator,
                        ..GpuConfig::default()
                    })
                };
                let (one, many) = (open(usize::MAX), open(1));
                let stencil = generate::stencil_3d::<f64>(23, 7, 1).unwrap();
                let long = generate::short_and_long_rows::<f64>(12_000, 30, 20, 3000, 31).unwrap();
                let tall = generate::uniform::<f64>(20_001, 3_001, 6, 2).unwrap();
                let wide = generate::uniform::<f64>(3_001, 5_003, 4, 3).unwrap();
                // Every third row empty.
                let full = generate::uniform::<f64>(10_000, 10_000, 5, 4).unwrap();
                let (mut offsets, mut cols, mut vals) = (vec![0], Vec::new(), Vec::new());
                for i in 0..full.nrows() {
                    if i % 3 != 0 {
                        cols.extend_from_slice(full.row(i).0);
                        vals.extend_from_slice(full.row(i).1);
                    }
                    offsets.push(cols.len());
                }
                let gaps = spgemm::CsrMatrix::new(10_000, 10_000, offsets, cols, vals).unwrap();
                let empty = spgemm::CsrMatrix::<f64>::zeros(777, 777).unwrap();
                for (what, a, b) in [
                    ("stencil", &stencil, &stencil),
                    ("long rows", &long, &long),
                    ("rectangular", &tall, &wide),
                    ("empty rows", &gaps, &gaps),
                    ("empty", &empty, &empty),
                ] {
                    let whole = one.multiply_host(a, b).unwrap();
                    let chunked = many.multiply_host(a, b).unwrap();
                    assert!(chunked.same_structure(&whole), "{what}");
                    let check = spgemm::verify::check_product(a, b, &chunked).unwrap();
                    assert!(check.is_ok(), "{} {what}: {check:?}", accumulator.name());
                }
            }
        }

        $crate::engine_suite_device_arrays!($device);
    };
}
