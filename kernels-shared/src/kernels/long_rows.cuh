// Kernels for the rows past the last shared-memory table (appended to
// spgemm.cuh, whose helpers they use): global-memory hash tables (in place,
// DCU kernel 9; sorted device-wide, DCU kernel 8) and dense accumulators
// with rows split into slices over several blocks.

// Symbolic step, global-memory table for the rows the last shared bin gave
// up on: one block per row (grid-stride), a power-of-two table of `tsize`
// keys per block in `table`.
SPGEMM_FIXED_KERNEL void spgemm_symbolic_global(const u64* arpt, const u32* acol, const u64* brpt,
                                                  const u32* bcol, const u32* bins, u32 nrows, u64* crpt, u32 g,
                                                  u32* table_all, u32 tsize) {
    __shared__ u32 s_count;
    u32* table = table_all + (u64)blockIdx.x * tsize;
    for (u32 r = blockIdx.x; r < nrows; r += gridDim.x) {
        for (u32 t = threadIdx.x; t < tsize; t += blockDim.x) table[t] = SPGEMM_EMPTY;
        if (threadIdx.x == 0) s_count = 0;
        __syncthreads();
        const u32 row = bins[r];
        u32 n = 0;
        for_products(arpt, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, row, threadIdx.x, blockDim.x, g,
                     [&](u32 col, value_t) { n += insert_key(table, tsize, true, col); });
        atomicAdd(&s_count, n);
        __syncthreads();
        if (threadIdx.x == 0) crpt[row] = s_count;
        __syncthreads();
    }
}

// Numeric step, global-memory tables for the longest rows: one block per
// row (grid-stride); the row's table is the next power of two of 2·nnz(i)
// slots of `table_keys`/`table_vals`, sorted in place by bitonic sort and
// its first nnz slots copied out (DCU §5.4.2, the in-place variant).
SPGEMM_FIXED_KERNEL void spgemm_numeric_global(const u64* arpt, const u32* acol, const value_t* aval,
                                                 const u64* brpt, const u32* bcol, const value_t* bval,
                                                 const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                                                 value_t* cval, u32 g, u32* table_keys, value_t* table_vals,
                                                 u32 max_tsize) {
    u32* keys = table_keys + (u64)blockIdx.x * max_tsize;
    value_t* vals = table_vals + (u64)blockIdx.x * max_tsize;
    for (u32 r = blockIdx.x; r < nrows; r += gridDim.x) {
        const u32 row = bins[r];
        const u64 start = crpt[row];
        const u32 nnz = (u32)(crpt[row + 1] - start);
        u32 tsize = 1;
        while (tsize < 2 * nnz) tsize <<= 1;
        for (u32 t = threadIdx.x; t < tsize; t += blockDim.x) {
            keys[t] = SPGEMM_EMPTY;
            vals[t] = SPGEMM_IDENTITY;
        }
        __syncthreads();
        for_products(arpt, acol, aval, brpt, bcol, bval, row, threadIdx.x, blockDim.x, g,
                     [&](u32 col, value_t v) { insert_pair(keys, vals, tsize, true, col, v, false); });
        __syncthreads();
        bitonic_sort(keys, vals, tsize, threadIdx.x, blockDim.x, [] { __syncthreads(); });
        for (u32 t = threadIdx.x; t < nnz; t += blockDim.x) {
            ccol[start + t] = keys[t];
            cval[start + t] = vals[t];
        }
        __syncthreads();
    }
}

// T itself, so that only the scratch's type sets a template's T.
template <typename T>
struct same_type {
    typedef T type;
};

// Block-wide exclusive scan of one value per thread: warps scan with
// shuffles, then the first warp scans the warps' totals (scratch: a word
// per warp; blockDim.x a multiple of the warp width, at most a warp of
// warps). The block's total goes to *total.
template <typename T>
__device__ __forceinline__ T block_exclusive_scan(typename same_type<T>::type v, T* scratch, T* total) {
    const u32 wl = threadIdx.x % SPGEMM_WARP_SIZE, w = threadIdx.x / SPGEMM_WARP_SIZE;
    const u32 nw = blockDim.x / SPGEMM_WARP_SIZE;
    const T x = segment_inclusive_scan<SPGEMM_WARP_SIZE, T>(v, wl);
    if (wl == SPGEMM_WARP_SIZE - 1) scratch[w] = x;
    __syncthreads();
    if (w == 0) {
        const T s = segment_inclusive_scan<SPGEMM_WARP_SIZE, T>(wl < nw ? scratch[wl] : T(0), wl);
        if (wl < nw) scratch[wl] = s;
    }
    __syncthreads();
    const T before = w ? scratch[w - 1] : T(0);
    *total = scratch[nw - 1];
    __syncthreads();
    return before + x - v;
}

