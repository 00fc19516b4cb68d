// The emulator build of a kernel: rlx-gpu-outline-for-emulator clones each
// gpu.func into a CPU function calling the emulator's hooks (workgroup
// buffers become arguments without their address space); after CPU lowering
// rlx-emulator-instrument checks every load/store and adds the packed entry.
// RUN: rlx-opt %s --split-input-file --rlx-gpu-outline-for-emulator --verify-diagnostics | FileCheck %s
// RUN: rlx-opt %s --split-input-file --rlx-gpu-outline-for-emulator --verify-diagnostics --convert-scf-to-cf --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm=use-bare-ptr-memref-call-conv=1 --convert-cf-to-llvm --reconcile-unrealized-casts --rlx-emulator-instrument | FileCheck %s --check-prefix=LLVM

// CHECK-NOT: gpu.module
// CHECK-NOT: func.func @host
// CHECK: func.func @reverse__body(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>, %[[S:.*]]: memref<64xf32>)
// CHECK:   %[[T:.*]] = call @__rlx_emu_id(%{{.*}}) : (i32) -> i64
// CHECK:   arith.index_castui %[[T]] : i64 to index
// CHECK:   memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<64xf32>
// CHECK:   call @__rlx_emu_barrier() : () -> ()
// CHECK:   arith.bitcast %{{.*}} : f32 to i32
// CHECK:   call @__rlx_emu_shuffle(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32) -> i64
// CHECK:   return

