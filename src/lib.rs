//! # spgemm
//!
//! Sparse general matrix-matrix multiplication `C = A·B` (CSR in, CSR out)
//! with one API on NVIDIA GPUs (CUDA, feature `cuda`), AMD / Hygon DCU GPUs
//! (HIP, feature `hip`) and multicore CPUs (always available).
//!
//! | concept | item |
//! |---|---|
//! | CSR matrix | [`CsrMatrix`], borrowed: [`CsrView`] |
//! | pick a backend | [`Backend::select`] |
//! | multiply | [`Backend::multiply`] |
//! | semirings, masks, pruning | [`Backend::multiply_spec`], [`Backend::multiply_spec_transposed`], [`semiring`] |
//! | breadth-first search levels | [`Backend::bfs_levels`] |
//! | over MPI ranks, and its model | [`distributed`] |
//! | reuse the structure | [`Backend::symbolic`], [`Backend::numeric`] |
//! | Galerkin products `Pᵀ·A·P`, `R·A·P`; `Aᵀ·B`, `A·Bᵀ` | [`Backend::ptap`], [`Backend::galerkin`], [`Backend::multiply_transposed`] |
//! | Matrix Market files | [`mtx`] |
//! | SciPy `.npz` files | [`npz`] |
//! | either, by extension | [`files`] |
//! | sprs, faer, nalgebra-sparse, foreign index types | [`interop`] |
//! | reference product and checks | [`mod@reference`], [`verify`] |
//! | work statistics | [`stats`] |
//! | synthetic matrices | [`generate`] |
//!
//! ```
//! use spgemm::{Backend, BackendKind, CsrMatrix};
//! let a = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0f64, 2.0, 3.0])?;
//! let (backend, _why) = Backend::select(BackendKind::Auto)?;
//! let c = backend.multiply(&a, &a)?;
//! assert_eq!(c.values(), &[1.0, 8.0, 9.0]);
//! # Ok::<(), spgemm::Error>(())
//! ```
#![warn(missing_docs)]

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use spgemm_core::gpu::GpuConfig;
pub use spgemm_core::semiring::ProductSpec;
pub use spgemm_core::{
    device, error, files, generate, gpu, graph, interop, mtx, npz, reference, semiring, stats,
    table, verify, Bool, CsrMatrix, CsrView, Scalar,
};
pub use spgemm_cpu::{CpuBackend, CpuPlan};
/// Distributed products over MPI (feature `mpi`) and the model of their
/// communication (always): see the crate `spgemm-distributed`.
pub use spgemm_distributed as distributed;

mod boolean;
mod galerkin;
mod plan;
mod search;
mod spec_product;
pub use galerkin::{Galerkin, Transposed};
pub use plan::Plan;

/// Errors of the facade: those of `spgemm-core` and backend selection.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error from the core library or a backend.
    #[error(transparent)]
    Core(#[from] spgemm_core::Error),
    /// A plan was given to a backend other than the one that built it.
    #[error("the plan was built by the {built} backend and cannot be used by the {used} backend")]
    PlanBackend {
        /// The backend that built the plan.
        built: &'static str,
        /// The backend it was given to.
        used: &'static str,
    },
    /// A distributed product failed (on every rank alike).
    #[error(transparent)]
    Distributed(#[from] spgemm_distributed::Error),
    /// The requested backend cannot run here.
    #[error("backend '{backend}' is not available: {reason}")]
    BackendUnavailable {
        /// The backend asked for.
        backend: &'static str,
        /// Why it cannot run.
        reason: String,
    },
}

/// Result alias of the facade.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which backend to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// The best one present: a GPU backend compiled in with a device present,
    /// otherwise the CPU.
    Auto,
    /// The multithreaded CPU backend.
    Cpu,
    /// NVIDIA GPUs through CUDA (feature `cuda`).
    Cuda,
    /// AMD / Hygon GPUs through HIP (feature `hip`).
    Hip,
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda),
            "hip" => Ok(Self::Hip),
            _ => Err(format!("unknown backend '{s}' (auto, cpu, cuda, hip)")),
        }
    }
}

#[cfg(feature = "cuda")]
pub use spgemm_cuda::{CudaDevice, CudaEngine};
#[cfg(feature = "hip")]
pub use spgemm_hip::{HipDevice, HipEngine};

