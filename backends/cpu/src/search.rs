//! Breadth-first search levels on the CPU: each level the masked product
//! `f'⟨¬v⟩ = f any.pair A` pushed from the frontier's rows of A, the
//! visited set v kept as every vertex's level (a dense mask: −1 outside
//! it) from level to level rather than rebuilt as a sparse mask row; the
//! frontier's rows split over the threads when they hold enough entries.
//! The push step of Yang, Buluç and Owens, "Implementing Push-Pull
//! Efficiently in GraphBLAS" (ICPP 2018); levels as in
//! [`spgemm_core::graph`].

use crate::CpuBackend;
use rayon::prelude::*;
use spgemm_core::graph::{check_source, UNREACHED};
use spgemm_core::{CsrView, Result, Scalar};
use std::sync::atomic::{AtomicI32, Ordering};

/// Entries of A a frontier's rows hold below which a level runs on one
/// thread: smaller levels cost less than handing work to the pool.
const SERIAL_ENTRIES: usize = 1 << 14;

/// Frontier vertices a task takes at a time on a parallel level.
const CHUNK: usize = 256;

impl CpuBackend {
    /// Each vertex's level in a breadth-first search of A's graph (`n×n`,
    /// rows in any order, repeated columns harmless, values never read)
    /// from vertex `source`: 0 for the source, −1 where no path leads
    /// (module docs).
    ///
    /// # Errors
    /// As [`check_source`].
    pub fn bfs_levels<T: Scalar>(&self, a: CsrView<'_, T>, source: usize) -> Result<Vec<i32>> {
        check_source(a.shape(), source)?;
        let (offsets, cols) = (a.row_offsets(), a.col_indices());
        let levels: Vec<AtomicI32> = (0..a.nrows()).map(|_| AtomicI32::new(UNREACHED)).collect();
        levels[source].store(0, Ordering::Relaxed);
        let mut frontier = vec![source as u32];
        let mut depth = 0;
        // Marks vertex j at `depth` unless a level is set: whether this
        // call found it.
        let visit = |j: u32, depth: i32| {
            let l = &levels[j as usize];
            l.load(Ordering::Relaxed) == UNREACHED
                && l.compare_exchange(UNREACHED, depth, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
        };
        let row = |k: u32| &cols[offsets[k as usize]..offsets[k as usize + 1]];
        while !frontier.is_empty() {
            depth += 1;
            let entries: usize = frontier.iter().map(|&k| row(k).len()).sum();
            frontier = if entries < SERIAL_ENTRIES {
                let mut next = Vec::new();
                for &k in &frontier {
                    next.extend(row(k).iter().copied().filter(|&j| visit(j, depth)));
                }
                next
            } else {
                self.run(|| {
                    frontier
                        .par_chunks(CHUNK)
                        .flat_map_iter(|ks| {
                            let mut next = Vec::new();
                            for &k in ks {
                                next.extend(row(k).iter().copied().filter(|&j| visit(j, depth)));
                            }
                            next
                        })
                        .collect()
                })
            };
        }
        Ok(levels.into_iter().map(AtomicI32::into_inner).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spgemm_core::graph::levels_by_products;
    use spgemm_core::{generate, reference};

    #[test]
    fn levels_on_one_and_three_threads_match_a_product_a_level() {
        // 40,000 vertices of 8 edges: the middle levels hold far more than
        // SERIAL_ENTRIES entries (the pool's path), the first few fewer.
        let a = generate::erdos_renyi::<f64>(40_000, 8, 3).unwrap();
        let want = levels_by_products(a.view(), 7, |f, spec| {
            reference::multiply_spec(f.view(), a.view(), spec)
        })
        .unwrap();
        let widest = (0..=*want.iter().max().unwrap())
            .map(|d| {
                (0..a.nrows())
                    .filter(|&v| want[v] == d)
                    .map(|v| a.row(v).0.len())
                    .sum::<usize>()
            })
            .max()
            .unwrap();
        assert!(widest > 4 * SERIAL_ENTRIES, "{widest}");
        for threads in [1, 3] {
            let cpu = CpuBackend::with_threads(threads).unwrap();
            assert_eq!(
                cpu.bfs_levels(a.view(), 7).unwrap(),
                want,
                "{threads} threads"
            );
        }
    }
}
