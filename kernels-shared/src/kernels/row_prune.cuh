
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
// The keep-th largest magnitude key is bounded bit by bit from the top
// (rows of at most a warp: from the highest bit where their live keys
// differ, two bits a round; a count over the row a candidate: entries at
// least it), until exactly
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
    // least `kth`. Rows of at most a warp start below the bits their live
    // keys share (kth has them: the OR and AND of the keys differ first
    // at bit `top`) and bound two bits a round (three counts, whose
    // shuffles overlap); a block's row one bit a round from the top.
    constexpr bool PAIRS = ROW_THREADS <= SPGEMM_WARP_SIZE;
    u64 kth = 0;
    u32 reach = live;
    int top = 8 * (int)sizeof(value_t) - 2;
    if (PAIRS) {
        u64 any = 0, all = ~0ull;
        for (u32 t = lane; t < nnz; t += ROW_THREADS) {
            if (keys[t] == SPGEMM_EMPTY) continue;
            const u64 k = magnitude_key(vals[t]);
            any |= k;
            all &= k;
        }
        for (u32 d = ROW_THREADS / 2; d > 0; d /= 2) {
            any |= SPGEMM_SHFL_XOR_W(any, d, ROW_THREADS);
            all &= SPGEMM_SHFL_XOR_W(all, d, ROW_THREADS);
        }
        // A row without live entries (all ones against none) takes no
        // part; where every live key is alike, kth is that key.
        const u64 differ = any ^ all;
        top = differ == 0 ? -1 : 63 - __clzll((long long)differ);
        kth = differ == 0 ? all : all & ~((2ull << top) - 1);
    }
    constexpr int STEP = PAIRS ? 2 : 1;
    for (int b = top; rows_any<ROW_THREADS>(live > keep && reach != keep && b >= 0); b -= STEP) {
        // The candidates kth | j·2^low for j = 1 .. 2^STEP − 1 (one where
        // only bit 0 is left); a candidate above every key counts none.
        const int low = PAIRS && b >= 1 ? b - 1 : b >= 0 ? b : 0;
        const bool on = b >= 0;
        const u64 c1 = on ? kth | (1ull << low) : ~0ull;
        const u64 c2 = on && b > low ? kth | (2ull << low) : ~0ull;
        const u64 c3 = on && b > low ? kth | (3ull << low) : ~0ull;
        u32 n1 = 0, n2 = 0, n3 = 0;
        for (u32 t = lane; t < nnz; t += ROW_THREADS) {
            if (keys[t] == SPGEMM_EMPTY) continue;
            const u64 k = magnitude_key(vals[t]);
            n1 += k >= c1;
            if (PAIRS) {
                n2 += k >= c2;
                n3 += k >= c3;
            }
        }
        n1 = row_sum<ROW_THREADS>(n1, words, round);
        if (PAIRS) {
            n2 = row_sum<ROW_THREADS>(n2, words, round);
            n3 = row_sum<ROW_THREADS>(n3, words, round);
        }
        if (PAIRS && n3 >= keep) {
            kth = c3;
            reach = n3;
        } else if (PAIRS && n2 >= keep) {
            kth = c2;
            reach = n2;
        } else if (n1 >= keep) {
            kth = c1;
            reach = n1;
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
