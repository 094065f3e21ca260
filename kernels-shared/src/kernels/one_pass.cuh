
// One pass over short rows, no symbolic phase (the one-phase method with
// upper-bound row sizes, Du et al., "OpSparse", §2.2): C's arrays are
// allocated for nprod(C) entries, a bound of nnz(C), and every row is
// computed, counted and written at its exact place in one kernel. A group
// of G lanes per row (rows of at most SPGEMM_DISTINCT_PER_LANE · G
// products, which the host checked; G from 4 to a warp, so that short rows
// keep a warp's lanes busy several rows at a time) expands its products
// into shared memory as spgemm_numeric_distinct does, sorts them by rank
// (ties by position, so the sort is stable), and sums each run of equal
// columns into the row's entries. A block holds one row per group, a tile
// of consecutive rows; the tiles' places in C come from a single-pass scan
// with decoupled look-back (Merrill and Garland, "Single-pass parallel
// prefix scan with decoupled look-back", §4): each block takes the next
// tile by ticket (so that every tile it waits for is already running),
// publishes its tile's entries, then sums its predecessors' published
// totals back to the first one that knows its inclusive prefix. The rows
// are then written where they belong and their row offsets beside them.

// A tile's state: the flag in the top two bits, the count below.
#define SPGEMM_TILE_TOTAL (1ull << 62)
#define SPGEMM_TILE_PREFIX (2ull << 62)
#define SPGEMM_TILE_COUNT ((1ull << 62) - 1)

// A tile's state as the look-back reads it: a tile before the first
// reads as a prefix of 0.
__device__ __forceinline__ u64 tile_state(const u64* tiles, long long p) {
    return p >= 0 ? *(const volatile u64*)&tiles[p] : SPGEMM_TILE_PREFIX;
}

// The place of tile `tile`, whose rows hold `total` entries: the sum of
// the entries of the tiles before it. Called by every lane of one warp,
// which reads the states of a warp's width of predecessors at once (the
// look-back of Merrill and Garland, §4.4, a warp wide), waits until all
// have published, and sums back to the nearest one that knows its prefix.
__device__ __forceinline__ u64 tile_prefix(u64* tiles, u64 tile, u64 total, u32 lane) {
    if (tile == 0) {
        if (lane == 0) atomicExch(&tiles[0], SPGEMM_TILE_PREFIX | total);
        return 0;
    }
    if (lane == 0) atomicExch(&tiles[tile], SPGEMM_TILE_TOTAL | total);
    u64 before = 0;
    for (long long p = (long long)tile - 1 - lane;; p -= SPGEMM_WARP_SIZE) {
        u64 s = tile_state(tiles, p);
        while (SPGEMM_BALLOT((s & ~SPGEMM_TILE_COUNT) == 0))
            if ((s & ~SPGEMM_TILE_COUNT) == 0) s = tile_state(tiles, p);
        // Lane 0 holds the nearest predecessor: sum up to the first prefix.
        const lane_mask_t prefixes = SPGEMM_BALLOT((s & SPGEMM_TILE_PREFIX) != 0);
        const int last = prefixes ? SPGEMM_FFS(prefixes) - 1 : SPGEMM_WARP_SIZE;
        u64 v = (int)lane <= last ? (s & SPGEMM_TILE_COUNT) : 0;
        for (u32 d = SPGEMM_WARP_SIZE / 2; d > 0; d /= 2) v += SPGEMM_SHFL_XOR_W(v, d, SPGEMM_WARP_SIZE);
        before += v;
        if (prefixes) break;
    }
    if (lane == 0) atomicExch(&tiles[tile], SPGEMM_TILE_PREFIX | (before + total));
    return before;
}

// The largest of one value per lane over the warp.
__device__ __forceinline__ u32 warp_max(u32 x) {
    for (u32 d = SPGEMM_WARP_SIZE / 2; d > 0; d /= 2) {
        const u32 y = SPGEMM_SHFL_XOR_W(x, d, SPGEMM_WARP_SIZE);
        x = y > x ? y : x;
    }
    return x;
}

