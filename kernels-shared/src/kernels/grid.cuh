// Masked products into a dense grid: C<M> or C<!M> = A (+).(x) B where C's
// grid (A's m rows times B's n columns) is small against the operands, as
// in a breadth-first search's step (f<!v> = f any.pair A: one row, the
// frontier times the graph, the visited vertices masked out). Each product
// a_ik (x) b_kj is pushed into row i's bitmap of n bits (and, for
// semirings with values, its slot of a dense m x n array of values, which
// starts at (+)'s identity), unless M's bitmap says the mask excludes
// (i, j); the bitmaps are then counted, scanned and written out as C with
// sorted rows. No transpose of B is formed, and the products the mask
// excludes are skipped before they reach memory. This is the push
// (sparse-vector times sparse-matrix) step of Yang, Buluç and Owens,
// "Implementing Push-Pull Efficiently in GraphBLAS" (ICPP 2018), with the
// bitmap output of SuiteSparse:GraphBLAS's saxpy (Davis, "Algorithm 1037:
// SuiteSparse:GraphBLAS: Parallel Graph Algorithms in the Language of
// Sparse Linear Algebra", ACM TOMS 49(3), 2023).
//
// The products are numbered in the order of A's entries (offs: B's row
// lengths per entry of A, exclusively scanned), and a block takes
// consecutive tiles of them, so that a hub row of B is spread over many
// blocks like the short rows are: a product's entry of A is the last e
// with offs[e] <= p (entries without products skipped). Needs
// semiring_atomic (semiring_atomic.cuh), last_not_above and row_of_entry
// (masked_dot.cuh).

// Bits of one bitmap word (a u32): unrelated to the warp width.
#define SPGEMM_GRID_WORD_BITS 32u
// Products per thread of a tile.
#define SPGEMM_GRID_ITEMS 4u

// Everything the products need, in one pass of the grid: lens[e] B's row
// length for each entry e of A (lens[annz] 0, for the exclusive scan into
// offs), M's bits set in maskbits (zeroed before; `words` words a row),
// and the nvals values of the dense grid set to (+)'s identity (none for
// any.pair, whose values are all 1).
SPGEMM_FIXED_KERNEL void spgemm_grid_prepare(const u32* acol, u64 annz, const u64* brpt, u64* lens,
                                             const u64* mrpt, const u32* mcol, u32 m, u64 mnnz, u32 words,
                                             u32* maskbits, value_t* gval, u64 nvals) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 n = max(max(annz + 1, mnnz), nvals);
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
        if (e < annz) {
            const u32 k = acol[e];
            lens[e] = brpt[k + 1] - brpt[k];
        } else if (e == annz) {
            lens[e] = 0;
        }
        if (e < mnnz) {
            const u32 r = row_of_entry(mrpt, m, e), c = mcol[e];
            atomicOr(&maskbits[(u64)r * words + c / SPGEMM_GRID_WORD_BITS], 1u << (c % SPGEMM_GRID_WORD_BITS));
        }
        if (e < nvals) gval[e] = SPGEMM_IDENTITY;
    }
}

