// Vendor prelude for AMD GPUs and Hygon DCUs (HIP / hiprtc): wavefronts of
// 64, 64-bit lane masks, shuffles and ballots without _sync.
// hiprtc supplies the HIP built-ins itself; hipcc needs the header.
#if !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif
#define SPGEMM_WARP_SIZE 64
typedef unsigned long long lane_mask_t;
#define SPGEMM_FULL_MASK 0xffffffffffffffffull
#define SPGEMM_SHFL_DOWN(v, d) __shfl_down((v), (d))
#define SPGEMM_SHFL_DOWN_W(v, d, w) __shfl_down((v), (d), (w))
#define SPGEMM_SHFL(v, src) __shfl((v), (src))
#define SPGEMM_SHFL_UP(v, d) __shfl_up((v), (d))
// Shuffles within segments of w lanes (w a power of two up to the wavefront).
#define SPGEMM_SHFL_W(v, src, w) __shfl((v), (src), (w))
#define SPGEMM_SHFL_UP_W(v, d, w) __shfl_up((v), (d), (w))
#define SPGEMM_SHFL_XOR_W(v, m, w) __shfl_xor((v), (m), (w))
// Orders the shared-memory accesses of a wavefront's lanes: a wavefront
// runs in lockstep, so a fence at wavefront scope and a barrier against
// the compiler's reordering suffice.
#define SPGEMM_SYNC_WARP()                                    \
    do {                                                      \
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront"); \
        __builtin_amdgcn_wave_barrier();                      \
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront"); \
    } while (0)
#define SPGEMM_BALLOT(p) __ballot(p)
#define SPGEMM_POPC(m) __popcll(m)
#define SPGEMM_FFS(m) __ffsll((unsigned long long)(m))
typedef unsigned int u32;
typedef unsigned long long u64;
// HIP's second launch bound is the minimum number of waves per execution
// unit (SIMD, four per compute unit), not of blocks per multiprocessor.
#define SPGEMM_LAUNCH_BOUNDS(threads, blocks) \
    __launch_bounds__(threads, ((blocks) * ((threads) / SPGEMM_WARP_SIZE) + 3) / 4)
// Resident blocks the numeric dense kernel is compiled for: at 3 (40 VGPRs)
// it spills on gfx906; 2 leave it 64, and a dense row fits a compute unit's
// 64 KB only twice anyway.
#define SPGEMM_DENSE_NUMERIC_BLOCKS 2
