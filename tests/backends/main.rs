//! Every backend against the CPU reference: the conformance suite
//! (`tests/common/conformance.rs`) on the CPU, CUDA and HIP backends under
//! several configurations, and the engine-level suite on each GPU backend.
//!
//! Its own test runner (libtest-mimic), so that a GPU test that cannot run
//! here is reported as ignored, with the reason, instead of passing: where
//! the backend opens GPU 0 its tests run; elsewhere they are ignored, and
//! under `SPGEMM_REQUIRE_GPU=1` they fail instead. Every test's name
//! starts with its backend (`cpu::`, `cuda::`, `hip::`), so that a GPU
//! machine runs its own with a filter: `SPGEMM_REQUIRE_GPU=1 cargo test
//! --features cuda --test backends -- cuda::`. The usual test flags work
//! (a name filter, `--exact`, `--test-threads`, `--list`).

#[path = "../common/mod.rs"]
mod common;

mod bfs;
mod booleans;
mod cpu;
mod cuda;
mod device_masks;
mod galerkin;
mod hip;
mod integers;
mod one_pass;
mod plans;
mod pruning;
mod reduced;
mod same_rows;
mod semirings;
mod transposed;
mod windows;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = cpu::trials();
    trials.extend(cuda::trials());
    trials.extend(hip::trials());
    trials.extend(plans::trials());
    trials.extend(semirings::trials());
    trials.extend(device_masks::trials());
    trials.extend(galerkin::trials());
    trials.extend(integers::trials());
    trials.extend(pruning::trials());
    trials.extend(bfs::trials());
    trials.extend(one_pass::trials());
    trials.extend(transposed::trials());
    trials.extend(reduced::trials());
    trials.extend(booleans::trials());
    trials.extend(same_rows::trials());
    trials.extend(windows::trials());
    libtest_mimic::run(&args, trials).exit();
}