// The bits that hold every number below n.
__host__ __device__ constexpr u32 bits_for(u32 n) { return n <= 1 ? 0 : 1 + bits_for((n + 1) / 2); }

// A group's shared memory: its products twice (expanded, then sorted)
// and four slots of padding (so that the groups of a warp read other
// banks), keys then values; then a word per group.
template <u32 G>
struct OnePassShared {
    static constexpr u32 CAP = SPGEMM_DISTINCT_PER_LANE * G;
    // Bits that hold a product's place in the row (below CAP), and the
    // columns below which a column shifted past them, with a place, stays
    // below SPGEMM_EMPTY.
    static constexpr u32 PLACE_BITS = bits_for(CAP);
    static constexpr u32 PLACED_LIMIT = (1u << (32 - PLACE_BITS)) - 1;
    static constexpr u32 STRIDE = 2 * CAP + 4;
    u32* keys;
    u32* sorted_keys;
    value_t* vals;
    value_t* sorted_vals;
    u64* counts;
    __device__ __forceinline__ OnePassShared(u64* smem, u32 groups, u32 group) {
        keys = (u32*)smem + group * STRIDE;
        sorted_keys = keys + CAP;
        value_t* vals_all = (value_t*)((u32*)smem + groups * STRIDE);
        vals = vals_all + group * STRIDE;
        sorted_vals = vals + CAP;
        counts = (u64*)(vals_all + groups * STRIDE);
    }
};

// How the one pass prunes each row as it is written (as spgemm_prune_rows
// would after it, so that C never exists unpruned): entries of magnitude
// below `below` dropped (with `has_below`), then at most `keep` of the
// largest magnitudes kept (ties to the lower column; ~0u: no limit).
struct OnePassPrune {
    value_t below;
    bool has_below;
    u32 keep;
};

// No pruning (the sample's rows, and products without it).
__device__ __forceinline__ OnePassPrune no_prune() { return OnePassPrune{value_t(0), false, ~0u}; }

// The sum of one value per lane over a group of G lanes (every lane gets it).
template <u32 G>
__device__ __forceinline__ u32 group_sum(u32 x) {
    for (u32 d = G / 2; d > 0; d /= 2) x += SPGEMM_SHFL_XOR_W(x, d, G);
    return x;
}

// How many of a lane's entries (bit j of `valid`: entry j is one) `is(j)`
// holds for.
template <typename F>
__device__ __forceinline__ u32 count_entries(u32 valid, F is) {
    u32 n = 0;
#pragma unroll
    for (u32 j = 0; j < SPGEMM_DISTINCT_PER_LANE; ++j) n += ((valid >> j) & 1) && is(j);
    return n;
}

// The need-th largest key(j) among the group's entries with eligible(j)
// (at least `need` of them): the largest c that at least `need` of their
// keys reach, found bit by bit from the top by counting over the group.
template <u32 G, typename E, typename K>
__device__ __forceinline__ u32 select_largest(u32 valid, u32 need, E eligible, K key) {
    u32 t = 0;
    for (int b = 31; b >= 0; --b) {
        const u32 c = t | (1u << b);
        if (group_sum<G>(count_entries(valid, [&](u32 j) { return eligible(j) && key(j) >= c; })) >= need) t = c;
    }
    return t;
}

// The entries of a row's `nnz` in (keys, vals) [0, nnz), sorted by column,
// that are among its `keep` largest magnitudes (ties to the lower column,
// so to the lower place; nnz > keep > 0 where the row is to be pruned):
// bit j of the result for the lane's entry s = j·G + glane. By rank: each
// entry counts the entries above it (quadratic in the row, cheapest for
// rows of a few lanes' entries).
template <u32 G>
__device__ __forceinline__ u32 kept_by_rank(u32 nnz, u32 keep, const OnePassShared<G>& sh) {
    const u32 glane = threadIdx.x % G;
    u32 kept = 0;
#pragma unroll
    for (u32 j = 0; j < SPGEMM_DISTINCT_PER_LANE; ++j) {
        const u32 s = j * G + glane;
        if (s >= nnz) continue;
        bool in = true;
        if (nnz > keep) {
            const u64 mk = magnitude_key(sh.vals[s]);
            u32 rank = 0;
            for (u32 q = 0; q < nnz; ++q) {
                const u64 mq = magnitude_key(sh.vals[q]);
                rank += mq > mk || (mq == mk && q < s);
            }
            in = rank < keep;
        }
        kept |= (u32)in << j;
    }
    return kept;
}

