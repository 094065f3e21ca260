// The kernels of the shared-memory bins (appended to spgemm.cuh and
// register_sort.cuh, whose helpers they use): the symbolic phase's hash
// tables, the numeric phase's hash tables and their sorts, the rows whose
// products all differ, and the rows of A with one entry.

// Marks row `row` once its count `c` is known (nprod still in hand): in
// `distinct_rows` when every product has its own column (for the numeric
// phase's distinct bin and stores), in `repeat_rows` when it has at least
// two products per entry of C (for `spgemm_numeric_dense`). Both zero on
// entry.
__device__ __forceinline__ void mark_row(u32 row, u64 nprod, u64 c, u32* distinct_rows, u32* repeat_rows) {
    const u32 word = row / SPGEMM_WORD_BITS, bit = 1u << (row % SPGEMM_WORD_BITS);
    if (c == nprod)
        atomicOr(&distinct_rows[word], bit);
    else if (nprod >= 2 * c)
        atomicOr(&repeat_rows[word], bit);
}

// Symbolic step, shared-memory table (OpSparse §5.6.1): count nnz(i) with
// a hash set of column indices, and mark rows whose count is nprod(i).
// Several rows per block when ROW_THREADS < blockDim.x. The LAST bin keeps
// a live count per row beside its tables, stops counting rows whose count
// passes `threshold` and records them for the global-memory kernel; the
// other bins sum their counts in the tables' first words once the tables
// are done with, so a table may fill the whole block's shared memory (DCU
// §5.4: 12,288 keys in 48 KB). PACKED (KokkosKernels §3.2): `brpt` and
// `bcol` are B packed into words of 32 columns with their masks (u64 each,
// `packed_columns.cuh`); the table holds words, a mask per slot after the
// tables collects their columns, and a row's count is its masks' bits (the
// LAST bin's live count then counts words, which is what fills a table).
// REG (in the bins the table allows): 1 (`--sort register`), the register
// sort (`register_sort.cuh`) counts each row instead of a hash table; 2
// (`--sort register-hash`), the row's products are shared out evenly to
// the lanes' registers and inserted from there (reg-hash).
// With B's bandwidths `band` (null: none), in the bins of neither kind
// (not LAST, PACKED or REG), a row whose columns lie within the table's
// slots (row_window) stores each product's column at its slot with no
// atomic and no probe, and is counted from the slots once all are stored.
template <u32 TSIZE, u32 ROW_THREADS, bool LAST, bool PACKED, int REG>
__device__ void symbolic_shared(const u64* arpt, const u32* acol, const u64* brpt, const u32* bcol,
                                const u32* bins, u32 nrows, u64* crpt, u32 g, u32 threshold, u32* overflow,
                                u32* noverflow, u32* distinct_rows, u32* repeat_rows, const u64* band) {
    extern __shared__ u32 smem[];
    constexpr bool POW2 = (TSIZE & (TSIZE - 1)) == 0;
    const u32 rows_per_block = blockDim.x / ROW_THREADS;
    const u32 local = threadIdx.x / ROW_THREADS, lane = threadIdx.x % ROW_THREADS;
    const u32 slots = rows_per_block * TSIZE;
    u32* table = smem + local * TSIZE;
    u32* masks = smem + slots + local * TSIZE;
    u32* count = LAST ? smem + (PACKED ? 2 : 1) * slots : smem;
    if (REG != 1)
        for (u32 t = threadIdx.x; t < slots; t += blockDim.x) smem[t] = SPGEMM_EMPTY;
    if (PACKED)
        for (u32 t = threadIdx.x; t < slots; t += blockDim.x) smem[slots + t] = 0;
    if (LAST && threadIdx.x < (PACKED ? 2 : 1) * rows_per_block) count[threadIdx.x] = 0;
    __syncthreads();
    const u32 idx = blockIdx.x * rows_per_block + local;
    const u32 row = idx < nrows ? bins[idx] : 0;
    const u64* packed = (const u64*)bcol;
    u32 n = 0, lo = 0;
    const bool window =
        !LAST && !PACKED && REG == 0 && idx < nrows && row_window(band, arpt, acol, row, TSIZE, &lo);
    if (REG == 1) {
        // A width of 1 where REG is off, so that nothing wider is built.
        n = symbolic_registers<REG == 1 ? ROW_THREADS : 1>(arpt, acol, brpt, bcol, idx < nrows, row, lane, table);
    } else if (REG == 2) {
        n = symbolic_register_hash<TSIZE, REG == 2 ? ROW_THREADS : 1>(arpt, acol, brpt, bcol, idx < nrows, row, lane,
                                                                       table);
    } else if (idx < nrows) {
        if (LAST) {
            // Count as we go and stop once past the threshold, so a row
            // whose distinct columns would overfill the table never does.
            g = widen_group(g, arpt[row + 1] - arpt[row], ROW_THREADS);
            const u32 group = lane / g, glane = lane % g, ngroups = ROW_THREADS / g;
            for (u64 p = arpt[row] + group; p < arpt[row + 1] && *(volatile u32*)&count[local] <= threshold;
                 p += ngroups) {
                const u32 c = acol[p];
                for (u64 q = brpt[c] + glane; q < brpt[c + 1]; q += g) {
                    const u32 added = PACKED ? insert_packed(table, masks, TSIZE, POW2, packed[q])
                                             : insert_key(table, TSIZE, POW2, bcol[q]);
                    if (added && atomicAdd(&count[local], 1u) >= threshold) break;
                }
            }
        } else if (PACKED) {
            for_products(arpt, acol, (const value_t*)0, brpt, packed, (const value_t*)0, row, lane, ROW_THREADS, g,
                         [&](u64 wm, value_t) { insert_packed(table, masks, TSIZE, POW2, wm); });
        } else if (window) {
            for_products(arpt, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, row, lane, ROW_THREADS, g,
                         [&](u32 col, value_t) { table[col - lo] = col; });
        } else {
            for_products(arpt, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, row, lane, ROW_THREADS, g,
                         [&](u32 col, value_t) { n += insert_key(table, TSIZE, POW2, col); });
        }
    }
    if (PACKED) {
        __syncthreads();
        if (idx < nrows && (!LAST || count[local] <= threshold)) n = mask_columns(masks, TSIZE, lane, ROW_THREADS);
    }
    if (!LAST) {
        __syncthreads();
        // A window's count: its occupied slots, all read before the
        // counters (the first table's first words) are cleared.
        if (band) {
            if (window)
                for (u32 t = lane; t < TSIZE; t += ROW_THREADS) n += table[t] != SPGEMM_EMPTY;
            __syncthreads();
        }
        if (threadIdx.x < rows_per_block) count[threadIdx.x] = 0;
        __syncthreads();
        // Sum the row's lanes within each warp first: one shared atomic per
        // row and warp, where one per lane on a single address took 14.5% of
        // the 7-point stencil's symbolic shared-memory wavefronts (Nsight
        // Compute, H100; the time did not change, and dropping the barriers
        // for rows within a warp made it 13% slower).
        constexpr u32 SEG = ROW_THREADS < SPGEMM_WARP_SIZE ? ROW_THREADS : SPGEMM_WARP_SIZE;
        for (u32 d = SEG / 2; d > 0; d /= 2) n += SPGEMM_SHFL_DOWN_W(n, d, SEG);
        if (threadIdx.x % SEG == 0 && n) atomicAdd(&count[local], n);
    } else if (PACKED && n) {
        atomicAdd(&count[rows_per_block + local], n);
    }
    __syncthreads();
    if (idx < nrows && lane == 0) {
        const u32 c = count[local];
        if (LAST && c > threshold) {
            overflow[atomicAdd(noverflow, 1u)] = row;
        } else {
            const u32 nnz = LAST && PACKED ? count[rows_per_block + local] : c;
            // crpt[row] still holds nprod.
            mark_row(row, crpt[row], nnz, distinct_rows, repeat_rows);
            crpt[row] = nnz;
        }
    }
}

