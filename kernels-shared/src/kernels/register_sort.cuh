
// Register-aware sort of short rows (Liu et al.'s reg-sort, Register-aware
// §3.1), for the short-row bins whose rows
// are at most a warp's lanes (`--sort register`; appended to spgemm.cuh):
// a row's products are expanded into its table's space in shared memory in
// the order of its entries, loaded SPGEMM_REG_PER_LANE to a lane
// (consecutive ones: the N-to-M pattern of §3.1), sorted by a bitonic
// network whose steps inside a lane compare registers and whose steps
// between lanes exchange them by shuffles, then summed by runs of equal
// columns in registers (a segmented sum) and written, with no hash table
// and no atomic. The symbolic phase counts the runs instead.

// SPGEMM_REG_PER_LANE, the products a lane holds in the register sort (a
// row of ROW_THREADS lanes sorts ROW_THREADS times as many), comes from
// the host (core/src/gpu/constants.rs).

// Expands the products of entries a0..a1 of a row of A into keys (and,
// with VALUES, vals) from position 0, in the order of the entries: the
// row's ROW_THREADS lanes take an entry each, place it by a shuffle scan
// of the lengths of their rows of B, and copy that row. Returns the
// products. Every lane of the warp calls it (its loop runs while any row
// of the warp has entries left, for the shuffles).
template <u32 ROW_THREADS, bool VALUES>
__device__ __forceinline__ u32 expand_row(u64 a0, u64 a1, const u32* acol, const value_t* aval, const u64* brpt,
                                          const u32* bcol, const value_t* bval, u32 lane, u32* keys,
                                          value_t* vals) {
    u32 run = 0;
    for (u64 base = a0; SPGEMM_BALLOT(base < a1) != 0; base += ROW_THREADS) {
        const u64 p = base + lane;
        u32 len = 0;
        u64 b0 = 0;
        value_t a = value_t(0);
        if (p < a1) {
            const u32 c = acol[p];
            b0 = brpt[c];
            len = (u32)(brpt[c + 1] - b0);
            if (VALUES) a = aval[p];
        }
        const u32 incl = segment_inclusive_scan<ROW_THREADS>(len, lane);
        const u32 at = run + incl - len;
        for (u32 q = 0; q < len; ++q) {
            keys[at + q] = bcol[b0 + q];
            if (VALUES) vals[at + q] = semiring_times(a, bval[b0 + q]);
        }
        run += SPGEMM_SHFL_W(incl, ROW_THREADS - 1, ROW_THREADS);
    }
    return run;
}

// Bitonic sort, ascending, of ROW_THREADS · R keys (with their values when
// VALUES) held R to a lane in blocked order (element lane · R + r) by the
// row's lanes: a step between elements j apart compares registers of one
// lane when j < R, and else exchanges register r with lane ^ (j / R) by a
// shuffle. Empty keys (SPGEMM_EMPTY) sort last.
template <u32 ROW_THREADS, u32 R, bool VALUES>
__device__ __forceinline__ void register_sort(u32 (&key)[R], value_t (&val)[R], u32 lane) {
#pragma unroll
    for (u32 k = 2; k <= ROW_THREADS * R; k <<= 1) {
#pragma unroll
        for (u32 j = k >> 1; j > 0; j >>= 1) {
            if (j >= R) {
                const u32 m = j / R;
                const bool lower = (lane & m) == 0;
#pragma unroll
                for (u32 r = 0; r < R; ++r) {
                    const bool up = ((lane * R + r) & k) == 0;
                    const u32 other = SPGEMM_SHFL_XOR_W(key[r], m, ROW_THREADS);
                    value_t ov = value_t(0);
                    if (VALUES) ov = SPGEMM_SHFL_XOR_W(val[r], m, ROW_THREADS);
                    // The lower element keeps the smaller key in ascending
                    // runs, the larger in descending ones.
                    if (lower == up ? other < key[r] : other > key[r]) {
                        key[r] = other;
                        if (VALUES) val[r] = ov;
                    }
                }
            } else {
#pragma unroll
                for (u32 r = 0; r < R; ++r) {
                    if (r & j) continue;
                    const u32 h = r | j;
                    const bool up = ((lane * R + r) & k) == 0;
                    if ((key[r] > key[h]) == up) {
                        const u32 t = key[r];
                        key[r] = key[h];
                        key[h] = t;
                        if (VALUES) {
                            const value_t v = val[r];
                            val[r] = val[h];
                            val[h] = v;
                        }
                    }
                }
            }
        }
    }
}

