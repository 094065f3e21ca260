// Masked products by dot products: C<M> = A (+).(x) B with a structural
// mask M, each entry (i, j) of M computed as the (+) over the k stored in
// both A's row i and B's column j, the dot3 method of SuiteSparse:GraphBLAS
// (Davis, "Algorithm 1000: SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019,
// §6.3). C's entries are M's that meet at least one such k; the others are
// written with column SPGEMM_EMPTY and dropped when C is assembled. The
// program builder emits value_t, the semiring (semiring_times,
// semiring_plus and SPGEMM_READS_VALUES: see spgemm_core::semiring) and
// SPGEMM_EMPTY in front of this source. A sum starts at its first product,
// never at the monoid's identity, so that (+) meets only products, as on
// the host.
//
// B's columns come from Bt, B transposed on the device by the two kernels
// below: its rows in no particular order. A segment of `seg` lanes (a power
// of two up to the warp) takes one entry (i, j) of M and walks the shorter
// of A's row i and B's column j, its lanes in turn: walking A's row, each k
// is looked up in B's row k (sorted) by binary search for j; walking B's
// column, each k in A's row i (sorted). When the caller gives Bt itself
// (A times B transposed, Bt's rows sorted), no B exists: brpt, bcol and
// bval are null and each k of A's row is looked up in Bt's row j instead.
// The segment combines its lanes' sums by shuffles. Segments take consecutive entries, so a warp's
// segments share rows of A; the loop is uniform across the warp, so every
// lane reaches the shuffles.

// The entries of B per column (counts zeroed before; scanned into Bᵀ's row
// offsets after).
SPGEMM_FIXED_KERNEL void spgemm_column_counts(const u32* bcol, u64 nnz, u64* counts) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < nnz; p += stride) atomicAdd(&counts[bcol[p]], 1ull);
}

