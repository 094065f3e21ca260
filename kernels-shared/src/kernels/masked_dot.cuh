// Masked products by dot products: C<M> = A (+).(x) B with a structural
// mask M, each entry (i, j) of M computed as the (+) over the k stored in
// both A's row i and B's column j, that is Bt's row j (B transposed), the
// dot3 method of SuiteSparse:GraphBLAS (Davis, "Algorithm 1000:
// SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019, §6.3). C's entries are M's
// that meet at least one such k; the others are written with column
// SPGEMM_EMPTY and dropped when C is assembled. The program builder emits
// value_t, the semiring (semiring_times, semiring_plus and
// SPGEMM_READS_VALUES: see spgemm_core::semiring) and SPGEMM_EMPTY in
// front of this source. A sum starts at its first product, never at the
// monoid's identity, so that (+) meets only products, as on the host.
//
// A segment of `seg` lanes (a power of two up to the warp) takes one entry
// of M: its lanes walk the shorter of the two rows in turn, each finding
// its column in the longer by binary search from where its last one was
// found (both rows sorted), and the segment combines its lanes' sums by
// shuffles. Segments take consecutive entries, so a warp's segments share
// rows of A; the loop is uniform across the warp, so every lane reaches
// the shuffles.

// The row of entry e: the last r with mrpt[r] <= e (rows of M may be empty).
__device__ __forceinline__ u32 row_of_entry(const u64* __restrict__ mrpt, u32 m, u64 e) {
    u32 lo = 0, hi = m;
    while (lo < hi) {
        const u32 mid = lo + (hi - lo + 1) / 2;
        if (mrpt[mid] <= e)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

SPGEMM_FIXED_KERNEL void spgemm_masked_dot(const u64* mrpt, const u32* mcol, u32 m, u64 mnnz, const u64* arpt,
                                           const u32* acol, const value_t* aval, const u64* btrpt,
                                           const u32* btcol, const value_t* btval, u32 seg, u32* ccol,
                                           value_t* cval) {
    const u32 lane = threadIdx.x % seg;
    const u32 per_warp = SPGEMM_WARP_SIZE / seg;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE;
    const u64 nwarps = (u64)gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    for (u64 base = warp * per_warp; base < mnnz; base += nwarps * per_warp) {
        const u64 e = base + (threadIdx.x % SPGEMM_WARP_SIZE) / seg;
        value_t acc = value_t(0);
        u32 hit = 0, j = SPGEMM_EMPTY;
        if (e < mnnz) {
            const u32 i = row_of_entry(mrpt, m, e);
            j = mcol[e];
            const u64 a0 = arpt[i], a1 = arpt[i + 1], b0 = btrpt[j], b1 = btrpt[j + 1];
            // The shorter row is walked, the longer searched.
            const bool walk_a = a1 - a0 <= b1 - b0;
            const u32* wcol = walk_a ? acol : btcol;
            const u32* scol = walk_a ? btcol : acol;
            const u64 w0 = walk_a ? a0 : b0, w1 = walk_a ? a1 : b1;
            u64 lo = walk_a ? b0 : a0;
            const u64 s1 = walk_a ? b1 : a1;
            for (u64 p = w0 + lane; p < w1 && lo < s1; p += seg) {
                const u32 k = wcol[p];
                u64 hi = s1;
                while (lo < hi) {
                    const u64 mid = lo + (hi - lo) / 2;
                    if (scol[mid] < k)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo < s1 && scol[lo] == k) {
#if SPGEMM_READS_VALUES
                    const value_t x = walk_a ? aval[p] : aval[lo];
                    const value_t y = walk_a ? btval[lo] : btval[p];
                    const value_t v = semiring_times(x, y);
#else
                    const value_t v = semiring_times(value_t(1), value_t(1));
#endif
                    acc = hit ? semiring_plus(acc, v) : v;
                    hit = 1;
                }
            }
        }
        for (u32 d = seg / 2; d > 0; d /= 2) {
            const value_t other = SPGEMM_SHFL_XOR_W(acc, d, seg);
            const u32 other_hit = SPGEMM_SHFL_XOR_W(hit, d, seg);
            if (other_hit) acc = hit ? semiring_plus(acc, other) : other;
            hit |= other_hit;
        }
        if (lane == 0 && e < mnnz) {
            ccol[e] = hit ? j : SPGEMM_EMPTY;
            cval[e] = acc;
        }
    }
}
