// The semiring's atomic (+), shared by the product's program and the
// masked program (both have the program builder emit value_t, the
// semiring and SPGEMM_IDENTITY in front of them).

// The semiring's (+) on a value in memory (shared or global), returning
// the value before: atomicAdd for plus, else a compare-and-swap loop that
// stops as soon as (+) leaves the value unchanged. The program builder
// emits semiring_plus, SPGEMM_IDENTITY and SPGEMM_ADDITIVE
// (spgemm_core::semiring).
__device__ __forceinline__ bool same_bits(double x, double y) {
    return __double_as_longlong(x) == __double_as_longlong(y);
}
__device__ __forceinline__ bool same_bits(float x, float y) { return __float_as_uint(x) == __float_as_uint(y); }
__device__ __forceinline__ bool same_bits(long long x, long long y) { return x == y; }
__device__ __forceinline__ bool same_bits(int x, int y) { return x == y; }
__device__ __forceinline__ double swap_value(double* p, double expected, double desired) {
    return __longlong_as_double((long long)atomicCAS((u64*)p, (u64)__double_as_longlong(expected),
                                                     (u64)__double_as_longlong(desired)));
}
__device__ __forceinline__ float swap_value(float* p, float expected, float desired) {
    return __uint_as_float(atomicCAS((u32*)p, __float_as_uint(expected), __float_as_uint(desired)));
}
__device__ __forceinline__ long long swap_value(long long* p, long long expected, long long desired) {
    return (long long)atomicCAS((u64*)p, (u64)expected, (u64)desired);
}
__device__ __forceinline__ int swap_value(int* p, int expected, int desired) { return atomicCAS(p, expected, desired); }
// Hardware addition for every value type: 64-bit integers add as unsigned
// (two's complement: the same bits, wrapping on overflow).
__device__ __forceinline__ double add_value(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ float add_value(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ int add_value(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ long long add_value(long long* p, long long v) {
    return (long long)atomicAdd((u64*)p, (u64)v);
}
__device__ __forceinline__ value_t semiring_atomic(value_t* p, value_t v) {
#if SPGEMM_ADDITIVE
    return add_value(p, v);
#else
    value_t old = *(volatile value_t*)p;
    while (true) {
        const value_t next = semiring_plus(old, v);
        if (same_bits(next, old)) return old;
        const value_t seen = swap_value(p, old, next);
        if (same_bits(seen, old)) return old;
        old = seen;
    }
#endif
}

// Whether a dense slot still holds (+)'s identity, the value every slot
// starts at (x (+) identity == x for every x): the first product to reach
// a slot finds it so. For plus the identity is -0.0 (x + -0.0 == x for
// every x, +0.0 included), so that the first product lands exactly.
__device__ __forceinline__ bool is_identity(value_t x) { return same_bits(x, SPGEMM_IDENTITY); }

