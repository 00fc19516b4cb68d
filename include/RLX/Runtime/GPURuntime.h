/*===- GPURuntime.h - Run an RLX GPU artifact (C API) ------------*- C -*-===//
 *
 * The compiler's GPU path ends in an artifact directory (manifest.json,
 * cubins, PTX, optionally kernels.emu.so; docs/gpu-artifact.md). This C API
 * opens one on the CUDA driver or on the CPU emulator and runs its functions:
 * rlx-gpu-run, Python (ctypes, no bindings to build) and rlx-run in process
 * all go through it. The library (libRLXGPURuntime.so) links neither
 * LLVM/MLIR nor libcuda: the driver is loaded at run time.
 *
 * Semantics: at open, every function's arena and IO buffers are allocated on
 * the device (one allocation each). set_buffer uploads at once; buffers of
 * role "param" (weights) are uploaded once and kept across runs. run launches
 * the function's kernels in plan order on one stream and waits for them.
 * get_buffer copies a buffer back. A handle is not thread-safe; use one per
 * thread.
 *
 * Every function returning int returns 0 on success and nonzero on failure,
 * with rlx_gpu_last_error(h) describing it. `function` may be NULL for the
 * manifest's entry function.
 *===----------------------------------------------------------------------===*/
#ifndef RLX_RUNTIME_GPURUNTIME_H
#define RLX_RUNTIME_GPURUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rlx_gpu_artifact rlx_gpu_artifact;

/** Opens the artifact in directory `dir`. `device` is "cuda", "emu" or
 * "auto" (NULL = "auto": CUDA when a driver and a device are there, else the
 * emulator). Returns NULL on failure with the message in err (when non-NULL,
 * truncated to errlen bytes including the NUL). */
rlx_gpu_artifact *rlx_gpu_open(const char *dir, const char *device, char *err, size_t errlen);
void rlx_gpu_close(rlx_gpu_artifact *h);

/** The last error on h ("" when none). Valid until the next call on h. */
const char *rlx_gpu_last_error(rlx_gpu_artifact *h);
/** "cuda" or "emu". */
const char *rlx_gpu_device(rlx_gpu_artifact *h);

/** Functions: the entry's name, their number and names (NULL when out of range). */
const char *rlx_gpu_entry(rlx_gpu_artifact *h);
/** The device memory the artifact holds, in bytes: its constants, every
 * function's arena and buffers (a packed parameter is its packing
 * function's output buffer, not a second copy) and tensor maps. */
uint64_t rlx_gpu_device_bytes(rlx_gpu_artifact *h);
int rlx_gpu_num_functions(rlx_gpu_artifact *h);
const char *rlx_gpu_function_name(rlx_gpu_artifact *h, int index);

/** IO buffers of a function, in manifest order: -1 for an unknown function. */
int rlx_gpu_num_buffers(rlx_gpu_artifact *h, const char *function);
/** Describes buffer `index`: name, role ("input", "param", "output"), dtype
 * (an MLIR element type: "f32", "bf16", "f4E2M1FN", ...), rank and shape
 * (a pointer valid while h is open) and size in bytes. Any out pointer may be
 * NULL. */
int rlx_gpu_buffer_info(rlx_gpu_artifact *h, const char *function, int index, const char **name, const char **role,
                        const char **dtype, int *rank, const int64_t **shape, uint64_t *bytes);

/** Uploads `bytes` bytes (exactly the buffer's size) to buffer `name`. A
 * name may also be (or only be) an original parameter that a packing
 * function of `function` takes (manifest `packed_by`): it is set there, and
 * the next run (or rlx_gpu_pack) of `function` runs that packing function
 * first, which writes the packed parameters (its output buffers are
 * them). So a model's
 * parameters are set by their checkpoint names on the entry alone. */
int rlx_gpu_set_buffer(rlx_gpu_artifact *h, const char *function, const char *name, const void *data, size_t bytes);
/** Runs the packing functions of `function` whose inputs were set since
 * they last ran (what rlx_gpu_run does first), for timing them apart. */
