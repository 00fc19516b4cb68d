//===- Passes.td - RLX NVVM backend passes ------------------*- tablegen -*-===//

#ifndef RLX_TARGET_NVVM_PASSES_TD
#define RLX_TARGET_NVVM_PASSES_TD

include "mlir/Pass/PassBase.td"

def NVVMCheckTarget : Pass<"rlx-nvvm-check-target", "::mlir::ModuleOp"> {
  let summary = "Reject (op, chip, PTX ISA) combinations LLVM's NVPTX backend cannot compile";
  let description = [{
    Runs on the kernels of every `gpu.module` before any LLVM code
    generation. LLVM 22's NVPTX backend aborts the process ("Cannot select",
    "PTX version ... does not support target") on several combinations that
    MLIR's verifiers accept; this pass turns each of them into a diagnostic
    located at the op, naming the op, what it needs and the target it got:

    - `nvvm.wgmma.*`, `nvgpu.warpgroup.*`: sm_90a (not sm_90, not sm_100a);
    - `nvvm.tcgen05.*`: sm_100a / sm_101a / sm_103a; block-scaled FP4
      (`mxf4nvf4`) also PTX ISA 8.8;
    - `nvvm.convert.*` to or from e2m1 (FP4) / e2m3 / e3m2 (FP6): an
      sm_100-family `a`/`f` chip and PTX ISA 8.6;
    - conversions to or from e4m3 / e5m2 (FP8): sm_89 and PTX ISA 8.1;
    - `mma.sync` with bf16 / tf32, `cp.async`: sm_80; `ldmatrix`: sm_75;
      TMA (`cp.async.bulk.*`), `mbarrier.try_wait`, `elect.sync`,
      `stmatrix`, `fence.proxy`: sm_90; `setmaxregister`: sm_90a;
    - any arith/math op left on 8-, 6- or 4-bit floats (upstream has no NVVM
      lowering for them; `rlx-expand-low-precision-floats` runs before this
      pass in `rlx-lower-to-nvvm`, case L1);
    - static shared memory (workgroup attributions) above the chip's opt-in
      limit.

    The target comes from the options, or else from the `nvvm.target`
    attached to the `gpu.module`. Chip and PTX ISA themselves are checked
    as in `convert-rlx-lir-to-gpu` (unknown chip, ISA older than the chip
    needs, ISA newer than the installed ptxas: case L3).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "the NVIDIA chip (default: the gpu.module's nvvm.target, else sm_90a)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "+ptxNN to choose the PTX ISA (default: the chip's)">
  ];
}

def GPUDynamicShared : Pass<"rlx-gpu-dynamic-shared", "::mlir::ModuleOp"> {
  let summary = "Workgroup buffers past 48 KiB become views of dynamic shared memory";
  let description = [{
    Static shared memory (a `gpu.func`'s workgroup attributions) is limited
    to 48 KiB on every chip; beyond that a kernel must take dynamic shared
    memory, which its launch sizes and the runtime opts into
    (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, rule R1 of
    docs/gpu.md). For each kernel whose attributions need more, every
    attribution becomes a `memref.view` of `gpu.dynamic_shared_memory` at a
    128-byte aligned offset (after the dynamic shared memory the kernel
    already takes, if any), and every `gpu.launch_func` of it asks for the
    sum. Kernels within 48 KiB are left alone. A kernel launched with a
    dynamic size that is not a constant, or an attribution with a layout,
    is an error naming it.
  }];
}

def NVVMAssemble : Pass<"rlx-nvvm-assemble", "::mlir::ModuleOp"> {
  let summary = "Assemble each gpu.binary's PTX with ptxas; attach cubin, PTX and resources";
  let description = [{
    Takes the `gpu.binary` ops that `gpu-module-to-binary{format=isa}` made
    (PTX), runs the installed ptxas (`$RLX_PTXAS`, `$CUDA_ROOT/bin`,
    `/usr/local/cuda/bin`, `PATH`) with `-v`, and replaces the PTX object with
    the cubin (`#gpu.object<..., bin = ...>`). The PTX stays on the op as
    `rlx.ptx` (for JIT on newer GPUs), and each kernel's resources from
    ptxas's report as `rlx.kernels = {<kernel> = {registers, spill_bytes,
    stack_bytes, shared_bytes, barriers}}`.

    A kernel that spills or has a stack frame is an error with `spills=error`
    (what the tests use), a warning with `spills=warn` (the default).
    `report` prints one remark per kernel with its resources. A missing
    ptxas or a ptxas failure is an error naming the gpu.binary, with
    ptxas's messages.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "the NVIDIA chip (default: the object's nvvm.target)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "+ptxNN (default: the object's nvvm.target)">,
    Option<"optLevel", "O", "int", /*default=*/"3", "ptxas optimization level">,
    Option<"spills", "spills", "std::string", /*default=*/"\"warn\"",
           "error | warn | ignore: what a spill or a stack frame is">,
    Option<"report", "report", "bool", /*default=*/"false",
           "a remark per kernel with registers, spills, stack and shared memory">
  ];
}


def GPUOutlineForEmulator : Pass<"rlx-gpu-outline-for-emulator", "::mlir::ModuleOp"> {
  let summary = "Turn every gpu.func kernel into a CPU function that calls the GPU emulator";
  let description = [{
    The first half of the emulator build: the module's `gpu.func` kernels
    (the same IR that `rlx-lower-to-nvvm` sends to NVVM, taken after the
    target check) become `func.func @<kernel>__body` functions, and
    everything else (host functions, gpu.modules) is dropped. The kernel
    parameters come first, then one memref per workgroup buffer (its
    address space removed: the emulator allocates it per block); private
    buffers become allocas. GPU ops become calls into the emulator runtime
    (include/RLX/Runtime/Emulator.h): `gpu.thread_id` / `block_id` /
    `block_dim` / `grid_dim` / `lane_id` → `__rlx_emu_id`, `gpu.barrier` →
    `__rlx_emu_barrier`, `gpu.shuffle` (32-bit values) → `__rlx_emu_shuffle`
    (PTX shfl.sync semantics, with upstream's width mapping), `gpu.return`
    → `func.return`; the warp matrix instructions `nvvm.ldmatrix` (m8n8
    b16, x1/x2/x4, .trans) and `nvvm.mma.sync` (m16n8k16, f16/bf16 → f32)
    → `__rlx_emu_ldmatrix` / `__rlx_emu_mma_m16n8k16` with the PTX ISA's
    fragment layouts (lib/Runtime/Emulator/Matrix.h); `nvvm.cp.async.*`
    (copy, commit group, wait group) → the emulator's cp.async groups, whose
    copies land only at their wait; `nvvm.mbarrier.*` (init, inval, arrive
    with an optional count, arrive.expect_tx, expect_tx, complete_tx,
    try_wait.parity, test.wait on a state or a parity; not the predicated
    forms) → `__rlx_emu_mbarrier_*` with the PTX ISA's phase and
    transaction-count semantics (lib/Runtime/Emulator/MBarrier.cpp), a
    try_wait blocking its thread until its phase completes; tile-mode
    `nvvm.cp.async.bulk.tensor.shared.cluster.global` (TMA loads; no
    multicast, CTA group or predicate) → `__rlx_emu_tma_load` on the
    emulator's tensor maps (lib/Runtime/Emulator/Tma.cpp: the box lands,
    swizzled, when its mbarrier is waited on); `nvvm.wgmma.mma_async`
    (m64nNk16, f16/bf16 K-major operands in shared memory, f32
    accumulators) → `__rlx_emu_wgmma` with the PTX ISA's descriptor
    addressing, swizzle modes and accumulator layout
    (lib/Runtime/Emulator/Wgmma.h), computed when it issues, so
    `wgmma.fence` / `commit_group` / `wait_group` are dropped; LLVM pointers lose
    their address space. NVPTX intrinsic calls (`llvm.call_intrinsic
    "llvm.nvvm.*"`) as the PTX ISA defines their instruction:
    `llvm.nvvm.ex2.approx.ftz.f32` is 2^x with subnormal inputs and results
    flushed (math.exp2 between the flushes); `nvvm.convert.f8x2.to.f16x2`
    (E4M3, no .relu: cvt.rn.f16x2.e4m3x2) decodes each byte's fields, NaN
    kept. A GPU or NVVM op or NVPTX intrinsic it cannot emulate is an error
    naming it.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect", "::mlir::vector::VectorDialect"];
}

def EmulatorInstrument : Pass<"rlx-emulator-instrument", "::mlir::ModuleOp"> {
  let summary = "Check every kernel memory access and add packed <kernel>__emu entries";
  let description = [{
    The second half, on the LLVM dialect (after lowering the outlined kernels
    with the bare-pointer calling convention): before every `llvm.load` and
    `llvm.store` in a `*__body` function, a call to
    `__rlx_emu_access(ptr, bytes, write)`; when it answers 0 (the address is
    inside no valid memory) the access goes to a scratch slot instead, so a
    bad kernel is reported without corrupting the host. Each body also gets
    a packed entry `<kernel>__emu(ptr params)` that loads parameter i from
    `*params[i]` (cuLaunchKernel's convention) and calls the body.
  }];
  let options = [
    Option<"checks", "checks", "bool", /*default=*/"true",
           "instrument loads and stores (false: entries only)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // RLX_TARGET_NVVM_PASSES_TD