// Expands a row's products into its table's space (expand_row) and loads
// them R to a lane in blocked order (lane · R + r; empty past the row's
// products): each lane then holds an equal share of the row, the input of
// both the register sort and reg-hash. Every lane of the warp calls it.
template <u32 ROW_THREADS, u32 R, bool VALUES>
__device__ __forceinline__ void expand_and_load(u64 a0, u64 a1, const u32* acol, const value_t* aval,
                                                const u64* brpt, const u32* bcol, const value_t* bval, u32 lane,
                                                u32* keys, value_t* vals, u32 (&key)[R], value_t (&val)[R]) {
    const u32 n = expand_row<ROW_THREADS, VALUES>(a0, a1, acol, aval, brpt, bcol, bval, lane, keys, vals);
    SPGEMM_SYNC_WARP();
#pragma unroll
    for (u32 r = 0; r < R; ++r) {
        const u32 t = lane * R + r;
        key[r] = t < n ? keys[t] : SPGEMM_EMPTY;
        val[r] = VALUES && t < n ? vals[t] : SPGEMM_IDENTITY;
    }
}

// Which of a lane's R sorted keys start a run of equal keys (bit r), empty
// keys included (they end the last run of columns).
template <u32 ROW_THREADS, u32 R>
__device__ __forceinline__ u32 run_starts(const u32 (&key)[R], u32 lane) {
    const u32 before = SPGEMM_SHFL_UP_W(key[R - 1], 1, ROW_THREADS);
    u32 starts = 0;
#pragma unroll
    for (u32 r = 0; r < R; ++r)
        if ((r == 0 ? lane == 0 || key[0] != before : key[r] != key[r - 1])) starts |= 1u << r;
    return starts;
}

// The columns among a lane's R sorted keys: its run starts that are not
// empty (the symbolic phase's count).
template <u32 R>
__device__ __forceinline__ u32 run_columns(const u32 (&key)[R], u32 starts) {
    u32 n = 0;
#pragma unroll
    for (u32 r = 0; r < R; ++r) n += (starts >> r & 1u) && key[r] != SPGEMM_EMPTY;
    return n;
}

// Writes a row sorted by register_sort to ccol/cval: each run of equal
// keys summed in registers (within a lane from its end, across lanes by a
// segmented suffix scan of shuffles, which carries into each lane the sum
// of the following lanes' elements up to the next run start), and written
// by its first element at its rank among the row's runs (an exclusive
// shuffle scan of the lanes' counts).
template <u32 ROW_THREADS, u32 R>
__device__ __forceinline__ void write_runs(const u32 (&key)[R], value_t (&val)[R], u32 lane, u32* ccol,
                                           value_t* cval) {
    const u32 starts = run_starts<ROW_THREADS, R>(key, lane);
    // This lane's elements before its first run start, for the lanes
    // before it; `open`: no run starts here.
    value_t lead = SPGEMM_IDENTITY;
#pragma unroll
    for (u32 r = 0; r < R; ++r)
        if ((starts & ((2u << r) - 1)) == 0) lead = semiring_plus(lead, val[r]);
    u32 open = starts == 0;
    for (u32 d = 1; d < ROW_THREADS; d *= 2) {
        const value_t l = SPGEMM_SHFL_DOWN_W(lead, d, ROW_THREADS);
        const u32 o = SPGEMM_SHFL_DOWN_W(open, d, ROW_THREADS);
        if (open && lane + d < ROW_THREADS) {
            lead = semiring_plus(lead, l);
            open = o;
        }
    }
    value_t carry = SPGEMM_SHFL_DOWN_W(lead, 1, ROW_THREADS);
    if (lane + 1 == ROW_THREADS) carry = SPGEMM_IDENTITY;
#pragma unroll
    for (int r = R - 1; r >= 0; --r) {
        carry = semiring_plus(carry, val[r]);
        val[r] = carry;
        if (starts >> r & 1u) carry = SPGEMM_IDENTITY;
    }
    const u32 mine = run_columns<R>(key, starts);
    u32 at = segment_inclusive_scan<ROW_THREADS>(mine, lane) - mine;
#pragma unroll
    for (u32 r = 0; r < R; ++r)
        if ((starts >> r & 1u) && key[r] != SPGEMM_EMPTY) {
            ccol[at] = key[r];
            cval[at] = val[r];
            ++at;
        }
}

// The register sort's symbolic step for a row of a bin whose rows have at
// most ROW_THREADS · SPGEMM_REG_PER_LANE products and fit its table (the
// table's choice): expands the row's columns into `table`, sorts them in
// registers and returns this lane's share of the row's distinct columns.
// Every lane of the warp calls it (`active`: whether its row exists).
template <u32 ROW_THREADS>
__device__ __forceinline__ u32 symbolic_registers(const u64* arpt, const u32* acol, const u64* brpt,
                                                  const u32* bcol, bool active, u32 row, u32 lane, u32* table) {
    constexpr u32 R = SPGEMM_REG_PER_LANE;
    const u64 a0 = active ? arpt[row] : 0, a1 = active ? arpt[row + 1] : 0;
    u32 key[R];
    value_t val[R];
    expand_and_load<ROW_THREADS, R, false>(a0, a1, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, lane,
                                           table, (value_t*)0, key, val);
    register_sort<ROW_THREADS, R, false>(key, val, lane);
    return run_columns<R>(key, run_starts<ROW_THREADS, R>(key, lane));
}

