//! Device memory running out on the CUDA backend: a product that no longer
//! fits switches to chunks instead of failing. Its own test binary (its
//! own process), since it fills the GPU's memory. Skipped without the
//! `cuda` feature or a GPU, unless `SPGEMM_REQUIRE_GPU=1`.

#[cfg(feature = "cuda")]
mod out_of_memory {
    use spgemm::gpu::Placement;
    use spgemm_core::device::{Device, DeviceBuffer};

    #[test]
    fn whole_product_out_of_device_memory_is_redone_in_chunks() {
        let e = match spgemm_cuda::open(0) {
            Ok(e) => e,
            Err(e) => {
                assert!(
                    std::env::var("SPGEMM_REQUIRE_GPU").map_or(true, |v| v != "1"),
                    "SPGEMM_REQUIRE_GPU=1 but: {e}"
                );
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "SKIPPED: no CUDA GPU: {e}");
                return;
            }
        };
        // C has about 67 M entries (800 MB); B about 100 MB.
        let a = spgemm::generate::erdos_renyi::<f64>(1 << 20, 8, 3).unwrap();
        let dev = e.device();
        let stream = dev.create_stream().unwrap();
        let (free, _) = dev.memory_info().unwrap();
        // Leave about 400 MB: the largest hog the pool grants (free memory
        // is not all allocatable at once), in 64 MB steps.
        let hog = (0..16)
            .find_map(|k| dev.alloc(&stream, free - (400 << 20) - (k << 26)).ok())
            .expect("a hog of all but 400 MB to 1.4 GB of the free memory");
        let leave = free - hog.len();
        dev.synchronize(&stream).unwrap();
        let (c, how) = e.multiply_host_placed(&a, &a).unwrap();
        drop(hog);
        match how {
            Placement::Chunked {
                chunks,
                budget,
                after_out_of_memory: true,
            } => {
                assert!(chunks > 1, "{chunks} chunks");
                assert!(budget <= leave + (64 << 20), "budget {budget}");
            }
            other => panic!("expected chunks after running out of memory, got {other:?}"),
        }
        let rows: Vec<usize> = (0..a.nrows()).step_by(997).collect();
        spgemm::verify::check_rows(&a, &a, &c, &rows)
            .unwrap()
            .unwrap();
        assert!(c.same_structure(&e.multiply_host(&a, &a).unwrap()));
    }
}
