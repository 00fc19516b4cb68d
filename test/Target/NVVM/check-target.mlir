// rlx-nvvm-check-target: (op, chip, PTX ISA) combinations that LLVM's NVPTX
// backend would abort on are located errors naming the op and the target it
// needs (case L2); supported ones pass unchanged.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics --rlx-nvvm-check-target="chip=sm_90 features=+ptx78"
// On sm_90a wgmma passes; FP4 conversions still need sm_100a; on sm_100a
// (PTX 8.6) they pass.
// RUN: not rlx-opt %s --split-input-file --rlx-nvvm-check-target=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=SM90A
// SM90A-NOT: error: 'nvvm.wgmma.fence.aligned' needs
// SM90A: error: 'nvvm.convert.f32x2.to.f4x2' needs an sm_100-family
// RUN: not rlx-opt %s --split-input-file --rlx-nvvm-check-target=chip=sm_100a 2>&1 | FileCheck %s --check-prefix=SM100A
// SM100A: error: 'nvvm.wgmma.fence.aligned' needs sm_90a
// SM100A-NOT: error: 'nvvm.convert.f32x2.to.f4x2' needs

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @wgmma() kernel {
      // expected-error @+1 {{'nvvm.wgmma.fence.aligned' needs sm_90a (wgmma is specific to it); the target is sm_90 with PTX ISA 7.8}}
      nvvm.wgmma.fence.aligned
      gpu.return
    }
  }
}

// -----

// FP4 conversions cannot be selected below sm_100a (sm_90a included).
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fp4(%a: f32, %b: f32, %out: memref<1xi8>) kernel {
      // expected-error @+1 {{'nvvm.convert.f32x2.to.f4x2' needs an sm_100-family 'a' or 'f' chip and PTX ISA 8.6 (e2m1 conversions); the target is}}
      %p = nvvm.convert.f32x2.to.f4x2 %a, %b : i8 (f4E2M1FN)
      %c0 = arith.constant 0 : index
      memref.store %p, %out[%c0] : memref<1xi8>
      gpu.return
    }
  }
}

// -----

// Arithmetic left on 8-bit floats has no NVVM lowering (case L1).
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @f8(%x: f32, %out: memref<1xf32>) kernel {
      // expected-error @+1 {{'arith.truncf' on an 8-, 6- or 4-bit float has no NVVM lowering; run rlx-expand-low-precision-floats on the gpu.module first}}
      %t = arith.truncf %x : f32 to f8E4M3FN
      // expected-error @+1 {{'arith.extf' on an 8-, 6- or 4-bit float has no NVVM lowering}}
      %e = arith.extf %t : f8E4M3FN to f32
      %c0 = arith.constant 0 : index
      memref.store %e, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
}

// -----

// Static workgroup memory above 48 KiB (ptxas: "uses too much shared data").
module attributes {gpu.container_module} {
  gpu.module @k {
    // expected-error @+1 {{kernel 'big' uses 262144 bytes of static shared memory; at most 49152 are allowed (larger needs dynamic shared memory)}}
    gpu.func @big() workgroup(%s : memref<65536xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
