//! # spgemm-hip
//!
//! The HIP backend of spgemm, for AMD GPUs and Hygon DCUs. So far it holds
//! the run-time compiler layer ([`hiprtc`]): the kernel program that
//! `spgemm-core` assembles from the wave64 prelude (`spgemm-kernels-hip`),
//! the shared body and a device's kernel table is compiled by hiprtc for
//! the target architecture. libamdhip64 (which carries hiprtc in ROCm 5)
//! is loaded at run time, so building needs no ROCm installation.
//!
//! The `Device` implementation over the HIP runtime, and with it the
//! `--features hip` backend, is the next step (see the HIP issue).
#![warn(missing_docs)]

pub mod hiprtc;
