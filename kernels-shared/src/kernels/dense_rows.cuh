// Dense accumulators in shared memory for rows of a narrow C (appended
// after long_rows.cuh, whose block scan they use): KokkosKernels' dense
// accumulator (Deveci et al. 2018, §3.3) held in a block's shared memory
// instead of a hash table. A column is its own slot: no hash, no probing,
// and the row comes out sorted by reading the bitmap in column order, with
// no sort. The host sends a bin here when a bitmap of C's columns has no
// more words than the bin's table has slots (and, numeric, when a dense row
// fits twice in a multiprocessor's shared memory). Blocks of
// SPGEMM_DENSE_THREADS threads take rows in turn (grid-stride) and leave
// their shared arrays clean for the next row. SPGEMM_DENSE_THREADS comes
// from the host (core/src/gpu/constants.rs).

// Symbolic step: one bit per column of C (`words` words of shared memory);
// nnz(i) is the number of bits set. Marks rows whose count is nprod(i), as
// symbolic_shared does.
SPGEMM_FIXED_KERNEL void SPGEMM_LAUNCH_BOUNDS(SPGEMM_DENSE_THREADS, SPGEMM_DENSE_SYMBOLIC_BLOCKS)
    spgemm_symbolic_dense_shared(const u64* arpt, const u32* acol, const u64* brpt, const u32* bcol,
                                 const u32* bins, u32 nrows, u64* crpt, u32 g, u32 words, u32* distinct_rows,
                                 u32* repeat_rows) {
    extern __shared__ u32 s_bits[];
    __shared__ u32 s_count;
    for (u32 t = threadIdx.x; t < words; t += blockDim.x) s_bits[t] = 0;
    if (threadIdx.x == 0) s_count = 0;
    __syncthreads();
    for (u32 r = blockIdx.x; r < nrows; r += gridDim.x) {
        const u32 row = bins[r];
        for_products(arpt, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, row, threadIdx.x, blockDim.x, g,
                     [&](u32 col, value_t) {
                         atomicOr(&s_bits[col / SPGEMM_WORD_BITS], 1u << (col % SPGEMM_WORD_BITS));
                     });
        __syncthreads();
        // Each thread counts and clears its words; the next row's bits are
        // set only after the barrier at the end of its products.
        u64 n = 0;
        for (u32 t = threadIdx.x; t < words; t += blockDim.x) {
            n += __popc(s_bits[t]);
            s_bits[t] = 0;
        }
        n = warp_sum(n);
        if (threadIdx.x % SPGEMM_WARP_SIZE == 0 && n) atomicAdd(&s_count, (u32)n);
        __syncthreads();
        if (threadIdx.x == 0) {
            const u32 c = s_count;
            mark_row(row, crpt[row], c, distinct_rows, repeat_rows);
            crpt[row] = c;
            s_count = 0;
        }
    }
}

// A thread's contiguous run of a block's bitmap words, [w0, w1), for the
// scans that rank the row's columns.
struct WordRun {
    u32 w0, w1;
    // Set bits in the run: the thread's share of the row's entries.
    __device__ __forceinline__ u32 count(const u32* bits) const {
        u32 n = 0;
        for (u32 w = w0; w < w1; ++w) n += __popc(bits[w]);
        return n;
    }
};

// Starts a dense or ranked block: `nvals` values at the identity of (+)
// (see is_identity) and `words` bitmap words at 0, then the thread's run
// of the words.
__device__ __forceinline__ WordRun clear_block(value_t* vals, u32 nvals, u32* bits, u32 words) {
    for (u32 t = threadIdx.x; t < nvals; t += blockDim.x) vals[t] = SPGEMM_IDENTITY;
    for (u32 t = threadIdx.x; t < words; t += blockDim.x) bits[t] = 0;
    __syncthreads();
    const u32 per = (words + blockDim.x - 1) / blockDim.x;
    const u32 w0 = threadIdx.x * per < words ? threadIdx.x * per : words;
    return WordRun{w0, w0 + per < words ? w0 + per : words};
}