// kept_by_rank's result by selection, for longer rows: the keep-th largest
// magnitude key t is selected (its high word by bisection over the group's
// counts, then, when the entries of that high word are not all kept, its
// low word among them), the entries above t are kept, and of those equal
// to t the first in column order, as many as are missing. The keys are
// read from shared memory where they are needed (held in registers, they
// cost the one pass occupancy). Every group of the warp calls it at once.
template <u32 G>
__device__ __forceinline__ u32 kept_by_selection(u32 nnz, u32 keep, const OnePassShared<G>& sh) {
    constexpr u32 PER = SPGEMM_DISTINCT_PER_LANE;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE, glane = threadIdx.x % G;
    const u32 first_lane = lane - glane;
    const lane_mask_t below = ((((lane_mask_t)1) << glane) - 1) << first_lane;
    const lane_mask_t mine =
        (G == SPGEMM_WARP_SIZE ? ~(lane_mask_t)0 : ((((lane_mask_t)1) << (G % SPGEMM_WARP_SIZE)) - 1)) << first_lane;
    u32 valid = 0;
#pragma unroll
    for (u32 j = 0; j < PER; ++j) valid |= (u32)(j * G + glane < nnz) << j;
    const auto hi = [&](u32 j) { return (u32)(magnitude_key(sh.vals[j * G + glane]) >> 32); };
    const auto lo = [&](u32 j) { return (u32)magnitude_key(sh.vals[j * G + glane]); };
    // Magnitude keys of 32-bit types have no high word.
    const u32 thi = sizeof(value_t) == 8 ? select_largest<G>(valid, keep, [](u32) { return true; }, hi) : 0;
    const u32 above_hi = group_sum<G>(count_entries(valid, [&](u32 j) { return hi(j) > thi; }));
    const u32 at_hi = group_sum<G>(count_entries(valid, [&](u32 j) { return hi(j) == thi; }));
    // Where nnz > keep, above_hi < keep <= above_hi + at_hi: `need` of the
    // entries of high word thi are kept.
    const u32 need = keep - above_hi;
    const bool split = nnz > keep && at_hi > need;
    u32 tlo = 0;
    if (SPGEMM_BALLOT(split))
        tlo = select_largest<G>(valid, need, [&](u32 j) { return hi(j) == thi; }, lo);
    const auto above = [&](u32 j) {
        const u64 k = magnitude_key(sh.vals[j * G + glane]);
        const u32 h = (u32)(k >> 32);
        return h > thi || (h == thi && (u32)k > tlo);
    };
    const u32 missing = keep - group_sum<G>(count_entries(valid, above));
    u32 kept = 0, ties = 0;
#pragma unroll
    for (u32 j = 0; j < PER; ++j) {
        const bool v = (valid >> j) & 1;
        const u64 k = v ? magnitude_key(sh.vals[j * G + glane]) : 0;
        const u32 h = (u32)(k >> 32), l = (u32)k;
        const bool tie = v && h == thi && l == tlo;
        const lane_mask_t m = SPGEMM_BALLOT(tie) & mine;
        const u32 before = ties + SPGEMM_POPC(m & below);
        ties += SPGEMM_POPC(m);
        bool in;
        if (nnz <= keep)
            in = v;
        else if (!split)
            in = v && h >= thi;
        else
            in = (v && (h > thi || (h == thi && l > tlo))) || (tie && before < missing);
        kept |= (u32)in << j;
    }
    return kept;
}