// LLVM-LABEL: llvm.func @reverse__body
// LLVM:   llvm.alloca
// LLVM:   %[[OK:.*]] = llvm.call @__rlx_emu_access(%[[P:.*]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32) -> i32
// LLVM:   llvm.icmp "ne" %[[OK]]
// LLVM:   %[[Q:.*]] = llvm.select %{{.*}}, %[[P]], %{{.*}} : i1, !llvm.ptr
// LLVM:   llvm.load %[[Q]]
// LLVM-LABEL: llvm.func @reverse__emu(%{{.*}}: !llvm.ptr)
// LLVM-COUNT-3: llvm.getelementptr
// LLVM:   llvm.call @reverse__body
module attributes {gpu.container_module} {
  func.func @host() {
    return
  }
  gpu.module @k {
    gpu.func @reverse(%x: memref<64xf32>, %y: memref<64xf32>)
        workgroup(%s : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %c63 = arith.constant 63 : index
      %v = memref.load %x[%i] : memref<64xf32>
      memref.store %v, %s[%i] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %r = arith.subi %c63, %i : index
      %w = memref.load %s[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %u, %ok = gpu.shuffle xor %w, %c1, %c32 : f32
      memref.store %u, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @reduce(%x: memref<32xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<32xf32>
      // expected-error @+1 {{rlx-gpu-outline-for-emulator: no emulation for 'gpu.subgroup_reduce'}}
      %s = gpu.subgroup_reduce add %v : (f32) -> f32
      memref.store %s, %x[%i] : memref<32xf32>
      gpu.return
    }
  }
}

// -----

// mbarrier ops become the __rlx_emu_mbarrier_* hooks: arrive.expect_tx adds
// its bytes in the arrive call, complete_tx subtracts them, test.wait on a
// parity passes the parity (and 1), try_wait.parity blocks in the hook.
// CHECK-LABEL: func.func @mbar__body
// CHECK:   call @__rlx_emu_mbarrier_init(%[[B:.*]], %{{.*}}) : (!llvm.ptr, i32) -> ()
// CHECK:   %[[ST:.*]] = call @__rlx_emu_mbarrier_arrive(%[[B]], %c1_i32{{.*}}, %c0_i32{{.*}}) : (!llvm.ptr, i32, i32) -> i64
// CHECK:   call @__rlx_emu_mbarrier_arrive(%[[B]], %c1_i32{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32) -> i64
// CHECK:   call @__rlx_emu_mbarrier_tx(%[[B]], %{{.*}}) : (!llvm.ptr, i64) -> ()
// CHECK:   %[[NEG:.*]] = arith.subi %c0_i64, %{{.*}} : i64
// CHECK:   call @__rlx_emu_mbarrier_tx(%[[B]], %[[NEG]]) : (!llvm.ptr, i64) -> ()
// CHECK:   call @__rlx_emu_mbarrier_wait_parity(%[[B]], %{{.*}}) : (!llvm.ptr, i32) -> ()
// CHECK:   %[[T:.*]] = call @__rlx_emu_mbarrier_test_wait(%[[B]], %[[ST]], %c0_i32{{.*}}) : (!llvm.ptr, i64, i32) -> i32
// CHECK:   arith.cmpi ne, %[[T]], %c0_i32
// CHECK:   call @__rlx_emu_mbarrier_inval(%[[B]]) : (!llvm.ptr) -> ()
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @mbar(%out: memref<1xi1>) workgroup(%bars : memref<1xi64, #gpu.address_space<workgroup>>) kernel {
      %base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %a = arith.index_cast %base : index to i64
      %p = llvm.inttoptr %a : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : i32
      %c64 = arith.constant 64 : i32
      %c0 = arith.constant 0 : i32
      %c0i = arith.constant 0 : index
      nvvm.mbarrier.init %p, %c1 : !llvm.ptr<3>, i32
      %st = nvvm.mbarrier.arrive %p : !llvm.ptr<3> -> i64
      nvvm.mbarrier.arrive.expect_tx %p, %c64 : !llvm.ptr<3>, i32
      nvvm.mbarrier.expect_tx %p, %c64 : !llvm.ptr<3>, i32
      nvvm.mbarrier.complete_tx %p, %c64 : !llvm.ptr<3>, i32
      nvvm.mbarrier.try_wait.parity %p, %c0, %c64 : !llvm.ptr<3>, i32, i32
      %done = nvvm.mbarrier.test.wait %p, %st : !llvm.ptr<3>, i64 -> i1
      memref.store %done, %out[%c0i] : memref<1xi1>
      nvvm.mbarrier.inval %p : !llvm.ptr<3>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @pred(%flag: i1) workgroup(%bars : memref<1xi64, #gpu.address_space<workgroup>>) kernel {
      %base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %a = arith.index_cast %base : index to i64
      %p = llvm.inttoptr %a : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : i32
      // expected-error @+1 {{rlx-gpu-outline-for-emulator: predicated 'nvvm.mbarrier.init' is not emulated}}
      nvvm.mbarrier.init %p, %c1, predicate = %flag : !llvm.ptr<3>, i32, i1
      gpu.return
    }
  }
}

// -----

// A tile-mode TMA load becomes __rlx_emu_tma_load with its coordinates in a
// 5-element slot and its rank.
// CHECK-LABEL: func.func @tma__body
// CHECK:   memref.store %{{.*}}, %[[C:.*]][%c0] : memref<5xi32>
// CHECK:   memref.store %{{.*}}, %[[C]][%c1] : memref<5xi32>
// CHECK:   call @__rlx_emu_tma_load(%{{.*}}, %{{.*}}, %[[C]], %c2_i32, %{{.*}}) : (!llvm.ptr, !llvm.ptr, memref<5xi32>, i32, !llvm.ptr) -> ()
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @tma(%desc: !llvm.ptr, %x: i32, %y: i32) workgroup(%bars : memref<1xi64, #gpu.address_space<workgroup>>, %box : memref<512xbf16, #gpu.address_space<workgroup>>) kernel {
      %base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %a = arith.index_cast %base : index to i64
      %p = llvm.inttoptr %a : i64 to !llvm.ptr<3>
      %bb = memref.extract_aligned_pointer_as_index %box : memref<512xbf16, #gpu.address_space<workgroup>> -> index
      %b64 = arith.index_cast %bb : index to i64
      %dst = llvm.inttoptr %b64 : i64 to !llvm.ptr<7>
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %p, box[%x, %y] : !llvm.ptr<7>, !llvm.ptr
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @multicast(%desc: !llvm.ptr, %x: i32, %m: i16, %dst: !llvm.ptr<7>, %p: !llvm.ptr<3>) kernel {
      // expected-error @+1 {{rlx-gpu-outline-for-emulator: only tile-mode TMA loads without multicast, CTA groups or a predicate are emulated}}
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %p, box[%x] multicast_mask = %m : !llvm.ptr<7>, !llvm.ptr
      gpu.return
    }
  }
}