/// A ready backend.
pub enum Backend {
    /// The CPU backend.
    Cpu(CpuBackend),
    /// NVIDIA GPUs (feature `cuda`): one engine per device of
    /// [`GpuConfig::devices`].
    #[cfg(feature = "cuda")]
    Cuda(Box<gpu::MultiGpu<CudaDevice>>),
    /// AMD GPUs and Hygon DCUs (feature `hip`): one engine per device of
    /// [`GpuConfig::devices`].
    #[cfg(feature = "hip")]
    Hip(Box<gpu::MultiGpu<HipDevice>>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Backend({}, {})", self.name(), self.device())
    }
}

/// Opens one engine per device in `options` with `open`, configured by
/// `options`.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))] // used by the GPU features
fn open_engines<D: spgemm_core::device::Device>(
    backend: &'static str,
    options: &GpuConfig,
    open: impl Fn(usize) -> spgemm_core::Result<gpu::GpuEngine<D>>,
) -> Result<gpu::MultiGpu<D>> {
    let engines = options
        .devices
        .iter()
        .map(|&d| {
            open(d)
                .map_err(|e| Error::BackendUnavailable {
                    backend,
                    reason: e.to_string(),
                })
                .map(|e| e.with_config(options.clone()))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(gpu::MultiGpu::new(engines)?)
}

impl Backend {
    /// Opens the backend `kind` (GPU backends on device 0) and says why it
    /// was chosen.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`] when a GPU backend is asked for but was
    /// not compiled in or finds no device.
    pub fn select(kind: BackendKind) -> Result<(Backend, String)> {
        Self::select_with(kind, &GpuConfig::default())
    }

    /// Opens the backend `kind` with GPU `options` and says why it was
    /// chosen.
    ///
    /// # Errors
    /// As [`Backend::select`]; also [`Error::Core`] with
    /// `spgemm_core::Error::NoDevices` for an empty device list.
    pub fn select_with(kind: BackendKind, options: &GpuConfig) -> Result<(Backend, String)> {
        let cpu = || Backend::Cpu(CpuBackend::new());
        match kind {
            BackendKind::Cpu => Ok((cpu(), "asked for".into())),
            BackendKind::Cuda => Self::cuda(options).map(|b| (b, "asked for".into())),
            BackendKind::Hip => Self::hip(options).map(|b| (b, "asked for".into())),
            BackendKind::Auto => {
                let cuda = match Self::cuda(options) {
                    Ok(b) => return Ok((b, "a CUDA GPU is present".into())),
                    Err(Error::BackendUnavailable { reason, .. }) => reason,
                    Err(e) => return Err(e),
                };
                let hip = match Self::hip(options) {
                    Ok(b) => return Ok((b, "a HIP GPU is present".into())),
                    Err(Error::BackendUnavailable { reason, .. }) => reason,
                    Err(e) => return Err(e),
                };
                Ok((
                    cpu(),
                    format!("no GPU backend usable: cuda: {cuda}; hip: {hip}"),
                ))
            }
        }
    }

    /// Opens the HIP devices of `options`.
    fn hip(options: &GpuConfig) -> Result<Backend> {
        #[cfg(feature = "hip")]
        {
            open_engines("hip", options, spgemm_hip::open).map(|m| Backend::Hip(Box::new(m)))
        }
        #[cfg(not(feature = "hip"))]
        {
            let _ = options;
            Err(Error::BackendUnavailable {
                backend: "hip",
                reason: "built without the 'hip' feature (build with --features hip)".into(),
            })
        }
    }

    /// Opens the CUDA devices of `options`.
    fn cuda(options: &GpuConfig) -> Result<Backend> {
        #[cfg(feature = "cuda")]
        {
            open_engines("cuda", options, spgemm_cuda::open).map(|m| Backend::Cuda(Box::new(m)))
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = options;
            Err(Error::BackendUnavailable {
                backend: "cuda",
                reason: "built without the 'cuda' feature (build with --features cuda)".into(),
            })
        }
    }

    /// Short backend name (`"cpu"`, `"cuda"`, `"hip"`).
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Cpu(_) => "cpu",
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => "cuda",
            #[cfg(feature = "hip")]
            Backend::Hip(_) => "hip",
        }
    }

    /// What the backend runs on, e.g. `"CPU, 2 threads"`, the GPU's name,
    /// or `"2 × NVIDIA H200"`.
    pub fn device(&self) -> String {
        match self {
            Backend::Cpu(c) => format!("CPU, {} threads", c.threads()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => gpu_names(m),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => gpu_names(m),
        }
    }

    /// [`Backend::multiply`] with the wall-clock times of its steps: on a
    /// GPU, uploading A and B (through pinned memory), the product and
    /// downloading C; on the CPU, all of it is the product.
    ///
    /// # Errors
    /// As [`Backend::multiply`].
    pub fn multiply_timed<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<(CsrMatrix<T>, gpu::HostTimes)> {
        let (a, b) = (a.into(), b.into());
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) if !self.widens::<T>() => Ok(m.multiply_host_timed(a, b)?),
            #[cfg(feature = "hip")]
            Backend::Hip(m) if !self.widens::<T>() => Ok(m.multiply_host_timed(a, b)?),
            // The CPU, and booleans on a GPU (as i32): timed whole.
            _ => {
                let t = std::time::Instant::now();
                let m = self.multiply(a, b)?;
                let times = gpu::HostTimes {
                    multiply_ms: t.elapsed().as_secs_f64() * 1e3,
                    ..Default::default()
                };
                Ok((m, times))
            }
        }
    }

    /// The bus's bandwidth through pinned memory of the first GPU, bytes per
    /// second host to device and device to host
    /// ([`gpu::GpuEngine::pinned_bandwidth`]); `None` on the CPU.
    ///
    /// # Errors
    /// Device errors.
    pub fn pinned_bandwidth(&self) -> Result<Option<(f64, f64)>> {
        match self {
            Backend::Cpu(_) => Ok(None),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Ok(Some(m.engines()[0].pinned_bandwidth()?)),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Ok(Some(m.engines()[0].pinned_bandwidth()?)),
        }
    }

    /// The device memory's bandwidth of the first GPU, bytes per second
    /// ([`gpu::GpuEngine::memory_bandwidth`]); `None` on the CPU.
    ///
    /// # Errors
    /// Device errors.
    pub fn memory_bandwidth(&self) -> Result<Option<f64>> {
        match self {
            Backend::Cpu(_) => Ok(None),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Ok(Some(m.engines()[0].memory_bandwidth()?)),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Ok(Some(m.engines()[0].memory_bandwidth()?)),
        }
    }

    /// `C = A·B` with sorted rows: A is `M×K`, B is `K×N`, C is `M×N`;
    /// see the backend's docs ([`CpuBackend::multiply`],
    /// [`gpu::GpuEngine::multiply_host`], [`gpu::MultiGpu::multiply_host`]).
    /// A and B are a `&CsrMatrix<T>` or a [`CsrView`] of arrays held
    /// elsewhere (another crate's matrix, see the `sprs`, `faer` and
    /// `nalgebra-sparse` features), read in place. Booleans ([`Bool`]:
    /// `+` is or, `·` is and) run on a GPU backend as `i32` 0 and 1 with
    /// `lor_land` and come back as booleans (see `docs/semirings.md`).
    ///
    /// # Errors
    /// Dimension mismatch, out of memory (host or device), device failures.
    pub fn multiply<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        if self.widens::<T>() {
            return self.widened(a, b, &ProductSpec::new(), |a, b, s| {
                self.multiply_spec(a, b, s)
            });
        }
        match self {
            Backend::Cpu(c) => Ok(c.multiply(a, b)?),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Ok(m.multiply_host(a, b)?),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Ok(m.multiply_host(a, b)?),
        }
    }
}

/// A rank's products in a distributed product run by this backend.
#[cfg(feature = "mpi")]
impl<T: Scalar> distributed::LocalProduct<T> for Backend {
    fn multiply(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
    ) -> std::result::Result<CsrMatrix<T>, String> {
        Backend::multiply(self, a, b).map_err(|e| e.to_string())
    }
}

/// The devices of `m`: one name, or `"N × name"` when all are alike.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))] // used by the GPU features
fn gpu_names<D: spgemm_core::device::Device>(m: &gpu::MultiGpu<D>) -> String {
    let names: Vec<&str> = m
        .engines()
        .iter()
        .map(|e| e.device().properties().name.as_str())
        .collect();
    if names.len() == 1 {
        names[0].to_string()
    } else if names.iter().all(|n| *n == names[0]) {
        format!("{} × {}", names.len(), names[0])
    } else {
        names.join(" + ")
    }
}