// Entries of A a thread of spgemm_slice_bounds reads at once: their
// gathers of B's row offsets are in flight together.
#define SPGEMM_BOUNDS_PER_THREAD 4

// Where the `slices` slices of each listed row of A start (the power-law
// issue's part 4: long rows split over blocks by products, not by entries;
// the first entries of an R-MAT row select B's hub rows, so equal stretches
// of entries held very unequal work): bounds[r · (slices + 1) + s], absolute
// positions in A's entries, the last one the row's end. Slice s takes the
// entries whose first product falls in [T(s), T(s + 1)), T(s) = nprod(i) ·
// s / slices: its bound is one past the entry that holds product T(s) − 1
// (the only one with excl < T(s) <= excl + len, where excl is the products
// of the entries before it), or the row's start where T(s) is 0. One block
// a row (grid-stride), launched once for all the rows of every batch so
// that the rows' memory latencies overlap: a sum of the row's products,
// then a block scan of them SPGEMM_BOUNDS_PER_THREAD consecutive entries a
// thread. At most 1,024 threads a block.
SPGEMM_FIXED_KERNEL void spgemm_slice_bounds(const u64* arpt, const u32* acol, const u64* brpt, const u32* bins,
                                               u32 nrows, u32 slices, u64* bounds) {
    constexpr u32 PER = SPGEMM_BOUNDS_PER_THREAD;
    __shared__ u64 s_scan[1024 / SPGEMM_WARP_SIZE];
    __shared__ u64 s_total;
    for (u32 r = blockIdx.x; r < nrows; r += gridDim.x) {
        const u32 row = bins[r];
        const u64 a0 = arpt[row], a1 = arpt[row + 1];
        u64* out = bounds + (u64)r * (slices + 1);
        if (threadIdx.x == 0) s_total = 0;
        __syncthreads();
        u64 t = 0;
        for (u64 q = a0 + threadIdx.x; q < a1; q += PER * blockDim.x) {
            u32 c[PER];
#pragma unroll
            for (u32 j = 0; j < PER; ++j) c[j] = q + j * blockDim.x < a1 ? acol[q + j * blockDim.x] : SPGEMM_EMPTY;
#pragma unroll
            for (u32 j = 0; j < PER; ++j) t += c[j] != SPGEMM_EMPTY ? brpt[c[j] + 1] - brpt[c[j]] : 0;
        }
        t = warp_sum(t);
        if (threadIdx.x % SPGEMM_WARP_SIZE == 0 && t) atomicAdd(&s_total, t);
        __syncthreads();
        const u64 total = s_total;
        for (u32 s = threadIdx.x; s <= slices; s += blockDim.x)
            if (s == slices || total * s < slices) out[s] = s == slices ? a1 : a0;
        u64 carry = 0;
        for (u64 base = a0; base < a1; base += PER * blockDim.x) {
            const u64 first = base + (u64)threadIdx.x * PER;
            u32 c[PER];
            u64 len[PER], mine = 0;
#pragma unroll
            for (u32 j = 0; j < PER; ++j) c[j] = first + j < a1 ? acol[first + j] : SPGEMM_EMPTY;
#pragma unroll
            for (u32 j = 0; j < PER; ++j) {
                len[j] = c[j] != SPGEMM_EMPTY ? brpt[c[j] + 1] - brpt[c[j]] : 0;
                mine += len[j];
            }
            u64 chunk;
            u64 excl = carry + block_exclusive_scan<u64>(mine, s_scan, &chunk);
#pragma unroll
            for (u32 j = 0; j < PER; ++j) {
                // The first s with T(s) > excl, then every s with T(s) <= excl + len.
                for (u64 s = ((excl + 1) * slices + total - 1) / (total ? total : 1); len[j] && s < slices; ++s) {
                    if (total * s / slices > excl + len[j]) break;
                    out[s] = first + j + 1;
                }
                excl += len[j];
            }
            carry += chunk;
        }
        __syncthreads();
    }
}