// -----

// wgmma.mma_async becomes __rlx_emu_wgmma (type 1 = bf16, n, the descriptors,
// the accumulators through 128-register slots, flags 1 scale-d | 4 negate B)
// after __rlx_emu_wgmma_op naming it (#0); fence / commit / wait become
// their hooks (lib/Runtime/Emulator/Async.cpp), and the first register
// access of its accumulators after the wait (the extractvalue's user, not
// the extractvalue) is preceded by __rlx_emu_wgmma_read(0).
// CHECK-LABEL: func.func @wg__body
// CHECK: call @__rlx_emu_wgmma_fence() : () -> ()
// CHECK-COUNT-4: memref.store %{{.*}} : memref<128xf32>
// CHECK: call @__rlx_emu_wgmma_op(%[[ID:.*]]) : (i32) -> ()
// CHECK: call @__rlx_emu_wgmma(%c1_i32{{.*}}, %c8_i32, %arg0, %arg1, %{{.*}}, %{{.*}}, %c5_i32) : (i32, i32, i64, i64, memref<128xf32>, memref<128xf32>, i32) -> ()
// CHECK: call @__rlx_emu_wgmma_commit() : () -> ()
// CHECK: call @__rlx_emu_wgmma_wait(%{{.*}}) : (i32) -> ()
// CHECK: %[[E:.*]] = llvm.extractvalue
// CHECK: call @__rlx_emu_wgmma_read(%c0_i32{{.*}}) : (i32) -> ()
// CHECK-NEXT: memref.store %[[E]]
// CHECK-NOT: nvvm.wgmma
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @wg(%da: i64, %db: i64, %out: memref<4xf32>) kernel {
      %z = llvm.mlir.constant(0.0 : f32) : f32
      %u = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
      %a0 = llvm.insertvalue %z, %u[0] : !llvm.struct<(f32, f32, f32, f32)>
      %a1 = llvm.insertvalue %z, %a0[1] : !llvm.struct<(f32, f32, f32, f32)>
      %a2 = llvm.insertvalue %z, %a1[2] : !llvm.struct<(f32, f32, f32, f32)>
      %acc = llvm.insertvalue %z, %a2[3] : !llvm.struct<(f32, f32, f32, f32)>
      nvvm.wgmma.fence.aligned
      %r = nvvm.wgmma.mma_async %da, %db, %acc, #nvvm.shape<m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <neg>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %c0 = arith.constant 0 : index
      %e = llvm.extractvalue %r[2] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %e, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// The register-A wgmma runs what its PTX text says: here the text names A's
// registers as {$5, $4, $6, $7} (operands 1, 0, 2, 3: inputs count after the
// 4 outputs), imm-scale-a -1 and imm-trans-b 1, so A's slot gets %a1 first
// and the flags are 1 scale-d | 2 negate A | 16 transposed B = 19; its D
// list {$3, $2, $1, $0} sends D register 0 to result element 3.
// CHECK-LABEL: func.func @rs__body
// CHECK-SAME: (%[[A0:[^:]*]]: i32, %[[A1:[^:]*]]: i32
// CHECK: memref.store %[[A1]], %[[SA:.*]][%{{.*}}] : memref<4xi32>
// CHECK: memref.store %[[A0]], %[[SA]][%{{.*}}] : memref<4xi32>
// CHECK: call @__rlx_emu_wgmma_rs(%{{.*}}, %c8_i32{{.*}}, %[[SA]], %{{.*}}, %{{.*}}, %{{.*}}, %c19_i32)
// CHECK: %[[D0:.*]] = memref.load %{{.*}}[%c0{{.*}}] : memref<128xf32>
// CHECK: llvm.insertvalue %[[D0]], %{{.*}}[3]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @rs(%a0: i32, %a1: i32, %a2: i32, %a3: i32, %db: i64, %out: memref<4xf32>) kernel {
      %z = llvm.mlir.constant(0.0 : f32) : f32
      nvvm.wgmma.fence.aligned
      %r = llvm.inline_asm has_side_effects asm_dialect = att {rlx.wgmma_register_a = {bf16 = true, n = 8 : i64, scale_d = true, trans_b = false}} "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$3, $2, $1, $0}, {$5, $4, $6, $7}, $8, p, -1, 1, 1;\0A}\0A", "=f,=f,=f,=f,r,r,r,r,l,0,1,2,3" %a0, %a1, %a2, %a3, %db, %z, %z, %z, %z : (i32, i32, i32, i32, i64, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %c0 = arith.constant 0 : index
      %e = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %e, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A register-A wgmma whose PTX text the emulator cannot read is an error at
// the op (not the tag's reading of it).
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @bad(%a0: i32, %db: i64) kernel {
      %z = llvm.mlir.constant(0.0 : f32) : f32
      // expected-error @+1 {{cannot read the inline PTX of a register-A wgmma: no wgmma.mma_async m64nNk16 .f32 with A in registers}}
      %r = llvm.inline_asm has_side_effects asm_dialect = att {rlx.wgmma_register_a = {bf16 = true, n = 8 : i64, scale_d = true, trans_b = false}} "wgmma.mma_async.sync.aligned.m64n8k16.f16.bf16.bf16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, 1, 1, 1, 0;", "=f,=f,=f,=f,r,r,r,r,l,0,1,2,3" %a0, %a0, %a0, %a0, %db, %z, %z, %z, %z : (i32, i32, i32, i32, i64, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      gpu.return
    }
  }
}

// -----

// Dynamic shared memory is one more parameter after the workgroup buffers
// (the scheduler passes it last), as large as the 2^18-byte shared window;
// setmaxnreg becomes __rlx_emu_setmaxnreg(count, increase, the kernel's
// nvvm.maxnreg).
// CHECK-LABEL: func.func @dyn__body
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: memref<16xf32>, %[[D:.*]]: memref<262144xi8>)
// CHECK:   call @__rlx_emu_setmaxnreg(%c40_i32, %c0_i32{{.*}}, %c168_i32)
// CHECK:   %[[C:.*]] = memref.cast %[[D]] : memref<262144xi8> to memref<?xi8>
// CHECK:   memref.view %[[C]][%{{.*}}][] : memref<?xi8> to memref<4xf32>
// CHECK-NOT: setmaxregister
// LLVM-LABEL: llvm.func @dyn__emu
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @dyn(%out: memref<4xf32>) workgroup(%s : memref<16xf32, #gpu.address_space<workgroup>>) kernel attributes {nvvm.maxnreg = 168 : i32} {
      nvvm.setmaxregister decrease 40
      %d = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %v = memref.view %d[%c64][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
      %x = memref.load %v[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// nvvm.shfl.sync and nvvm.vote.sync (hand-written or edited kernels: the
// generated ones shuffle with gpu.shuffle) become __rlx_emu_shfl_sync (PTX's
// mode order: bfly 0, up 1, down 2, idx 3; d in the low 32 bits, p in bit
// 32) and __rlx_emu_vote_sync (all 0, any 1, uni 2, ballot 3).
// CHECK-LABEL: func.func @warp__body
// CHECK: %[[R:.*]] = call @__rlx_emu_shfl_sync(%c2_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32, i32) -> i64
// CHECK: arith.trunci %[[R]] : i64 to i32
// CHECK: arith.shrui %[[R]]
// CHECK: call @__rlx_emu_vote_sync(%c3_i32{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32) -> i32
// CHECK: %[[A:.*]] = call @__rlx_emu_vote_sync(%c1_i32{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32) -> i32
// CHECK: arith.trunci %[[A]] : i32 to i1
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @warp(%x: f32, %p: i1, %out: memref<4xi32>) kernel {
      %m = arith.constant -1 : i32
      %o = arith.constant 4 : i32
      %c = arith.constant 31 : i32
      %s = nvvm.shfl.sync down %m, %x, %o, %c {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
      %b = nvvm.vote.sync ballot %m, %p -> i32
      %a = nvvm.vote.sync any %m, %p -> i1
      %c0 = arith.constant 0 : index
      memref.store %b, %out[%c0] : memref<4xi32>
      %ai = arith.extui %a : i1 to i32
      memref.store %ai, %out[%c0] : memref<4xi32>
      gpu.return
    }
  }
}

// -----

// ex2.approx.ftz.f32 (the flash kernels' exp2) as the PTX ISA reads it:
// subnormal inputs and results flushed, 2^x otherwise.
// CHECK-LABEL: func.func @softmax_exp__body
// CHECK:   %[[A:.*]] = math.absf %[[X:.*]] : f32
// CHECK:   %[[SUB:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK:   %[[IN:.*]] = arith.select %[[SUB]], %{{.*}}, %[[X]] : f32
// CHECK:   %[[R:.*]] = math.exp2 %[[IN]] : f32
// CHECK:   arith.cmpf olt, %[[R]], %{{.*}} : f32
// CHECK-NOT: llvm.call_intrinsic
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @softmax_exp(%x: memref<32xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<32xf32>
      %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%v) : (f32) -> f32
      memref.store %e, %x[%i] : memref<32xf32>
      gpu.return
    }
  }
}

