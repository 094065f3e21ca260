// The SpGEMM kernels shared by CUDA and HIP (OpSparse, Du et al. 2022, with
// the DCU improvements of the nsparse optimisation paper). The host prepends
// a vendor prelude (warp width, shuffles), the value type `value_t`, the
// bin ranges of both phases, and appends one `extern "C"` wrapper per bin
// that instantiates the templates below with that bin's table size, block
// shape and sort.
//
// The kernels below that take no table constants are declared with
// SPGEMM_FIXED_KERNEL: `extern "C" __global__` in the one compilation unit
// that exports them, an uninstantiated template (no code) in the units that
// hold only per-bin kernels, so the units compile in parallel without
// repeating work.
//
// Conventions: row offsets are 64-bit (u64), column indices 32-bit (u32).
// C's row offsets hold nprod(i) after setup, nnz(i) after the symbolic
// phase, and the exclusive scan of nnz after the scan (OpSparse §5.3).

// Bits of one bitmap word (a u32): unrelated to the warp width.
#define SPGEMM_WORD_BITS 32u
#define SPGEMM_HASH_SCALE 107u

__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int d = SPGEMM_WARP_SIZE / 2; d > 0; d /= 2) v += SPGEMM_SHFL_DOWN(v, d);
    return v;
}

__device__ __forceinline__ u64 warp_max(u64 v) {
    for (int d = SPGEMM_WARP_SIZE / 2; d > 0; d /= 2) {
        u64 o = SPGEMM_SHFL_DOWN(v, d);
        v = o > v ? o : v;
    }
    return v;
}

// Inclusive scan of one value per lane over segments of W lanes (W a
// power of two up to the warp; `lane` the lane within its segment).
template <u32 W, typename T>
__device__ __forceinline__ T segment_inclusive_scan(T x, u32 lane) {
    for (u32 d = 1; d < W; d *= 2) {
        // An indexed shuffle, not shfl_up: the dense rows' compaction, whose
        // block scan this is, was 3% slower with shfl_up (H100).
        const T y = SPGEMM_SHFL_W(x, lane >= d ? lane - d : lane, W);
        if (lane >= d) x += y;
    }
    return x;
}

#define SPGEMM_SETUP_LONG 64

// Adds products to the histogram by log2 of the length of the row of B
// they come from, one shared atomic per change of bucket (a lane's entries
// mostly hit rows of similar length).
struct ProductHistogram {
    u32 bucket = 0xffffffffu;
    u64 sum = 0;
    __device__ __forceinline__ void add(u64* s_hist, u64 blen, u64 weight) {
        if (!blen) return;
        const u32 b = 63 - __clzll(blen);
        if (b != bucket) {
            flush(s_hist);
            bucket = b;
        }
        sum += blen * weight;
    }
    __device__ __forceinline__ void flush(u64* s_hist) {
        if (sum) atomicAdd(&s_hist[bucket], sum);
        sum = 0;
    }
};

// The products of entries p0..p1 of A walked by a warp (this lane's part
// of their sum), sampled into the histogram as setup_rows does. Eight
// entries a lane per step, their columns loaded first, so that eight
// gathers of B's row offsets are in flight at once: a row of tens of
// thousands of entries is otherwise one memory latency per step of the
// warp.
__device__ __forceinline__ u64 walk_entries(const u32* __restrict__ acol, const u64* __restrict__ brpt, u64 p0,
                                            u64 p1, u32 lane, u64* s_hist, ProductHistogram& h) {
    u64 t = 0;
    for (u64 q = p0 + lane; q < p1; q += 8 * SPGEMM_WARP_SIZE) {
        u32 c[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const u64 p = q + j * SPGEMM_WARP_SIZE;
            c[j] = p < p1 ? acol[p] : SPGEMM_EMPTY;
        }
        u64 blen[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) blen[j] = c[j] != SPGEMM_EMPTY ? brpt[c[j] + 1] - brpt[c[j]] : 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            t += blen[j];
            if (((q + j * SPGEMM_WARP_SIZE) & 7) == 0) h.add(s_hist, blen[j], 8);
        }
    }
    return t;
}

// Whether the structure checks of another library's arrays (`checks.cuh`)
// found a fault: their SPGEMM_FAULT_WORDS words (two per operand, zero for
// a missing second operand), or null when the operands are the library's
// own.
// Kernels that index with the operands before the host reads the binning
// counters (setup, the count of B's packed runs) return at once on a
// fault, so that an operand read in place is never indexed out of bounds
// while its checks' answer is still on the way to the host; setup's first
// block copies the words to `seen`, beside the counters, so that they come
// back with them.
__device__ __forceinline__ bool operands_faulted(const u64* faults) {
    if (!faults) return false;
    u64 any = 0;
#pragma unroll
    for (u32 k = 0; k < SPGEMM_FAULT_WORDS; ++k) any |= faults[k];
    return any != 0;
}

