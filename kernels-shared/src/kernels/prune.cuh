// Pruning of C on the device (appended to masked_dot.cuh, whose
// lower_bound it uses, and to magnitude.cuh): entries of magnitude below a threshold dropped,
// then at most `keep` of the largest magnitudes kept per row (ties to the
// lower column), or per column through C's transpose, as Markov clustering
// prunes (Azad et al., "HipMCL", Nucleic Acids Research 46(6), 2018, §2;
// spgemm_core::semiring::Prune). Dropped entries get column SPGEMM_EMPTY
// for spgemm_masked_compact to remove.
//
// A warp takes a row, with 256 words of shared memory (the launch gives
// each warp its own). The keep-th largest magnitude t is found by radix
// selection over the magnitudes' order-preserving keys, 8 bits a pass
// (8 passes over the row in 64-bit types, 4 in 32-bit), then, when t ties
// and not all of its entries are kept, the column below which they are (4
// passes): no sort and no scratch memory in global memory, rows of any
// length, none of these passes over a row of at most `keep` entries.

// Radix selection over a warp's 256-bin histogram in shared memory
// (`hist`, the warp's own): the 8-bit digit at which the k-th most wanted
// candidate lies — the largest first with `largest`, else the smallest —
// among the entries p of r0..r1 whose digit(p) is a bin (not -1). k (from
// 1) becomes the candidate's rank within that bin. Lanes hold 256 / warp
// bins each and find the bin by a scan over the lanes.
template <typename G>
__device__ __forceinline__ u32 select_digit(u32* hist, u64 r0, u64 r1, u32 lane, u32& k, bool largest, G digit) {
    constexpr u32 PER = 256 / SPGEMM_WARP_SIZE;
    for (u32 b = lane; b < 256; b += SPGEMM_WARP_SIZE) hist[b] = 0;
    SPGEMM_SYNC_WARP();
    for (u64 p = r0 + lane; p < r1; p += SPGEMM_WARP_SIZE) {
        const int d = digit(p);
        if (d >= 0) atomicAdd(&hist[d], 1u);
    }
    SPGEMM_SYNC_WARP();
    u32 mine[PER], sum = 0;
#pragma unroll
    for (u32 j = 0; j < PER; ++j) {
        const u32 pos = lane * PER + j;
        mine[j] = hist[largest ? 255 - pos : pos];
        sum += mine[j];
    }
    u32 upto = sum;
    for (u32 d = 1; d < SPGEMM_WARP_SIZE; d *= 2) {
        const u32 y = SPGEMM_SHFL_UP(upto, d);
        if (lane >= d) upto += y;
    }
    const u32 before_lane = upto - sum;
    const bool here = before_lane < k && k <= upto;
    const int src = SPGEMM_FFS(SPGEMM_BALLOT(here)) - 1;
    u32 pos = 0, before = before_lane;
    if (here) {
#pragma unroll
        for (u32 j = 0; j < PER; ++j) {
            if (before + mine[j] >= k) {
                pos = lane * PER + j;
                break;
            }
            before += mine[j];
        }
    }
    pos = SPGEMM_SHFL(pos, src);
    k -= SPGEMM_SHFL(before, src);
    // The histogram is cleared by the next call only after every lane has
    // read it.
    SPGEMM_SYNC_WARP();
    return largest ? 255 - pos : pos;
}

// Live entries p of r0..r1 whose key is `t` (every lane returns the count).
template <typename L>
__device__ __forceinline__ u32 count_equal(u64 r0, u64 r1, u32 lane, const value_t* vals, u64 t, L live) {
    u32 n = 0;
    for (u64 base = r0; base < r1; base += SPGEMM_WARP_SIZE) {
        const u64 p = base + lane;
        n += SPGEMM_POPC(SPGEMM_BALLOT(p < r1 && live(p) && magnitude_key(vals[p]) == t));
    }
    return n;
}

