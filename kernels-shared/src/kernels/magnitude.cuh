
// Magnitudes of values as pruning compares them, in both programs: the
// pruning of rows as they are written (one_pass.cuh, row_prune.cuh) and
// of C after a product (prune.cuh).

// An unsigned key ordering magnitudes as |x| orders them: a float's bits
// with the sign cleared (NaN above +inf, as Rust's total_cmp orders |x|),
// an integer's absolute value (the smallest integer's saturating to the
// largest, as Scalar::abs does).
__device__ __forceinline__ u64 magnitude_key(double x) { return (u64)__double_as_longlong(x) & 0x7fffffffffffffffull; }
__device__ __forceinline__ u64 magnitude_key(float x) { return (u64)(__float_as_uint(x) & 0x7fffffffu); }
__device__ __forceinline__ u64 magnitude_key(long long x) {
    return x >= 0 ? (u64)x : x == (-0x7fffffffffffffffll - 1) ? 0x7fffffffffffffffull : (u64)(-x);
}
__device__ __forceinline__ u64 magnitude_key(int x) {
    return x >= 0 ? (u64)x : x == (-0x7fffffff - 1) ? 0x7fffffffull : (u64)(-(long long)x);
}

// The value whose bits (the low ones for 32-bit types) are `b`.
__device__ __forceinline__ void of_bits(u64 b, double* v) { *v = __longlong_as_double((long long)b); }
__device__ __forceinline__ void of_bits(u64 b, float* v) { *v = __uint_as_float((u32)b); }
__device__ __forceinline__ void of_bits(u64 b, long long* v) { *v = (long long)b; }
__device__ __forceinline__ void of_bits(u64 b, int* v) { *v = (int)(u32)b; }

// Whether |v| >= t (t >= 0): false for NaN, true for the smallest integer.
__device__ __forceinline__ bool at_least(value_t v, value_t t) { return v >= t || v <= -t; }