// Whether every row of the block (this lane's: entries a0..a1) has at
// most CAP products: its table's slots, and ROW_THREADS ·
// SPGEMM_REG_PER_LANE. A barrier of the whole block decides, so the
// answer is the block's; every thread calls it.
template <u32 TSIZE, u32 ROW_THREADS>
__device__ __forceinline__ bool rows_fit(u64 a0, u64 a1, const u32* acol, const u64* brpt, u32 lane) {
    constexpr u32 R = SPGEMM_REG_PER_LANE;
    constexpr u32 CAP = TSIZE < ROW_THREADS * R ? TSIZE : ROW_THREADS * R;
    u64 nprod = 0;
    for (u64 p = a0 + lane; p < a1; p += ROW_THREADS) nprod += brpt[acol[p] + 1] - brpt[acol[p]];
    for (u32 d = ROW_THREADS / 2; d > 0; d /= 2) nprod += SPGEMM_SHFL_XOR_W(nprod, d, ROW_THREADS);
    return __syncthreads_and(nprod <= CAP);
}

// The register sort's numeric step for a block of a bin's rows: when every
// row of the block has at most CAP products (its table's slots, and
// ROW_THREADS · SPGEMM_REG_PER_LANE; one barrier decides for the block),
// computes them into C and returns true; else returns false, having
// touched nothing, and the block takes its hash tables. Every thread of
// the block calls it (`active`: whether its row exists).
template <u32 TSIZE, u32 ROW_THREADS>
__device__ __forceinline__ bool numeric_registers(const u64* arpt, const u32* acol, const value_t* aval,
                                                  const u64* brpt, const u32* bcol, const value_t* bval,
                                                  bool active, u32 row, u32 lane, u32* keys, value_t* vals,
                                                  const u64* crpt, u32* ccol, value_t* cval) {
    constexpr u32 R = SPGEMM_REG_PER_LANE;
    const u64 a0 = active ? arpt[row] : 0, a1 = active ? arpt[row + 1] : 0;
    if (!rows_fit<TSIZE, ROW_THREADS>(a0, a1, acol, brpt, lane)) return false;
    u32 key[R];
    value_t val[R];
    expand_and_load<ROW_THREADS, R, true>(a0, a1, acol, aval, brpt, bcol, bval, lane, keys, vals, key, val);
    register_sort<ROW_THREADS, R, true>(key, val, lane);
    const u64 start = active ? crpt[row] : 0;
    write_runs<ROW_THREADS, R>(key, val, lane, ccol + start, cval + start);
    return true;
}

// Liu et al.'s reg-hash (Register-aware §3.3; `--sort register-hash`): a
// row's products are expanded and shared out evenly to the lanes'
// registers as for the register sort (expand_and_load), then inserted
// from the registers into the hash table (cleared in between) instead of
// walking the rows of B. The numeric step is in numeric_shared (SORT 4).

// The reg-hash symbolic step for a row (as symbolic_registers): this
// lane's new columns among its share, inserted into `table`.
template <u32 TSIZE, u32 ROW_THREADS>
__device__ __forceinline__ u32 symbolic_register_hash(const u64* arpt, const u32* acol, const u64* brpt,
                                                      const u32* bcol, bool active, u32 row, u32 lane,
                                                      u32* table) {
    constexpr u32 R = SPGEMM_REG_PER_LANE;
    constexpr bool POW2 = (TSIZE & (TSIZE - 1)) == 0;
    const u64 a0 = active ? arpt[row] : 0, a1 = active ? arpt[row + 1] : 0;
    u32 key[R];
    value_t val[R];
    expand_and_load<ROW_THREADS, R, false>(a0, a1, acol, (const value_t*)0, brpt, bcol, (const value_t*)0, lane,
                                           table, (value_t*)0, key, val);
    SPGEMM_SYNC_WARP();
    for (u32 t = lane; t < TSIZE; t += ROW_THREADS) table[t] = SPGEMM_EMPTY;
    SPGEMM_SYNC_WARP();
    u32 n = 0;
#pragma unroll
    for (u32 r = 0; r < R; ++r)
        if (key[r] != SPGEMM_EMPTY) n += insert_key(table, TSIZE, POW2, key[r]);
    return n;
}