// Sets bit `col` of a bitmap in global memory that other blocks set too.
// With `test` (a row whose products often repeat a column), the atomic only
// when a read does not already show the bit: a stale read costs a redundant
// atomic, never a lost bit (bits are only set while the kernel runs). Where
// columns rarely repeat, the read only delays the atomic. Measured on an
// H100 with the test for every row: R-MAT 16-18 5-6% faster, short rows +
// 24 rows of 40,000 (compression 1.06) 19% slower; hence the condition
// (as kept: R-MAT 16-18 3-7% faster, the others unchanged).
__device__ __forceinline__ void set_bit(u32* bits, u32 col, bool test) {
    const u32 word = col / SPGEMM_WORD_BITS, mask = 1u << (col % SPGEMM_WORD_BITS);
    if (!test || !(bits[word] & mask)) atomicOr(&bits[word], mask);
}

// Symbolic step for the rows past the last shared table when C is narrow
// enough: one bit per column of C in global memory per row (all zero on
// entry and on exit), each row split into `slices` slices of its entries of
// A (equal stretches, or about equal products: `bounds`, from
// spgemm_slice_bounds, when not null), one block a slice (block = row · slices + slice). Slices set bits
// (`set_bit`); the last slice of a row to finish
// (ticket in tickets[r]) counts the row's bits into crpt[row], clearing the
// bitmap and the ticket for the next batch of rows, and sets the row's bit
// in `repeat_rows` when it has at least two products per entry of C (for
// `spgemm_numeric_dense`).
SPGEMM_FIXED_KERNEL void spgemm_symbolic_dense(const u64* arpt, const u32* acol, const u64* brpt, const u32* bcol,
                                                 const u32* bins, u32 nrows, u64* crpt, u32 g, u32* bits_all,
                                                 u32 words, u32 slices, u32* tickets, u32* repeat_rows,
                                                 const u64* bounds) {
    __shared__ u32 s_count;
    __shared__ bool s_last;
    const u32 r = blockIdx.x / slices, sl = blockIdx.x % slices;
    if (r >= nrows) return;
    u32* bits = bits_all + (u64)r * words;
    const u32 row = bins[r];
    // Whether columns repeat: at least as many products as C has columns
    // (crpt[row] holds nprod until the last slice, after every slice's
    // products, writes the count there).
    const bool test = crpt[row] >= (u64)words * SPGEMM_WORD_BITS;
    for_slice_products(arpt, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, bounds, row, r, sl, slices, g,
                       [&](u32 col, value_t) { set_bit(bits, col, test); });
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        s_count = 0;
        s_last = atomicAdd(&tickets[r], 1u) == slices - 1;
    }
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    u64 n = 0;
    for (u32 t = threadIdx.x; t < words; t += blockDim.x) {
        n += __popc(((volatile u32*)bits)[t]);
        bits[t] = 0;
    }
    n = warp_sum(n);
    if (threadIdx.x % SPGEMM_WARP_SIZE == 0 && n) atomicAdd(&s_count, (u32)n);
    __syncthreads();
    if (threadIdx.x == 0) {
        // crpt[row] still holds nprod. Rows this long never use the
        // distinct bit (short rows only), so only the repeat bit is set.
        if (crpt[row] >= 2ull * s_count)
            atomicOr(&repeat_rows[row / SPGEMM_WORD_BITS], 1u << (row % SPGEMM_WORD_BITS));
        crpt[row] = s_count;
        tickets[r] = 0;
    }
}

// Numeric step for the longest rows when C is narrow enough, in two
// kernels over a batch of rows: a dense value per column and a bit per
// column in global memory per row (zero on entry; the values zero on exit
// too). The first
// splits each row into `slices` slices of its entries of A (equal
// stretches, or about equal products: `bounds`, from spgemm_slice_bounds,
// when not null), one block a slice (block = row · slices + slice), accumulating with atomics; the
// second, after it on the stream, writes the row sorted by compacting set
// bits in column order, clearing as it goes: no hash probing and no sort.
// Both take the same parameters (the second reads neither `bounds` nor B).
SPGEMM_FIXED_KERNEL void spgemm_numeric_dense(const u64* arpt, const u32* acol, const value_t* aval,
                                                const u64* brpt, const u32* bcol, const value_t* bval,
                                                const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                                                value_t* cval, u32 g, value_t* dense_all, u32* bits_all,
                                                u32 words, u32 slices, const u32* repeat_rows, u32 skip_upto,
                                                const u64* bounds) {
    const u32 r = blockIdx.x / slices, sl = blockIdx.x % slices;
    if (r >= nrows) return;
    value_t* dense = dense_all + (u64)r * words * SPGEMM_WORD_BITS;
    u32* bits = bits_all + (u64)r * words;
    const u32 row = bins[r];
    // Rows of at most `skip_upto` entries are another kernel's.
    if (crpt[row + 1] - crpt[row] <= skip_upto) return;
    // Whether the row's columns repeat (the symbolic kernels' repeat bit).
    const bool test = repeat_rows[row / SPGEMM_WORD_BITS] >> (row % SPGEMM_WORD_BITS) & 1u;
    for_slice_products(arpt, acol, aval, brpt, bcol, bval, bounds, row, r, sl, slices, g, [&](u32 col, value_t v) {
        set_bit(bits, col, test);
        semiring_atomic(&dense[col], v);
    });
}