// Setup (OpSparse §5, step 1): nprod(i) of every row of A into crpt, their
// 64-bit total and maximum (stats[0], stats[1]), and the products per
// log2-length bucket of the rows of B they use (hist, 64 buckets): the host
// takes G from the bucket of the median product (DCU §5.1's rule applied to
// where the work is, not to B's longest row). LANES lanes per row of A
// (a warp for rows longer than SPGEMM_SETUP_LONG). Rows longer than
// SPGEMM_SETUP_SPLIT (from the host) are only listed (`split`, their
// number at `nsplit`) with crpt zeroed: spgemm_setup_split spreads them
// over the grid, where a warp would walk each alone (the power-law
// issue's balanced long rows: 24 rows of 40,000 entries took most of a
// 0.34 ms setup, H100).
// With `band` (A's and B's rows sorted; null otherwise), also B's
// bandwidths for the symbolic binning's bound on a row's entries
// (row_bin), a thread per row of B (`k` of them, columns `bcol`): band[0]
// the most a row r reaches below its own index (r − its first column),
// band[1] above it (its last column − r), from each row's first and last
// entries (its least and greatest); band[2] set to 1 once the operands'
// pending checks found nothing, so that the binning indexes A's columns
// only through offsets known sound. band[0..3] start at 0.
template <u32 LANES>
__device__ void setup_rows(const u64* __restrict__ arpt, const u32* __restrict__ acol,
                           const u64* __restrict__ brpt, u32 m, u64* __restrict__ crpt, u64* __restrict__ stats,
                           u64* __restrict__ hist, u32* __restrict__ split, u32* __restrict__ nsplit,
                           const u64* __restrict__ faults, u64* __restrict__ seen, const u32* __restrict__ bcol,
                           u32 k, u64* __restrict__ band) {
    if (faults && blockIdx.x == 0 && threadIdx.x < SPGEMM_FAULT_WORDS) seen[threadIdx.x] = faults[threadIdx.x];
    if (operands_faulted(faults)) return;
    if (band && blockIdx.x == 0 && threadIdx.x == 0) band[2] = 1;
    u64 below = 0, above = 0;
    __shared__ u64 s_hist[SPGEMM_HIST_BUCKETS];
    for (u32 t = threadIdx.x; t < SPGEMM_HIST_BUCKETS; t += blockDim.x) s_hist[t] = 0;
    __syncthreads();
    ProductHistogram h;
    u64 total = 0, maxp = 0;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE, seg = lane % LANES;
    const u32 rows_per_warp = SPGEMM_WARP_SIZE / LANES;
    const u32 warps = gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    const u32 first = (blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE * rows_per_warp;
    // Each row gets a segment of lanes; rows longer than SPGEMM_SETUP_LONG
    // are then taken by the whole warp, so neither short rows waste lanes
    // nor a long row serialises a few.
    for (u32 base = first; base < m; base += warps * rows_per_warp) {
        const u32 i = base + lane / LANES;
        const u64 len = i < m ? arpt[i + 1] - arpt[i] : 0;
        const bool is_long = len > SPGEMM_SETUP_LONG;
        u64 s = 0;
        // The histogram only has to locate the median: one entry of A in 8
        // is counted, weighted 8.
        if (i < m && !is_long)
            for (u64 p = arpt[i] + seg; p < arpt[i + 1]; p += LANES) {
                const u32 c = acol[p];
                const u64 blen = brpt[c + 1] - brpt[c];
                s += blen;
                if ((p & 7) == 0) h.add(s_hist, blen, 8);
            }
        for (int d = LANES / 2; d > 0; d /= 2) s += SPGEMM_SHFL_DOWN_W(s, d, LANES);
        if (seg == 0 && i < m && !is_long) {
            crpt[i] = s;
            total += s;
            maxp = s > maxp ? s : maxp;
        }
        if (seg == 0 && len > SPGEMM_SETUP_SPLIT) {
            crpt[i] = 0;
            split[atomicAdd(nsplit, 1u)] = i;
        }
        lane_mask_t longs = SPGEMM_BALLOT(is_long && seg == 0 && len <= SPGEMM_SETUP_SPLIT);
        while (longs) {
            const int src = SPGEMM_FFS(longs) - 1;
            longs &= longs - 1;
            const u32 r = SPGEMM_SHFL(i, src);
            const u64 t = warp_sum(walk_entries(acol, brpt, arpt[r], arpt[r + 1], lane, s_hist, h));
            if (lane == 0) {
                crpt[r] = t;
                total += t;
                maxp = t > maxp ? t : maxp;
            }
        }
    }
    h.flush(s_hist);
    if (band)
        for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < k; r += gridDim.x * blockDim.x) {
            const u64 b0 = brpt[r], b1 = brpt[r + 1];
            if (b0 == b1) continue;
            const u32 first = bcol[b0], last = bcol[b1 - 1];
            if (first < r && r - first > below) below = r - first;
            if (last > r && last - r > above) above = last - r;
        }
    total = warp_sum(total);
    maxp = warp_max(maxp);
    if (band) {
        below = warp_max(below);
        above = warp_max(above);
    }
    if (lane == 0) {
        if (total) atomicAdd(&stats[0], total);
        if (maxp) atomicMax(&stats[1], maxp);
        if (below) atomicMax((unsigned long long*)&band[0], (unsigned long long)below);
        if (above) atomicMax((unsigned long long*)&band[1], (unsigned long long)above);
    }
    __syncthreads();
    for (u32 t = threadIdx.x; t < SPGEMM_HIST_BUCKETS; t += blockDim.x)
        if (s_hist[t]) atomicAdd(&hist[t], s_hist[t]);
}

