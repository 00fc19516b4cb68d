// Two warps pass 8 tiles of 32 floats through a two-slot ring in shared
// memory, synchronized only by mbarriers: full[s] (the producer warp's 32
// arrivals) and empty[s] (the consumer's). Iteration i uses slot i % 2 in
// phase (i / 2) % 2; the producer waits for the opposite parity of empty[s],
// which a fresh mbarrier reports complete. out[32 i + l] = 100 i + l.
// PRODUCER_WAIT is replaced by the test (the wait, or nothing: then the
// producer runs ahead of the consumer).
module attributes {gpu.container_module} {
  func.func @f(%arena: memref<0xi8> {rlx_lir.arena}, %out: memref<256xf32> {rlx.output = "out"})
      attributes {rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 0 : i64}} {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @ring::@ring blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%out : memref<256xf32>)
    return
  }
  gpu.module @ring {
    gpu.func @ring(%out: memref<256xf32>)
        workgroup(%slots : memref<64xf32, #gpu.address_space<workgroup>>,
                  %bars : memref<4xi64, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c32i = arith.constant 32 : i32
      %c1i = arith.constant 1 : i32
      %ticks = arith.constant 1000000 : i32
      %lane = arith.remui %t, %c32 : index
      %base = memref.extract_aligned_pointer_as_index %bars : memref<4xi64, #gpu.address_space<workgroup>> -> index
      %is0 = arith.cmpi eq, %t, %c0 : index
      scf.if %is0 {
        %c4 = arith.constant 4 : index
        scf.for %b = %c0 to %c4 step %c2 {
          %off0 = arith.muli %b, %c8 : index
          %a0 = arith.addi %base, %off0 : index
          %a64 = arith.index_cast %a0 : index to i64
          %p0 = llvm.inttoptr %a64 : i64 to !llvm.ptr<3>
          nvvm.mbarrier.init %p0, %c32i : !llvm.ptr<3>, i32
          %off1 = arith.addi %a0, %c8 : index
          %a1 = arith.index_cast %off1 : index to i64
          %p1 = llvm.inttoptr %a1 : i64 to !llvm.ptr<3>
          nvvm.mbarrier.init %p1, %c32i : !llvm.ptr<3>, i32
        }
      }
      gpu.barrier
      %producer = arith.cmpi ult, %t, %c32 : index
      scf.for %i = %c0 to %c8 step %c1 {
        %s = arith.remui %i, %c2 : index
        %ph = arith.divui %i, %c2 : index
        %ph2 = arith.remui %ph, %c2 : index
        %phase = arith.index_cast %ph2 : index to i32
        %full0 = arith.muli %s, %c8 : index
        %fulla = arith.addi %base, %full0 : index
        %fa = arith.index_cast %fulla : index to i64
        %full = llvm.inttoptr %fa : i64 to !llvm.ptr<3>
        %c16 = arith.constant 16 : index
        %emptya = arith.addi %fulla, %c16 : index
        %ea = arith.index_cast %emptya : index to i64
        %empty = llvm.inttoptr %ea : i64 to !llvm.ptr<3>
        %row = arith.muli %s, %c32 : index
        %at = arith.addi %row, %lane : index
        scf.if %producer {
          %other = arith.xori %phase, %c1i : i32
          PRODUCER_WAIT
          %h = arith.constant 100 : index
          %v0 = arith.muli %i, %h : index
          %v1 = arith.addi %v0, %lane : index
          %v2 = arith.index_cast %v1 : index to i32
          %v = arith.sitofp %v2 : i32 to f32
          memref.store %v, %slots[%at] : memref<64xf32, #gpu.address_space<workgroup>>
          %st = nvvm.mbarrier.arrive %full : !llvm.ptr<3> -> i64
        } else {
          nvvm.mbarrier.try_wait.parity %full, %phase, %ticks : !llvm.ptr<3>, i32, i32
          %v = memref.load %slots[%at] : memref<64xf32, #gpu.address_space<workgroup>>
          %o0 = arith.muli %i, %c32 : index
          %o = arith.addi %o0, %lane : index
          memref.store %v, %out[%o] : memref<256xf32>
          nvvm.mbarrier.arrive %empty : !llvm.ptr<3>
        }
      }
      gpu.return
    }
  }
}
