// Bitonic sorting of (column, value) pairs by column, shared by the
// product's kernels (shared_bins.cuh, long_rows.cuh) and the masked
// program's sort of rows (sorted_rows.cuh).

// The positions compared by thread-pair t at step (k, j) of a bitonic sort
// (k and j powers of two, j < k): the first step of stage k (j = k/2)
// compares mirrored positions of each k-block, the others positions j
// apart in each 2j-block. Every compare-exchange puts the smaller key at
// the lower position.
__device__ __forceinline__ void bitonic_pair(u32 t, u32 k, u32 j, u32* lo, u32* hi) {
    const u32 off = t & (j - 1), blk = t >> (__ffs(j) - 1);
    if (j == k >> 1) {
        *lo = blk * k + off;
        *hi = blk * k + k - 1 - off;
    } else {
        *lo = blk * 2 * j + off;
        *hi = *lo + j;
    }
}

// Puts the smaller key of positions lo < hi (with its value, unless
// VALUES is false: keys alone) at lo.
template <bool VALUES = true>
__device__ __forceinline__ void compare_exchange(u32* keys, value_t* vals, u32 lo, u32 hi) {
    const u32 a = keys[lo], b = keys[hi];
    if (a > b) {
        keys[lo] = b;
        keys[hi] = a;
        if (VALUES) {
            const value_t t = vals[lo];
            vals[lo] = vals[hi];
            vals[hi] = t;
        }
    }
}

// Bitonic sort of (key, value) pairs ascending by key over `size` slots,
// treated as a power-of-two sequence padded with +infinity keys. As the
// smaller key always goes to the lower position, padded slots never move
// and need not exist. `tid`/`nthreads` are the threads sharing the
// sequence; `sync` is their barrier. Empty slots (key SPGEMM_EMPTY) sort
// last. With VALUES false the keys are sorted alone (`vals` unused).
template <bool VALUES = true, typename Sync>
__device__ __forceinline__ void bitonic_sort(u32* keys, value_t* vals, u32 size, u32 tid, u32 nthreads, Sync sync) {
    u32 p2 = 1;
    while (p2 < size) p2 <<= 1;
    for (u32 k = 2; k <= p2; k <<= 1) {
        for (u32 j = k >> 1; j > 0; j >>= 1) {
            for (u32 t = tid; t < p2 / 2; t += nthreads) {
                u32 lo, hi;
                bitonic_pair(t, k, j, &lo, &hi);
                if (hi < size) compare_exchange<VALUES>(keys, vals, lo, hi);
            }
            sync();
        }
    }
}