// The keep-largest step of OnePassPrune on a row's `nnz` entries in
// (keys, vals) [0, nnz), sorted by column: the entries kept_by_rank keeps
// or, where the warp's longest row would cost the rank more than 96
// compares a lane (longest² / G: about where the two cost alike on an
// H200), kept_by_selection, move to the front in column order through the
// sorted arrays. Returns the kept count. Every group of the warp calls it
// at once.
template <u32 G>
__device__ __forceinline__ u32 keep_largest_in_row(u32 nnz, u32 keep, const OnePassShared<G>& sh) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE, glane = threadIdx.x % G;
    const u32 first_lane = lane - glane;
    const lane_mask_t below = ((((lane_mask_t)1) << glane) - 1) << first_lane;
    const lane_mask_t mine =
        (G == SPGEMM_WARP_SIZE ? ~(lane_mask_t)0 : ((((lane_mask_t)1) << (G % SPGEMM_WARP_SIZE)) - 1)) << first_lane;
    const u32 longest = warp_max(nnz);
    if (longest <= keep) return nnz;
    if (keep == 0) return 0;
    const u32 kept_bits =
        longest * longest <= 96 * G ? kept_by_rank<G>(nnz, keep, sh) : kept_by_selection<G>(nnz, keep, sh);
    SPGEMM_SYNC_WARP();
    u32 kept = 0;
#pragma unroll
    for (u32 j = 0; j < SPGEMM_DISTINCT_PER_LANE; ++j) {
        const u32 s = j * G + glane;
        const bool in = (kept_bits >> j) & 1;
        const lane_mask_t ins = SPGEMM_BALLOT(in) & mine;
        if (in) {
            const u32 pos = kept + SPGEMM_POPC(ins & below);
            sh.sorted_keys[pos] = sh.keys[s];
            sh.sorted_vals[pos] = sh.vals[s];
        }
        kept += SPGEMM_POPC(ins);
    }
    SPGEMM_SYNC_WARP();
    for (u32 t = glane; t < kept; t += G) {
        sh.keys[t] = sh.sorted_keys[t];
        sh.vals[t] = sh.sorted_vals[t];
    }
    SPGEMM_SYNC_WARP();
    return kept;
}