// Inserts (key, value): atomicCAS on the key, then (+) on the value
// (OpSparse Alg. 5: atomicAdd for plus). With `unique` (no other product of the row has this
// key) the slot the key claims is its own and the value is stored. With
// `lo` (not ~0: the row's window, row_window) the key's slot is key − lo,
// claimed at the first probe.
__device__ __forceinline__ void insert_pair(u32* keys, value_t* vals, u32 size, bool pow2, u32 key, value_t v,
                                            bool unique, u32 lo = ~0u) {
    u32 h = lo != ~0u ? key - lo : hash_slot(key, size, pow2);
    while (true) {
        const u32 old = atomicCAS(&keys[h], SPGEMM_EMPTY, key);
        if (old == SPGEMM_EMPTY || old == key) {
            if (unique)
                vals[h] = v;
            else
                semiring_atomic(&vals[h], v);
            return;
        }
        h = next_slot(h, size, pow2);
    }
}

// Moves the occupied slots of a table to its front, keeping no order. Each
// round every thread reads one slot; the threads of a warp segment (the
// lanes of one row) reserve their positions with a single shared atomic,
// found from a ballot (DCU Alg. 2 style warp aggregation). Positions of a
// round lie below the end of its slots, all read before the barrier. A
// row with `skip` (written already) only takes part in the barriers.
template <u32 ROW_THREADS>
__device__ __forceinline__ void condense(u32* keys, value_t* vals, u32 size, u32 lane, u32* counter,
                                         bool skip = false) {
    constexpr u32 SEG = ROW_THREADS < SPGEMM_WARP_SIZE ? ROW_THREADS : SPGEMM_WARP_SIZE;
    const u32 wl = threadIdx.x % SPGEMM_WARP_SIZE;
    lane_mask_t seg_mask = SPGEMM_FULL_MASK;
    if (SEG < SPGEMM_WARP_SIZE) seg_mask = ((((lane_mask_t)1) << (SEG % SPGEMM_WARP_SIZE)) - 1) << (wl / SEG * SEG);
    for (u32 base = 0; base < size; base += ROW_THREADS) {
        const u32 t = base + lane;
        const u32 key = t < size && !skip ? keys[t] : SPGEMM_EMPTY;
        const value_t v = key != SPGEMM_EMPTY ? vals[t] : value_t(0);
        __syncthreads();
        const u32 pos = reserve_place(key != SPGEMM_EMPTY, seg_mask, counter);
        if (key != SPGEMM_EMPTY) {
            keys[pos] = key;
            vals[pos] = v;
        }
        __syncthreads();
    }
}

