//! The counters and row lists of one phase's binning (OpSparse §5.3,
//! Alg. 1–2): one device allocation that the setup and binning kernels
//! fill and the host reads back once.

use super::constants::{FAULT_WORDS, HIST_BUCKETS};
use super::kernels::DevicePtr;
use super::launch::Launcher;
use super::memory::DeviceArray;
use crate::device::Device;
use crate::error::Result;

/// The bins after a phase's table's: the direct, the distinct, the ranked
/// and the runs bins (numeric phase), in that order.
pub(super) const EXTRA_BINS: usize = 4;

/// Counters and scratch of one phase, in one allocation (OpSparse §5.3):
/// words 0..8 hold the stats (2 u64), (symbolic phase) the number of rows
/// of A that setup split and the blocks of `spgemm_setup_split` done (2
/// u32), the maximum, the overflow count, (numeric phase) a copy of nnz(C)
/// and (symbolic phase) the entries of B packed into words of columns and
/// the rows of A with the columns of the row before;
/// then per-bin sizes and cursors (u32, the direct, the distinct, the
/// ranked and the runs bins last); (symbolic phase) words 56 and 57 the products and
/// entries of the one pass's sample; words 64..128 the histogram of
/// products by log2 of their row of B; four words of the operands' check
/// faults ([`Meta::faults`]); then the bins array and the overflow
/// list (M u32 each); setup lists the rows it splits where the bins go
/// later.
pub(super) struct Meta<D: Device> {
    words: DeviceArray<D, u64>,
    m: usize,
    nbins: usize,
}

/// What the host reads back from [`Meta`].
pub(super) struct Counts {
    /// Total products, largest products of a row.
    pub(super) stats: [u64; 2],
    /// Largest value binned (nprod or nnz) in the table's bins and the
    /// ranked bin.
    pub(super) max: u64,
    /// Rows the last symbolic bin gave up on.
    pub(super) overflow: u32,
    /// Rows per bin, then the direct bin's, the distinct bin's, the
    /// ranked bin's and the runs bin's ([`EXTRA_BINS`]).
    pub(super) sizes: Vec<u32>,
    /// Length of the rows of B the median product comes from (from setup's
    /// histogram, the middle of its power-of-two bucket).
    pub(super) typical: usize,
    /// C's last row offset, nnz(C), where [`Meta::copy_nnz`] put it.
    pub(super) nnz: u64,
    /// Entries of B packed into words of 32 columns, where
    /// `spgemm_pack_count` added them ([`Meta::packed_total`]).
    pub(super) packed: u64,
    /// Rows of A with the columns of the row before them, where
    /// `spgemm_same_rows` added them ([`Meta::same_rows_total`]).
    pub(super) same: u64,
    /// Products and entries of the rows the one pass's sample computed
    /// (0 where none ran).
    pub(super) sample: [u64; 2],
    /// The operands' check faults where [`Meta::faults`] has them (all 0:
    /// none, or no checks pending).
    pub(super) faults: [u64; FAULT_WORDS],
}

impl Counts {
    /// Where each bin's rows start in the bins array.
    pub(super) fn offsets(&self) -> Vec<u64> {
        let mut at = 0u64;
        self.sizes
            .iter()
            .map(|&s| {
                let start = at;
                at += s as u64;
                start
            })
            .collect()
    }
}

impl<D: Device> Meta<D> {
    /// Where the one pass's sample adds its rows' products and entries.
    const SAMPLE: usize = 56;
    /// Where the setup kernel's histogram starts in the header.
    const HIST: usize = 64;
    const FAULTS: usize = Self::HIST + HIST_BUCKETS;
    const HEADER: usize = Self::FAULTS + FAULT_WORDS;