// Row `row` of C (when `active`) into the group's keys and values
// [0, nnz), pruned as `prune` says (with PRUNED: the kernels that never
// prune carry none of its code), nnz returned and the row's products in
// *run. Every group of the warp calls it at once: its loops with shuffles
// or ballots run as many rounds in every group.
template <u32 G, bool PRUNED>
__device__ __forceinline__ u32 one_pass_row(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                            const u32* bcol, const value_t* bval, bool active, u32 row,
                                            const OnePassShared<G>& sh, u32* run_out, const OnePassPrune& prune) {
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE, glane = threadIdx.x % G;
    const u32 first_lane = lane - glane;
    u32* keys = sh.keys;
    value_t* vals = sh.vals;
    const u64 a0 = active ? arpt[row] : 0, a1 = active ? arpt[row + 1] : 0;
    u32 run = 0, wide = 0;
    const u32 len = (u32)(a1 - a0);
    const u32 most = warp_max(len);
    for (u32 base = 0; base < most; base += G) {
        const u64 p = a0 + base + glane;
        u32 n = 0;
        u64 b0 = 0;
        value_t a = value_t(0);
        if (base + glane < len) {
            const u32 c = acol[p];
            b0 = brpt[c];
            n = (u32)(brpt[c + 1] - b0);
            a = aval[p];
        }
        const u32 incl = segment_inclusive_scan<G>(n, glane);
        const u32 total = SPGEMM_SHFL_W(incl, G - 1, G);
        const u32 rounds = warp_max(total);
        for (u32 t0 = 0; t0 < rounds; t0 += G) {
            const u32 t = t0 + glane;
            u32 j = 0;
            for (u32 d = G / 2; d > 0; d /= 2)
                if (SPGEMM_SHFL_W(incl, j + d - 1, G) <= t) j += d;
            const u32 before = SPGEMM_SHFL_W(incl - n, j, G);
            const u64 bj = SPGEMM_SHFL_W(b0, j, G);
            const value_t aj = SPGEMM_SHFL_W(a, j, G);
            if (t < total) {
                const u64 q = bj + (t - before);
                const u32 col = bcol[q];
                wide |= col >= OnePassShared<G>::PLACED_LIMIT;
                keys[run + t] = col;
                vals[run + t] = semiring_times(aj, bval[q]);
            }
        }
        run += total;
    }
    // Padded to a multiple of four with columns past every real one.
    if (glane < ((4 - run % 4) % 4)) keys[run + glane] = SPGEMM_EMPTY;
    SPGEMM_SYNC_WARP();
    // Stable rank sort: an entry's place is the number of entries before
    // it in (column, place in the expansion) order, counted in a pass over
    // the keys for two products a lane, read four at a time (one broadcast
    // 16-byte load, as rank_sort_out does). Where every column of the
    // warp's rows leaves room, each key carries its place in its low
    // PLACE_BITS, so that keys are distinct and one compare ranks them;
    // otherwise the equal keys before an entry are counted apart, only
    // for columns that repeat. Padding (SPGEMM_EMPTY) is above every key.
    const uint4* keys4 = (const uint4*)keys;
    if (!SPGEMM_BALLOT(wide)) {
        constexpr u32 S = OnePassShared<G>::PLACE_BITS;
        for (u32 t = glane; t < run; t += G) keys[t] = (keys[t] << S) | t;
        SPGEMM_SYNC_WARP();
        for (u32 t = glane; t < run; t += 2 * G) {
            const u32 t2 = t + G;
            const u32 k0 = keys[t], k1 = t2 < run ? keys[t2] : SPGEMM_EMPTY;
            u32 r0 = 0, r1 = 0;
            for (u32 q = 0; q < run; q += 4) {
                const uint4 w = keys4[q / 4];
                r0 += (w.x < k0) + (w.y < k0) + (w.z < k0) + (w.w < k0);
                r1 += (w.x < k1) + (w.y < k1) + (w.z < k1) + (w.w < k1);
            }
            sh.sorted_keys[r0] = k0 >> S;
            sh.sorted_vals[r0] = vals[t];
            if (t2 < run) {
                sh.sorted_keys[r1] = k1 >> S;
                sh.sorted_vals[r1] = vals[t2];
            }
        }
    } else {
        for (u32 t = glane; t < run; t += 2 * G) {
            const u32 t2 = t + G;
            const u32 k0 = keys[t], k1 = t2 < run ? keys[t2] : SPGEMM_EMPTY;
            u32 r0 = 0, r1 = 0, e0 = 0, e1 = 0;
            for (u32 q = 0; q < run; q += 4) {
                const uint4 w = keys4[q / 4];
                r0 += (w.x < k0) + (w.y < k0) + (w.z < k0) + (w.w < k0);
                e0 += (w.x == k0) + (w.y == k0) + (w.z == k0) + (w.w == k0);
                r1 += (w.x < k1) + (w.y < k1) + (w.z < k1) + (w.w < k1);
                e1 += (w.x == k1) + (w.y == k1) + (w.z == k1) + (w.w == k1);
            }
            if (e0 > 1)
                for (u32 q = 0; q < t; ++q) r0 += keys[q] == k0;
            if (e1 > 1)
                for (u32 q = 0; q < t2; ++q) r1 += keys[q] == k1;
            sh.sorted_keys[r0] = k0;
            sh.sorted_vals[r0] = vals[t];
            if (t2 < run) {
                sh.sorted_keys[r1] = k1;
                sh.sorted_vals[r1] = vals[t2];
            }
        }
    }
    SPGEMM_SYNC_WARP();
    // Runs of equal columns summed by their first entry; the sums the
    // threshold keeps placed by a ballot scan within the group.
    const u32* sorted_keys = sh.sorted_keys;
    const value_t* sorted_vals = sh.sorted_vals;
    const lane_mask_t below = ((((lane_mask_t)1) << glane) - 1) << first_lane;
    const lane_mask_t mine =
        (G == SPGEMM_WARP_SIZE ? ~(lane_mask_t)0 : ((((lane_mask_t)1) << (G % SPGEMM_WARP_SIZE)) - 1)) << first_lane;
    const u32 longest = warp_max(run);
    u32 nnz = 0;
    for (u32 base = 0; base < longest; base += G) {
        const u32 s = base + glane;
        const u32 k = s < run ? sorted_keys[s] : 0;
        bool head = s < run && (s == 0 || sorted_keys[s - 1] != k);
        value_t v = value_t(0);
        if (head) {
            v = sorted_vals[s];
            for (u32 e = s + 1; e < run && sorted_keys[e] == k; ++e) v = semiring_plus(v, sorted_vals[e]);
            if (PRUNED) head = !prune.has_below || at_least(v, prune.below);
        }
        const lane_mask_t heads = SPGEMM_BALLOT(head) & mine;
        if (head) {
            const u32 pos = nnz + SPGEMM_POPC(heads & below);
            keys[pos] = k;
            vals[pos] = v;
        }
        nnz += SPGEMM_POPC(heads);
    }
    *run_out = run;
    if (PRUNED && prune.keep != ~0u) nnz = keep_largest_in_row<G>(nnz, prune.keep, sh);
    return nnz;
}

