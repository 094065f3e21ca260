
// Pruning a row of C in its shared-memory table, as the numeric bins'
// kernels compiled with pruning write it after a symbolic phase: entries of
// magnitude below a threshold dropped, then at most `keep` of the largest
// magnitudes kept (ties to the lower column), as spgemm_prune_rows would
// after the product (Azad et al., "HipMCL", Nucleic Acids Research 46(6),
// 2018, §2; spgemm_core::semiring::Prune), but on the row where it lies
// rather than over C in global memory. A dropped entry's column becomes
// SPGEMM_EMPTY, for spgemm_masked_compact to remove.

// The sum of one count per thread over a row's ROW_THREADS threads, every
// thread of the row getting it. Rows of at most a warp (ROW_THREADS divides
// it) sum by shuffles within their lanes; wider rows are a whole block
// each: each warp's sum is added into one of three words of the row
// (`words`), a barrier, then every thread reads it. `round` counts the
// calls: the word of call r is cleared in call r + 1, after the barrier
// that follows every thread's read of it, and is next added to in call
// r + 3. The first two words start cleared.
template <u32 ROW_THREADS>
__device__ __forceinline__ u32 row_sum(u32 x, u32* words, u32& round) {
    if (ROW_THREADS <= SPGEMM_WARP_SIZE) {
        for (u32 d = ROW_THREADS / 2; d > 0; d /= 2) x += SPGEMM_SHFL_XOR_W(x, d, ROW_THREADS);
        return x;
    }
    for (u32 d = SPGEMM_WARP_SIZE / 2; d > 0; d /= 2) x += SPGEMM_SHFL_XOR_W(x, d, SPGEMM_WARP_SIZE);
    const u32 slot = round % 3;
    if (threadIdx.x % SPGEMM_WARP_SIZE == 0) atomicAdd(&words[slot], x);
    __syncthreads();
    const u32 total = words[slot];
    if (threadIdx.x == 0) words[(round + 2) % 3] = 0;
    ++round;
    return total;
}

// Whether `p`, alike on every thread of a row (computed from the row's
// sums), holds for any row that decides with this one: the rows of a warp
// when rows are at most a warp (so that the warp's shuffles run as many
// rounds in each), else the row itself, a whole block.
template <u32 ROW_THREADS>
__device__ __forceinline__ bool rows_any(bool p) {
    if (ROW_THREADS <= SPGEMM_WARP_SIZE) return SPGEMM_BALLOT(p) != 0;
    return p;
}

// Prunes the row whose `nnz` entries lie at keys[0, nnz) and vals[0, nnz)
// (each a column, none SPGEMM_EMPTY; thread `lane` of the row's
// ROW_THREADS takes entries lane, lane + ROW_THREADS, ...): entries below
// `below` (with `has_below`) and past the `keep` largest magnitudes (~0u:
// no limit) get key SPGEMM_EMPTY, in place. Returns the kept count. Rows
// wider than a warp are a whole block and use keys[nnz, nnz + 3) as the
// words of their sums (the host fuses pruning only into bins whose tables
// leave them). Every thread of the block calls it at once.
//
// The keep-th largest magnitude key is bounded bit by bit from the top (a
// count over the row a bit: entries at least the candidate), until exactly
// `keep` entries reach the bound (then they are the kept ones: rows of
// distinct magnitudes settle once the bound parts the keep-th largest from
// the next, after about the bits the row's magnitudes share and the
// logarithm of its length). Where the bits run out first, the bound is the
// keep-th largest key and ties with it: those of the lowest columns are
// kept (the need-th smallest of their columns, bit by bit the same way). A
// row of at most `keep` live entries takes no part but the rounds.
template <u32 ROW_THREADS>
__device__ __forceinline__ u32 prune_row(u32* keys, const value_t* vals, u32 nnz, u32 lane, value_t below,
                                         bool has_below, u32 keep) {
    u32* words = keys + nnz;
    u32 round = 0;
    if (ROW_THREADS > SPGEMM_WARP_SIZE) {
        __syncthreads();
        if (lane == 0) {
            words[0] = 0;
            words[1] = 0;
        }
        __syncthreads();
    }
    u32 own = 0;
    for (u32 t = lane; t < nnz; t += ROW_THREADS) {
        if (has_below && !at_least(vals[t], below))
            keys[t] = SPGEMM_EMPTY;
        else
            ++own;
    }
    const u32 live = row_sum<ROW_THREADS>(own, words, round);
    if (keep == ~0u) return live;
    if (keep == 0) {
        for (u32 t = lane; t < nnz; t += ROW_THREADS) keys[t] = SPGEMM_EMPTY;
        return 0;
    }
    if (!rows_any<ROW_THREADS>(live > keep)) return live;
    const auto count = [&](auto is) {
        u32 n = 0;
        for (u32 t = lane; t < nnz; t += ROW_THREADS) n += keys[t] != SPGEMM_EMPTY && is(t);
        return row_sum<ROW_THREADS>(n, words, round);
    };
    // A magnitude key's top bit is clear. `reach`: the live entries at
    // least `kth`.
    u64 kth = 0;
    u32 reach = live;
    for (int b = 8 * (int)sizeof(value_t) - 2; b >= 0; --b) {
        if (!rows_any<ROW_THREADS>(live > keep && reach != keep)) break;
        const u64 c = kth | (1ull << b);
        const u32 n = count([&](u32 t) { return magnitude_key(vals[t]) >= c; });
        if (n >= keep) {
            kth = c;
            reach = n;
        }
    }
    // Where the bits ran out with more than `keep` entries at least kth,
    // kth is the keep-th largest key and `need` of its ties are kept.
    const bool split = live > keep && reach > keep;
    u32 last = ~0u;
    if (rows_any<ROW_THREADS>(split)) {
        const u32 need = keep - count([&](u32 t) { return magnitude_key(vals[t]) > kth; });
        u32 col = 0;
        for (int b = 31; b >= 0; --b) {
            const u32 c = col | (1u << b);
            if (count([&](u32 t) { return magnitude_key(vals[t]) == kth && keys[t] < c; }) < need) col = c;
        }
        if (split) last = col;
    }
    if (live <= keep) return live;
    for (u32 t = lane; t < nnz; t += ROW_THREADS) {
        if (keys[t] == SPGEMM_EMPTY) continue;
        const u64 k = magnitude_key(vals[t]);
        if (k < kth || (k == kth && keys[t] > last)) keys[t] = SPGEMM_EMPTY;
    }
    return keep;
}
