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

/** Uploads `bytes` bytes (exactly the buffer's size) to buffer `name`. */
int rlx_gpu_set_buffer(rlx_gpu_artifact *h, const char *function, const char *name, const void *data, size_t bytes);
/** Runs the function once; fails naming the inputs/params never set. */
int rlx_gpu_run(rlx_gpu_artifact *h, const char *function);
/** Copies buffer `name` (bytes = its size) back to the host. */
int rlx_gpu_get_buffer(rlx_gpu_artifact *h, const char *function, const char *name, void *data, size_t bytes);
/** Runs `warmups` untimed and `iters` (>= 1) timed runs; each run is timed on
 * its own (CUDA events on "cuda", wall clock on "emu"). Any out pointer may
 * be NULL. */
int rlx_gpu_time(rlx_gpu_artifact *h, const char *function, int warmups, int iters, double *median_ms,
                 double *min_ms);

#ifdef __cplusplus
}
#endif

#endif /* RLX_RUNTIME_GPURUNTIME_H */