// `tiles`: one zeroed word per tile of blockDim.x / G rows, then the
// ticket word (zeroed). Rows pruned before they are counted, as
// OnePassPrune says: the threshold whose bits are `below_bits` (with
// `has_below`), then `keep`. `ccol`/`cval` have room for `room` entries (nprod(C)
// under a bound, an estimate of nnz(C) otherwise): entries placed past it
// are not written. crpt[0..m] receives C's row offsets whatever the room,
// so crpt[m] > room tells the host that the estimate fell short.
template <u32 G, bool PRUNED>
__device__ __forceinline__ void one_pass_rows(const u64* arpt, const u32* acol, const value_t* aval,
                                              const u64* brpt, const u32* bcol, const value_t* bval, u32 m,
                                              u64* crpt, u32* ccol, value_t* cval, u64* tiles, u64 room,
                                              u64 below_bits, u32 has_below, u32 keep) {
    extern __shared__ u64 smem_one_pass[];
    OnePassPrune prune{value_t(0), has_below != 0, keep};
    of_bits(below_bits, &prune.below);
    __shared__ u64 tile_shared;
    const u32 groups = blockDim.x / G, group = threadIdx.x / G;
    const u32 lane = threadIdx.x % SPGEMM_WARP_SIZE, glane = threadIdx.x % G;
    const OnePassShared<G> sh(smem_one_pass, groups, group);
    u64* counts = sh.counts;
    const u64 ntiles = ((u64)m + groups - 1) / groups;
    if (threadIdx.x == 0) tile_shared = atomicAdd(&tiles[ntiles], 1ull);
    __syncthreads();
    const u64 tile = tile_shared;
    const u64 row64 = tile * groups + group;
    const bool active = row64 < m;
    const u32 row = active ? (u32)row64 : 0;
    u32 run;
    const u32 nnz = one_pass_row<G, PRUNED>(arpt, acol, aval, brpt, bcol, bval, active, row, sh, &run, prune);
    if (glane == 0) counts[group] = nnz;
    __syncthreads();
    // The first warp places the groups' rows after the tile's. Where a
    // block has more groups than a warp has lanes (rows of 4 lanes on
    // warps of 32), each lane sums the counts of `per` consecutive
    // groups and a scan over the lanes places them; otherwise every lane
    // sums them all and one lane places them. Measured on an H200 with
    // either way for every block: the scan 6% faster on Poisson 100³ · P
    // (rows of 4 lanes), one lane 4–10% faster on Erdős–Rényi 2²⁰ × 8 and
    // 2²² × 8 (rows of 8).
    if (threadIdx.x < SPGEMM_WARP_SIZE) {
        if (groups > SPGEMM_WARP_SIZE) {
            const u32 per = (groups + SPGEMM_WARP_SIZE - 1) / SPGEMM_WARP_SIZE;
            const u32 g0 = lane * per, g1 = g0 + per < groups ? g0 + per : groups;
            u64 own = 0;
            for (u32 g = g0; g < g1; ++g) own += counts[g];
            const u64 incl = segment_inclusive_scan<SPGEMM_WARP_SIZE>(own, lane);
            const u64 total = SPGEMM_SHFL(incl, SPGEMM_WARP_SIZE - 1);
            const u64 before = tile_prefix(tiles, tile, total, lane);
            u64 place = before + incl - own;
            for (u32 g = g0; g < g1; ++g) {
                const u64 c = counts[g];
                counts[g] = place;
                place += c;
            }
            if (tile + 1 == ntiles && lane == 0) crpt[m] = before + total;
        } else {
            u64 total = 0;
            for (u32 g = 0; g < groups; ++g) total += counts[g];
            const u64 before = tile_prefix(tiles, tile, total, lane);
            if (lane == 0) {
                u64 place = before;
                for (u32 g = 0; g < groups; ++g) {
                    const u64 c = counts[g];
                    counts[g] = place;
                    place += c;
                }
                if (tile + 1 == ntiles) crpt[m] = place;
            }
        }
    }
    __syncthreads();
    if (active) {
        const u64 start = counts[group];
        if (glane == 0) crpt[row] = start;
        const u32 fits = start >= room ? 0 : (room - start < nnz ? (u32)(room - start) : nnz);
        for (u32 t = glane; t < fits; t += G) {
            ccol[start + t] = sh.keys[t];
            cval[start + t] = sh.vals[t];
        }
    }
}

