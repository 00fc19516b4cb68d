//===- Emulator.h - The RLX GPU emulator's C ABI ---------------*- C -*-===//
//
// The GPU emulator runs the same gpu.func kernels that go to NVVM, lowered for
// the CPU (rlx-gpu-to-emulator), with every GPU thread a fiber of its block.
// This header is the whole contract between the two sides:
//
//  * Kernel side (`__rlx_emu_*`): the lowered kernel calls these for thread
//    and block ids, barriers, warp collectives and, before every load and
//    store, for the access check. They run on the calling thread's fiber.
//  * Host side (`rlx_emu_*`): register the global buffers a launch may touch
//    and launch a kernel with CUDA's parameter convention (`params[i]` points
//    at the value of kernel parameter i, as for cuLaunchKernel).
//
// A kernel entry is the packed wrapper `<kernel>__emu(void **params)` that the
// lowering emits: params holds the kernel's own parameters followed by one
// pointer-to-pointer per workgroup (shared) buffer, in declaration order; the
// emulator allocates those per block (filled with NaN bytes, 0xFF) and
// appends them.
//
// C only, no LLVM: the runtime that uses it ships without LLVM/MLIR.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_EMULATOR_H
#define RLX_RUNTIME_EMULATOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//===--- Kernel side ------------------------------------------------------===//

/// Which id `__rlx_emu_id` returns: kind * 4 + dimension (0 = x, 1 = y, 2 = z).
enum rlx_emu_id_kind {
  RLX_EMU_THREAD_ID = 0,
  RLX_EMU_BLOCK_ID = 1,
  RLX_EMU_BLOCK_DIM = 2,
  RLX_EMU_GRID_DIM = 3,
  RLX_EMU_LANE_ID = 4, ///< dimension ignored
};
uint64_t __rlx_emu_id(uint32_t which);

/// gpu.barrier / bar.sync 0: every thread of the block must arrive; shared
/// memory accesses on either side are ordered (the race checker's epoch).
/// A thread that has returned never arrives: when the others wait at a
/// barrier that is "barrier divergence", and waits at different sync points
/// that nobody can leave are a "deadlock"; both stop the launch (nonzero).
void __rlx_emu_barrier(void);

/// Shuffle modes, numbered as gpu::ShuffleMode and PTX shfl.sync's .mode.
enum rlx_emu_shuffle_mode {
  RLX_EMU_SHFL_XOR = 0, ///< PTX .bfly
  RLX_EMU_SHFL_UP = 1,
  RLX_EMU_SHFL_DOWN = 2,
  RLX_EMU_SHFL_IDX = 3,
};
/// PTX `shfl.sync.<mode>.b32 d|p, a, b, c, membermask` exactly as the PTX ISA
/// defines it (segmask = c[12:8], clamp = c[4:0]). Returns d in the low 32
/// bits and p (the source lane was in range) in bit 32. All lanes of
/// membermask rendezvous; a lane of membermask that has exited or waits at a
/// different collective is reported. A warp is 32 consecutive linear thread
/// ids (x + y*bx + z*bx*by); lanes past the block size do not exist: they are
/// not waited for, and a shuffle that reads one (or any lane outside
/// membermask) is reported.
uint64_t __rlx_emu_shfl_sync(uint32_t mode, uint32_t a, uint32_t b, uint32_t c,
                             uint32_t membermask);
/// gpu.shuffle (value, offset, width) as upstream's NVVM lowering maps it:
/// membermask = 0xFFFFFFFF >> (32 - width), c = 32 - width for up and
/// width - 1 otherwise; then __rlx_emu_shfl_sync.
uint64_t __rlx_emu_shuffle(uint32_t mode, uint32_t value, uint32_t offset, uint32_t width);

/// Votes (PTX vote.sync): 0 = all, 1 = any, 2 = uni, 3 = ballot. Returns the
/// predicate result (0/1) or, for ballot, the 32-bit mask.
uint32_t __rlx_emu_vote_sync(uint32_t mode, uint32_t pred, uint32_t membermask);

