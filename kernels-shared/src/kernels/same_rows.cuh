// Runs of rows of A with the same columns (the "i-nodes" of PETSc's AIJ
// matrices: the degrees of freedom of one finite-element node, or the
// rows of one dense block, share a structure). Rows with the same columns
// have rows of C with the same columns whatever B is, so the symbolic
// phase counts only the first row of each run and the rows after it take
// its count.
//
// A row's bit (bit i % SPGEMM_WORD_BITS of same_rows[i / SPGEMM_WORD_BITS])
// is set when it has the columns of the row before it, in the same order,
// and is not the first row of its word: so the first row of a run, which
// the symbolic phase counts, lies in the word of every row it stands for.

// The bits, a warp per word of rows and a lane per row: a row is a
// candidate when it is as long as the row before, not empty, and its first
// and last columns are the row before's (neighbouring rows of most
// matrices differ there); a candidate's lane then compares the columns
// between, four at a time (their loads in flight together), stopping after
// the first four that differ. The rows of a word lie side by side, so the
// lanes' reads share cache lines from one step to the next. The bits'
// number is added to `nsame`. Returns at once on a fault of the operands'
// pending checks (operands_faulted), so that A's offsets are never
// followed before their checks' answer is known; no bit is then set.
SPGEMM_FIXED_KERNEL void spgemm_same_rows(const u64* arpt, const u32* acol, u32 m, const u64* faults, u32* same_rows,
                                          u64* nsame) {
    if (operands_faulted(faults)) return;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u32 warps = gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    const u32 words = (m + SPGEMM_WORD_BITS - 1) / SPGEMM_WORD_BITS;
    u64 count = 0;
    for (u32 w = (blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE; w < words; w += warps) {
        const u32 i = w * SPGEMM_WORD_BITS + lane;
        bool same = false;
        if (lane > 0 && lane < SPGEMM_WORD_BITS && i < m) {
            const u64 p = arpt[i - 1], q = arpt[i], r = arpt[i + 1];
            same = r > q && r - q == q - p && acol[q] == acol[p] && acol[r - 1] == acol[q - 1];
            const u64 len = r - q;
            for (u64 t = 1; same && t + 1 < len; t += 4) {
                bool differs = false;
#pragma unroll
                for (u32 k = 0; k < 4; ++k)
                    if (t + k + 1 < len) differs |= acol[q + t + k] != acol[p + t + k];
                same = !differs;
            }
        }
        // Lanes past the word's rows never vote: the low word holds them all.
        const u32 bits = (u32)SPGEMM_BALLOT(same);
        if (lane == 0 && bits) {
            same_rows[w] = bits;
            count += __popc(bits);
        }
    }
    if (lane == 0 && count) atomicAdd((unsigned long long*)nsame, (unsigned long long)count);
}

// After the symbolic phase (every count in crpt, every distinct and repeat
// bit set), a warp per word of rows and a lane per row: each row marked in
// same_rows takes the count, the distinct bit and the repeat bit of the
// first row of its run, the nearest unmarked row below it in its word; the
// words of bits are then written whole.
SPGEMM_FIXED_KERNEL void spgemm_copy_same_rows(u64* crpt, u32 m, const u32* same_rows, u32* distinct_rows,
                                               u32* repeat_rows) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    const u32 warps = gridDim.x * blockDim.x / SPGEMM_WARP_SIZE;
    const u32 words = (m + SPGEMM_WORD_BITS - 1) / SPGEMM_WORD_BITS;
    for (u32 w = (blockIdx.x * blockDim.x + threadIdx.x) / SPGEMM_WARP_SIZE; w < words; w += warps) {
        const u32 marked = same_rows[w];
        if (!marked) continue;
        const u32 distinct = distinct_rows[w], repeat = repeat_rows[w];
        bool d = false, r = false;
        if (lane < SPGEMM_WORD_BITS) {
            u32 from = lane;
            if (marked >> lane & 1u) {
                // Unmarked bits up to this row's (2u << lane wraps to 0 for
                // the last): bit 0 is never marked, so there is one.
                const u32 unmarked = ~marked & ((2u << lane) - 1u);
                from = SPGEMM_WORD_BITS - 1 - __clz(unmarked);
                crpt[w * SPGEMM_WORD_BITS + lane] = crpt[w * SPGEMM_WORD_BITS + from];
            }
            d = distinct >> from & 1u;
            r = repeat >> from & 1u;
        }
        const u32 new_distinct = (u32)SPGEMM_BALLOT(d), new_repeat = (u32)SPGEMM_BALLOT(r);
        if (lane == 0) {
            distinct_rows[w] = new_distinct;
            repeat_rows[w] = new_repeat;
        }
    }
}