// Setup with SPGEMM_SETUP_LANES lanes per row of A, and with
// SPGEMM_SETUP_SHORT_LANES for an A of short rows (the host's choice, by
// A's average row), whose lanes would otherwise mostly idle while each
// waits on one gather.
SPGEMM_FIXED_KERNEL void spgemm_setup(const u64* arpt, const u32* acol, const u64* brpt, u64* crpt, u64* stats,
                                      u64* hist, u32* split, u32* nsplit, u32 m, const u64* faults, u64* seen,
                                      const u32* bcol, u32 k, u64* band) {
    setup_rows<SPGEMM_SETUP_LANES>(arpt, acol, brpt, m, crpt, stats, hist, split, nsplit, faults, seen, bcol, k,
                                   band);
}

SPGEMM_FIXED_KERNEL void spgemm_setup_short(const u64* arpt, const u32* acol, const u64* brpt, u64* crpt,
                                            u64* stats, u64* hist, u32* split, u32* nsplit, u32 m,
                                            const u64* faults, u64* seen, const u32* bcol, u32 k, u64* band) {
    setup_rows<SPGEMM_SETUP_SHORT_LANES>(arpt, acol, brpt, m, crpt, stats, hist, split, nsplit, faults, seen,
                                         bcol, k, band);
}