// Numeric step: a value per column of C (words · SPGEMM_WORD_BITS of them,
// all the identity between rows) and a bit per column (set by the product
// that finds its slot still at the identity: every slot a product reached
// has its bit,
// whatever the values), then a scratch word per warp. The row is written by
// contiguous runs of words per thread, offsets from a block scan of their
// bit counts, each slot reset as it is read.
SPGEMM_FIXED_KERNEL void SPGEMM_LAUNCH_BOUNDS(SPGEMM_DENSE_THREADS, SPGEMM_DENSE_NUMERIC_BLOCKS)
    spgemm_numeric_dense_shared(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                const u32* bcol, const value_t* bval, const u32* bins, u32 nrows, const u64* crpt,
                                u32* ccol, value_t* cval, u32 g, u32 words) {
    extern __shared__ u64 s_dense[];
    value_t* dense = (value_t*)s_dense;
    u32* bits = (u32*)(dense + words * SPGEMM_WORD_BITS);
    u32* scratch = bits + words;
    const WordRun run = clear_block(dense, words * SPGEMM_WORD_BITS, bits, words);
    for (u32 r = blockIdx.x; r < nrows; r += gridDim.x) {
        const u32 row = bins[r];
        for_products(arpt, acol, aval, brpt, bcol, bval, row, threadIdx.x, blockDim.x, g, [&](u32 col, value_t v) {
            if (is_identity(semiring_atomic(&dense[col], v)))
                atomicOr(&bits[col / SPGEMM_WORD_BITS], 1u << (col % SPGEMM_WORD_BITS));
        });
        __syncthreads();
        u32 total;
        u64 out = crpt[row] + block_exclusive_scan(run.count(bits), scratch, &total);
        for (u32 w = run.w0; w < run.w1; ++w) {
            u32 m = bits[w];
            bits[w] = 0;
            while (m) {
                const u32 col = w * SPGEMM_WORD_BITS + (__ffs(m) - 1);
                m &= m - 1;
                ccol[out] = col;
                cval[out] = dense[col];
                dense[col] = SPGEMM_IDENTITY;
                ++out;
            }
        }
        __syncthreads();
    }
}