// Writes a row held in its window's slots (row_window: a column's slot is
// its order in the row) by a warp to `ccol`/`cval` in column order, with
// no sort: a slot's place is the occupied slots before it, counted by the
// warp's ballots. Every lane of the warp takes part; a warp without
// `window` writes nothing.
__device__ __forceinline__ void write_window(const u32* keys, const value_t* vals, u32 size, bool window, u32* ccol,
                                             value_t* cval) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    u32 placed = 0;
    for (u32 base = 0; base < size; base += SPGEMM_WARP_SIZE) {
        const u32 t = base + lane;
        const u32 key = window && t < size ? keys[t] : SPGEMM_EMPTY;
        const lane_mask_t bal = SPGEMM_BALLOT(key != SPGEMM_EMPTY);
        if (key != SPGEMM_EMPTY) {
            const u32 at = placed + SPGEMM_POPC(bal & ((((lane_mask_t)1) << lane) - 1));
            ccol[at] = key;
            cval[at] = vals[t];
        }
        placed += SPGEMM_POPC(bal);
    }
}

// Writes the `nnz` distinct keys at the front of `keys` (16-byte aligned)
// with their values to `ccol`/`cval` in key order: an entry's position is
// the number of smaller keys (the rank sort of OpSparse §5.6.2). Each of
// `nthreads` threads ranks two entries per pass over the keys, read four at
// a time (one broadcast 16-byte load): the loads were most of the
// shared-memory traffic of rows of tens of entries.
__device__ __forceinline__ void rank_sort_out(const u32* keys, const value_t* vals, u32 nnz, u32 lane,
                                              u32 nthreads, u32* ccol, value_t* cval) {
    const uint4* keys4 = (const uint4*)keys;
    for (u32 t = lane; t < nnz; t += 2 * nthreads) {
        const u32 t2 = t + nthreads;
        const u32 k0 = keys[t], k1 = t2 < nnz ? keys[t2] : SPGEMM_EMPTY;
        u32 r0 = 0, r1 = 0, q = 0;
        for (; q + 4 <= nnz; q += 4) {
            const uint4 w = keys4[q / 4];
            r0 += (w.x < k0) + (w.y < k0) + (w.z < k0) + (w.w < k0);
            r1 += (w.x < k1) + (w.y < k1) + (w.z < k1) + (w.w < k1);
        }
        for (; q < nnz; ++q) {
            r0 += keys[q] < k0;
            r1 += keys[q] < k1;
        }
        ccol[r0] = k0;
        cval[r0] = vals[t];
        if (t2 < nnz) {
            ccol[r1] = k1;
            cval[r1] = vals[t2];
        }
    }
}

