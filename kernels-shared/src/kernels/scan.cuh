// Exclusive scans of u64 values on the device, in the product's program
// (C's row offsets) and in the masked program (the row offsets of a
// compacted C).

// Exclusive scan of n u64 values in place, in tiles of blockDim.x * 4; each
// tile's total goes to sums[blockIdx.x]. The host scans the sums
// (recursively) and adds them back with spgemm_scan_add.
SPGEMM_FIXED_KERNEL void spgemm_scan_tiles(u64* data, u64 n, u64* sums) {
    extern __shared__ u64 s_scan[];
    const u64 base = (u64)blockIdx.x * blockDim.x * 4;
    u64 v[4], local = 0;
    for (int j = 0; j < 4; ++j) {
        const u64 i = base + threadIdx.x * 4 + j;
        v[j] = i < n ? data[i] : 0;
        local += v[j];
    }
    s_scan[threadIdx.x] = local;
    __syncthreads();
    for (u32 d = 1; d < blockDim.x; d *= 2) {
        const u64 t = threadIdx.x >= d ? s_scan[threadIdx.x - d] : 0;
        __syncthreads();
        s_scan[threadIdx.x] += t;
        __syncthreads();
    }
    u64 run = s_scan[threadIdx.x] - local;
    for (int j = 0; j < 4; ++j) {
        const u64 i = base + threadIdx.x * 4 + j;
        if (i < n) data[i] = run;
        run += v[j];
    }
    if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = s_scan[threadIdx.x];
}

SPGEMM_FIXED_KERNEL void spgemm_scan_add(u64* data, u64 n, const u64* sums) {
    const u64 base = (u64)blockIdx.x * blockDim.x * 4;
    const u64 add = sums[blockIdx.x];
    for (int j = 0; j < 4; ++j) {
        const u64 i = base + threadIdx.x * 4 + j;
        if (i < n) data[i] += add;
    }
}