// The rows setup listed in `split` (their number at nsplit[0]), cut into
// chunks of SPGEMM_SETUP_SPLIT entries spread over the grid's warps, each
// adding its products to the row's nprod and the total: the k-th row's
// chunks start at warp k · (warps / rows), and warps are numbered across
// blocks first, so that neighbouring chunks run on different
// multiprocessors (a row's chunks on neighbouring warps of a few blocks
// took as long as one warp per row, H100). The block that finishes last
// (nsplit[1] counts them) then takes the longest of these rows into the
// maximum.
SPGEMM_FIXED_KERNEL void spgemm_setup_split(const u64* arpt, const u32* acol, const u64* brpt, u64* crpt,
                                            u64* stats, u64* hist, u32* split, u32* nsplit) {
    __shared__ u64 s_hist[SPGEMM_HIST_BUCKETS];
    __shared__ u32 s_last;
    // None either when setup returned on the operands' faults.
    const u32 rows = nsplit[0];
    if (rows == 0) return;
    for (u32 t = threadIdx.x; t < SPGEMM_HIST_BUCKETS; t += blockDim.x) s_hist[t] = 0;
    __syncthreads();
    ProductHistogram h;
    u64 total = 0;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u32 warps = gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    const u32 w = threadIdx.x / SPGEMM_WARP_SIZE * gridDim.x + blockIdx.x;
    const u32 spacing = warps / rows > 1 ? warps / rows : 1;
    for (u32 k = 0; k < rows; ++k) {
        const u32 r = split[k];
        const u64 a0 = arpt[r], a1 = arpt[r + 1];
        const u64 chunks = (a1 - a0 + SPGEMM_SETUP_SPLIT - 1) / SPGEMM_SETUP_SPLIT;
        const u32 first = (u32)(((u64)k * spacing) % warps);
        for (u64 j = (w + warps - first) % warps; j < chunks; j += warps) {
            const u64 p0 = a0 + j * SPGEMM_SETUP_SPLIT;
            const u64 p1 = p0 + SPGEMM_SETUP_SPLIT < a1 ? p0 + SPGEMM_SETUP_SPLIT : a1;
            const u64 t = warp_sum(walk_entries(acol, brpt, p0, p1, lane, s_hist, h));
            if (lane == 0) {
                atomicAdd(&crpt[r], t);
                total += t;
            }
        }
    }
    h.flush(s_hist);
    if (lane == 0 && total) atomicAdd(&stats[0], total);
    __syncthreads();
    for (u32 t = threadIdx.x; t < SPGEMM_HIST_BUCKETS; t += blockDim.x)
        if (s_hist[t]) atomicAdd(&hist[t], s_hist[t]);
    if (threadIdx.x == 0) {
        __threadfence();
        s_last = atomicAdd(&nsplit[1], 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_last) return;
    // Every chunk is added: read the sums where the atomics left them.
    u64 maxp = 0;
    for (u32 k = threadIdx.x; k < rows; k += blockDim.x) {
        const u64 v = atomicAdd(&crpt[split[k]], 0ull);
        maxp = v > maxp ? v : maxp;
    }
    maxp = warp_max(maxp);
    if (lane == 0 && maxp) atomicMax(&stats[1], maxp);
}

// This lane's place in a list that the lanes of `lanes` (within its warp)
// whose `has` is set add to together, the list's length at `counter`:
// one shared atomic for them all, by the first of them (DCU Alg. 2 style
// warp aggregation), the places in lane order. Every lane of the warp
// calls it; the place is meaningful where `has`.
__device__ __forceinline__ u32 reserve_place(bool has, lane_mask_t lanes, u32* counter) {
    const u32 wl = threadIdx.x % SPGEMM_WARP_SIZE;
    const lane_mask_t bal = SPGEMM_BALLOT(has) & lanes;
    const int leader = bal ? SPGEMM_FFS(bal) - 1 : (int)wl;
    u32 first = 0;
    if (bal && (int)wl == leader) first = atomicAdd(counter, (u32)SPGEMM_POPC(bal));
    first = SPGEMM_SHFL(first, leader);
    return first + SPGEMM_POPC(bal & ((((lane_mask_t)1) << wl) - 1));
}

// Of the same-row bits of `same_rows.cuh`: where the row at bit `bit` of a word of same-row bits `marked` lies in
// its run: 0 for a row not marked (a run's first row), else the rows
// between it and the nearest unmarked row below it.
__device__ __forceinline__ u32 run_position(u32 marked, u32 bit) {
    if (!(marked >> bit & 1u)) return 0;
    // 2u << bit wraps to 0 for the last bit; bit 0 is never marked.
    const u32 unmarked = ~marked & ((2u << bit) - 1u);
    return bit - (SPGEMM_WORD_BITS - 1 - __clz(unmarked));
}

// Rows of A in the run after the row at bit `bit` (same-row bits `marked`)
// that its block of the numeric phase takes with it: the marked rows that
// follow it in its word, at most SPGEMM_RUN_ROWS - 1.
__device__ __forceinline__ u32 run_followers(u32 marked, u32 bit) {
    if (bit + 1 >= SPGEMM_WORD_BITS) return 0;
    const u32 after = ~(marked >> (bit + 1));
    const u32 n = (u32)(__ffs(after) - 1);
    return n < SPGEMM_RUN_ROWS - 1 ? n : SPGEMM_RUN_ROWS - 1;
}

// Whether row `c` of B (same-row bits `marks`, null: none) continues the
// run of row `prev` within a piece of SPGEMM_RUN_SPAN rows: it is the
// next row, has the columns of `prev` in the same order (its bit) and
// does not start a piece.
__device__ __forceinline__ bool continues_rows(const u32* marks, u32 prev, u32 c) {
    if (!marks || c != prev + 1) return false;
    const u32 w = marks[c / SPGEMM_WORD_BITS];
    return (w >> (c % SPGEMM_WORD_BITS) & 1u) && run_position(w, c % SPGEMM_WORD_BITS) % SPGEMM_RUN_SPAN != 0;
}

// The value that bins a row: nprod (symbolic, held in crpt[i]) or nnz
// (numeric, crpt[i+1] - crpt[i] after the scan). Rows of A with a single
// entry need no hash when B's rows are sorted without duplicates (DCU
// §5.3): in the symbolic phase they get no bin (nnz = nprod already), in
// the numeric phase they go to the extra "direct" bin NBINS. In the
// numeric phase, rows of at most `distinct_max` entries whose products all
// have different columns (their bit in `distinct_rows`) go to the extra
// "distinct" bin NBINS + 1 (`spgemm_numeric_distinct`), and rows past the
// last shared table of at most `ranked_max` entries to the extra "ranked"
// bin NBINS + 2 (`spgemm_numeric_ranked`). Rows of at most `promote_max`
// entries (0: none; products of few rows) and at least `promote_min_a`
// entries of A take the bin of a row 2^SPGEMM_PROMOTE_SHIFT times longer,
// at most the last shared one: more lanes share each row, where a few
// hundred rows would leave the device idle and each row's chain of loads
// bound the kernel. In the symbolic phase, with B's bandwidths `band`
// (setup_rows; null: none) and A's rows sorted, a row past the first bin
// is binned by the smaller of nprod and the width of the columns its
// products can reach, [first column − band[0], last column + band[1]]: a
// bound on its entries as sure as nprod, and far tighter for banded
// matrices (17 diagonals: 289 products, at most 33 entries), whose rows
// then take small tables several to a block. A row's columns are read only
// where the bandwidths alone leave room below nprod. In the symbolic phase,
// rows marked in `same_rows` (null: none; same_rows.cuh) get no bin: the
// first row of their run is counted for them. In the numeric phase, with
// `same_rows` (null: none), the rows of runs of at most SPGEMM_RUN_MAX
// entries (and fewer than 2^32 of A) are taken SPGEMM_RUN_ROWS at a time: the first of each such
// piece of a run, when rows follow it, goes to the extra "runs" bin
// NBINS + 3 (`spgemm_numeric_runs`), the others get no bin.
template <int NBINS, bool NUMERIC>
__device__ __forceinline__ int row_bin(u32 i, const u64* crpt, const u64* arpt, u32 direct_ok,
                                       const u32* distinct_rows, u32 distinct_max, u32 ranked_max,
                                       u32 promote_max, u32 promote_min_a, const u32* acol, const u64* band,
                                       const u32* same_rows, const u64* maxes, u64* value) {
    if (!NUMERIC && same_rows && (same_rows[i / SPGEMM_WORD_BITS] >> (i % SPGEMM_WORD_BITS) & 1u)) return -1;
    u64 v = NUMERIC ? crpt[i + 1] - crpt[i] : crpt[i];
    if (NUMERIC && same_rows && v > 0 && v <= SPGEMM_RUN_MAX && arpt[i + 1] - arpt[i] <= 0xffffffffull) {
        const u32 marked = same_rows[i / SPGEMM_WORD_BITS], bit = i % SPGEMM_WORD_BITS;
        if (run_position(marked, bit) % SPGEMM_RUN_ROWS != 0) return -1;
        if (run_followers(marked, bit) > 0) {
            *value = v;
            return NBINS + 3;
        }
    }
    if (!NUMERIC && band && band[2] && v > maxes[0] && band[0] + band[1] + 1 < v && arpt[i + 1] > arpt[i]) {
        const u64 first = acol[arpt[i]], last = acol[arpt[i + 1] - 1];
        const u64 lo = first > band[0] ? first - band[0] : 0, width = last + band[1] + 1 - lo;
        v = width < v ? width : v;
    }
    *value = v;
    if (v == 0) return -1;
    if (direct_ok && arpt[i + 1] - arpt[i] == 1) return NUMERIC ? NBINS : -1;
    if (NUMERIC && v <= distinct_max && (distinct_rows[i / SPGEMM_WORD_BITS] >> (i % SPGEMM_WORD_BITS) & 1u))
        return NBINS + 1;
    const u64 s = v <= promote_max && arpt[i + 1] - arpt[i] >= promote_min_a ? v << SPGEMM_PROMOTE_SHIFT : v;
    for (int b = 0; b < NBINS - 1; ++b)
        if (s <= maxes[b]) return b;
    if (s != v && v <= maxes[NBINS - 2]) return NBINS - 2;
    return NUMERIC && v <= ranked_max ? NBINS + 2 : NBINS - 1;
}

// Binning, pass 1 (OpSparse Alg. 1, DCU Alg. 2): count rows per bin in
// shared memory, one global atomic per bin per block; also the maximum
// over the table's bins and the ranked bin. sizes: NBINS + 4 counters (the last four are the
// direct, the distinct, the ranked and the runs bins), then the max (u64).
template <int NBINS, bool NUMERIC>
__device__ void bin_count(const u64* crpt, const u64* arpt, u32 m, u32 direct_ok, const u32* distinct_rows,
                          u32 distinct_max, u32 ranked_max, u32 promote_max, u32 promote_min_a, const u32* acol,
                          const u64* band, const u32* same_rows, const u64* maxes, u32* sizes, u64* max_value) {
    __shared__ u32 s_size[NBINS + 4];
    __shared__ u64 s_max;
    for (int b = threadIdx.x; b <= NBINS + 3; b += blockDim.x) s_size[b] = 0;
    if (threadIdx.x == 0) s_max = 0;
    __syncthreads();
    u64 local_max = 0;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
        u64 v;
        const int b = row_bin<NBINS, NUMERIC>(i, crpt, arpt, direct_ok, distinct_rows, distinct_max, ranked_max,
                                              promote_max, promote_min_a, acol, band, same_rows, maxes, &v);
        if (b >= 0) atomicAdd(&s_size[b], 1u);
        if (b >= 0 && (b < NBINS || b == NBINS + 2)) local_max = v > local_max ? v : local_max;
    }
    local_max = warp_max(local_max);
    if (threadIdx.x % SPGEMM_WARP_SIZE == 0 && local_max) atomicMax(&s_max, local_max);
    __syncthreads();
    for (int b = threadIdx.x; b <= NBINS + 3; b += blockDim.x)
        if (s_size[b]) atomicAdd(&sizes[b], s_size[b]);
    if (threadIdx.x == 0 && s_max) atomicMax(max_value, s_max);
}