// -----

// cvt.rn.f16x2.e4m3x2 (the NVFP4 GEMV's scales) as the emulator reads the
// PTX ISA: each byte's exponent and mantissa fields, e = 0 as m · 2^-9,
// s.1111.111 as NaN, the sign last; the low byte is element 0.
// CHECK-LABEL: func.func @scales__body
// CHECK:   %[[B0:.*]] = vector.extract %[[V:.*]][0] : i8 from vector<2xi8>
// CHECK:   arith.extui %[[B0]] : i8 to i32
// CHECK:   arith.uitofp
// CHECK:   arith.cmpi eq
// CHECK:   arith.negf
// CHECK:   %[[H0:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:   vector.extract %[[V]][1] : i8 from vector<2xi8>
// CHECK:   %[[H1:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:   vector.from_elements %[[H0]], %[[H1]] : vector<2xf16>
// CHECK-NOT: nvvm.convert
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @scales(%x: memref<32xvector<2xi8>>, %y: memref<32xvector<2xf16>>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<32xvector<2xi8>>
      %h = nvvm.convert.f8x2.to.f16x2 %v : vector<2xi8> (f8E4M3FN) -> vector<2xf16>
      memref.store %h, %y[%i] : memref<32xvector<2xf16>>
      gpu.return
    }
  }
}

// -----

// Its .relu form and E5M2 are not what the kernels use: an error.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @scales_e5m2(%x: memref<32xvector<2xi8>>, %y: memref<32xvector<2xf16>>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<32xvector<2xi8>>
      // expected-error @+1 {{rlx-gpu-outline-for-emulator: only cvt.rn.f16x2.e4m3x2 (no .relu) is emulated}}
      %h = nvvm.convert.f8x2.to.f16x2 %v : vector<2xi8> (f8E5M2) -> vector<2xf16>
      memref.store %h, %y[%i] : memref<32xvector<2xf16>>
      gpu.return
    }
  }
}

// -----

// Any other NVPTX intrinsic is an error, not a guess.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @rsqrt(%x: memref<32xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<32xf32>
      // expected-error @+1 {{rlx-gpu-outline-for-emulator: no emulation for the intrinsic 'llvm.nvvm.rsqrt.approx.f'}}
      %e = llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"(%v) : (f32) -> f32
      memref.store %e, %x[%i] : memref<32xf32>
      gpu.return
    }
  }
}