    /// Counters for `nbins` bins and room to bin `m` rows, the header
    /// zeroed, on stream 0.
    pub(super) fn new(l: &Launcher<'_, D>, m: usize, nbins: usize) -> Result<Self> {
        assert!(
            8 + nbins + EXTRA_BINS <= Self::SAMPLE,
            "too many bins for the metadata header"
        );
        let words = l.alloc::<u64>(0, Self::HEADER + m, "bins and counters")?;
        words.zero(l.device, &l.streams[0], 0, Self::HEADER)?;
        Ok(Self { words, m, nbins })
    }
    pub(super) fn stats(&self) -> DevicePtr {
        self.words.ptr_to(0)
    }
    /// The split rows' count and the split kernel's finished blocks (u32).
    pub(super) fn nsplit(&self) -> DevicePtr {
        self.words.ptr_to(2)
    }
    /// The rows setup splits (u32), in the bins array before binning.
    pub(super) fn split_rows(&self) -> DevicePtr {
        self.bins(0)
    }
    pub(super) fn max_value(&self) -> DevicePtr {
        self.words.ptr_to(3)
    }
    pub(super) fn noverflow(&self) -> DevicePtr {
        self.words.ptr_to(4)
    }
    pub(super) fn packed_total(&self) -> DevicePtr {
        self.words.ptr_to(6)
    }
    pub(super) fn same_rows_total(&self) -> DevicePtr {
        self.words.ptr_to(7)
    }
    /// Two words for the products and entries of the rows sampled for
    /// the one pass's choice (`Kernel::OnePassSample`).
    pub(super) fn sample(&self) -> DevicePtr {
        self.words.ptr_to(Self::SAMPLE)
    }
    pub(super) fn hist(&self) -> DevicePtr {
        self.words.ptr_to(Self::HIST)
    }
    /// Where setup copies the fault words of the operands' pending checks
    /// (zeroed otherwise), for the host to read back with the counters.
    pub(super) fn faults(&self) -> DevicePtr {
        self.words.ptr_to(Self::FAULTS)
    }
    pub(super) fn sizes(&self) -> DevicePtr {
        self.words.ptr_to(8)
    }
    pub(super) fn cursors(&self) -> DevicePtr {
        self.words
            .ptr_to(8)
            .add(4 * (self.nbins + EXTRA_BINS) as u64)
    }
    /// The rows of the bin starting at `offset` in the bins array.
    pub(super) fn bins(&self, offset: u64) -> DevicePtr {
        self.words.ptr_to(Self::HEADER).add(4 * offset)
    }
    pub(super) fn overflow(&self) -> DevicePtr {
        self.words.ptr_to(Self::HEADER).add(4 * self.m as u64)
    }
    /// Copies C's last row offset (nnz(C), after the scan) into the header,
    /// so that one read brings it with the numeric bins' counters.
    pub(super) fn copy_nnz(&self, l: &Launcher<'_, D>, crpt: &DeviceArray<D, u64>) -> Result<()> {
        if let (Some(src), Some(dst)) = (&crpt.buf, &self.words.buf) {
            l.device
                .copy_device(&l.streams[0], src, 8 * self.m, dst, 8 * 5, 8)?;
        }
        Ok(())
    }
    /// Reads the counters (waits for stream 0).
    pub(super) fn read(&self, l: &Launcher<'_, D>) -> Result<Counts> {
        let mut h = vec![0u64; Self::HEADER];
        l.read(&self.words, 0, &mut h)?;
        let sizes: &[u32] = bytemuck::cast_slice(&h[8..Self::HIST]);
        let hist = &h[Self::HIST..Self::FAULTS];
        let total: u128 = hist.iter().map(|&x| x as u128).sum();
        let mut acc = 0u128;
        let median = hist.iter().position(|&x| {
            acc += x as u128;
            2 * acc >= total && total > 0
        });
        let typical = median.map_or(0, |b| 3usize << b >> 1);
        Ok(Counts {
            stats: [h[0], h[1]],
            max: h[3],
            overflow: h[4] as u32,
            sizes: sizes[..self.nbins + EXTRA_BINS].to_vec(),
            typical,
            nnz: h[5],
            packed: h[6],
            same: h[7],
            sample: [h[Self::SAMPLE], h[Self::SAMPLE + 1]],
            faults: h[Self::FAULTS..Self::HEADER]
                .try_into()
                .expect("the header holds FAULT_WORDS fault words"),
        })
    }
}