// Binning, pass 2 (OpSparse Alg. 2, DCU Alg. 3): write row ids into one
// array of length M at per-bin offsets. Each block reserves its slots with
// one global atomic per bin; `cursor` starts at zero.
template <int NBINS, bool NUMERIC>
__device__ void bin_fill(const u64* crpt, const u64* arpt, u32 m, u32 direct_ok, const u32* distinct_rows,
                         u32 distinct_max, u32 ranked_max, u32 promote_max, u32 promote_min_a, const u32* acol,
                         const u64* band, const u32* same_rows, const u64* maxes, const u32* sizes, u32* cursor,
                         u32* bins) {
    __shared__ u32 s_count[NBINS + 4];
    __shared__ u32 s_base[NBINS + 4];
    const u32 chunk = blockDim.x;
    for (u32 start = blockIdx.x * chunk; start < m; start += gridDim.x * chunk) {
        for (int b = threadIdx.x; b <= NBINS + 3; b += blockDim.x) s_count[b] = 0;
        __syncthreads();
        const u32 i = start + threadIdx.x;
        u64 v;
        const int b = i < m ? row_bin<NBINS, NUMERIC>(i, crpt, arpt, direct_ok, distinct_rows, distinct_max,
                                                       ranked_max, promote_max, promote_min_a, acol, band,
                                                       same_rows, maxes, &v)
                            : -1;
        const u32 slot = b >= 0 ? atomicAdd(&s_count[b], 1u) : 0;
        __syncthreads();
        for (int bb = threadIdx.x; bb <= NBINS + 3; bb += blockDim.x) {
            u32 offset = 0;
            for (int q = 0; q < bb; ++q) offset += sizes[q];
            s_base[bb] = s_count[bb] ? offset + atomicAdd(&cursor[bb], s_count[bb]) : 0;
        }
        __syncthreads();
        if (b >= 0) bins[s_base[b] + slot] = i;
        __syncthreads();
    }
}