// Calls drop(p) for each live entry p of r0..r1 (columns `cols`, values
// `vals`) that is not among the `keep` largest by magnitude, ties going to
// the lower column; nothing when at most `keep` entries are live. Lane
// `lane` of the warp handles entries r0 + lane, r0 + lane + warp, ...;
// `hist` is the warp's 256 words of shared memory. The keep-th largest key
// t is found digit by digit from the top (8 bits a pass, candidates
// narrowing), then, when not every entry of key t is kept, the column of
// the last kept one among them (4 passes over 32-bit columns).
template <typename L, typename F>
__device__ void keep_largest(u32* hist, u64 r0, u64 r1, u32 lane, const u32* cols, const value_t* vals, u64 keep,
                             L live, F drop) {
    u64 n = 0;
    for (u64 base = r0; base < r1; base += SPGEMM_WARP_SIZE) {
        const u64 p = base + lane;
        n += SPGEMM_POPC(SPGEMM_BALLOT(p < r1 && live(p)));
    }
    if (n <= keep) return;
    u64 t = 0;
    u32 last = 0;
    if (keep > 0) {
        u32 k = (u32)keep;
        u64 known = 0;
        for (int shift = 8 * (int)sizeof(value_t) - 8; shift >= 0; shift -= 8) {
            const u32 d = select_digit(hist, r0, r1, lane, k, true, [&](u64 p) {
                if (!live(p)) return -1;
                const u64 key = magnitude_key(vals[p]);
                return (key & known) == t ? (int)((key >> shift) & 255) : -1;
            });
            t |= (u64)d << shift;
            known |= 255ull << shift;
        }
        // k: how many entries of key t are kept, the lower columns first.
        if (k == count_equal(r0, r1, lane, vals, t, live)) {
            last = SPGEMM_EMPTY;
        } else {
            u32 cknown = 0;
            for (int shift = 24; shift >= 0; shift -= 8) {
                const u32 d = select_digit(hist, r0, r1, lane, k, false, [&](u64 p) {
                    if (!live(p) || magnitude_key(vals[p]) != t || (cols[p] & cknown) != last) return -1;
                    return (int)((cols[p] >> shift) & 255);
                });
                last |= d << shift;
                cknown |= 255u << shift;
            }
        }
    }
    for (u64 p = r0 + lane; p < r1; p += SPGEMM_WARP_SIZE) {
        if (!live(p)) continue;
        const u64 key = magnitude_key(vals[p]);
        if (keep == 0 || key < t || (key == t && cols[p] > last)) drop(p);
    }
}

// C's rows pruned (C `m` rows, columns SPGEMM_EMPTY already dropped stay
// so): outcol[p] is ccol[p], or SPGEMM_EMPTY when the entry is dropped —
// below the threshold `below` (the bits of a value_t; with `has_below`),
// or past the `keep` largest of its row (`keep` ~0: no limit). Rows whose
// bit is set in `done` (when not null: pruned as the numeric phase wrote
// them) are left as they are. `outcol` may be `ccol` (marked in place:
// each lane reads and writes only its own entries). A warp per row.
SPGEMM_FIXED_KERNEL void spgemm_prune_rows(const u64* crpt, const u32* ccol, const value_t* cval, u32 m, u64 below,
                                           u32 has_below, u64 keep, const u32* done, u32* outcol) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE;
    const u64 nwarps = (u64)gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    extern __shared__ u32 s_prune[];
    u32* hist = s_prune + threadIdx.x / SPGEMM_WARP_SIZE * 256;
    value_t t;
    of_bits(below, &t);
    const auto live = [&](u64 p) { return ccol[p] != SPGEMM_EMPTY && (!has_below || at_least(cval[p], t)); };
    for (u64 r = warp; r < m; r += nwarps) {
        // One bit a row, 32 rows a word (the numeric phase's bitmap).
        if (done && (done[r >> 5] >> (r & 31) & 1u)) continue;
        const u64 r0 = crpt[r], r1 = crpt[r + 1];
        for (u64 p = r0 + lane; p < r1; p += SPGEMM_WARP_SIZE) outcol[p] = live(p) ? ccol[p] : SPGEMM_EMPTY;
        if (keep != ~0ull)
            keep_largest(hist, r0, r1, lane, ccol, cval, keep, live, [&](u64 p) { outcol[p] = SPGEMM_EMPTY; });
    }
}