// The first position in sorted cols[lo, hi) not below key.
__device__ __forceinline__ u64 lower_bound(const u32* __restrict__ cols, u64 lo, u64 hi, u32 key) {
    while (lo < hi) {
        const u64 mid = lo + (hi - lo) / 2;
        if (cols[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// A product a_ik (x) b_kj found at aval[p] and bval[q] (values read only
// when the semiring reads them) added to the sum `acc`, which starts at
// the first product (`hit`: one has been added).
__device__ __forceinline__ void meet(value_t& acc, u32& hit, const value_t* aval, u64 p, const value_t* bval,
                                     u64 q) {
    const value_t v = semiring_times(SPGEMM_READS_VALUES ? aval[p] : value_t(1),
                                     SPGEMM_READS_VALUES ? bval[q] : value_t(1));
    acc = hit ? semiring_plus(acc, v) : v;
    hit = 1;
}

// The last i in [lo, hi] with offs[i] <= key (offs non-decreasing,
// offs[lo] <= key).
__device__ __forceinline__ u64 last_not_above(const u64* __restrict__ offs, u64 lo, u64 hi, u64 key) {
    while (lo < hi) {
        const u64 mid = lo + (hi - lo + 1) / 2;
        if (offs[mid] <= key)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// The row of entry e: the last r with mrpt[r] <= e (rows of M may be empty).
__device__ __forceinline__ u32 row_of_entry(const u64* __restrict__ mrpt, u32 m, u64 e) {
    return (u32)last_not_above(mrpt, 0, m, e);
}

// Bt from B: entry (r, c) of B placed in Bt's row c at btrpt[c] plus a
// ticket from fill[c] (zeroed before). A block takes SPGEMM_SCATTER_CHUNK
// consecutive entries and counts them per column in a table in shared
// memory first, so that it takes one range of tickets per column it
// meets rather than one ticket per entry: the hub columns of a power-law
// graph, met by most rows, otherwise queue returning atomics on one
// counter each (Nsight Compute, H200: 1.50 ms of an R-MAT 18 BFS step's
// 1.98 ms when each entry took its own ticket). Launched with at least
// SPGEMM_SCATTER_CHUNK / SPGEMM_SCATTER_PER_THREAD threads a block.
#define SPGEMM_SCATTER_CHUNK 2048u
#define SPGEMM_SCATTER_PER_THREAD 8u
#define SPGEMM_SCATTER_SLOTS 4096u
SPGEMM_FIXED_KERNEL void spgemm_transpose_scatter(const u64* brpt, const u32* bcol, const value_t* bval, u32 k,
                                                  u64 nnz, const u64* btrpt, u32* fill, u32* btcol, value_t* btval) {
    __shared__ u32 s_key[SPGEMM_SCATTER_SLOTS];
    __shared__ u32 s_count[SPGEMM_SCATTER_SLOTS];
    for (u64 base = (u64)blockIdx.x * SPGEMM_SCATTER_CHUNK; base < nnz;
         base += (u64)gridDim.x * SPGEMM_SCATTER_CHUNK) {
        for (u32 t = threadIdx.x; t < SPGEMM_SCATTER_SLOTS; t += blockDim.x) {
            s_key[t] = SPGEMM_EMPTY;
            s_count[t] = 0;
        }
        __syncthreads();
        u32 slot[SPGEMM_SCATTER_PER_THREAD], rank[SPGEMM_SCATTER_PER_THREAD];
#pragma unroll
        for (u32 j = 0; j < SPGEMM_SCATTER_PER_THREAD; ++j) {
            const u32 i = threadIdx.x + j * blockDim.x;
            const u64 e = base + i;
            if (i >= SPGEMM_SCATTER_CHUNK || e >= nnz) continue;
            const u32 c = bcol[e];
            u32 h = (c * 0x9E3779B9u) >> 20;
            while (true) {
                const u32 old = atomicCAS(&s_key[h], SPGEMM_EMPTY, c);
                if (old == SPGEMM_EMPTY || old == c) break;
                h = (h + 1) & (SPGEMM_SCATTER_SLOTS - 1);
            }
            slot[j] = h;
            rank[j] = atomicAdd(&s_count[h], 1u);
        }
        __syncthreads();
        // Each column's count becomes the block's first ticket of it.
        for (u32 t = threadIdx.x; t < SPGEMM_SCATTER_SLOTS; t += blockDim.x)
            if (s_count[t]) s_count[t] = atomicAdd(&fill[s_key[t]], s_count[t]);
        __syncthreads();
#pragma unroll
        for (u32 j = 0; j < SPGEMM_SCATTER_PER_THREAD; ++j) {
            const u32 i = threadIdx.x + j * blockDim.x;
            const u64 e = base + i;
            if (i >= SPGEMM_SCATTER_CHUNK || e >= nnz) continue;
            const u64 at = btrpt[bcol[e]] + s_count[slot[j]] + rank[j];
            btcol[at] = row_of_entry(brpt, k, e);
#if SPGEMM_READS_VALUES
            btval[at] = bval[e];
#endif
        }
        __syncthreads();
    }
}

// Entries of M whose shorter side (A's row or B's column) holds more than
// this many entries go to the heavy list, a block each: a segment of a
// few lanes would walk them alone while the rest of the grid waits (the
// hubs of a power-law graph: a pair of them is thousands of searches).
#define SPGEMM_HEAVY_MIN 256u
// Threads of a block of spgemm_masked_dot_heavy.
#define SPGEMM_HEAVY_THREADS 256u

// One segment's share of entry (i, j)'s dot product: `lane` of `seg`
// lanes walks the shorter of A's row [a0, a1) and B's column [t0, t1)
// (see the file's head), adding the products it meets into acc / hit.
__device__ __forceinline__ void dot_walk(u32 lane, u32 seg, u32 j, u64 a0, u64 a1, u64 t0, u64 t1, const u32* acol,
                                         const value_t* aval, const u64* brpt, const u32* bcol,
                                         const value_t* bval, const u32* btcol, const value_t* btval,
                                         value_t& acc, u32& hit) {
    if (a1 - a0 <= t1 - t0) {
        // A's row walked, each k looked up in B's row k; with no B (brpt
        // null: Bt given with its rows sorted), in Bt's row j.
        for (u64 p = a0 + lane; p < a1; p += seg) {
            const u32 k = acol[p];
            if (brpt) {
                const u64 b1 = brpt[k + 1], q = lower_bound(bcol, brpt[k], b1, j);
                if (q < b1 && bcol[q] == j) meet(acc, hit, aval, p, bval, q);
            } else {
                const u64 q = lower_bound(btcol, t0, t1, k);
                if (q < t1 && btcol[q] == k) meet(acc, hit, aval, p, btval, q);
            }
        }
    } else {
        // B's column walked, each k looked up in A's row i.
        for (u64 p = t0 + lane; p < t1; p += seg) {
            const u32 k = btcol[p];
            const u64 q = lower_bound(acol, a0, a1, k);
            if (q < a1 && acol[q] == k) meet(acc, hit, aval, q, btval, p);
        }
    }
}

// Entries whose shorter side is longer than SPGEMM_HEAVY_MIN are appended
// to `heavy` (a place from heavy_count, zeroed before) while it has room
// (heavy_cap; none when heavy is null) and left to
// spgemm_masked_dot_heavy; the others, and those past its room, computed
// here. With `total` (set to (+)'s identity before), C is not written: the
// entries met are (+)-reduced over the warp and added to *total, one
// atomic (+) a warp.
SPGEMM_FIXED_KERNEL void spgemm_masked_dot(const u64* mrpt, const u32* mcol, u32 m, u64 mnnz, const u64* arpt,
                                           const u32* acol, const value_t* aval, const u64* brpt, const u32* bcol,
                                           const value_t* bval, const u64* btrpt, const u32* btcol,
                                           const value_t* btval, u32 seg, u32* ccol, value_t* cval, u64* heavy,
                                           u64* heavy_count, u64 heavy_cap, value_t* total) {
    const u32 lane = threadIdx.x % seg;
    const u32 per_warp = SPGEMM_WARP_SIZE / seg;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE;
    const u64 nwarps = (u64)gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    for (u64 base = warp * per_warp; base < mnnz; base += nwarps * per_warp) {
        const u64 e = base + (threadIdx.x % SPGEMM_WARP_SIZE) / seg;
        value_t acc = value_t(0);
        u32 hit = 0, j = SPGEMM_EMPTY, queued = 0;
        u64 a0 = 0, a1 = 0, t0 = 0, t1 = 0;
        if (e < mnnz) {
            const u32 i = row_of_entry(mrpt, m, e);
            j = mcol[e];
            a0 = arpt[i], a1 = arpt[i + 1], t0 = btrpt[j], t1 = btrpt[j + 1];
            if (heavy && lane == 0 && min(a1 - a0, t1 - t0) > SPGEMM_HEAVY_MIN) {
                const u64 slot = atomicAdd(heavy_count, (u64)1);
                if (slot < heavy_cap) {
                    heavy[slot] = e;
                    queued = 1;
                }
            }
        }
        // The segment learns whether its leader queued the entry.
        for (u32 d = seg / 2; d > 0; d /= 2) queued |= SPGEMM_SHFL_XOR_W(queued, d, seg);
        if (e < mnnz && !queued)
            dot_walk(lane, seg, j, a0, a1, t0, t1, acol, aval, brpt, bcol, bval, btcol, btval, acc, hit);
        for (u32 d = seg / 2; d > 0; d /= 2) {
            const value_t other = SPGEMM_SHFL_XOR_W(acc, d, seg);
            const u32 other_hit = SPGEMM_SHFL_XOR_W(hit, d, seg);
            if (other_hit) acc = hit ? semiring_plus(acc, other) : other;
            hit |= other_hit;
        }
        if (total) {
            // Every lane of a segment holds its sum: the segments' sums
            // combined over the warp, lanes of no entry or a queued one
            // holding none.
            for (u32 d = SPGEMM_WARP_SIZE / 2; d >= seg; d /= 2) {
                const value_t other = SPGEMM_SHFL_XOR_W(acc, d, SPGEMM_WARP_SIZE);
                const u32 other_hit = SPGEMM_SHFL_XOR_W(hit, d, SPGEMM_WARP_SIZE);
                if (other_hit) acc = hit ? semiring_plus(acc, other) : other;
                hit |= other_hit;
            }
            if (threadIdx.x % SPGEMM_WARP_SIZE == 0 && hit) semiring_atomic(total, acc);
        } else if (lane == 0 && e < mnnz && !queued) {
            ccol[e] = hit ? j : SPGEMM_EMPTY;
            cval[e] = acc;
        }
    }
}

// The heavy list's entries (the first min(heavy_count, heavy_cap)), a
// block of SPGEMM_HEAVY_THREADS each in turn: its threads walk the shorter
// side together and their sums are combined in shared memory, in a fixed
// order; with `total`, added to *total instead of written to C.
SPGEMM_FIXED_KERNEL void spgemm_masked_dot_heavy(const u64* heavy, const u64* heavy_count, u64 heavy_cap,
                                                 const u64* mrpt, const u32* mcol, u32 m, const u64* arpt,
                                                 const u32* acol, const value_t* aval, const u64* brpt,
                                                 const u32* bcol, const value_t* bval, const u64* btrpt,
                                                 const u32* btcol, const value_t* btval, u32* ccol, value_t* cval,
                                                 value_t* total) {
    __shared__ value_t s_acc[SPGEMM_HEAVY_THREADS];
    __shared__ u32 s_hit[SPGEMM_HEAVY_THREADS];
    const u64 count = min(*heavy_count, heavy_cap);
    for (u64 h = blockIdx.x; h < count; h += gridDim.x) {
        const u64 e = heavy[h];
        const u32 i = row_of_entry(mrpt, m, e), j = mcol[e];
        value_t acc = value_t(0);
        u32 hit = 0;
        dot_walk(threadIdx.x, blockDim.x, j, arpt[i], arpt[i + 1], btrpt[j], btrpt[j + 1], acol, aval, brpt, bcol,
                 bval, btcol, btval, acc, hit);
        s_acc[threadIdx.x] = acc;
        s_hit[threadIdx.x] = hit;
        __syncthreads();
        for (u32 d = blockDim.x / 2; d > 0; d /= 2) {
            if (threadIdx.x < d && s_hit[threadIdx.x + d]) {
                const value_t other = s_acc[threadIdx.x + d];
                s_acc[threadIdx.x] = s_hit[threadIdx.x] ? semiring_plus(s_acc[threadIdx.x], other) : other;
                s_hit[threadIdx.x] = 1;
            }
            __syncthreads();
        }
        if (threadIdx.x == 0 && total) {
            if (s_hit[0]) semiring_atomic(total, s_acc[0]);
        } else if (threadIdx.x == 0) {
            ccol[e] = s_hit[0] ? j : SPGEMM_EMPTY;
            cval[e] = s_acc[0];
        }
        __syncthreads();
    }
}

// C compacted, entry by entry, so that one long row is spread over the
// whole grid as well as many short ones: flags[e] is 1 for each of the n
// entries a product met (column not SPGEMM_EMPTY) and flags[n] 0; their
// exclusive scan (spgemm_scan_tiles) gives each kept entry its place and
// each row its new offset.
SPGEMM_FIXED_KERNEL void spgemm_keep_flags(const u32* ccol, u64 n, u64* flags) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e <= n; e += stride)
        flags[e] = e < n && ccol[e] != SPGEMM_EMPTY;
}

// The kept entries moved to their places (the scanned flags), in their
// order.
SPGEMM_FIXED_KERNEL void spgemm_compact_entries(const u32* ccol, const value_t* cval, u64 n, const u64* places,
                                                u32* outcol, value_t* outval) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
        const u32 c = ccol[e];
        if (c == SPGEMM_EMPTY) continue;
        outcol[places[e]] = c;
        outval[places[e]] = cval[e];
    }
}

// C's row offsets: the place of each row's first entry (rows[r], r up to
// m: rows[m] is n, whose place is the number kept).
SPGEMM_FIXED_KERNEL void spgemm_compact_offsets(const u64* rows, u32 m, const u64* places, u64* crpt) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x; r <= m; r += stride) crpt[r] = places[rows[r]];
}

