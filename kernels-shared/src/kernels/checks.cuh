// Checks of a CSR structure held in another library's device arrays (CuPy,
// PyTorch), read in place, before any kernel indexes with it: a thread per
// row checks the row offsets (widening int32 ones to the u64 the product
// reads, in the same pass), a thread per entry the bounds of the column
// indices and, when asked, their order (narrowing int64 ones to u32). Each
// keeps its first fault as row * 8 + kind with an atomic minimum
// (first[0] offsets, first[1] entries), so the host reads 16 bytes and
// names the fault as the host checks do. Kinds: 0 first offset not 0,
// 1 offsets decrease, 2 column out of range, 3 row unsorted or with a
// duplicate, 4 last offset not nnz.

template <typename P>
__device__ void check_offsets(const P* indptr, u64 nrows, u64 nnz, u64* wide, u64* first) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i <= nrows; i += stride) {
        const long long start = (long long)indptr[i];
        if (wide) wide[i] = (u64)start;
        const u64 row = i << 3;
        if (i == 0 && start != 0) atomicMin(first, row | 0);
        if (i == nrows) {
            if (start != (long long)nnz) atomicMin(first, row | 4);
            continue;
        }
        if ((long long)indptr[i + 1] < start) atomicMin(first, row | 1);
    }
}

// The entry's row comes from a binary search in the offsets: meaningful
// only when they passed (the host reads first[0] first), and in bounds
// whatever they hold.
template <typename P, typename I>
__device__ void check_entries(const P* indptr, const I* indices, u64 nrows, u64 ncols, u64 nnz, u32 sorted,
                              u32* narrow, u64* first) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < nnz; p += stride) {
        u64 lo = 0, hi = nrows;
        while (hi - lo > 1) {
            const u64 mid = lo + (hi - lo) / 2;
            if ((long long)indptr[mid] <= (long long)p) lo = mid; else hi = mid;
        }
        const u64 row = lo << 3;
        const long long c = (long long)indices[p];
        if (c < 0 || c >= (long long)ncols) {
            atomicMin(first + 1, row | 2);
            continue;
        }
        if (narrow) narrow[p] = (u32)c;
        if (sorted && (long long)p > (long long)indptr[lo] && (long long)indices[p - 1] >= c)
            atomicMin(first + 1, row | 3);
    }
}

SPGEMM_FIXED_KERNEL void spgemm_check_offsets_i32(const void* indptr, u64 nrows, u64 nnz, u64* wide, u64* first) {
    check_offsets((const int*)indptr, nrows, nnz, wide, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_offsets_i64(const void* indptr, u64 nrows, u64 nnz, u64* wide, u64* first) {
    check_offsets((const long long*)indptr, nrows, nnz, wide, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_entries_i32_i32(const void* indptr, const void* indices, u64 nrows, u64 ncols,
                                                      u64 nnz, u32 sorted, u32* narrow, u64* first) {
    check_entries((const int*)indptr, (const int*)indices, nrows, ncols, nnz, sorted, narrow, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_entries_i32_i64(const void* indptr, const void* indices, u64 nrows, u64 ncols,
                                                      u64 nnz, u32 sorted, u32* narrow, u64* first) {
    check_entries((const int*)indptr, (const long long*)indices, nrows, ncols, nnz, sorted, narrow, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_entries_i64_i32(const void* indptr, const void* indices, u64 nrows, u64 ncols,
                                                      u64 nnz, u32 sorted, u32* narrow, u64* first) {
    check_entries((const long long*)indptr, (const int*)indices, nrows, ncols, nnz, sorted, narrow, first);
}

SPGEMM_FIXED_KERNEL void spgemm_check_entries_i64_i64(const void* indptr, const void* indices, u64 nrows, u64 ncols,
                                                      u64 nnz, u32 sorted, u32* narrow, u64* first) {
    check_entries((const long long*)indptr, (const long long*)indices, nrows, ncols, nnz, sorted, narrow, first);
}