// Numeric step, shared-memory table (OpSparse §5.6.2): accumulate the row
// in a hash table of (column, value) pairs, then produce the sorted row.
// SORT 0: bitonic-sort the whole table, copy its first nnz slots (DCU §5.3);
// no counter, so the table may fill the block's shared memory.
// SORT 1: condense the occupied slots to the front (one shared atomic per
// warp segment: one per entry on a single counter took 11% of the 7-point
// stencil's numeric shared-memory wavefronts, Nsight Compute, H100; its
// time did not change), then each entry finds its rank by counting smaller
// keys (OpSparse §5.6.2).
// SORT 2: condense with one shared atomic per warp segment, then
// bitonic-sort only the condensed entries.
// SORT 3 (`--sort register`, in the bins the table allows): the register
// sort for blocks whose rows all fit (`numeric_registers`), SORT 1 for
// the others. SORT 4 (`--sort register-hash`): as SORT 1, but blocks whose
// rows all fit insert from the lanes' even shares of each row's products
// in registers (`expand_and_load`, reg-hash) instead of walking B.
// PRUNED (the kernels of a pruned product): each row is pruned in its
// table as `prune_row` says (threshold `below_bits`, the bits of a
// value_t, with `has_below`; then `keep`) before it is written, dropped
// entries written with column SPGEMM_EMPTY, and its bit set in
// `pruned_rows`; SORT 3 then takes the hash tables for every row.
// With B's bandwidths `band` (null: none), in the bins of a warp a row
// with SORT 1, 3 or 4 and no pruning, a row whose columns lie within the
// table's slots (row_window) and whose products are walked from B takes
// each column's slot at the first probe, with no hash, and is written in
// slot order (write_window), with no condensing and no rank sort. (Rows
// of fewer lanes, of 32 registers on sm_90 like the rest, spilled 8 bytes
// in f64 with it, and rows of more would need a block's scan.)
template <u32 TSIZE, u32 ROW_THREADS, int SORT, bool HUBS, bool PRUNED>
__device__ void numeric_shared(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                               const u32* bcol, const value_t* bval, const u32* bins, u32 nrows, const u64* crpt,
                               u32* ccol, value_t* cval, u32 g, const u32* distinct_rows, const u64* band,
                               u64 below_bits = 0, u32 has_below = 0, u32 keep = ~0u, u32* pruned_rows = nullptr) {
    extern __shared__ u64 smem_num[];
    constexpr bool POW2 = (TSIZE & (TSIZE - 1)) == 0;
    // Keys first, each row's padded to a multiple of four (16-byte aligned
    // rows for the rank sort's vector loads), then values, then counters.
    constexpr u32 KSTRIDE = (TSIZE + 3) & ~3u;
    const u32 rows_per_block = blockDim.x / ROW_THREADS;
    const u32 local = threadIdx.x / ROW_THREADS, lane = threadIdx.x % ROW_THREADS;
    u32* keys_all = (u32*)smem_num;
    value_t* vals_all = (value_t*)(keys_all + rows_per_block * KSTRIDE);
    u32* counter = (u32*)(vals_all + rows_per_block * TSIZE);
    u32* keys = keys_all + local * KSTRIDE;
    value_t* vals = vals_all + local * TSIZE;
    // SORT 3: blocks whose rows all fit take the register sort
    // (`register_sort.cuh`; a width of 1 elsewhere, so that nothing wider
    // is built), the others the hash tables and the rank sort.
    if (SORT == 3 && !PRUNED) {
        const u32 i = blockIdx.x * rows_per_block + local;
        const u32 r = i < nrows ? bins[i] : 0;
        if (numeric_registers<TSIZE, SORT == 3 ? ROW_THREADS : 1>(arpt, acol, aval, brpt, bcol, bval, i < nrows, r,
                                                                  lane, keys, vals, crpt, ccol, cval))
            return;
    }
    constexpr u32 R = SPGEMM_REG_PER_LANE;
    u32 share_key[R];
    value_t share_val[R];
    bool shared_out = false;
    if (SORT == 4) {
        constexpr u32 RT = SORT == 4 ? ROW_THREADS : 1;
        const u32 i = blockIdx.x * rows_per_block + local;
        const u32 r = i < nrows ? bins[i] : 0;
        const u64 a0 = i < nrows ? arpt[r] : 0, a1 = i < nrows ? arpt[r + 1] : 0;
        shared_out = rows_fit<TSIZE, RT>(a0, a1, acol, brpt, lane);
        if (shared_out)
            expand_and_load<RT, R, true>(a0, a1, acol, aval, brpt, bcol, bval, lane, keys, vals, share_key,
                                         share_val);
        // Every row's share is loaded before the tables are cleared.
        __syncthreads();
    }
    for (u32 t = threadIdx.x; t < rows_per_block * KSTRIDE; t += blockDim.x) keys_all[t] = SPGEMM_EMPTY;
    for (u32 t = threadIdx.x; t < rows_per_block * TSIZE; t += blockDim.x) vals_all[t] = SPGEMM_IDENTITY;
    if (SORT != 0 && threadIdx.x < rows_per_block) counter[threadIdx.x] = 0;
    __syncthreads();
    const u32 idx = blockIdx.x * rows_per_block + local;
    const bool active = idx < nrows;
    const u32 row = active ? bins[idx] : 0;
    // A row whose products all have different columns (the symbolic phase
    // found nprod == nnz and set its bit in `distinct`) needs no addition:
    // each product claims its own slot and stores its value, with no 64-bit
    // atomic (a compare-and-swap loop in shared memory on sm_90). Only in
    // the bins of short rows (tables of up to 128 slots, rows of up to 64
    // entries), where the compression ratio is often one (Erdős–Rényi:
    // numeric 20% faster on an H200); in the others the test in the insert
    // loop cost up to 5% (bcsstk33, stencil27) for rows that rarely qualify.
    constexpr bool STORE_DISTINCT = TSIZE <= 128;
    const bool distinct = STORE_DISTINCT && active &&
                          (distinct_rows[row / SPGEMM_WORD_BITS] >> (row % SPGEMM_WORD_BITS) & 1u);
    // The first column of the row's window (row_window); ~0: hashed.
    constexpr bool WINDOWS = !PRUNED && ROW_THREADS == SPGEMM_WARP_SIZE && (SORT == 1 || SORT == 3 || SORT == 4);
    u32 lo = ~0u;
    if (WINDOWS && active && !(SORT == 4 && shared_out) && !row_window(band, arpt, acol, row, TSIZE, &lo)) lo = ~0u;
    if (SORT == 4 && shared_out) {
#pragma unroll
        for (u32 r = 0; r < R; ++r)
            if (share_key[r] != SPGEMM_EMPTY) insert_pair(keys, vals, TSIZE, POW2, share_key[r], share_val[r], distinct);
    } else if (active) {
        for_products<HUBS>(arpt, acol, aval, brpt, bcol, bval, row, lane, ROW_THREADS, g,
                           [&](u32 col, value_t v) { insert_pair(keys, vals, TSIZE, POW2, col, v, distinct, lo); });
    }
    __syncthreads();
    const u64 start = active ? crpt[row] : 0;
    const u32 nnz = active ? (u32)(crpt[row + 1] - start) : 0;
    // The row's entries, once pruning has marked the dropped ones, at
    // keys[0, nnz): after the whole table's sort, or after condensing.
    const auto prune = [&]() {
        value_t below;
        of_bits(below_bits, &below);
        const u32 kept = prune_row<ROW_THREADS>(keys, vals, nnz, lane, below, has_below != 0, keep);
        if (active && lane == 0) atomicOr(&pruned_rows[row / SPGEMM_WORD_BITS], 1u << (row % SPGEMM_WORD_BITS));
        __syncthreads();
        return kept;
    };
    if (SORT == 0) {
        bitonic_sort(keys, vals, TSIZE, lane, ROW_THREADS, [] { __syncthreads(); });
        if (PRUNED) prune();
        for (u32 t = lane; t < nnz; t += ROW_THREADS) {
            ccol[start + t] = keys[t];
            cval[start + t] = vals[t];
        }
    } else {
        const bool in_order = WINDOWS && lo != ~0u;
        if (WINDOWS && band) write_window(keys, vals, TSIZE, in_order, ccol + start, cval + start);
        condense<ROW_THREADS>(keys, vals, TSIZE, lane, &counter[local], in_order);
        const u32 kept = PRUNED ? prune() : nnz;
        if (SORT == 1 || SORT == 3 || SORT == 4) {
            // Dropped entries rank past the kept ones: each writes the
            // first place after them, and the places after it are marked.
            if (!in_order) rank_sort_out(keys, vals, nnz, lane, ROW_THREADS, ccol + start, cval + start);
            if (PRUNED)
                for (u32 t = kept + lane; t < nnz; t += ROW_THREADS) ccol[start + t] = SPGEMM_EMPTY;
            return;
        }
        // One row per block: sort exactly nnz entries. Several rows: a size
        // uniform across the block (barriers inside), padded with empties.
        const u32 size = blockDim.x == ROW_THREADS ? nnz : (TSIZE + 1) / 2;
        for (u32 t = nnz + lane; t < size; t += ROW_THREADS) keys[t] = SPGEMM_EMPTY;
        __syncthreads();
        bitonic_sort(keys, vals, size, lane, ROW_THREADS, [] { __syncthreads(); });
        for (u32 t = lane; t < nnz; t += ROW_THREADS) {
            ccol[start + t] = keys[t];
            cval[start + t] = vals[t];
        }
    }
}