// The compression ratio of `nsample` rows spread evenly over A's `m`
// (row s · m / nsample), for the host's choice of the one pass, computed
// as the one pass computes them, a warp a row: each row of at most
// SPGEMM_DISTINCT_PER_LANE products a lane (`nprod`: setup's products per
// row) adds its products to totals[0] and its entries to totals[1]. B's
// values may still be arriving: the counts do not depend on them. Nothing
// is sampled when setup's largest nprod(i) (stats[1]) leaves the host no
// choice to make: rows within 4 lanes' reach, unless `every` (the host
// sizes C from the sample), and never when a row is past a warp's reach
// (no one pass at all).
SPGEMM_FIXED_KERNEL void spgemm_one_pass_sample(const u64* arpt, const u32* acol, const value_t* aval,
                                                const u64* brpt, const u32* bcol, const value_t* bval, u32 m,
                                                const u64* nprod, const u64* stats, u32 nsample, u64* totals,
                                                u32 every) {
    constexpr u32 G = SPGEMM_WARP_SIZE;
    const u64 longest = stats[1];
    if (longest > OnePassShared<G>::CAP) return;
    if (!every && longest <= OnePassShared<4>::CAP) return;
    extern __shared__ u64 smem_one_pass[];
    const u32 groups = blockDim.x / G, group = threadIdx.x / G;
    const OnePassShared<G> sh(smem_one_pass, groups, group);
    const u64 s = (u64)blockIdx.x * groups + group;
    const u32 row = s < nsample ? (u32)(s * m / nsample) : 0;
    const bool active = s < nsample && nprod[row] <= OnePassShared<G>::CAP;
    u32 run;
    const u32 nnz = one_pass_row<G, false>(arpt, acol, aval, brpt, bcol, bval, active, row, sh, &run, no_prune());
    if (active && threadIdx.x % G == 0) {
        atomicAdd(&totals[0], (u64)run);
        atomicAdd(&totals[1], (u64)nnz);
    }
}

// The kernels by lanes a row: 4, 8, 16 and a warp; those named pruned
// prune as OnePassPrune says, the others ignore its arguments.

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_4(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<4, false>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_8(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<8, false>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_16(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<16, false>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_warp(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<SPGEMM_WARP_SIZE, false>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_pruned_4(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<4, true>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_pruned_8(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<8, true>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_pruned_16(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<16, true>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}

SPGEMM_FIXED_KERNEL void spgemm_numeric_one_pass_pruned_warp(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt,
                                   const u32* bcol, const value_t* bval, u32 m, u64* crpt, u32* ccol,
                                   value_t* cval, u64* tiles, u64 room, u64 below, u32 has_below, u32 keep) {
    one_pass_rows<SPGEMM_WARP_SIZE, true>(arpt, acol, aval, brpt, bcol, bval, m, crpt, ccol, cval, tiles, room, below,
                                 has_below, keep);
}
