// MLIR bytecode round trips at every stage of the example layer: HIR, MIR
// (lowered and fused), LIR on tensors, LIR on buffers (planned). Each stage
// printed directly and printed after a bytecode write/read must be equal.
// RUN: rlx-opt %rlx_src/examples/llama-3.2-1b-layer.mlir -o %t.hir
// RUN: rlx-opt %t.hir -emit-bytecode | rlx-opt -o %t.hir.rt
// RUN: diff %t.hir %t.hir.rt
// RUN: rlx-opt %t.hir --convert-rlx-hir-to-mir=fusion-policy=fusable -o %t.mir
// RUN: rlx-opt %t.mir -emit-bytecode | rlx-opt -o %t.mir.rt
// RUN: diff %t.mir %t.mir.rt
// RUN: rlx-opt %t.mir --rlx-mir-fuse --rlx-mir-specialize="dims=seq=16" -o %t.fused
// RUN: rlx-opt %t.fused -emit-bytecode | rlx-opt -o %t.fused.rt
// RUN: diff %t.fused %t.fused.rt
// RUN: rlx-opt %t.fused --convert-rlx-mir-to-lir -o %t.lirt
// RUN: rlx-opt %t.lirt -emit-bytecode | rlx-opt -o %t.lirt.rt
// RUN: diff %t.lirt %t.lirt.rt
// RUN: rlx-opt %t.lirt --rlx-lir-bufferize --rlx-lir-plan-buffers -o %t.lir
// RUN: rlx-opt %t.lir -emit-bytecode | rlx-opt -o %t.lir.rt
// RUN: diff %t.lir %t.lir.rt
// The planned LIR read back from bytecode still passes the checker.
// RUN: rlx-opt %t.lir -emit-bytecode | rlx-opt --rlx-lir-verify-plan | FileCheck %s
// CHECK: rlx_lir.plan = {alignment = 64 : i64, arena_bytes = [[A:[0-9]+]] : i64, lower_bound_bytes = [[A]] : i64