// Home slot of `key`. Power-of-two tables take the high bits of a
// Fibonacci (golden-ratio) product: the low bits of key·107 would send
// columns that differ by a multiple of the table size (stencils on
// power-of-two grids: i ± N, i ± N²) to one slot and long probe chains.
// Other sizes keep OpSparse's key·107 mod size.
__device__ __forceinline__ u32 hash_slot(u32 key, u32 size, bool pow2) {
    return pow2 ? ((key * 0x9E3779B9u) >> (__clz(size) + 1)) : (key * SPGEMM_HASH_SCALE % size);
}

__device__ __forceinline__ u32 next_slot(u32 h, u32 size, bool pow2) {
    return pow2 ? ((h + 1) & (size - 1)) : (h + 1 == size ? 0 : h + 1);
}

// Inserts `key`; returns 1 if it was new. One atomicCAS per probe, its
// result reused (OpSparse Alg. 4, "single access").
__device__ __forceinline__ u32 insert_key(u32* table, u32 size, bool pow2, u32 key) {
    u32 h = hash_slot(key, size, pow2);
    while (true) {
        const u32 old = atomicCAS(&table[h], SPGEMM_EMPTY, key);
        if (old == SPGEMM_EMPTY) return 1;
        if (old == key) return 0;
        h = next_slot(h, size, pow2);
    }
}

