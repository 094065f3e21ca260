//! How GPU products run: one configuration for the engine
//! ([`GpuEngine::with_config`](super::GpuEngine::with_config)), the facade's
//! GPU backends and the command line, each option an enum that parses from
//! and prints as its command-line name.

use super::dense::Accumulator;
use super::engine::LongRows;
use super::program::SortVariant;
use crate::table::TableConfig;

/// The configuration of GPU products. An engine uses every field but
/// `devices`, which says on which GPUs a backend opens engines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuConfig {
    /// Device ordinals to use together (rows of A split between them by
    /// products, B copied to each); default `[0]`.
    pub devices: Vec<usize>,
    /// Device-memory budget per device in bytes (default: the free memory
    /// at each product); larger host-to-host products run in chunks of rows.
    pub memory_budget: Option<usize>,
    /// The numeric step's sort (default: [`SortVariant::Auto`]).
    pub sort: SortVariant,
    /// The kernel table (default: the device's own, [`TableConfig::Device`]).
    /// Fixed at the first product: kernels are compiled once per value type.
    pub table: TableConfig,
    /// How rows past the last shared-memory table are computed (default:
    /// [`LongRows::Auto`]).
    pub long_rows: LongRows,
    /// Dense accumulators in shared memory or hash tables in the bins
    /// (default: [`Accumulator::Auto`]).
    pub accumulator: Accumulator,
}

impl Default for GpuConfig {
    fn default() -> Self {
        Self {
            devices: vec![0],
            memory_budget: None,
            sort: SortVariant::default(),
            table: TableConfig::default(),
            long_rows: LongRows::default(),
            accumulator: Accumulator::default(),
        }
    }
}
