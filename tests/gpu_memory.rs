//! Device memory running out on the CUDA backend: a product that no longer
//! fits switches to chunks instead of failing. Its own test binary (its
//! own process), since it fills the GPU's memory; reported as ignored
//! without the `cuda` feature or a GPU, and failed then under
//! `SPGEMM_REQUIRE_GPU=1` (the `backends` binary's runner).

#[path = "common/mod.rs"]
mod common;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    #[cfg(feature = "cuda")]
    let test = out_of_memory::whole_product_out_of_device_memory_is_redone_in_chunks;
    // Never run: without the feature the CUDA backend never opens.
    #[cfg(not(feature = "cuda"))]
    let test = || unreachable!("the CUDA backend is not compiled in");
    let trial = common::trial(
        spgemm::BackendKind::Cuda,
        "cuda::whole_product_out_of_device_memory_is_redone_in_chunks".into(),
        test,
    );
    libtest_mimic::run(&args, vec![trial]).exit();
}

#[cfg(feature = "cuda")]
mod out_of_memory {
    use spgemm::gpu::Placement;
    use spgemm_core::device::{Device, DeviceBuffer};

    pub fn whole_product_out_of_device_memory_is_redone_in_chunks() {
        let e = spgemm_cuda::open(0).expect("CUDA GPU 0");
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