// Rows whose products all have different columns (nnz = nprod, the
// symbolic phase's bit), of at most SPGEMM_DISTINCT_PER_LANE (from the
// host) · warp width entries: expand-sort-compress with nothing to compress
// (low-compression rows without atomics; Register-aware §3 observes that
// such rows waste a hash table's probes). One warp
// per row: the warp scans the lengths of the rows of B its entries of A
// select (a shuffle scan), so every product has its own position in the
// warp's stretch of shared memory with no hashing and no atomic; each lane
// finds its products' entries of A by a binary search over the scan
// (shuffles), stores them, and each product's place in C is the number of
// smaller columns (the rank sort of OpSparse §5.6.2). Warps take rows on
// their own; a warp barrier orders a row's stores and ranks.
// PRUNED (`spgemm_numeric_distinct_pruned`, generated for pruned products):
// each row is pruned where it lies in shared memory (`prune_row`, a warp a
// row) before it is written, as the numeric bins' pruned kernels do.
template <bool PRUNED>
__device__ void numeric_distinct(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                 const u32* bcol, const value_t* bval, const u32* bins, u32 nrows, const u64* crpt,
                                 u32* ccol, value_t* cval, u64 below_bits = 0, u32 has_below = 0, u32 keep = ~0u,
                                 u32* pruned_rows = nullptr) {
    constexpr u32 CAP = SPGEMM_DISTINCT_PER_LANE * SPGEMM_WARP_SIZE;
    extern __shared__ u64 smem_distinct[];
    const u32 warps = blockDim.x / SPGEMM_WARP_SIZE, wid = threadIdx.x / SPGEMM_WARP_SIZE;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    u32* keys = (u32*)smem_distinct + wid * CAP;
    value_t* vals = (value_t*)((u32*)smem_distinct + warps * CAP) + wid * CAP;
    for (u32 r = blockIdx.x * warps + wid; r < nrows; r += gridDim.x * warps) {
        const u32 row = bins[r];
        const u64 a0 = arpt[row], a1 = arpt[row + 1];
        u32 run = 0;
        for (u64 base = a0; base < a1; base += SPGEMM_WARP_SIZE) {
            const u64 p = base + lane;
            u32 c = 0, n = 0;
            u64 b0 = 0;
            value_t a = value_t(0);
            if (p < a1) {
                c = acol[p];
                b0 = brpt[c];
                n = (u32)(brpt[c + 1] - b0);
                a = aval[p];
            }
            const u32 incl = segment_inclusive_scan<SPGEMM_WARP_SIZE>(n, lane);
            const u32 total = SPGEMM_SHFL(incl, SPGEMM_WARP_SIZE - 1);
            for (u32 t0 = 0; t0 < total; t0 += SPGEMM_WARP_SIZE) {
                const u32 t = t0 + lane;
                // The entry whose products hold t: the lanes whose
                // inclusive scan is at most t, counted by binary search.
                u32 j = 0;
                for (u32 d = SPGEMM_WARP_SIZE / 2; d > 0; d /= 2)
                    if (SPGEMM_SHFL(incl, j + d - 1) <= t) j += d;
                const u32 before = SPGEMM_SHFL(incl - n, j);
                const u64 bj = SPGEMM_SHFL(b0, j);
                const value_t aj = SPGEMM_SHFL(a, j);
                if (t < total) {
                    const u64 q = bj + (t - before);
                    keys[run + t] = bcol[q];
                    vals[run + t] = semiring_times(aj, bval[q]);
                }
            }
            run += total;
        }
        SPGEMM_SYNC_WARP();
        u32 kept = run;
        if (PRUNED) {
            value_t below;
            of_bits(below_bits, &below);
            kept = prune_row<SPGEMM_WARP_SIZE>(keys, vals, run, lane, below, has_below != 0, keep);
            if (lane == 0) atomicOr(&pruned_rows[row / SPGEMM_WORD_BITS], 1u << (row % SPGEMM_WORD_BITS));
            SPGEMM_SYNC_WARP();
        }
        // Each warp's keys start 16-byte aligned. Dropped entries rank past
        // the kept ones: each writes the first place after them, and the
        // places after it are marked.
        const u64 out = crpt[row];
        rank_sort_out(keys, vals, run, lane, SPGEMM_WARP_SIZE, ccol + out, cval + out);
        if (PRUNED)
            for (u32 t = kept + lane; t < run; t += SPGEMM_WARP_SIZE) ccol[out + t] = SPGEMM_EMPTY;
        SPGEMM_SYNC_WARP();
    }
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_distinct(const u64* arpt, const u32* acol, const value_t* aval,
                                                   const u64* brpt, const u32* bcol, const value_t* bval,
                                                   const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                                                   value_t* cval) {
    numeric_distinct<false>(arpt, acol, aval, brpt, bcol, bval, bins, nrows, crpt, ccol, cval);
}

// Rows of A with one entry: C(i,:) = A(i,k)·B(k,:) copied directly (DCU
// §5.3); B's rows are sorted without duplicates. One warp per row.
SPGEMM_FIXED_KERNEL void spgemm_numeric_direct(const u64* arpt, const u32* acol, const value_t* aval,
                                                 const u64* brpt, const u32* bcol, const value_t* bval,
                                                 const u32* bins, u32 nrows, const u64* crpt, u32* ccol,
                                                 value_t* cval) {
    const u32 warps = blockDim.x / SPGEMM_WARP_SIZE;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE;
    for (u32 r = blockIdx.x * warps + threadIdx.x / SPGEMM_WARP_SIZE; r < nrows; r += gridDim.x * warps) {
        const u32 row = bins[r];
        const u64 p = arpt[row];
        const u32 c = acol[p];
        const value_t a = aval[p];
        const u64 b0 = brpt[c], len = brpt[c + 1] - b0, out = crpt[row];
        for (u64 t = lane; t < len; t += SPGEMM_WARP_SIZE) {
            ccol[out + t] = bcol[b0 + t];
            cval[out + t] = semiring_times(a, bval[b0 + t]);
        }
    }
}
