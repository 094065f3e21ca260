// C's rows sorted by column in place, their values alongside (none when
// `cval` is null): the rows spgemm_transpose_scatter forms come in no
// order. A block takes a group of rows, one a warp, each warp reading its
// row's offsets: a row of at most SPGEMM_SORT_ROWS_TILE / warps entries
// is sorted by its warp in the warp's part of shared memory; a longer one
// (marked in a word of shared memory) by the whole block, in shared
// memory up to SPGEMM_SORT_ROWS_TILE entries, beyond that in place in
// global memory (bitonic_sort's steps between block barriers, which make
// the block's global writes visible to it).
#define SPGEMM_SORT_ROWS_TILE 2048u

template <bool VALUES>
__device__ __forceinline__ void sort_rows(const u64* crpt, u32* ccol, value_t* cval, u32 m, u32* s_keys,
                                          value_t* s_vals, u32* s_long) {
    const u32 warps = blockDim.x / SPGEMM_WARP_SIZE, w = threadIdx.x / SPGEMM_WARP_SIZE;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE, per_warp = SPGEMM_SORT_ROWS_TILE / warps;
    for (u64 first = (u64)blockIdx.x * warps; first < m; first += (u64)gridDim.x * warps) {
        __syncthreads();
        if (threadIdx.x == 0) *s_long = 0;
        __syncthreads();
        // Each warp reads its own row's offsets and sorts a short row; a
        // long one is marked (bit w) for the whole block.
        const u64 r = first + w;
        u64 r0 = 0;
        u32 n = 0;
        if (r < m) {
            r0 = crpt[r];
            n = (u32)(crpt[r + 1] - r0);
        }
        if (n > per_warp && lane == 0) atomicOr(s_long, 1u << w);
        if (n > 1 && n <= per_warp) {
            u32* keys = s_keys + w * per_warp;
            value_t* vals = s_vals + w * per_warp;
            for (u32 t = lane; t < n; t += SPGEMM_WARP_SIZE) {
                keys[t] = ccol[r0 + t];
                if (VALUES) vals[t] = cval[r0 + t];
            }
            SPGEMM_SYNC_WARP();
            bitonic_sort<VALUES>(keys, vals, n, lane, SPGEMM_WARP_SIZE, [] { SPGEMM_SYNC_WARP(); });
            for (u32 t = lane; t < n; t += SPGEMM_WARP_SIZE) {
                ccol[r0 + t] = keys[t];
                if (VALUES) cval[r0 + t] = vals[t];
            }
        }
        __syncthreads();
        for (u32 longs = *s_long; longs; longs &= longs - 1) {
            const u64 g = first + (u32)(SPGEMM_FFS(longs) - 1);
            const u64 g0 = crpt[g];
            const u32 len = (u32)(crpt[g + 1] - g0);
            __syncthreads();
            if (len <= SPGEMM_SORT_ROWS_TILE) {
                for (u32 t = threadIdx.x; t < len; t += blockDim.x) {
                    s_keys[t] = ccol[g0 + t];
                    if (VALUES) s_vals[t] = cval[g0 + t];
                }
                __syncthreads();
                bitonic_sort<VALUES>(s_keys, s_vals, len, threadIdx.x, blockDim.x, [] { __syncthreads(); });
                for (u32 t = threadIdx.x; t < len; t += blockDim.x) {
                    ccol[g0 + t] = s_keys[t];
                    if (VALUES) cval[g0 + t] = s_vals[t];
                }
            } else {
                bitonic_sort<VALUES>(ccol + g0, cval + g0, len, threadIdx.x, blockDim.x, [] { __syncthreads(); });
            }
        }
    }
}

SPGEMM_FIXED_KERNEL void spgemm_sort_rows(const u64* crpt, u32* ccol, value_t* cval, u32 m) {
    __shared__ u32 s_keys[SPGEMM_SORT_ROWS_TILE];
    __shared__ value_t s_vals[SPGEMM_SORT_ROWS_TILE];
    __shared__ u32 s_long;
    if (cval)
        sort_rows<true>(crpt, ccol, cval, m, s_keys, s_vals, &s_long);
    else
        sort_rows<false>(crpt, ccol, cval, m, s_keys, s_vals, &s_long);
}
