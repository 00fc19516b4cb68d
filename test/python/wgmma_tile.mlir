// One wgmma.mma_async m64n8k16 (bf16, f32 accumulators) over a warpgroup:
// the 128 threads stage A [64 x 16] and B [8 x 16] (both K-major) into shared
// memory as interleaved 8 x 16-byte core matrices (LBO 128 bytes along K,
// SBO 256 bytes along M / N), build the matrix descriptors from the shared
// addresses, and store their accumulator registers: out[4 t + i].
module attributes {gpu.container_module} {
  func.func @f(%arena: memref<0xi8> {rlx_lir.arena}, %a: memref<1024xbf16> {rlx.input = "a"},
               %b: memref<128xbf16> {rlx.input = "b"}, %out: memref<512xf32> {rlx.output = "out"})
      attributes {rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 0 : i64}} {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @wg::@wgmma blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%a : memref<1024xbf16>, %b : memref<128xbf16>, %out : memref<512xf32>)
    return
  }
  gpu.module @wg {
    gpu.func @wgmma(%A: memref<1024xbf16>, %B: memref<128xbf16>, %out: memref<512xf32>)
        workgroup(%As : memref<1024xbf16, #gpu.address_space<workgroup>>,
                  %Bs : memref<128xbf16, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %c1024 = arith.constant 1024 : index
      // Row-major element e = 16 r + k goes to core-matrix element
      // (r / 8)·128 + (k / 8)·64 + (r % 8)·8 + k % 8 (in 2-byte units).
      scf.for %e = %t to %c1024 step %c128 {
        %r = arith.divui %e, %c16 : index
        %k = arith.remui %e, %c16 : index
        %r8 = arith.divui %r, %c8 : index
        %rm = arith.remui %r, %c8 : index
        %k8 = arith.divui %k, %c8 : index
        %km = arith.remui %k, %c8 : index
        %p0 = arith.muli %r8, %c128 : index
        %p1 = arith.muli %k8, %c64 : index
        %p2 = arith.muli %rm, %c8 : index
        %p3 = arith.addi %p0, %p1 : index
        %p4 = arith.addi %p3, %p2 : index
        %p = arith.addi %p4, %km : index
        %v = memref.load %A[%e] : memref<1024xbf16>
        memref.store %v, %As[%p] : memref<1024xbf16, #gpu.address_space<workgroup>>
        %inB = arith.cmpi ult, %e, %c128 : index
        scf.if %inB {
          %w = memref.load %B[%e] : memref<128xbf16>
          memref.store %w, %Bs[%p] : memref<128xbf16, #gpu.address_space<workgroup>>
        }
      }
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      gpu.barrier
      %sa = memref.extract_aligned_pointer_as_index %As : memref<1024xbf16, #gpu.address_space<workgroup>> -> index
      %sb = memref.extract_aligned_pointer_as_index %Bs : memref<128xbf16, #gpu.address_space<workgroup>> -> index
      %sa64 = arith.index_cast %sa : index to i64
      %sb64 = arith.index_cast %sb : index to i64
      %mask = arith.constant 262143 : i64
      %c4i = arith.constant 4 : i64
      // LBO 128 bytes (>> 4 = 8) in bits 16-29, SBO 256 bytes (16) in 32-45.
      %layout = arith.constant 68720001024 : i64
      %am = arith.andi %sa64, %mask : i64
      %as4 = arith.shrui %am, %c4i : i64
      %da = arith.ori %as4, %layout : i64
      %bm = arith.andi %sb64, %mask : i64
      %bs4 = arith.shrui %bm, %c4i : i64
      %db = arith.ori %bs4, %layout : i64
      %z = llvm.mlir.constant(0.0 : f32) : f32
      %u = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
      %a0 = llvm.insertvalue %z, %u[0] : !llvm.struct<(f32, f32, f32, f32)>
      %a1 = llvm.insertvalue %z, %a0[1] : !llvm.struct<(f32, f32, f32, f32)>
      %a2 = llvm.insertvalue %z, %a1[2] : !llvm.struct<(f32, f32, f32, f32)>
      %acc = llvm.insertvalue %z, %a2[3] : !llvm.struct<(f32, f32, f32, f32)>
      nvvm.wgmma.fence.aligned
      %res = nvvm.wgmma.mma_async %da, %db, %acc, #nvvm.shape<m = 64, n = 8, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %o = arith.muli %t, %c4 : index
      %d0 = llvm.extractvalue %res[0] : !llvm.struct<(f32, f32, f32, f32)>
      %d1 = llvm.extractvalue %res[1] : !llvm.struct<(f32, f32, f32, f32)>
      %d2 = llvm.extractvalue %res[2] : !llvm.struct<(f32, f32, f32, f32)>
      %d3 = llvm.extractvalue %res[3] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %d0, %out[%o] : memref<512xf32>
      %o1 = arith.addi %o, %c1 : index
      memref.store %d1, %out[%o1] : memref<512xf32>
      %o2 = arith.addi %o, %c2 : index
      memref.store %d2, %out[%o2] : memref<512xf32>
      %c3 = arith.constant 3 : index
      %o3 = arith.addi %o, %c3 : index
      memref.store %d3, %out[%o3] : memref<512xf32>
      gpu.return
    }
  }
}