// A complemented mask applied to C on the device: each entry of C (n in
// all, m rows) whose column M's row holds (M's rows sorted) gets column
// SPGEMM_EMPTY, for the compaction above to drop; a thread per entry,
// which finds its row, then searches M's row for its column.
SPGEMM_FIXED_KERNEL void spgemm_complement_mark(const u64* crpt, u32* ccol, u32 m, u64 n, const u64* mrpt,
                                                const u32* mcol) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
        const u32 r = row_of_entry(crpt, m, e);
        const u64 m0 = mrpt[r], m1 = mrpt[r + 1];
        if (m0 == m1) continue;
        const u32 j = ccol[e];
        const u64 q = lower_bound(mcol, m0, m1, j);
        if (q < m1 && mcol[q] == j) ccol[e] = SPGEMM_EMPTY;
    }
}

// A complemented mask made explicit, for products whose complement holds
// few entries (a breadth-first search's step: one row, the vertices not
// yet visited), so that its entries are computed by the dot products
// above and the products it excludes never are: flag e = i * ncols + j is
// 1 when M's row i (sorted; repeats harmless) does not hold column j,
// flag m * ncols is 0; their exclusive scan places the entries.
SPGEMM_FIXED_KERNEL void spgemm_complement_flags(const u64* mrpt, const u32* mcol, u32 m, u32 ncols, u64* flags) {
    const u64 n = (u64)m * ncols, stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e <= n; e += stride) {
        if (e == n) {
            flags[e] = 0;
            continue;
        }
        const u32 i = (u32)(e / ncols), j = (u32)(e % ncols);
        const u64 m1 = mrpt[i + 1], q = lower_bound(mcol, mrpt[i], m1, j);
        flags[e] = !(q < m1 && mcol[q] == j);
    }
}

// The explicit complement's columns at their places (the scanned flags)
// and its row offsets (the places of each row's first flag).
SPGEMM_FIXED_KERNEL void spgemm_complement_fill(const u64* places, u32 m, u32 ncols, u64* rpt, u32* col) {
    const u64 n = (u64)m * ncols, stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e <= n; e += stride) {
        if (e % ncols == 0) rpt[e / ncols] = places[e];
        if (e < n && places[e + 1] > places[e]) col[places[e]] = (u32)(e % ncols);
    }
}
