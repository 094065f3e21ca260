// Checks of a CSR structure held in another library's device arrays (CuPy,
// PyTorch), read in place, before any kernel indexes with it: a thread per
// row checks the row offsets (widening int32 ones to the u64 the product
// reads, and marking where rows start in a bitmap, in the same pass), a
// thread per run of four entries the bounds of the column indices and, when asked, their
// order within rows (narrowing int64 ones to u32). The first fault is kept
// complemented by an atomic maximum (so that zeroed words mean "none"):
// first[0] = ~(row * 8 + kind) for the offsets (kind 0 first offset not 0,
// 1 offsets decrease, 4 last offset not nnz), first[1] = ~(position * 2 +
// kind) for the entries (0 column out of range, 1 not greater than the
// entry before it in its row). The host reads the 16 bytes and names the
// fault as the host checks do.

template <typename P>
__device__ void check_offsets(const P* indptr, u64 nrows, u64 nnz, u64* wide, u32* row_starts, u64* first) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i <= nrows; i += stride) {
        const long long start = (long long)indptr[i];
        if (wide) wide[i] = (u64)start;
        if (row_starts && start >= 0 && start <= (long long)nnz) atomicOr(row_starts + (start >> 5), 1u << (start & 31));
        const u64 row = i << 3;
        if (i == 0 && start != 0) atomicMax(first, ~(row | 0));
        if (i == nrows) {
            if (start != (long long)nnz) atomicMax(first, ~(row | 4));
            continue;
        }
        if ((long long)indptr[i + 1] < start) atomicMax(first, ~(row | 1));
    }
}

// Each thread of check_entries takes CHECK_RUN consecutive entries per
// step, their loads issued before any is used (with the entry before
// them, which the order is checked against): one entry at a time left a
// thread a single load in flight, and the check of a 7 M-entry operand
// took 26 us on an H100, 17 us so. (The same for the row offsets was
// slower, 11 -> 19 us; nor do its bitmap atomics bound it: OR-ed per word
// across a warp first, 11.6 -> 11.1 us.)
constexpr int CHECK_RUN = 4;

// An entry is checked against the one before it unless a row starts at
// it (the bitmap of check_offsets, meaningful only when the offsets passed,
// which the host reads first; in bounds whatever they hold). A run starts
// at a multiple of CHECK_RUN, so its bits lie in one word of the bitmap.
template <typename I>
__device__ void check_entries(const I* indices, u64 ncols, u64 nnz, const u32* row_starts, u32* narrow, u64* first) {
    const u64 stride = (u64)gridDim.x * blockDim.x * CHECK_RUN;
    for (u64 p0 = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * CHECK_RUN; p0 < nnz; p0 += stride) {
        // c[0] is the entry before the run (unread at 0 or unordered).
        long long c[CHECK_RUN + 1];
        c[0] = row_starts && p0 > 0 ? (long long)indices[p0 - 1] : 0;
#pragma unroll
        for (int k = 0; k < CHECK_RUN; ++k) c[k + 1] = p0 + k < nnz ? (long long)indices[p0 + k] : 0;
        // Bit k: a row starts at p0 + k, or the order is not checked there.
        u32 starts = row_starts ? row_starts[p0 >> 5] >> (p0 & 31) : ~0u;
        if (p0 == 0) starts |= 1u;
#pragma unroll
        for (int k = 0; k < CHECK_RUN; ++k) {
            const u64 p = p0 + k;
            if (p >= nnz) break;
            if (c[k + 1] < 0 || c[k + 1] >= (long long)ncols) {
                atomicMax(first + 1, ~(p << 1));
                continue;
            }
            if (narrow) narrow[p] = (u32)c[k + 1];
            if (!((starts >> k) & 1u) && c[k] >= c[k + 1]) atomicMax(first + 1, ~((p << 1) | 1));
        }
    }
}

SPGEMM_FIXED_KERNEL void spgemm_check_offsets_i32(const void* indptr, u64 nrows, u64 nnz, u64* wide, u32* row_starts,
                                                  u64* first) {
    check_offsets((const int*)indptr, nrows, nnz, wide, row_starts, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_offsets_i64(const void* indptr, u64 nrows, u64 nnz, u64* wide, u32* row_starts,
                                                  u64* first) {
    check_offsets((const long long*)indptr, nrows, nnz, wide, row_starts, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_entries_i32(const void* indices, u64 ncols, u64 nnz, const u32* row_starts,
                                                  u32* narrow, u64* first) {
    check_entries((const int*)indices, ncols, nnz, row_starts, narrow, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_entries_i64(const void* indices, u64 ncols, u64 nnz, const u32* row_starts,
                                                  u32* narrow, u64* first) {
    check_entries((const long long*)indices, ncols, nnz, row_starts, narrow, first);
}

// The way out: C's u64 row offsets narrowed to int32 for libraries whose
// CSR matrices hold int32 offsets beside int32 column indices (CuPy,
// PyTorch); launched only when nnz(C) fits in an int32.
SPGEMM_FIXED_KERNEL void spgemm_narrow_offsets(const u64* wide, int* narrow, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) narrow[i] = (int)wide[i];
}