// Whether the columns that row `row` of A's products can reach lie within
// `size` consecutive columns from `*lo`: by B's bandwidths `band`
// (setup_rows; null, or not yet marked sound: no), A's row sorted and not
// empty, from its first column − band[0] to its last + band[1] (the bound
// row_bin bins by). Such a row's table needs no hash: a column's slot is
// col − lo, which is also its order in the row: spECK's dense accumulation
// over a row's range of columns (Parger, Winter, Mlakar and Steinberger,
// "spECK: accelerating GPU sparse matrix-matrix multiplication through
// lightweight analysis", PPoPP 2020), the range bounded here by B's
// bandwidths instead of measured row by row.
__device__ __forceinline__ bool row_window(const u64* band, const u64* arpt, const u32* acol, u32 row, u32 size,
                                           u32* lo) {
    if (!band || !band[2]) return false;
    const u64 a0 = arpt[row], a1 = arpt[row + 1];
    if (a0 == a1) return false;
    const u64 first = acol[a0], last = acol[a1 - 1];
    const u64 from = first > band[0] ? first - band[0] : 0;
    if (last + band[1] + 1 - from > size) return false;
    *lo = (u32)from;
    return true;
}

// Inserts a packed entry of B (KokkosKernels §3.2: a word of 32 columns
// in the high half, the mask of its columns in the low half; see
// `packed_columns.cuh`): the word into the table, its columns into the
// slot's mask (`masks`, beside the table); returns 1 if the word was new.
__device__ __forceinline__ u32 insert_packed(u32* table, u32* masks, u32 size, bool pow2, u64 packed) {
    const u32 word = (u32)(packed >> 32), bits = (u32)packed;
    u32 h = hash_slot(word, size, pow2);
    while (true) {
        const u32 old = atomicCAS(&table[h], SPGEMM_EMPTY, word);
        if (old == SPGEMM_EMPTY || old == word) {
            if ((masks[h] & bits) != bits) atomicOr(&masks[h], bits);
            return old == SPGEMM_EMPTY;
        }
        h = next_slot(h, size, pow2);
    }
}

// Columns in the masks of one row's table (packed symbolic tables).
__device__ __forceinline__ u32 mask_columns(const u32* masks, u32 size, u32 lane, u32 row_threads) {
    u32 n = 0;
    for (u32 t = lane; t < size; t += row_threads) n += __popc(masks[t]);
    return n;
}

// G for a row of A with `a_len` entries: doubled while every entry still
// gets its own group of G threads.
__device__ __forceinline__ u32 widen_group(u32 g, u64 a_len, u32 row_threads) {
    while (2 * g <= row_threads && a_len * 2 * g <= row_threads) g *= 2;
    return g;
}


