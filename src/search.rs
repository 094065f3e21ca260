//! Breadth-first search levels on every backend, by masked products over
//! the `any_pair` semiring (see [`spgemm_core::graph`]).

use crate::{Backend, CsrView, Result, Scalar};

impl Backend {
    /// Each vertex's level in a breadth-first search of the graph whose
    /// adjacency matrix is `a` (`n×n`; row k's entry in column j an edge
    /// from k to j; values never read) from vertex `source`: 0 for the
    /// source, −1 ([`spgemm_core::graph::UNREACHED`]) where no path leads.
    /// Each level is `f'⟨¬v⟩ = f any.pair A` (Kepner and Gilbert, eds.,
    /// "Graph Algorithms in the Language of Linear Algebra", SIAM 2011,
    /// ch. 2), pushed from the frontier's rows of A past the visited set
    /// kept as a dense mask between levels: on the CPU backend's threads
    /// ([`crate::CpuBackend::bfs_levels`]), or on a GPU backend's first
    /// device in one call, A uploaded once and the visited set kept there
    /// as a bitmap ([`spgemm_core::gpu::GpuEngine::bfs_levels`]).
    ///
    /// ```
    /// use spgemm::{Backend, CpuBackend, CsrMatrix};
    /// // 0 → 1 → 2, and 3 → 0.
    /// let a = CsrMatrix::new(4, 4, vec![0, 1, 2, 2, 3], vec![1, 2, 0], vec![1.0f64; 3])?;
    /// let levels = Backend::Cpu(CpuBackend::new()).bfs_levels(&a, 0)?;
    /// assert_eq!(levels, vec![0, 1, 2, -1]);
    /// # Ok::<(), spgemm::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`spgemm_core::Error::Graph`] for a matrix that is not square or a
    /// source that is not a vertex; [`spgemm_core::Error::TooLarge`] past
    /// `i32::MAX` vertices; device errors.
    pub fn bfs_levels<'a, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        source: usize,
    ) -> Result<Vec<i32>> {
        let a = a.into();
        match self {
            Backend::Cpu(c) => Ok(c.bfs_levels(a, source)?),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Ok(m.engines()[0].bfs_levels(a, source)?),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Ok(m.engines()[0].bfs_levels(a, source)?),
        }
    }
}