// Numeric step for rows of a C too wide for a dense row of values in
// shared memory but with few enough columns for a bitmap of them (C of
// R-MAT 17: 131,072 columns, 16 KB of bits against 1 MB of doubles): the
// dense accumulator's bitmap (KokkosKernels §3.3) with the values kept
// compact, a slot per entry of the row, as the bit-packed columns of
// KokkosKernels §3.2 suggest. Three steps per row: the products set their
// columns' bits; a block scan of the words' bit counts gives each word the
// rank of its first column in the row (`base`); the products then add
// their values at base[word] + the bits below theirs in the word, which is
// the entry's position in C's row. So the row comes out sorted by column
// with no hash probing and no sort, and its values are written
// contiguously. Shared memory: `capacity` values (at least the bin's
// largest nnz(i)), then `words` bits and `words` bases, then a scan word
// per warp. Values start at the identity (see is_identity) and are reset as they
// are written; bits as they are read. Any block width (a multiple of the
// warp's, at most a warp of warps).
__device__ __forceinline__ void numeric_ranked(const u64* arpt, const u32* acol, const value_t* aval,
                                               const u64* brpt, const u32* bcol, const value_t* bval,
                                               const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                                               value_t* cval, u32 g, u32 words, u32 capacity, u32 limit) {
    extern __shared__ u64 s_ranked[];
    // No capacity: the values accumulate in C's own array (atomics in
    // global memory), for rows whose values a block cannot hold.
    const bool in_c = capacity == 0;
    value_t* vals = (value_t*)s_ranked;
    u32* bits = (u32*)(vals + capacity);
    u32* base = bits + words;
    u32* scratch = base + words;
    const WordRun run = clear_block(vals, capacity, bits, words);
    for (u32 r = blockIdx.x; r < nrows; r += gridDim.x) {
        const u32 row = bins[r];
        // Rows longer than `limit` are another kernel's (the whole block
        // skips them alike).
        if (crpt[row + 1] - crpt[row] > limit) continue;
        for_products(arpt, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, row, threadIdx.x, blockDim.x, g,
                     [&](u32 col, value_t) {
                         atomicOr(&bits[col / SPGEMM_WORD_BITS], 1u << (col % SPGEMM_WORD_BITS));
                     });
        __syncthreads();
        u32 total;
        u32 at = block_exclusive_scan(run.count(bits), scratch, &total);
        for (u32 w = run.w0; w < run.w1; ++w) {
            base[w] = at;
            at += __popc(bits[w]);
        }
        const u64 start = crpt[row];
        if (in_c)
            for (u32 t = threadIdx.x; t < total; t += blockDim.x) cval[start + t] = SPGEMM_IDENTITY;
        __syncthreads();
        for_products(arpt, acol, aval, brpt, bcol, bval, row, threadIdx.x, blockDim.x, g, [&](u32 col, value_t v) {
            const u32 w = col / SPGEMM_WORD_BITS, below = (1u << (col % SPGEMM_WORD_BITS)) - 1;
            const u32 pos = base[w] + __popc(bits[w] & below);
            if (in_c)
                semiring_atomic(&cval[start + pos], v);
            else
                semiring_atomic(&vals[pos], v);
        });
        __syncthreads();
        for (u32 w = run.w0; w < run.w1; ++w) {
            u32 m = bits[w];
            bits[w] = 0;
            u64 out = start + base[w];
            while (m) {
                ccol[out++] = w * SPGEMM_WORD_BITS + (__ffs(m) - 1);
                m &= m - 1;
            }
        }
        if (!in_c)
            for (u32 t = threadIdx.x; t < total; t += blockDim.x) {
                cval[start + t] = vals[t];
                vals[t] = SPGEMM_IDENTITY;
            }
        __syncthreads();
    }
}

// The shared bins' rows: blocks of SPGEMM_DENSE_THREADS, several resident.
SPGEMM_FIXED_KERNEL void SPGEMM_LAUNCH_BOUNDS(SPGEMM_DENSE_THREADS, SPGEMM_DENSE_NUMERIC_BLOCKS)
    spgemm_numeric_ranked(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                          const u32* bcol, const value_t* bval, const u32* bins, u32 nrows, const u64* crpt,
                          u32* ccol, value_t* cval, u32 g, u32 words, u32 capacity, u32 limit) {
    numeric_ranked(arpt, acol, aval, brpt, bcol, bval, bins, nrows, crpt, ccol, cval, g, words, capacity, limit);
}

// The rows past the last shared table, whose values take most of a
// multiprocessor's shared memory: one block resident, so as many threads
// as a block may have (SPGEMM_RANKED_LONG_THREADS) to hide latency.
// Measured on an H100 against blocks of SPGEMM_DENSE_THREADS, alternating
// twice (ms): R-MAT 16 11.1 -> 10.0, R-MAT 17 (Graph500) 46.0 -> 43.5,
// R-MAT 17 (a = 0.45) within its spread.
SPGEMM_FIXED_KERNEL void SPGEMM_LAUNCH_BOUNDS(SPGEMM_RANKED_LONG_THREADS, 1)
    spgemm_numeric_ranked_long(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                               const u32* bcol, const value_t* bval, const u32* bins, u32 nrows,
                               const u64* crpt, u32* ccol, value_t* cval, u32 g, u32 words, u32 capacity,
                               u32 limit) {
    numeric_ranked(arpt, acol, aval, brpt, bcol, bval, bins, nrows, crpt, ccol, cval, g, words, capacity, limit);
}
