//! # spgemm
//!
//! Sparse general matrix-matrix multiplication `C = A·B` (CSR in, CSR out)
//! with one API on NVIDIA GPUs (CUDA, feature `cuda`), AMD / Hygon DCU GPUs
//! (HIP, feature `hip`) and multicore CPUs (always available).
//!
//! | concept | item |
//! |---|---|
//! | CSR matrix | [`CsrMatrix`] |
//! | pick a backend | [`Backend::select`] |
//! | multiply | [`Backend::multiply`] |
//! | Matrix Market files | [`mtx`] |
//! | reference product and checks | [`reference`], [`verify`] |
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

pub use spgemm_core::{generate, gpu, mtx, reference, stats, verify, CsrMatrix, Scalar};
pub use spgemm_cpu::{CpuBackend, CpuPlan};

/// Errors of the facade: those of `spgemm-core` and backend selection.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error from the core library or a backend.
    #[error(transparent)]
    Core(#[from] spgemm_core::Error),
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

/// A ready backend.
pub enum Backend {
    /// The CPU backend.
    Cpu(CpuBackend),
    /// An NVIDIA GPU (feature `cuda`).
    #[cfg(feature = "cuda")]
    Cuda(Box<CudaEngine>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Backend({}, {})", self.name(), self.device())
    }
}

impl Backend {
    /// Opens the backend `kind` and says why it was chosen.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`] when a GPU backend is asked for but was
    /// not compiled in or finds no device.
    pub fn select(kind: BackendKind) -> Result<(Backend, String)> {
        let cpu = || Backend::Cpu(CpuBackend::new());
        match kind {
            BackendKind::Cpu => Ok((cpu(), "asked for".into())),
            BackendKind::Cuda => Self::cuda().map(|b| (b, "asked for".into())),
            BackendKind::Hip => Err(Error::BackendUnavailable {
                backend: "hip",
                reason: "the HIP backend is not available yet: its kernels compile (kernels-hip), its device layer does not exist (see README)".into(),
            }),
            BackendKind::Auto => match Self::cuda() {
                Ok(b) => Ok((b, "a CUDA GPU is present".into())),
                Err(Error::BackendUnavailable { reason, .. }) => {
                    Ok((cpu(), format!("no GPU backend usable: cuda: {reason}")))
                }
                Err(e) => Err(e),
            },
        }
    }

    /// Opens GPU 0 through CUDA.
    fn cuda() -> Result<Backend> {
        #[cfg(feature = "cuda")]
        {
            spgemm_cuda::open(0)
                .map(|e| Backend::Cuda(Box::new(e)))
                .map_err(|e| Error::BackendUnavailable {
                    backend: "cuda",
                    reason: e.to_string(),
                })
        }
        #[cfg(not(feature = "cuda"))]
        Err(Error::BackendUnavailable {
            backend: "cuda",
            reason: "built without the 'cuda' feature (build with --features cuda)".into(),
        })
    }

    /// Short backend name (`"cpu"`, `"cuda"`, `"hip"`).
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Cpu(_) => "cpu",
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => "cuda",
        }
    }

    /// What the backend runs on, e.g. `"CPU, 2 threads"` or the GPU's name.
    pub fn device(&self) -> String {
        #[cfg(feature = "cuda")]
        use spgemm_core::device::Device;
        match self {
            Backend::Cpu(c) => format!("CPU, {} threads", c.threads()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(e) => e.device().properties().name.clone(),
        }
    }

    /// `C = A·B` with sorted rows; see the backend's docs.
    ///
    /// # Errors
    /// Dimension mismatch, out of memory (host or device), device failures.
    pub fn multiply<T: Scalar>(&self, a: &CsrMatrix<T>, b: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
        match self {
            Backend::Cpu(c) => Ok(c.multiply(a, b)?),
            #[cfg(feature = "cuda")]
            Backend::Cuda(e) => Ok(e.multiply_host(a, b)?),
        }
    }
}