// The products pushed into the grid: product p belongs to entry e of A (row
// i, column k) and is a_ik (x) b_kj for the (p - offs[e])-th entry of B's
// row k. Kept when M's bit of (i, j) is set (`complement` 0) or clear (1):
// row i's bit j set in `hit` and, when gval is not null, the product added
// into gval[i * n + j] by (+).
SPGEMM_FIXED_KERNEL void spgemm_grid_products(const u64* arpt, const u32* acol, const value_t* aval, u32 m,
                                              u64 annz, const u64* offs, const u64* brpt, const u32* bcol,
                                              const value_t* bval, u32 n, u32 words, const u32* maskbits,
                                              u32 complement, u32* hit, value_t* gval) {
    __shared__ u64 s_range[2];
    const u64 total = offs[annz], tile = (u64)blockDim.x * SPGEMM_GRID_ITEMS;
    for (u64 start = (u64)blockIdx.x * tile; start < total; start += (u64)gridDim.x * tile) {
        const u64 end = min(start + tile, total);
        if (threadIdx.x == 0) {
            const u64 first = last_not_above(offs, 0, annz - 1, start);
            s_range[0] = first;
            s_range[1] = last_not_above(offs, first, annz - 1, end - 1);
        }
        __syncthreads();
        const u64 lo = s_range[0], hi = s_range[1];
        for (u32 t = 0; t < SPGEMM_GRID_ITEMS; ++t) {
            const u64 p = start + threadIdx.x + (u64)t * blockDim.x;
            if (p >= end) break;
            const u64 e = last_not_above(offs, lo, hi, p);
            const u32 i = row_of_entry(arpt, m, e), k = acol[e];
            const u64 q = brpt[k] + (p - offs[e]);
            const u32 j = bcol[q];
            const u64 w = (u64)i * words + j / SPGEMM_GRID_WORD_BITS;
            const u32 bit = 1u << (j % SPGEMM_GRID_WORD_BITS);
            if (((maskbits[w] & bit) != 0) == (complement != 0)) continue;
            // A plain read first: most pushes into a hub's word find it set.
            if (!(hit[w] & bit)) atomicOr(&hit[w], bit);
            if (gval)
                semiring_atomic(&gval[(u64)i * n + j], semiring_times(SPGEMM_READS_VALUES ? aval[e] : value_t(1),
                                                                      SPGEMM_READS_VALUES ? bval[q] : value_t(1)));
        }
        __syncthreads();
    }
}

// The set bits per word of the grid (nwords in all), into places for the
// exclusive scan that gives each word's first entry of C; places[nwords] 0.
SPGEMM_FIXED_KERNEL void spgemm_grid_counts(const u32* hit, u64 nwords, u64* places) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x; w <= nwords; w += stride)
        places[w] = w < nwords ? __popc(hit[w]) : 0;
}

// C written from the grid: each word's set bits, in column order, at its
// place (the scanned counts), with the value in gval (1 when gval is null:
// any.pair), and C's m + 1 row offsets (the places of each row's first
// word).
SPGEMM_FIXED_KERNEL void spgemm_grid_fill(const u32* hit, u32 m, u32 words, u32 n, const u64* places,
                                          const value_t* gval, u64* crpt, u32* ccol, value_t* cval) {
    const u64 nwords = (u64)m * words, stride = (u64)gridDim.x * blockDim.x;
    for (u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x; w <= nwords; w += stride) {
        if (w % words == 0) crpt[w / words] = places[w];
        if (w == nwords) continue;
        const u64 row = w / words;
        const u32 first = (u32)(w % words) * SPGEMM_GRID_WORD_BITS;
        u64 at = places[w];
        for (u32 bits = hit[w]; bits; bits &= bits - 1, ++at) {
            const u32 j = first + (u32)(__ffs(bits) - 1);
            ccol[at] = j;
            cval[at] = gval ? gval[row * n + j] : value_t(1);
        }
    }
}

// A breadth-first search's level: C's bitmap `hit` (one row of `nwords`
// words, the vertices found at `depth`, none visited before since the
// visited set's bitmap `maskbits` masked them out) added to the visited
// set, each new vertex's level set to `depth` and the vertex appended to
// the next frontier `next` at a place taken from `found` (zeroed before;
// the frontier's size after), in no particular order. At depth 0 `hit` is
// the visited set itself (the source's bit), every vertex's level is
// written (0 for a set bit, SPGEMM_EMPTY, unreached, for the others) and
// nothing is appended.
SPGEMM_FIXED_KERNEL void spgemm_grid_visit(const u32* hit, u64 nwords, u64 n, u32* maskbits, u32* levels,
                                           u32 depth, u32* next, u64* found) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += stride) {
        const u32 bits = hit[w];
        const u64 first = w * SPGEMM_GRID_WORD_BITS;
        if (depth == 0) {
            for (u32 b = 0; b < SPGEMM_GRID_WORD_BITS && first + b < n; ++b)
                levels[first + b] = (bits >> b) & 1u ? 0u : SPGEMM_EMPTY;
            continue;
        }
        if (!bits) continue;
        maskbits[w] |= bits;
        u64 at = atomicAdd(found, (u64)__popc(bits));
        for (u32 m = bits; m; m &= m - 1) {
            const u32 j = (u32)first + (u32)(__ffs(m) - 1);
            levels[j] = depth;
            next[at++] = j;
        }
    }
}