/// Access flags.
enum rlx_emu_access_flags {
  RLX_EMU_READ = 0,
  RLX_EMU_WRITE = 1,
  /// By the async proxy (wgmma operands, TMA): a read of shared bytes a
  /// thread wrote through the generic proxy needs that thread's
  /// fence.proxy.async in between.
  RLX_EMU_ASYNC = 2,
  /// An atomic read-modify-write (atom, red): race-checked as a read, so
  /// atomics of several threads on one address do not conflict, while one
  /// against a plain write of another thread that no barrier orders does
  /// (a plain read after an atomic of another thread without a barrier is
  /// not reported).
  RLX_EMU_ATOMIC = 4,
};
/// Bits 8-15 of the access flags: log2 of the alignment the instruction
/// requires, plus one (0: none checked); a misaligned address is a finding
/// (the GPU's "misaligned address" error).
#define RLX_EMU_ALIGN_SHIFT 8
/// Called before every load/store of `bytes` bytes at `addr`. Global accesses
/// must lie inside one registered buffer, shared accesses inside one of the
/// block's shared buffers; shared accesses are race-checked (two threads
/// touching the same byte between barriers, at least one writing). Findings
/// are recorded with the kernel, block and thread; the access itself still
/// happens when it is inside some valid memory, and is skipped (a load then
/// yields whatever was there) otherwise, so one bad kernel never corrupts
/// the host process. Accesses inside the calling thread's own stack (private
/// memory) are always fine.
/// Returns 1 when the access may proceed, 0 when it must be skipped.
uint32_t __rlx_emu_access(const void *addr, uint64_t bytes, uint32_t flags);

/// mma.sync.aligned.m16n8k16.row.col.f32.<type>.<type>.f32 (type 0 = f16,
/// 1 = bf16): the calling lane's A (4 × b16x2), B (2 × b16x2) and C (4 × f32)
/// fragments in, D (4 × f32) out, with the PTX ISA's fragment layouts; all 32
/// lanes of the warp rendezvous.
void __rlx_emu_mma_m16n8k16(uint32_t type, const uint32_t *a, const uint32_t *b,
                            const float *c, float *d);
/// ldmatrix.sync.aligned.m8n8.x<num>[.trans].shared.b16 (num = 1, 2, 4):
/// lanes 8m..8m+7 give the shared-memory row addresses of matrix m (16 bytes
/// each, bounds- and race-checked as reads); `out` gets the lane's `num`
/// registers. All 32 lanes rendezvous.
void __rlx_emu_ldmatrix(uint32_t num, uint32_t trans, const void *addr, uint32_t *out);

/// cp.async.{ca,cg}.shared.global [dst], [src], size, src_size (size 4, 8
/// or 16; bytes past src_size are zero): queued in the calling thread's open
/// group and performed only when a cp.async.wait.group completes that group,
/// so reading the destination before the wait sees the old bytes (NaN-filled
/// shared memory), as a missing wait would on the GPU. The source is checked
/// when the copy is issued, the destination (a shared-memory write, race
/// checked) when it completes.
void __rlx_emu_cp_async(void *dst, const void *src, uint32_t size, uint32_t src_size);
/// cp.async.commit_group: the open group becomes the newest committed one.
void __rlx_emu_cp_async_commit(void);
/// cp.async.wait_group n: completes every committed group but the newest n.
void __rlx_emu_cp_async_wait(uint32_t n);

/// mbarrier objects (PTX ISA "mbarrier"; lib/Runtime/Emulator/MBarrier.cpp):
/// `bar` is the 8-byte aligned shared-memory address of the object, whose
/// state the emulator keeps beside it. init(count): phase 0 expects `count`
/// arrivals. arrive(count, expect_tx): first adds `expect_tx` bytes to the
/// phase's transaction count, then counts `count` arrivals; returns the
/// state token (the number of phases completed before the arrival). tx(n):
/// expect_tx (n > 0) or complete_tx (n < 0) of |n| bytes. A phase completes
/// when no arrival and no byte is pending; then the next phase begins with
/// the expected count. test_wait(state, parity): whether the phase of the
/// token (parity = 0) or of that parity (parity = 1: `state` is the parity)
/// has completed. wait_parity(p): try_wait.parity in a loop, i.e. blocks the
/// thread until the phase of parity p has completed (a wait nothing can
/// complete is a reported deadlock). Misuse (an address outside shared
/// memory, an object never initialized, more arrivals than pending) is a
/// finding.
void __rlx_emu_mbarrier_init(void *bar, uint32_t count);
void __rlx_emu_mbarrier_inval(void *bar);
uint64_t __rlx_emu_mbarrier_arrive(void *bar, uint32_t count, uint32_t expect_tx);
void __rlx_emu_mbarrier_tx(void *bar, int64_t bytes);
uint32_t __rlx_emu_mbarrier_test_wait(void *bar, uint64_t state, uint32_t parity);
void __rlx_emu_mbarrier_wait_parity(void *bar, uint32_t parity);

/// wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<type>.<type> (type 0 f16,
/// 1 bf16; n a multiple of 8 up to 256) with A and B in shared memory under
/// matrix descriptors (lib/Runtime/Emulator/Wgmma.h gives the addressing of
/// K-major and MN-major operands, the swizzle modes and the accumulator
/// layout): `c` and `d` are the thread's n/2 f32 accumulator registers;
/// flags bit 0 scale-d, bits 1, 2 negate A, B, bits 3, 4 transpose
/// (MN-major) A, B. The 128 threads of the warpgroup rendezvous.
void __rlx_emu_wgmma(uint32_t type, uint32_t n, uint64_t desc_a, uint64_t desc_b, const float *c,
                     float *d, uint32_t flags);
/// The same with A in registers: `a` points at the thread's four b16x2
/// registers of A's fragment (Wgmma.h); flags as above without bit 3.
void __rlx_emu_wgmma_rs(uint32_t type, uint32_t n, const uint32_t *a, uint64_t desc_b,
                        const float *c, float *d, uint32_t flags);

/// wgmma's asynchrony (PTX ISA, "Asynchronous Warpgroup Level Matrix
/// Multiply-Accumulate"): a wgmma.mma_async may read its shared operands at
/// any time until the wgmma.wait_group that retires its group, and its
/// accumulators are undefined until then. The emulator computes a wgmma at
/// issue and then holds its shared operand bytes as in flight: a write to
/// them (generic or TMA) before every thread of the warpgroup retired it is a
/// finding, as is a register access of its accumulators before the retiring
/// wait (__rlx_emu_wgmma_read, placed by the outline pass before each such
/// access, naming the kernel's wgmma op), a wgmma issued without a
/// wgmma.fence after the thread's last register access, and a thread that
/// exits with wgmmas uncommitted or in flight.
void __rlx_emu_wgmma_op(uint32_t op); ///< the kernel's id of the next wgmma
void __rlx_emu_wgmma_fence(void);
void __rlx_emu_wgmma_commit(void);
void __rlx_emu_wgmma_wait(uint32_t n);
void __rlx_emu_wgmma_read(uint32_t op);
/// fence.proxy.async: the calling thread's generic shared writes so far
/// become visible to the async proxy. fence.mbarrier_init: its mbarrier.inits
/// become visible to TMA's complete_tx (counted as the same fence here).
void __rlx_emu_fence_proxy_async(void);
/// setmaxnreg.{inc (increase = 1), dec}.sync.aligned.u32 count: the calling
/// thread's register count; threads start at the kernel's `maxnreg` (0: the
/// block's share of 65536). inc waits until the block's threads hold at most
/// 65536 registers with it; one nothing can satisfy is a deadlock finding.
void __rlx_emu_setmaxnreg(uint32_t count, uint32_t increase, uint32_t maxnreg);

/// bar.sync / bar.arrive on named barrier `id` (0-15) with `count` threads
/// (a multiple of 32, at most the block's; 0: all of the block's, as a
/// bar.sync without a count): the barrier completes when
/// `count` threads arrived, by either form; `sync` waits for that, `arrive`
/// (sync = 0) does not. A completed barrier orders shared-memory accesses for
/// the race checker as the block barrier does. A bad id or count, or
/// arrivals on one barrier with different counts, is a finding. (gpu.barrier
/// is __rlx_emu_barrier; kernels that use named barrier 0 too mix the two at
/// their own risk, as on the GPU: the block barrier is bar.sync 0 and shares
/// named barrier 0's state.)
void __rlx_emu_named_barrier(uint32_t id, uint32_t count, uint32_t sync);

/// The emulator's tensor map (the driver's CUtensorMap is opaque): a tiled
/// view of a global tensor, dimensions innermost first, made by
/// rlx_emu_encode_tensor_map. 128 bytes, like CUtensorMap.
typedef struct rlx_emu_tensor_map {
  uint32_t magic;
  uint32_t rank;          ///< 1..5
  uint32_t element_bytes; ///< 1, 2, 4 or 8
  uint32_t swizzle;       ///< 0 none, 1 32B, 2 64B, 3 128B (CU_TENSOR_MAP_SWIZZLE_*)
  const void *base;       ///< the tensor's first element (16-byte aligned)
  uint64_t dims[5];       ///< elements per dimension
  uint64_t strides[4];    ///< bytes between steps of dimensions 1..rank-1
  uint32_t box[5];        ///< the box's elements per dimension (1..256)
  uint32_t reserved[3];
} rlx_emu_tensor_map;

