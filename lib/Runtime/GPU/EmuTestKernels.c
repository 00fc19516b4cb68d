/*===- EmuTestKernels.c - An emulator build written by hand -----*- C -*-===//
 *
 * What rlx-gpu-to-emulator would emit for two kernels, so the runtime's tests
 * run without the compiler: `add_one(x, y, n)` computes y[i] = x[i] + 1 for
 * i < n[0] (a bounds guard like the compiler's), one thread per element;
 * `add_one_oob` forgets the guard and so touches x and y past their ends in
 * the last block. Every access goes through __rlx_emu_access first.
 *===----------------------------------------------------------------------===*/
#include "RLX/Runtime/Emulator.h"

static void add_one_body(void **params, int guarded) {
  const float *x = *(const float **)params[0];
  float *y = *(float **)params[1];
  const int32_t *n = *(const int32_t **)params[2];
  uint64_t i = __rlx_emu_id(RLX_EMU_BLOCK_ID * 4) * __rlx_emu_id(RLX_EMU_BLOCK_DIM * 4) +
               __rlx_emu_id(RLX_EMU_THREAD_ID * 4);
  if (!__rlx_emu_access(n, sizeof(int32_t), RLX_EMU_READ))
    return;
  if (guarded && i >= (uint64_t)*n)
    return;
  float v = 0.0f;
  if (__rlx_emu_access(x + i, sizeof(float), RLX_EMU_READ))
    v = x[i];
  if (__rlx_emu_access(y + i, sizeof(float), RLX_EMU_WRITE))
    y[i] = v + 1.0f;
}

void add_one__emu(void **params) { add_one_body(params, 1); }
void add_one_oob__emu(void **params) { add_one_body(params, 0); }
