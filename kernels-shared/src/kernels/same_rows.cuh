// Runs of rows of A with the same columns (the "i-nodes" of PETSc's AIJ
// matrices: the degrees of freedom of one finite-element node, or the
// rows of one dense block, share a structure). Rows with the same columns
// have rows of C with the same columns whatever B is, so the symbolic
// phase counts only the first row of each run and the rows after it take
// its count; the numeric phase computes a few rows of a run together,
// walking their products once.
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
            const u32 from = lane - run_position(marked, lane);
            if (from != lane) crpt[w * SPGEMM_WORD_BITS + lane] = crpt[w * SPGEMM_WORD_BITS + from];
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

// Numeric step for runs of rows of A with the same columns (the bits of
// spgemm_same_rows): their rows of C have the same columns, and each
// product of the run's first row, A(i,k)·B(k,j), has a partner
// A(i+r,k)·B(k,j) in the r-th row after it at the same place of A's row.
// A block takes up to SPGEMM_RUN_ROWS rows of a run at once (PETSc's
// i-node products multiply a node's rows together in the same way): it
// walks the first row's products once, each entry of B loaded and its
// column hashed once for all the rows, and adds each row's value into
// that row's slot of the table (a row of values a row of the run, so that
// the lanes' slots spread over the banks). Where B's rows come in runs
// too (`b_same_rows`, B's bits; null: none), consecutive entries of A's
// row whose rows of B are one piece of a run (up to SPGEMM_RUN_SPAN rows
// with the same columns in the same order: a node's degrees of freedom
// on both sides, a block of a block-sparse matrix) are walked together:
// a column of those rows of B is hashed once and each row's values are
// summed before one addition into the table. Each window of a block's
// width of A's entries first lists the entries that start such a piece
// (or stand alone), so that the groups of lanes share out only those.
// Then the block condenses the table and ranks each key once (the rank
// sort of OpSparse §5.6.2) for every row's entry. Listed rows are the
// first rows of the run's pieces of SPGEMM_RUN_ROWS rows (row_bin); rows
// of at most SPGEMM_RUN_MAX entries, so the table of 2·SPGEMM_RUN_MAX keys
// (a power of two) is at most half full; each run takes the smallest
// power of two, at least a warp, of at least twice its entries. Shared
// memory: the keys, the values, two counters, a window's listed entries.
SPGEMM_FIXED_KERNEL void SPGEMM_LAUNCH_BOUNDS(SPGEMM_RUN_THREADS, SPGEMM_RUN_BLOCKS)
    spgemm_numeric_runs(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt, const u32* bcol,
                        const value_t* bval, const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                        value_t* cval, u32 g, const u32* same_rows, const u32* b_same_rows) {
    constexpr u32 R = SPGEMM_RUN_ROWS, S = SPGEMM_RUN_SPAN, TMAX = 2 * SPGEMM_RUN_MAX;
    extern __shared__ u64 s_runs[];
    u32* keys = (u32*)s_runs;
    value_t* vals = (value_t*)(keys + TMAX);
    u32* counter = (u32*)(vals + TMAX * R);
    u32* lead = counter + 2;
    for (u32 r = blockIdx.x; r < nrows; r += gridDim.x) {
        const u32 row = bins[r];
        const u32 rows = 1 + run_followers(same_rows[row / SPGEMM_WORD_BITS], row % SPGEMM_WORD_BITS);
        // Rows of the runs bin have fewer than 2^32 entries (row_bin).
        const u64 a0 = arpt[row];
        const u32 len = (u32)(arpt[row + 1] - a0);
        const u32 nnz = (u32)(crpt[row + 1] - crpt[row]);
        u32 tsize = SPGEMM_WARP_SIZE;
        while (tsize < 2 * nnz) tsize <<= 1;
        for (u32 t = threadIdx.x; t < tsize; t += blockDim.x) keys[t] = SPGEMM_EMPTY;
        for (u32 t = threadIdx.x; t < tsize * rows; t += blockDim.x) vals[t] = SPGEMM_IDENTITY;
        if (threadIdx.x == 0) counter[0] = counter[1] = 0;
        __syncthreads();
        // The row's entries of A in windows of a block's width: each
        // window's leaders (below) listed first, then their products.
        for (u32 w0 = 0; w0 < len; w0 += blockDim.x) {
            const u32 p = w0 + threadIdx.x;
            u32 span = 0;
            if (p < len) {
                const u32 c = acol[a0 + p];
                span = p > 0 && continues_rows(b_same_rows, acol[a0 + p - 1], c) ? 0 : 1;
                while (span && span < S && p + span < len && continues_rows(b_same_rows, c + span - 1, acol[a0 + p + span]))
                    ++span;
            }
            const u32 at = reserve_place(span > 0, SPGEMM_FULL_MASK, &counter[1]);
            if (span) lead[at] = (p - w0) << 3 | span;
            __syncthreads();
            const u32 nlead = counter[1];
            // Every thread has the count before it is reset for the next
            // window (whose leaders are listed after this one's barrier).
            __syncthreads();
            if (threadIdx.x == 0) counter[1] = 0;
            const u32 gg = widen_group(g, nlead, blockDim.x);
            const u32 group = threadIdx.x / gg, glane = threadIdx.x % gg, ngroups = blockDim.x / gg;
            for (u32 e = group; e < nlead; e += ngroups) {
                const u64 pp = a0 + w0 + (lead[e] >> 3);
                const u32 n = lead[e] & 7u, c = acol[pp];
                // aval is never null here (SPGEMM_READS_VALUES says whether
                // values are read); its test keeps the f64 build within 64
                // registers on sm_70 and sm_90 (40 bytes spilled without
                // it), and one on B's values too spills SGPRs on gfx90a.
                value_t a[R][S];
#pragma unroll
                for (u32 t = 0; t < S; ++t)
#pragma unroll
                    for (u32 k = 0; k < R; ++k)
                        a[k][t] = SPGEMM_READS_VALUES && k < rows && t < n && aval ? aval[pp + t + (u64)k * len] : value_t(1);
                // The piece's rows of B lie one after another, each as long
                // as the first (at most SPGEMM_RUN_MAX entries: each is in
                // the row of C).
                const u64 b0 = brpt[c];
                const u32 blen = (u32)(brpt[c + 1] - b0);
                for (u32 off = glane; off < blen; off += gg) {
                    const u32 col = bcol[b0 + off];
                    value_t b[S];
#pragma unroll
                    for (u32 t = 0; t < S; ++t) b[t] = SPGEMM_READS_VALUES && t < n ? bval[b0 + t * blen + off] : value_t(1);
                    u32 h = hash_slot(col, tsize, true);
                    while (true) {
                        const u32 old = atomicCAS(&keys[h], SPGEMM_EMPTY, col);
                        if (old == SPGEMM_EMPTY || old == col) break;
                        h = next_slot(h, tsize, true);
                    }
#pragma unroll
                    for (u32 k = 0; k < R; ++k) {
                        if (k >= rows) continue;
                        value_t sum = semiring_times(a[k][0], b[0]);
#pragma unroll
                        for (u32 t = 1; t < S; ++t)
                            if (t < n) sum = semiring_plus(sum, semiring_times(a[k][t], b[t]));
                        semiring_atomic(&vals[k * tsize + h], sum);
                    }
                }
            }
            __syncthreads();
        }
        // The occupied slots to the front, a warp reserving its places
        // with one shared atomic (as `condense` does for one value a key);
        // every slot of a round is read before any is written.
        for (u32 base = 0; base < tsize; base += blockDim.x) {
            const u32 t = base + threadIdx.x;
            const u32 key = t < tsize ? keys[t] : SPGEMM_EMPTY;
            value_t v[R];
#pragma unroll
            for (u32 k = 0; k < R; ++k) v[k] = key != SPGEMM_EMPTY && k < rows ? vals[k * tsize + t] : value_t(0);
            __syncthreads();
            const u32 pos = reserve_place(key != SPGEMM_EMPTY, SPGEMM_FULL_MASK, counter);
            if (key != SPGEMM_EMPTY) {
                keys[pos] = key;
#pragma unroll
                for (u32 k = 0; k < R; ++k)
                    if (k < rows) vals[k * tsize + pos] = v[k];
            }
            __syncthreads();
        }
        // Each key's place in its rows of C: the keys smaller than it,
        // read four at a time (the keys start 16-byte aligned).
        const uint4* keys4 = (const uint4*)keys;
        for (u32 t = threadIdx.x; t < nnz; t += blockDim.x) {
            const u32 key = keys[t];
            u32 rank = 0, q = 0;
            for (; q + 4 <= nnz; q += 4) {
                const uint4 w = keys4[q / 4];
                rank += (w.x < key) + (w.y < key) + (w.z < key) + (w.w < key);
            }
            for (; q < nnz; ++q) rank += keys[q] < key;
            for (u32 k = 0; k < rows; ++k) {
                const u64 out = crpt[row + k] + rank;
                ccol[out] = key;
                cval[out] = vals[k * tsize + t];
            }
        }
        __syncthreads();
    }
}
