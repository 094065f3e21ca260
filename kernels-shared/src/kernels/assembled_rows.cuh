
// A matrix assembled on the device from runs of another matrix's rows
// (the rows of B a rank of a distributed product fetches): each run's row
// ends were copied as they were in their source, so they are moved by the
// run's shift; rows between runs are empty and take the end of the run
// before. `segments` holds `nsegs` starts (row offset indices, ascending,
// the first 0), then as many shifts (added modulo 2^64), then as many
// flags (1: keep the copied end and add the shift; 0: the shift is the
// value). A thread per row offset finds its segment by binary search.
SPGEMM_FIXED_KERNEL void spgemm_place_offsets(u64* rpt, u64 n, const u64* segments, u64 nsegs) {
    const u64* starts = segments;
    const u64* shifts = segments + nsegs;
    const u64* keep = segments + 2 * nsegs;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        u64 lo = 0, hi = nsegs;
        while (hi - lo > 1) {
            const u64 mid = lo + (hi - lo) / 2;
            if (starts[mid] <= i) lo = mid;
            else hi = mid;
        }
        rpt[i] = (keep[lo] ? rpt[i] : 0) + shifts[lo];
    }
}