// Entries a thread gathers from a dense row at once when compacting: their
// loads are in flight together.
#define SPGEMM_COMPACT_BATCH 4

// The writing kernel: one block per slice of `slices` equal ranges of the
// row's bitmap words (block = row · slices + slice). A block counts the bits
// before its range for its first position, then block-scans its words'
// counts a chunk at a time. It clears the values it reads; the bitmap,
// which other slices of the row read, is cleared by the host before the
// next batch.
SPGEMM_FIXED_KERNEL void spgemm_numeric_dense_compact(const u64* arpt, const u32* acol, const value_t* aval,
                                                        const u64* brpt, const u32* bcol, const value_t* bval,
                                                        const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                                                        value_t* cval, u32 g, value_t* dense_all, u32* bits_all,
                                                        u32 words, u32 slices, const u32* repeat_rows,
                                                        u32 skip_upto, const u64* bounds) {
    extern __shared__ u32 s_scan_dense[];
    __shared__ u64 s_before;
    const u32 r = blockIdx.x / slices, sl = blockIdx.x % slices;
    if (r >= nrows || crpt[bins[r] + 1] - crpt[bins[r]] <= skip_upto) return;
    value_t* dense = dense_all + (u64)r * words * SPGEMM_WORD_BITS;
    u32* bits = bits_all + (u64)r * words;
    const u32 w0 = (u32)((u64)words * sl / slices), w1 = (u32)((u64)words * (sl + 1) / slices);
    if (threadIdx.x == 0) s_before = 0;
    __syncthreads();
    u64 before = 0;
    for (u32 t = threadIdx.x; t < w0; t += blockDim.x) before += __popc(bits[t]);
    before = warp_sum(before);
    if (threadIdx.x % SPGEMM_WARP_SIZE == 0 && before) atomicAdd(&s_before, before);
    __syncthreads();
    u64 out = crpt[bins[r]] + s_before;
    for (u32 base = w0; base < w1; base += blockDim.x) {
        const u32 wi = base + threadIdx.x;
        u32 w = wi < w1 ? bits[wi] : 0;
        u32 total;
        u64 at = out + block_exclusive_scan<u32>(__popc(w), s_scan_dense, &total);
        while (w) {
            u32 col[SPGEMM_COMPACT_BATCH];
            value_t v[SPGEMM_COMPACT_BATCH];
            u32 k = 0;
#pragma unroll
            for (u32 j = 0; j < SPGEMM_COMPACT_BATCH; ++j) {
                col[j] = wi * SPGEMM_WORD_BITS + (__ffs(w) - 1);
                if (w) ++k;
                w &= w - 1;
            }
#pragma unroll
            for (u32 j = 0; j < SPGEMM_COMPACT_BATCH; ++j) v[j] = j < k ? dense[col[j]] : SPGEMM_IDENTITY;
#pragma unroll
            for (u32 j = 0; j < SPGEMM_COMPACT_BATCH; ++j)
                if (j < k) {
                    ccol[at + j] = col[j];
                    cval[at + j] = v[j];
                    dense[col[j]] = SPGEMM_IDENTITY;
                }
            at += k;
        }
        out += total;
    }
}

// The DCU paper's first global variant for the longest rows (DCU §5.4,
// kernel 8), for a few rows: a hash table of `tsize` (1.5·nnz) slots per
// row in global memory, filled by slices of each row over several blocks,
// then sorted device-wide by key and copied into C (the paper sorts with a
// library sort and copies with memcpy; here a bitonic sort whose last pass
// writes C). Keys start empty (spgemm_fill_empty), values zero.
SPGEMM_FIXED_KERNEL void spgemm_fill_empty(u32* keys, u64 n) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        keys[i] = SPGEMM_EMPTY;
}

// Sets `n` values to (+)'s identity: the global accumulators of a semiring
// whose identity is not zero (zero for plus is written by a memset).
SPGEMM_FIXED_KERNEL void spgemm_fill_identity(value_t* vals, u64 n) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        vals[i] = SPGEMM_IDENTITY;
}