/// cp.async.bulk.tensor.<rank>d.shared::cluster.global.tile
/// .mbarrier::complete_tx::bytes [dst], [map, {coords}], [bar]: queues the box
/// at `coords` (signed elements, innermost first) for `dst` (aligned to 128
/// bytes, or to the swizzle atom of 8 rows); it lands when no thread can run
/// or at a test_wait on `bar`: elements outside the tensor are zero, shared
/// bytes at offset o go to swizzle(o) (bits [4, 4+s) ^= bits [7, 7+s) for
/// swizzle s), and the box's bytes complete_tx on `bar`. Shared writes and
/// global reads are bounds- and race-checked as the issuing thread's; a load
/// nothing lands by the end of the block is a finding.
void __rlx_emu_tma_load(void *dst, const void *map, const int32_t *coords, uint32_t rank,
                        void *bar);

/// The block's dynamic shared memory (gpu.dynamic_shared_memory), of the
/// launch's dynamic_shared_bytes, NaN-filled, bounds- and race-checked.
void *__rlx_emu_dynamic_shared(void);

//===--- Host side --------------------------------------------------------===//

typedef void (*rlx_emu_entry)(void **params);

typedef struct rlx_emu_shared {
  uint64_t bytes;
  uint64_t align;
} rlx_emu_shared;

typedef struct rlx_emu_kernel {
  const char *name;
  rlx_emu_entry entry;
  uint32_t num_params;          ///< the kernel's own parameters
  const rlx_emu_shared *shared; ///< its workgroup buffers, in order
  uint32_t num_shared;
} rlx_emu_kernel;

/// Global memory the kernels may access (arena, IO buffers, weights).
/// Returns 0, or nonzero for a null base or a range overlapping another
/// registered buffer (registering the same base again replaces it).
int rlx_emu_register_buffer(const void *base, uint64_t bytes, const char *name);
void rlx_emu_unregister_buffer(const void *base);

/// Fills `out` with a tensor map of `rank` dimensions (innermost first:
/// dims[d] elements, strides[d - 1] bytes between steps of dimension d ≥ 1,
/// a box of box[d] elements), with the checks of cuTensorMapEncodeTiled:
/// 16-byte aligned base and strides, 1..256-element box dimensions whose
/// inner one is a multiple of 16 bytes and, when swizzled, at most the
/// swizzle span. Returns null, or what is wrong (and leaves `out` alone).
const char *rlx_emu_encode_tensor_map(rlx_emu_tensor_map *out, const void *base, uint32_t rank,
                                      uint32_t element_bytes, const uint64_t *dims,
                                      const uint64_t *strides, const uint32_t *box,
                                      uint32_t swizzle);

/// Options (bit flags; default RLX_EMU_CHECK_ALL).
enum rlx_emu_option {
  RLX_EMU_CHECK_BOUNDS = 1,
  RLX_EMU_CHECK_RACES = 2,
  RLX_EMU_CHECK_ALL = 3,
};
void rlx_emu_set_options(uint32_t options);

/// Runs one launch to completion (blocks one after another, threads of a
/// block as fibers). Returns 0 on success, nonzero when something was
/// reported (out of bounds, race, barrier divergence, deadlock, bad launch
/// configuration); rlx_emu_last_report() then describes it (kernel, block,
/// thread, address, buffer), at most a few dozen findings.
int rlx_emu_launch(const rlx_emu_kernel *kernel, const uint32_t grid[3],
                   const uint32_t block[3], uint64_t dynamic_shared_bytes, void **params);
/// The text stays valid until the next launch.
const char *rlx_emu_last_report(void);

/// When each block of the last launch ran (the emulator runs them one after
/// another, x fastest, then y, then z): microseconds from the launch's start
/// and the block's wall time. Returns how many blocks ran (all of them, or
/// those up to the one a finding aborted); `*times` stays valid until the
/// next launch. What rlx-gpu-run --trace shows per block on the emulator.
typedef struct rlx_emu_block_time {
  double start_us, duration_us;
} rlx_emu_block_time;
uint64_t rlx_emu_last_block_times(const rlx_emu_block_time **times);

// Thread safety: one launch runs at a time per process. The host functions
// serialize on one process-wide mutex (a registration from another thread
// waits for a running launch); the kernel-side functions may only be called
// by the kernels of the running launch, on its OS thread.

#ifdef __cplusplus
}
#endif

#endif // RLX_RUNTIME_EMULATOR_H
