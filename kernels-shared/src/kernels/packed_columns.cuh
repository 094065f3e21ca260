// B's rows packed into words of 32 columns for the symbolic phase
// (KokkosKernels §3.2: the "column set index" and "column set" arrays): an
// entry per run of consecutive entries of a row in the same word, the word
// in the high half and the mask of its columns in the low half, so that a
// symbolic table unions a word's columns with one insertion. Two passes
// over B: the runs per row (into prpt, and their total, for the host's
// rule), then, after prpt's scan, the runs themselves (into pcol). A
// thread per row; rows of more than a warp's width of entries are taken by
// their warp, a lane per entry. Rows need not be sorted: a word that comes
// back later in a row is another run, and the tables take the union.

// Whether B's entry q starts a run of its row, which starts at b0.
__device__ __forceinline__ bool run_start(const u32* bcol, u64 b0, u64 q) {
    return q == b0 || bcol[q] / SPGEMM_WORD_BITS != bcol[q - 1] / SPGEMM_WORD_BITS;
}

// The packed entry of the run that starts at q (its row ends at b1).
__device__ __forceinline__ u64 run_at(const u32* bcol, u64 q, u64 b1) {
    const u32 word = bcol[q] / SPGEMM_WORD_BITS;
    u32 bits = 0;
    for (; q < b1 && bcol[q] / SPGEMM_WORD_BITS == word; ++q) bits |= 1u << (bcol[q] % SPGEMM_WORD_BITS);
    return ((u64)word << 32) | bits;
}

// FILL false: prpt[r] = the runs of row r, their total added to *total.
// FILL true: the runs of row r written from pcol[prpt[r]] on (prpt scanned).
// The rows are walked a warp at a time (a lane per row), so that every lane
// of a warp takes the same steps and the warp can take its long rows.
template <bool FILL>
__device__ void pack_rows(const u64* brpt, const u32* bcol, u32 kb, u64* prpt, u64* pcol, u64* total) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const lane_mask_t below = ((lane_mask_t)1 << lane) - 1;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 sum = 0;
    for (u64 base = (u64)blockIdx.x * blockDim.x + threadIdx.x - lane; base < kb; base += stride) {
        const u64 r = base + lane;
        const u64 b0 = r < kb ? brpt[r] : 0, b1 = r < kb ? brpt[r + 1] : 0;
        const bool is_long = b1 - b0 > SPGEMM_WARP_SIZE;
        if (!is_long && r < kb) {
            const u64 at = FILL ? prpt[r] : 0;
            u64 runs = 0;
            for (u64 q = b0; q < b1; ++q)
                if (run_start(bcol, b0, q)) {
                    if (FILL) pcol[at + runs] = run_at(bcol, q, b1);
                    ++runs;
                }
            if (!FILL) {
                prpt[r] = runs;
                sum += runs;
            }
        }
        lane_mask_t longs = SPGEMM_BALLOT(is_long);
        while (longs) {
            const u64 lr = base + (SPGEMM_FFS(longs) - 1);
            longs &= longs - 1;
            const u64 l0 = brpt[lr], l1 = brpt[lr + 1];
            u64 at = FILL ? prpt[lr] : 0;
            for (u64 q0 = l0; q0 < l1; q0 += SPGEMM_WARP_SIZE) {
                const u64 q = q0 + lane;
                const bool start = q < l1 && run_start(bcol, l0, q);
                const lane_mask_t starts = SPGEMM_BALLOT(start);
                if (FILL && start) pcol[at + SPGEMM_POPC(starts & below)] = run_at(bcol, q, l1);
                at += SPGEMM_POPC(starts);
            }
            if (!FILL && lane == 0) {
                prpt[lr] = at;
                sum += at;
            }
        }
    }
    if (!FILL) {
        sum = warp_sum(sum);
        if (lane == 0 && sum) atomicAdd(total, sum);
    }
}

SPGEMM_FIXED_KERNEL void spgemm_pack_count(const u64* brpt, const u32* bcol, u32 kb, u64* prpt, u64* total,
                                           const u64* faults) {
    if (operands_faulted(faults)) return;
    pack_rows<false>(brpt, bcol, kb, prpt, (u64*)0, total);
}

SPGEMM_FIXED_KERNEL void spgemm_pack_fill(const u64* brpt, const u32* bcol, u32 kb, const u64* prpt, u64* pcol) {
    pack_rows<true>(brpt, bcol, kb, (u64*)prpt, pcol, (u64*)0);
}