// Hashing: block = row · slices + slice (slices as spgemm_numeric_dense's);
// modulo hashing (tsize is not a
// power of two), atomics in global memory.
SPGEMM_FIXED_KERNEL void spgemm_numeric_hash_slices(const u64* arpt, const u32* acol, const value_t* aval,
                                                      const u64* brpt, const u32* bcol, const value_t* bval,
                                                      const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                                                      value_t* cval, u32 g, u32* keys_all, value_t* vals_all,
                                                      u32 tsize, u32 slices, const u64* bounds) {
    const u32 r = blockIdx.x / slices, sl = blockIdx.x % slices;
    if (r >= nrows) return;
    u32* keys = keys_all + (u64)r * tsize;
    value_t* vals = vals_all + (u64)r * tsize;
    for_slice_products(arpt, acol, aval, brpt, bcol, bval, bounds, bins[r], r, sl, slices, g,
                       [&](u32 col, value_t v) { insert_pair(keys, vals, tsize, false, col, v, false); });
}

// SPGEMM_SORT_TILE, the slots of a tile the sort handles in shared memory,
// comes from the host (core/src/gpu/constants.rs).

// One step (k, j) of the bitonic sort of every row's table, j ≥ the tile:
// thread-pairs over nrows · p2/2; slots past tsize are +infinity and never
// move (see bitonic_sort).
SPGEMM_FIXED_KERNEL void spgemm_sort_step(u32* keys_all, value_t* vals_all, u32 tsize, u32 p2, u32 k, u32 j,
                                            u32 nrows) {
    const u64 half = p2 / 2, total = (u64)nrows * half;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x) {
        const u64 r = i / half;
        u32 lo, hi;
        bitonic_pair((u32)(i % half), k, j, &lo, &hi);
        if (hi < tsize) compare_exchange(keys_all + r * tsize, vals_all + r * tsize, lo, hi);
    }
}

// The steps of the sort inside tiles of SPGEMM_SORT_TILE slots, one block a
// tile (block = row · tiles + tile): `stage` 0 sorts each tile; a stage k
// wider than a tile runs its steps j < tile. With `write_out` (the sort is
// then complete) the row's first nnz(i) slots go to C instead of back.
SPGEMM_FIXED_KERNEL void spgemm_sort_tiles(u32* keys_all, value_t* vals_all, u32 tsize, u32 tiles, u32 stage,
                                             const u32* bins, const u64* crpt, u32* ccol, value_t* cval,
                                             u32 write_out) {
    __shared__ u32 s_keys[SPGEMM_SORT_TILE];
    __shared__ value_t s_vals[SPGEMM_SORT_TILE];
    const u32 r = blockIdx.x / tiles, base = blockIdx.x % tiles * SPGEMM_SORT_TILE;
    u32* keys = keys_all + (u64)r * tsize;
    value_t* vals = vals_all + (u64)r * tsize;
    const u32 size = tsize - base < SPGEMM_SORT_TILE ? tsize - base : SPGEMM_SORT_TILE;
    for (u32 t = threadIdx.x; t < SPGEMM_SORT_TILE; t += blockDim.x) {
        s_keys[t] = t < size ? keys[base + t] : SPGEMM_EMPTY;
        s_vals[t] = t < size ? vals[base + t] : value_t(0);
    }
    __syncthreads();
    if (stage == 0) {
        bitonic_sort(s_keys, s_vals, size, threadIdx.x, blockDim.x, [] { __syncthreads(); });
    } else {
        for (u32 j = SPGEMM_SORT_TILE / 2; j > 0; j >>= 1) {
            for (u32 t = threadIdx.x; t < SPGEMM_SORT_TILE / 2; t += blockDim.x) {
                u32 lo, hi;
                bitonic_pair(t, stage, j, &lo, &hi);
                compare_exchange(s_keys, s_vals, lo, hi);
            }
            __syncthreads();
        }
    }
    if (write_out) {
        const u32 row = bins[r];
        const u64 start = crpt[row], nnz = crpt[row + 1] - start;
        for (u32 t = threadIdx.x; t < size && base + t < nnz; t += blockDim.x) {
            ccol[start + base + t] = s_keys[t];
            cval[start + base + t] = s_vals[t];
        }
    } else {
        for (u32 t = threadIdx.x; t < size; t += blockDim.x) {
            keys[base + t] = s_keys[t];
            vals[base + t] = s_vals[t];
        }
    }
}
