// Pruning of C on the device (appended to masked_dot.cuh, whose
// lower_bound it uses): entries of magnitude below a threshold dropped,
// then at most `keep` of the largest magnitudes kept per row (ties to the
// lower column), or per column through C's transpose, as Markov clustering
// prunes (Azad et al., "HipMCL", Nucleic Acids Research 46(6), 2018, §2;
// spgemm_core::semiring::Prune). Dropped entries get column SPGEMM_EMPTY
// for spgemm_masked_compact to remove.
//
// A warp takes a row. The keep-th largest magnitude t is found by a
// bitwise search over the magnitudes' order-preserving keys (one counting
// pass over the row per bit), then, among the entries whose key is t, the
// column below which the remaining places go (a binary search over
// columns), so that no sort and no scratch memory is needed and a row may
// be of any length: about (bits + 32) passes over a row longer than
// `keep`, none over the others.

// An unsigned key ordering magnitudes as |x| orders them: a float's bits
// with the sign cleared (NaN above +inf, as Rust's total_cmp orders |x|),
// an integer's absolute value (the smallest integer's saturating to the
// largest, as Scalar::abs does).
__device__ __forceinline__ u64 magnitude_key(double x) { return (u64)__double_as_longlong(x) & 0x7fffffffffffffffull; }
__device__ __forceinline__ u64 magnitude_key(float x) { return (u64)(__float_as_uint(x) & 0x7fffffffu); }
__device__ __forceinline__ u64 magnitude_key(long long x) {
    return x >= 0 ? (u64)x : x == (-0x7fffffffffffffffll - 1) ? 0x7fffffffffffffffull : (u64)(-x);
}
__device__ __forceinline__ u64 magnitude_key(int x) {
    return x >= 0 ? (u64)x : x == (-0x7fffffff - 1) ? 0x7fffffffull : (u64)(-(long long)x);
}

// The value whose bits (the low ones for 32-bit types) are `b`.
__device__ __forceinline__ void of_bits(u64 b, double* v) { *v = __longlong_as_double((long long)b); }
__device__ __forceinline__ void of_bits(u64 b, float* v) { *v = __uint_as_float((u32)b); }
__device__ __forceinline__ void of_bits(u64 b, long long* v) { *v = (long long)b; }
__device__ __forceinline__ void of_bits(u64 b, int* v) { *v = (int)(u32)b; }

// Whether |v| >= t (t >= 0): false for NaN, true for the smallest integer.
__device__ __forceinline__ bool at_least(value_t v, value_t t) { return v >= t || v <= -t; }

// Entries p of r0..r1 for which live(p) holds and key(p) >= k (or == k
// with `equal`), counted over the warp: every lane returns the total.
template <typename L>
__device__ __forceinline__ u64 count_keys(u64 r0, u64 r1, u32 lane, const value_t* vals, u64 k, bool equal, L live) {
    u64 n = 0;
    for (u64 base = r0; base < r1; base += SPGEMM_WARP_SIZE) {
        const u64 p = base + lane;
        bool in = p < r1 && live(p);
        if (in) {
            const u64 key = magnitude_key(vals[p]);
            in = equal ? key == k : key >= k;
        }
        n += SPGEMM_POPC(SPGEMM_BALLOT(in));
    }
    return n;
}

// Calls drop(p) for each live entry p of r0..r1 (columns `cols`, values
// `vals`) that is not among the `keep` largest by magnitude, ties going to
// the lower column; nothing when at most `keep` entries are live. Lane
// `lane` of the warp handles entries r0 + lane, r0 + lane + warp, ...
template <typename L, typename F>
__device__ void keep_largest(u64 r0, u64 r1, u32 lane, const u32* cols, const value_t* vals, u64 keep, L live,
                             F drop) {
    const u64 n = count_keys(r0, r1, lane, vals, 0, false, live);
    if (n <= keep) return;
    // t: the largest key with at least `keep` live keys at or above it.
    u64 t = 0;
    if (keep > 0)
        for (int bit = (int)(8 * sizeof(value_t)) - 2; bit >= 0; --bit) {
            const u64 candidate = t | (1ull << bit);
            if (count_keys(r0, r1, lane, vals, candidate, false, live) >= keep) t = candidate;
        }
    // Of the entries whose key is t, those up to column `last` are kept:
    // the smallest column with `keep - above` of them at or below it.
    u32 last = 0;
    if (keep > 0) {
        const u64 above = t == ~0ull ? 0 : count_keys(r0, r1, lane, vals, t + 1, false, live);
        const u64 ties = keep - above;
        u32 lo = 0, hi = SPGEMM_EMPTY - 1;
        while (lo < hi) {
            const u32 mid = lo + (hi - lo) / 2;
            const u64 c = count_keys(r0, r1, lane, vals, t, true, [&](u64 p) { return live(p) && cols[p] <= mid; });
            if (c >= ties)
                hi = mid;
            else
                lo = mid + 1;
        }
        last = lo;
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
// or past the `keep` largest of its row (`keep` ~0: no limit). A warp per
// row.
SPGEMM_FIXED_KERNEL void spgemm_prune_rows(const u64* crpt, const u32* ccol, const value_t* cval, u32 m, u64 below,
                                           u32 has_below, u64 keep, u32* outcol) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE;
    const u64 nwarps = (u64)gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    value_t t;
    of_bits(below, &t);
    const auto live = [&](u64 p) { return ccol[p] != SPGEMM_EMPTY && (!has_below || at_least(cval[p], t)); };
    for (u64 r = warp; r < m; r += nwarps) {
        const u64 r0 = crpt[r], r1 = crpt[r + 1];
        for (u64 p = r0 + lane; p < r1; p += SPGEMM_WARP_SIZE) outcol[p] = live(p) ? ccol[p] : SPGEMM_EMPTY;
        if (keep != ~0ull) keep_largest(r0, r1, lane, ccol, cval, keep, live, [&](u64 p) { outcol[p] = SPGEMM_EMPTY; });
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
    for (u64 j = warp; j < n; j += nwarps)
        keep_largest(ctrpt[j], ctrpt[j + 1], lane, ctcol, ctval, keep, [](u64) { return true; }, [&](u64 p) {
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
