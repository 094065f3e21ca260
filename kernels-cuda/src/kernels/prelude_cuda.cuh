// Vendor prelude for NVIDIA (CUDA / NVRTC). The shared body never names a
// warp width or lane-mask type: it uses only what a prelude defines.
#define SPGEMM_WARP_SIZE 32
typedef unsigned int lane_mask_t;
#define SPGEMM_FULL_MASK 0xffffffffu
#define SPGEMM_SHFL_DOWN(v, d) __shfl_down_sync(SPGEMM_FULL_MASK, (v), (d))
#define SPGEMM_SHFL_DOWN_W(v, d, w) __shfl_down_sync(SPGEMM_FULL_MASK, (v), (d), (w))
typedef unsigned int u32;
typedef unsigned long long u64;
#define SPGEMM_SHFL(v, src) __shfl_sync(SPGEMM_FULL_MASK, (v), (src))
#define SPGEMM_SHFL_UP(v, d) __shfl_up_sync(SPGEMM_FULL_MASK, (v), (d))
// Shuffles within segments of w lanes (w a power of two up to the warp).
#define SPGEMM_SHFL_W(v, src, w) __shfl_sync(SPGEMM_FULL_MASK, (v), (src), (w))
#define SPGEMM_SHFL_UP_W(v, d, w) __shfl_up_sync(SPGEMM_FULL_MASK, (v), (d), (w))
#define SPGEMM_SHFL_XOR_W(v, m, w) __shfl_xor_sync(SPGEMM_FULL_MASK, (v), (m), (w))
// Orders the shared-memory accesses of a warp's lanes (a converged warp).
#define SPGEMM_SYNC_WARP() __syncwarp()
#define SPGEMM_BALLOT(p) __ballot_sync(SPGEMM_FULL_MASK, (p))
#define SPGEMM_POPC(m) __popc(m)
#define SPGEMM_FFS(m) __ffs(m)
// Occupancy a kernel is compiled for: `blocks` resident blocks of `threads`.
#define SPGEMM_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
// Resident blocks the numeric dense kernel is compiled for: 3 of 512
// threads at 40 registers, no spills.
#define SPGEMM_DENSE_NUMERIC_BLOCKS 3