// Walks the products of one row: threads of a row split into groups of G;
// each group takes one entry A(i,k) and its G threads stride over B(k,:)
// (DCU §5.1). G comes from the typical row of B (the host's choice) and is
// widened for rows of A with too few entries to give every group one
// (groups never synchronise, so G may pass a warp). In kernels with one row
// per block, an entry whose row of B is longer than 32·G (4× what a group
// of G expects) is left to a second pass, where each warp finds such
// entries in its slices of the row by ballot and walks them with all its
// lanes, so one long row of B does not stall a small group. With HUBS (the
// numeric bins compiled with registers to spare: one resident block of at
// least four warps), an entry whose row of B is longer than half the
// block's threads (a hub of a power-law graph) is walked by the whole
// block instead: every warp finds it, by ballot over all the row's
// entries, and takes its own stretch of that row of B, so one warp does
// not walk a hub alone while the others wait (Nsight Compute on an H100: R-MAT 17's numeric bin of the longest
// shared rows took 9.4 of 33 ms). Elsewhere it spills at 32 registers.
// `f(column, value)` is called once per product (`column` B's entry: a
// column index, or a packed word and mask in the packed symbolic tables).
// `for_products_range` walks the entries a0..a1 of a row of A (a slice of
// it, in kernels that split a long row between blocks).
template <bool HUBS = false, typename K, typename F>
__device__ __forceinline__ void for_products_range(u64 a0, u64 a1, const u32* acol, const value_t* aval,
                                                   const u64* brpt, const K* bcol, const value_t* bval,
                                                   u32 lane, u32 row_threads, u32 g, F f) {
    g = widen_group(g, a1 - a0, row_threads);
    const bool split = row_threads == blockDim.x && g < SPGEMM_WARP_SIZE;
    const u64 warp_len = split ? 32ull * g : ~0ull;
    const u64 block_len = HUBS ? blockDim.x / 2 : ~0ull;
    const u64 long_len = warp_len < block_len ? warp_len : block_len;
    const u32 group = lane / g, glane = lane % g, ngroups = row_threads / g;
    for (u64 p = a0 + group; p < a1; p += ngroups) {
        const u32 c = acol[p];
        const u64 b0 = brpt[c], b1 = brpt[c + 1];
        if (b1 - b0 > long_len) continue;
        const value_t a = aval ? aval[p] : value_t(0);
        for (u64 q = b0 + glane; q < b1; q += g) f(bcol[q], bval ? semiring_times(a, bval[q]) : value_t(0));
    }
    const u32 wl = threadIdx.x % SPGEMM_WARP_SIZE, nwarps = blockDim.x / SPGEMM_WARP_SIZE;
    if (!HUBS) {
        if (!split) return;
        for (u64 base = a0 + (u64)(threadIdx.x / SPGEMM_WARP_SIZE) * SPGEMM_WARP_SIZE; base < a1;
             base += (u64)nwarps * SPGEMM_WARP_SIZE) {
            const u64 p = base + wl;
            const bool is_long = p < a1 && brpt[acol[p] + 1] - brpt[acol[p]] > long_len;
            lane_mask_t longs = SPGEMM_BALLOT(is_long);
            while (longs) {
                const u64 pp = base + (SPGEMM_FFS(longs) - 1);
                longs &= longs - 1;
                const u32 c = acol[pp];
                const value_t a = aval ? aval[pp] : value_t(0);
                for (u64 q = brpt[c] + wl; q < brpt[c + 1]; q += SPGEMM_WARP_SIZE)
                    f(bcol[q], bval ? semiring_times(a, bval[q]) : value_t(0));
            }
        }
        return;
    }
    // Every warp scans the row's entries a warp's width at a time: hubs are
    // every warp's, the other long entries those of the k-th slice's
    // owner, warp k mod nwarps.
    const u32 wid = threadIdx.x / SPGEMM_WARP_SIZE;
    for (u32 k = 0; a0 + (u64)k * SPGEMM_WARP_SIZE < a1; ++k) {
        const u64 base = a0 + (u64)k * SPGEMM_WARP_SIZE, p = base + wl;
        const u64 len = p < a1 ? brpt[acol[p] + 1] - brpt[acol[p]] : 0;
        const bool mine = k % nwarps == wid;
        lane_mask_t longs = SPGEMM_BALLOT(len > block_len || (mine && len > long_len));
        while (longs) {
            const u64 pp = base + (SPGEMM_FFS(longs) - 1);
            longs &= longs - 1;
            const u32 c = acol[pp];
            const value_t a = aval ? aval[pp] : value_t(0);
            const u64 b0 = brpt[c], b1 = brpt[c + 1];
            const bool hub = b1 - b0 > block_len;
            const u32 first = hub ? threadIdx.x : wl, stride = hub ? blockDim.x : SPGEMM_WARP_SIZE;
            for (u64 q = b0 + first; q < b1; q += stride) f(bcol[q], bval ? semiring_times(a, bval[q]) : value_t(0));
        }
    }
}

// The products of slice `sl` of `slices` of the r-th listed row, `row`,
// for kernels that split long rows between blocks (block = r · slices +
// slice): the entries of A from bounds[r · (slices + 1) + sl] to the next
// bound (`spgemm_slice_bounds`: slices of about equal products), or equal
// stretches of the row's entries when `bounds` is null; the block's
// threads form the row's groups.
template <typename F>
__device__ __forceinline__ void for_slice_products(const u64* arpt, const u32* acol, const value_t* aval,
                                                   const u64* brpt, const u32* bcol, const value_t* bval,
                                                   const u64* bounds, u32 row, u32 r, u32 sl, u32 slices, u32 g,
                                                   F f) {
    const u64 a0 = arpt[row], len = arpt[row + 1] - a0;
    const u64* b = bounds + (u64)r * (slices + 1) + sl;
    const u64 p0 = bounds ? b[0] : a0 + len * sl / slices, p1 = bounds ? b[1] : a0 + len * (sl + 1) / slices;
    for_products_range(p0, p1, acol, aval, brpt, bcol, bval, threadIdx.x, blockDim.x, g, f);
}

template <bool HUBS = false, typename K, typename F>
__device__ __forceinline__ void for_products(const u64* arpt, const u32* acol, const value_t* aval,
                                             const u64* brpt, const K* bcol, const value_t* bval, u32 row,
                                             u32 lane, u32 row_threads, u32 g, F f) {
    for_products_range<HUBS>(arpt[row], arpt[row + 1], acol, aval, brpt, bcol, bval, lane, row_threads, g, f);
}