int rlx_gpu_pack(rlx_gpu_artifact *h, const char *function);
/** Packs (as rlx_gpu_pack) and then frees the packing functions' input
 * buffers, the original parameters: the packed ones stand in for them, so
 * the weights are held once on the device. `*released` (may be NULL)
 * receives the bytes freed. Setting an original again allocates it again;
 * the next run then packs, and needs every original of that packing
 * function set again (the error names those released). */
int rlx_gpu_release_packed_sources(rlx_gpu_artifact *h, const char *function,
                                   uint64_t *released);
/** Runs the function once; fails naming the inputs/params never set. */
int rlx_gpu_run(rlx_gpu_artifact *h, const char *function);
/** Copies buffer `name` (bytes = its size) back to the host. */
int rlx_gpu_get_buffer(rlx_gpu_artifact *h, const char *function, const char *name, void *data, size_t bytes);
/** Runs `warmups` untimed and `iters` (>= 1) timed runs; each run is timed on
 * its own (CUDA events on "cuda", wall clock on "emu"). Any out pointer may
 * be NULL. */
int rlx_gpu_time(rlx_gpu_artifact *h, const char *function, int warmups, int iters, double *median_ms,
                 double *min_ms);
/** With `on`, rlx_gpu_time evicts what earlier runs left in the device's
 * caches before each timed run (on "cuda" it writes a buffer twice the L2's
 * size, outside the timed interval), so bandwidth figures are those of
 * memory, not of an L2 that holds the inputs. Off by default. */
int rlx_gpu_set_flush_caches(rlx_gpu_artifact *h, int on);
/** Kernel timeline. With `on`, every kernel launch from here on is timed on
 * its own (CUDA events around it on "cuda", which serializes the launches;
 * the wall clock on "emu") and recorded with its name, launch shape and the
 * source positions the manifest gives it; rlx_gpu_write_trace writes what was
 * recorded as Chrome trace-event JSON (Perfetto, chrome://tracing). Setting
 * it (on or off) clears the record. */
int rlx_gpu_set_trace(rlx_gpu_artifact *h, int on);
int rlx_gpu_write_trace(rlx_gpu_artifact *h, const char *path);

/** Tensor parallelism. An artifact compiled with --tp N is the per-rank
 * program; its all-reduces and all-gathers are collective steps of the plan
 * (docs/gpu-artifact.md), run in plan order over the communicator set here,
 * which must have the N ranks the plan was compiled for (a one-rank plan
 * needs none: a step is a copy). Every rank opens the artifact (its rank's,
 * when the manifest names a "rank") and calls this once, before running,
 * with its rank and the job's size. On "cuda" the collectives are NCCL calls
 * (libnccl.so.2 or $RLX_NCCL_LIBRARY, opened at run time) on the run's
 * stream: rank 0 makes `nccl_id` (128 bytes) with rlx_gpu_nccl_unique_id and
 * the caller hands it to every rank (e.g. MPI_Bcast). On "emu", whose device
 * memory is host memory, they call `host_allreduce` (e.g. MPI_Allreduce; send
 * and recv may be equal) and `host_allgather` (MPI_Allgather). A plan
 * compiled for N ranks fails to run over a communicator of another size. */
typedef int (*rlx_gpu_host_allreduce_fn)(void *ctx, const void *send, void *recv, size_t count,
                                         const char *dtype);
/** Every rank's `bytes` bytes at `send` into `recv`, rank r's at r·bytes. */
typedef int (*rlx_gpu_host_allgather_fn)(void *ctx, const void *send, void *recv, size_t bytes);
int rlx_gpu_set_communicator(rlx_gpu_artifact *h, int rank, int size, const unsigned char *nccl_id,
                             rlx_gpu_host_allreduce_fn host_allreduce,
                             rlx_gpu_host_allgather_fn host_allgather, void *ctx);
/** A new NCCL unique id (rank 0 of a "cuda" job) into `id` (128 bytes). */
int rlx_gpu_nccl_unique_id(unsigned char *id, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* RLX_RUNTIME_GPURUNTIME_H */