// C's columns pruned to their `keep` largest (ties to the lower row),
// through Cᵀ (`n` rows, in any order: spgemm_transpose_scatter's): for
// each entry of Cᵀ's row j dropped, its place in C's row r (C's columns
// `ccol`, rows sorted when `sorted`, else searched in full) gets
// SPGEMM_EMPTY in outcol (a copy of ccol). A warp per row of Cᵀ.
SPGEMM_FIXED_KERNEL void spgemm_prune_columns(const u64* ctrpt, const u32* ctcol, const value_t* ctval, u32 n,
                                              u64 keep, const u64* crpt, const u32* ccol, u32 sorted,
                                              u32* outcol) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE;
    const u64 nwarps = (u64)gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    extern __shared__ u32 s_prune[];
    u32* hist = s_prune + threadIdx.x / SPGEMM_WARP_SIZE * 256;
    for (u64 j = warp; j < n; j += nwarps)
        keep_largest(hist, ctrpt[j], ctrpt[j + 1], lane, ctcol, ctval, keep, [](u64) { return true; }, [&](u64 p) {
            const u32 r = ctcol[p];
            const u64 c0 = crpt[r], c1 = crpt[r + 1];
            u64 q = c0;
            if (sorted)
                q = lower_bound(ccol, c0, c1, (u32)j);
            else
                while (q < c1 && ccol[q] != (u32)j) ++q;
            if (q < c1) outcol[q] = SPGEMM_EMPTY;
        });
}

// C compacted row by row once its dropped entries are marked (column
// SPGEMM_EMPTY): a warp a row counts the entries it keeps (counts[r]; the
// last of the m + 1 counts 0), their exclusive scan (spgemm_scan_tiles)
// gives the compacted C's row offsets, and a warp a row moves its kept
// entries there in order. Each entry's column is read twice and only kept
// entries are written: where pruning keeps few of many entries, far less
// traffic than spgemm_keep_flags' entry-by-entry places.
SPGEMM_FIXED_KERNEL void spgemm_kept_counts(const u64* crpt, const u32* ccol, u32 m, u64* counts) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE;
    const u64 nwarps = (u64)gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    if (blockIdx.x == 0 && threadIdx.x == 0) counts[m] = 0;
    for (u64 r = warp; r < m; r += nwarps) {
        const u64 r0 = crpt[r], r1 = crpt[r + 1];
        u64 n = 0;
        for (u64 base = r0; base < r1; base += SPGEMM_WARP_SIZE) {
            const u64 p = base + lane;
            n += SPGEMM_POPC(SPGEMM_BALLOT(p < r1 && ccol[p] != SPGEMM_EMPTY));
        }
        if (lane == 0) counts[r] = n;
    }
}

// The kept entries of each row moved, in their order, to the row's place
// `offsets[r]` in outcol / outval, a warp a row (see spgemm_kept_counts).
SPGEMM_FIXED_KERNEL void spgemm_move_kept(const u64* crpt, const u32* ccol, const value_t* cval, u32 m,
                                          const u64* offsets, u32* outcol, value_t* outval) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE;
    const u64 nwarps = (u64)gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    const lane_mask_t below = (((lane_mask_t)1) << lane) - 1;
    for (u64 r = warp; r < m; r += nwarps) {
        const u64 r0 = crpt[r], r1 = crpt[r + 1];
        u64 out = offsets[r];
        for (u64 base = r0; base < r1; base += SPGEMM_WARP_SIZE) {
            const u64 p = base + lane;
            const u32 c = p < r1 ? ccol[p] : SPGEMM_EMPTY;
            const lane_mask_t kept = SPGEMM_BALLOT(c != SPGEMM_EMPTY);
            if (c != SPGEMM_EMPTY) {
                const u64 q = out + SPGEMM_POPC(kept & below);
                outcol[q] = c;
                outval[q] = cval[p];
            }
            out += SPGEMM_POPC(kept);
        }
    }
}
