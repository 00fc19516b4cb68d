//===- ShardingInterfaceImpl.cpp - shard::ShardingInterface for rlx_mir ---===//
//
// How each rlx_mir op splits over a device grid, for upstream's
// sharding-propagation and shard-partition. Most ops describe an iteration
// space (loop iterator types, one indexing map per operand and result, the
// reduction kind of each reduction loop) and partition by cloning with
// per-rank types (upstream's partitionTriviallyShardableOperation); a sum,
// max or min over a split reduction loop (a row-parallel matmul) is followed
// by `shard.all_reduce`. Ops whose attributes hold shapes or head counts
// (reshape, broadcast, slice, attention) get them rewritten for the rank;
// reshape, which no projected indexing map describes, pairs its dims by
// groups. A split the op cannot compute locally is a located error from the
// partition, never a wrong program.
//
// Broadcast operand dims (size 1 against a larger result dim) map to one
// extra parallel loop that nothing splits, so a broadcast operand stays
// whole while the result is split.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Sharding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using shard::GridAxis;
using shard::GridOp;
using shard::ReductionKind;
using shard::Sharding;
using shard::ShardingArray;
using shard::ShardingOption;
using IterType = utils::IteratorType;

namespace {

/// An op's iteration space for the sharding interface.
struct LoopSpace {
  SmallVector<IterType> types;
  SmallVector<AffineMap> maps; // operands, then results
  SmallVector<ReductionKind> kinds; // one per reduction loop, in loop order
  bool valid() const { return !maps.empty(); }
};

ArrayRef<int64_t> shapeOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return t.getShape();
  return {};
}

/// The map of an operand of shape `shape` broadcast (numpy, right-aligned)
/// against loops `loops` (one per aligned result dim, of sizes `sizes`): a
/// size-1 dim against another size maps to `bcastLoop`.
AffineMap alignedMap(ArrayRef<int64_t> shape, ArrayRef<unsigned> loops,
                     ArrayRef<int64_t> sizes, unsigned bcastLoop, unsigned numLoops,
                     MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  size_t offset = loops.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    unsigned loop = loops[offset + i];
    bool stretched = shape[i] == 1 && sizes[offset + i] != 1;
    exprs.push_back(getAffineDimExpr(stretched ? bcastLoop : loop, ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

AffineMap dimsMap(ArrayRef<unsigned> loops, unsigned numLoops, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (unsigned l : loops)
    exprs.push_back(getAffineDimExpr(l, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

SmallVector<unsigned> iota(unsigned n, unsigned from = 0) {
  SmallVector<unsigned> v;
  for (unsigned i = 0; i < n; ++i)
    v.push_back(from + i);
  return v;
}

/// Elementwise over the (broadcast) result shape: loops are the result dims
/// plus the broadcast loop.
LoopSpace elementwiseSpace(Operation *op) {
  LoopSpace s;
  if (op->getNumResults() == 0)
    return s;
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  unsigned rank = out.size(), n = rank + 1;
  MLIRContext *ctx = op->getContext();
  s.types.assign(n, IterType::parallel);
  SmallVector<unsigned> loops = iota(rank);
  for (Value v : op->getOperands()) {
    if (!isa<RankedTensorType>(v.getType()) || shapeOf(v).size() > rank)
      return {};
    s.maps.push_back(alignedMap(shapeOf(v), loops, out, rank, n, ctx));
  }
  for (Value r : op->getResults()) {
    if (shapeOf(r).size() != rank)
      return {};
    s.maps.push_back(dimsMap(loops, n, ctx));
  }
  return s;
}

/// Identity over the input's dims, with `reduced` dims as reductions of
/// `kind`; extra operands (norm weights, biases) are aligned to the last dims.
LoopSpace rowwiseSpace(Operation *op, ArrayRef<int64_t> reduced, ReductionKind kind) {
  LoopSpace s;
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  unsigned rank = in.size(), n = rank + 1;
  MLIRContext *ctx = op->getContext();
  s.types.assign(n, IterType::parallel);
  for (int64_t d : reduced) {
    s.types[d] = IterType::reduction;
    s.kinds.push_back(kind);
  }
  SmallVector<unsigned> loops = iota(rank);
  for (Value v : op->getOperands()) {
    if (shapeOf(v).size() > rank)
      return {};
    s.maps.push_back(alignedMap(shapeOf(v), loops, in, rank, n, ctx));
  }
  for (Value r : op->getResults()) {
    if (shapeOf(r).size() != rank)
      return {};
    s.maps.push_back(dimsMap(loops, n, ctx));
  }
  return s;
}

/// Batched matmul: loops are the result dims (batch..., M, N), then K (a sum)
/// and the broadcast loop.
LoopSpace matmulSpace(Value lhs, Value rhs, bool transA, bool transB, Value out) {
  LoopSpace s;
  ArrayRef<int64_t> ls = shapeOf(lhs), rs = shapeOf(rhs), os = shapeOf(out);
  if (ls.size() < 2 || rs.size() < 2 || os.size() < 2)
    return s;
  unsigned rank = os.size(), k = rank, bc = rank + 1, n = rank + 2;
  MLIRContext *ctx = out.getContext();
  s.types.assign(n, IterType::parallel);
  s.types[k] = IterType::reduction;
  s.kinds.push_back(ReductionKind::Sum);
  unsigned m = rank - 2, nn = rank - 1;
  SmallVector<unsigned> batch = iota(rank - 2);
  SmallVector<int64_t> batchSizes(os.begin(), os.end() - 2);
  auto operandMap = [&](ArrayRef<int64_t> shape, unsigned inner0, unsigned inner1) {
    SmallVector<AffineExpr> exprs;
    ArrayRef<int64_t> b = shape.drop_back(2);
    if (b.size() > batch.size())
      return AffineMap();
    AffineMap bm = alignedMap(b, batch, batchSizes, bc, n, ctx);
    exprs.append(bm.getResults().begin(), bm.getResults().end());
    exprs.push_back(getAffineDimExpr(inner0, ctx));
    exprs.push_back(getAffineDimExpr(inner1, ctx));
    return AffineMap::get(n, 0, exprs, ctx);
  };
  AffineMap lm = transA ? operandMap(ls, k, m) : operandMap(ls, m, k);
  AffineMap rm = transB ? operandMap(rs, nn, k) : operandMap(rs, k, nn);
  if (!lm || !rm)
    return {};
  s.maps = {lm, rm, dimsMap(iota(rank), n, ctx)};
  return s;
}

/// fused_matmul: lhs [..., K] times rhs [K, N] ([N, K] with transpose_b);
/// loops are the result dims (rows..., N), K, the rope table's pair dim and
/// the broadcast loop. NVFP4 weights are not split.
LoopSpace fusedMatmulSpace(FusedMatmulOp op) {
  LoopSpace s;
  if (op.getRhsScales())
    return s;
  ArrayRef<int64_t> os = shapeOf(op.getOutput());
  if (os.empty() || shapeOf(op.getRhs()).size() != 2)
    return s;
  unsigned rank = os.size(), nLoop = rank - 1, k = rank, f = rank + 1, bc = rank + 2,
           n = rank + 3;
  MLIRContext *ctx = op.getContext();
  s.types.assign(n, IterType::parallel);
  s.types[k] = IterType::reduction;
  s.kinds.push_back(ReductionKind::Sum);
  SmallVector<unsigned> rows = iota(rank - 1);
  SmallVector<unsigned> rowsK = rows;
  rowsK.push_back(k);
  auto vec = [&](unsigned loop) { return dimsMap({loop}, n, ctx); };
  // The ODS operand groups, in order: lhs, rhs, norm_weight, norm_bias,
  // bias, head_norm_weight, rope_cos, rope_sin, residual (NVFP4 operands
  // returned above).
  enum Role { Lhs, Rhs, NormWeight, NormBias, Bias, HeadNorm, RopeCos, RopeSin, Residual };
  SmallVector<int> roles(op->getNumOperands(), -1);
  for (int role = Lhs; role <= Residual; ++role) {
    auto [start, len] = op.getODSOperandIndexAndLength(role);
    for (unsigned i = start; i < start + len; ++i)
      roles[i] = role;
  }
  for (OpOperand &use : op->getOpOperands()) {
    Value v = use.get();
    ArrayRef<int64_t> t = shapeOf(v);
    switch (roles[use.getOperandNumber()]) {
    case Lhs: {
      SmallVector<int64_t> sizes(os.begin(), os.end());
      sizes.back() = t.empty() ? 1 : t.back();
      if (t.size() > rank)
        return {};
      s.maps.push_back(alignedMap(t, rowsK, sizes, bc, n, ctx));
      break;
    }
    case Rhs:
      s.maps.push_back(op.getTransposeB() ? dimsMap({nLoop, k}, n, ctx)
                                          : dimsMap({k, nLoop}, n, ctx));
      break;
    case NormWeight:
    case NormBias:
      s.maps.push_back(vec(k));
      break;
    case Bias:
      s.maps.push_back(vec(nLoop));
      break;
    case HeadNorm:
      s.maps.push_back(vec(bc));
      break;
    case RopeCos:
    case RopeSin: {
      // [S, F] or [B, S, F] against the rows (..., S) of the output.
      if (t.size() < 2 || t.size() > rank)
        return {};
      SmallVector<unsigned> loops = rows;
      loops.push_back(f);
      SmallVector<int64_t> sizes(os.begin(), os.end());
      sizes.back() = t.back();
      s.maps.push_back(alignedMap(t, loops, sizes, bc, n, ctx));
      break;
    }
    case Residual:
      if (t.size() > rank)
        return {};
      s.maps.push_back(alignedMap(t, iota(rank), os, bc, n, ctx));
      break;
    default:
      return {};
    }
  }
  s.maps.push_back(dimsMap(iota(rank), n, ctx));
  return s;
}

/// rope: input [B, S, H·D]; cos/sin [S, F] or [B, S, F]; F is its own loop.
LoopSpace ropeSpace(RopeOp op) {
  LoopSpace s;
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  if (in.size() != 3)
    return s;
  unsigned f = 3, bc = 4, n = 5;
  MLIRContext *ctx = op.getContext();
  s.types.assign(n, IterType::parallel);
  s.maps.push_back(dimsMap({0, 1, 2}, n, ctx));
  for (Value t : {op.getCos(), op.getSin()}) {
    ArrayRef<int64_t> ts = shapeOf(t);
    if (ts.size() < 2 || ts.size() > 3)
      return {};
    SmallVector<int64_t> sizes = {in[0], in[1], ts.back()};
    s.maps.push_back(alignedMap(ts, {0, 1, f}, sizes, bc, n, ctx));
  }
  s.maps.push_back(dimsMap({0, 1, 2}, n, ctx));
  return s;
}

/// attention in `bsd` ([B, S, H·D]) or `bhsd` layout. The heads loop is
/// shared by query heads and KV heads: a rank keeps a contiguous block of
/// each, which keeps GQA's grouping when tp divides num_kv_heads.
LoopSpace attentionSpace(AttentionOp op) {
  LoopSpace s;
  MLIRContext *ctx = op.getContext();
  ArrayRef<int64_t> q = shapeOf(op.getQuery());
  auto maskMap = [&](unsigned b, unsigned h, unsigned sq, unsigned sk, unsigned bc,
                     unsigned n) -> AffineMap {
    ArrayRef<int64_t> m = shapeOf(op.getMask());
    // [Sq, Sk], [B, Sq, Sk] or [B, H, Sq, Sk] (size-1 dims broadcast).
    SmallVector<unsigned> loops = {b, h, sq, sk};
    SmallVector<int64_t> sizes = {q[0], op.getNumHeads(), -2, -2};
    if (m.size() < 2 || m.size() > 4)
      return AffineMap();
    if (m.size() == 3) {
      loops = {b, sq, sk};
      sizes = {q[0], -2, -2};
    }
    return alignedMap(m, loops, sizes, bc, n, ctx);
  };
  if (op.getLayout() == AttnLayout::BSD && q.size() == 3) {
    // loops: B, Sq, heads·D, Sk (reduction), broadcast
    unsigned n = 5;
    s.types = {IterType::parallel, IterType::parallel, IterType::parallel,
               IterType::reduction, IterType::parallel};
    s.kinds.push_back(ReductionKind::Generic);
    s.maps = {dimsMap({0, 1, 2}, n, ctx), dimsMap({0, 3, 2}, n, ctx),
              dimsMap({0, 3, 2}, n, ctx)};
    if (op.getMask()) {
      AffineMap m = maskMap(0, 2, 1, 3, 4, n);
      if (!m)
        return {};
      s.maps.push_back(m);
    }
    s.maps.push_back(dimsMap({0, 1, 2}, n, ctx));
    return s;
  }
  if (op.getLayout() == AttnLayout::BHSD && q.size() == 4) {
    // loops: B, H, Sq, D, Sk (reduction), broadcast
    unsigned n = 6;
    s.types = {IterType::parallel, IterType::parallel,  IterType::parallel,
               IterType::parallel, IterType::reduction, IterType::parallel};
    s.kinds.push_back(ReductionKind::Generic);
    s.maps = {dimsMap({0, 1, 2, 3}, n, ctx), dimsMap({0, 1, 4, 3}, n, ctx),
              dimsMap({0, 1, 4, 3}, n, ctx)};
    if (op.getMask()) {
      AffineMap m = maskMap(0, 1, 2, 4, 5, n);
      if (!m)
        return {};
      s.maps.push_back(m);
    }
    s.maps.push_back(dimsMap({0, 1, 2, 3}, n, ctx));
    return s;
  }
  return s;
}

LoopSpace transposeSpace(TransposeOp op) {
  LoopSpace s;
  ArrayRef<int64_t> perm = op.getPermutation();
  unsigned rank = perm.size();
  MLIRContext *ctx = op.getContext();
  s.types.assign(rank, IterType::parallel);
  SmallVector<unsigned> inLoops(rank);
  for (unsigned d = 0; d < rank; ++d)
    inLoops[perm[d]] = d;
  s.maps = {dimsMap(inLoops, rank, ctx), dimsMap(iota(rank), rank, ctx)};
  return s;
}

LoopSpace broadcastSpace(BroadcastOp op) {
  LoopSpace s;
  ArrayRef<int64_t> out = shapeOf(op.getOutput());
  unsigned rank = out.size(), n = rank + 1;
  MLIRContext *ctx = op.getContext();
  s.types.assign(n, IterType::parallel);
  s.maps = {alignedMap(shapeOf(op.getInput()), iota(rank), out, rank, n, ctx),
            dimsMap(iota(rank), n, ctx)};
  return s;
}

/// gather: table [V, D] rows picked by indices [I...] into [I..., D]; V is
/// a loop of its own, split by vocab-parallel embeddings
/// (partitionVocabGather).
LoopSpace gatherSpace(GatherOp op) {
  LoopSpace s;
  ArrayRef<int64_t> t = shapeOf(op.getTable()), idx = shapeOf(op.getIndices());
  if (t.size() != 2)
    return s;
  unsigned ri = idx.size(), d = ri, v = ri + 1, n = ri + 2;
  MLIRContext *ctx = op.getContext();
  s.types.assign(n, IterType::parallel);
  s.types[v] = IterType::reduction;
  s.kinds.push_back(ReductionKind::Generic);
  SmallVector<unsigned> outLoops = iota(ri);
  outLoops.push_back(d);
  s.maps = {dimsMap({v, d}, n, ctx), dimsMap(iota(ri), n, ctx), dimsMap(outLoops, n, ctx)};
  return s;
}

/// grouped_matmul: loops (t, n, k, e) over input [T, K], weight [E, N, K],
/// ids [T] and out [T, N]; K a sum, E a loop of its own (each row reads one
/// expert), split by expert parallelism (partitionExpertGroupedMatmul).
LoopSpace groupedMatmulSpace(GroupedMatmulOp op) {
  LoopSpace s;
  if (shapeOf(op.getInput()).size() != 2 || shapeOf(op.getWeight()).size() != 3)
    return s;
  MLIRContext *ctx = op.getContext();
  const unsigned t = 0, n = 1, k = 2, e = 3, loops = 4;
  s.types = {IterType::parallel, IterType::parallel, IterType::reduction, IterType::reduction};
  s.kinds = {ReductionKind::Sum, ReductionKind::Generic};
  s.maps = {dimsMap({t, k}, loops, ctx), dimsMap({e, n, k}, loops, ctx), dimsMap({t}, loops, ctx),
            dimsMap({t, n}, loops, ctx)};
  return s;
}

/// topk: the leading dims of input [..., E] and of values/indices [..., k]
/// are shared loops; E (searched whole) and k are loops of their own.
LoopSpace topkSpace(TopKOp op) {
  LoopSpace s;
  unsigned rank = shapeOf(op.getInput()).size();
  if (rank == 0)
    return s;
  unsigned lead = rank - 1, in = lead, out = rank, n = rank + 1;
  MLIRContext *ctx = op.getContext();
  s.types.assign(n, IterType::parallel);
  s.types[in] = IterType::reduction;
  s.kinds.push_back(ReductionKind::Generic);
  SmallVector<unsigned> inLoops = iota(lead), outLoops = iota(lead);
  inLoops.push_back(in);
  outLoops.push_back(out);
  s.maps = {dimsMap(inLoops, n, ctx), dimsMap(outLoops, n, ctx), dimsMap(outLoops, n, ctx)};
  return s;
}

LoopSpace reduceSpace(ReduceOp op) {
  LoopSpace s;
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  unsigned rank = in.size(), bc = rank, n = rank + 1;
  MLIRContext *ctx = op.getContext();
  ReductionKind kind = ReductionKind::Generic;
  switch (op.getKind()) {
  case ReduceKind::Sum: kind = ReductionKind::Sum; break;
  case ReduceKind::Max: kind = ReductionKind::Max; break;
  case ReduceKind::Min: kind = ReductionKind::Min; break;
  default: break;
  }
  s.types.assign(n, IterType::parallel);
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : op.getAxes()) {
    int64_t ax = a < 0 ? a + rank : a;
    if (ax < 0 || ax >= (int64_t)rank)
      return {};
    reduced[ax] = true;
  }
  SmallVector<unsigned> outLoops;
  for (unsigned d = 0; d < rank; ++d) {
    if (reduced[d]) {
      s.types[d] = IterType::reduction;
      s.kinds.push_back(kind);
      if (op.getKeepDims())
        outLoops.push_back(bc);
    } else {
      outLoops.push_back(d);
    }
  }
  s.maps = {dimsMap(iota(rank), n, ctx), dimsMap(outLoops, n, ctx)};
  return s;
}

LoopSpace loopSpaceOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, LoopSpace>(op)
      .Case([](MatmulOp m) {
        return matmulSpace(m.getLhs(), m.getRhs(), m.getTransposeA(), m.getTransposeB(),
                           m.getOutput());
      })
      .Case([](FusedMatmulOp m) { return fusedMatmulSpace(m); })
      .Case([](SoftmaxOp m) {
        int64_t rank = shapeOf(m.getInput()).size(), ax = m.getAxis();
        ax = ax < 0 ? ax + rank : ax;
        if (ax < 0 || ax >= rank)
          return LoopSpace();
        return rowwiseSpace(m, {ax}, ReductionKind::Generic);
      })
      .Case<RmsNormOp, LayerNormOp, ResidualRmsNormOp>([](Operation *m) {
        int64_t rank = shapeOf(m->getOperand(0)).size();
        if (rank == 0)
          return LoopSpace();
        return rowwiseSpace(m, {rank - 1}, ReductionKind::Generic);
      })
      .Case([](CausalMaskOp m) { return rowwiseSpace(m, {}, ReductionKind::Generic); })
      .Case([](ConcatOp m) { return rowwiseSpace(m, {}, ReductionKind::Generic); })
      .Case([](SliceOp m) { return rowwiseSpace(m, {}, ReductionKind::Generic); })
      .Case([](RopeOp m) { return ropeSpace(m); })
      .Case([](AttentionOp m) { return attentionSpace(m); })
      .Case([](TransposeOp m) { return transposeSpace(m); })
      .Case([](BroadcastOp m) { return broadcastSpace(m); })
      .Case([](GatherOp m) { return gatherSpace(m); })
      .Case([](GroupedMatmulOp m) { return groupedMatmulSpace(m); })
      .Case([](TopKOp m) { return topkSpace(m); })
      .Case([](ReduceOp m) { return reduceSpace(m); })
      .Default([](Operation *m) { return elementwiseSpace(m); });
}

GridOp gridOf(Operation *op, ArrayRef<Sharding> a, ArrayRef<Sharding> b,
              SymbolTableCollection &st) {
  for (ArrayRef<Sharding> list : {a, b})
    for (const Sharding &s : list)
      if (s)
        return shard::getGridOrNull(op, s.getGridAttr(), st);
  return nullptr;
}

int64_t groupSize(ArrayRef<GridAxis> axes, GridOp grid) {
  if (axes.empty() || !grid)
    return 1;
  return shard::collectiveProcessGroupSize(axes, grid);
}

/// Whether `size` splits evenly over `parts` (dynamic sizes are taken on
/// trust: the runner checks them).
bool divides(int64_t size, int64_t parts) {
  return parts == 1 || ShapedType::isDynamic(size) || ShapedType::isDynamic(parts) ||
         (parts > 0 && size % parts == 0);
}

SmallVector<int64_t> shapeAttrOf(Type t) {
  SmallVector<int64_t> v;
  for (int64_t d : cast<RankedTensorType>(t).getShape())
    v.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return v;
}

/// Checks that the split the partition is asked for is one `op` computes
/// locally, and (given the partitioned `clone`) rewrites its shape and head
/// attributes for the rank.
LogicalResult checkAndFixup(Operation *op, Operation *clone, ArrayRef<SmallVector<GridAxis>> loops,
                            GridOp grid) {
  auto split = [&](unsigned loop) {
    return loop < loops.size() ? groupSize(loops[loop], grid) : int64_t(1);
  };
  auto fail = [&](const Twine &why) {
    return op->emitOpError("cannot be partitioned over the device grid: ") << why;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TopKOp t) -> LogicalResult {
        // Loops: the leading dims, then E and k (the last two).
        unsigned rank = shapeOf(t.getInput()).size();
        if (split(rank - 1) != 1 || split(rank) != 1)
          return fail("its last axis is split (top-k searches it whole)");
        return success();
      })
      .Case([&](AttentionOp a) -> LogicalResult {
        bool bsd = a.getLayout() == AttnLayout::BSD;
        unsigned heads = bsd ? 2 : 1;
        int64_t parts = split(heads);
        if (split(bsd ? 1 : 2) != 1)
          return fail("the query sequence is split (only heads split)");
        if (!bsd && split(3) != 1)
          return fail("head_dim is split (only heads split)");
        if (a.getNumHeads() % parts || a.getNumKvHeads() % parts)
          return fail(Twine(parts) + " ranks do not divide num_heads = " +
                      Twine(a.getNumHeads()) + " and num_kv_heads = " +
                      Twine(a.getNumKvHeads()) +
                      " (replicating KV heads when tp > num_kv_heads is not supported)");
        if (auto m = a.getMask(); m && shapeOf(m).size() == 4 && shapeOf(m)[1] != 1 &&
                                  shapeOf(m)[1] != a.getNumHeads())
          return fail("the mask's head dim is neither 1 nor num_heads");
        if (auto c = dyn_cast_or_null<AttentionOp>(clone)) {
          c.setNumHeads(a.getNumHeads() / parts);
          c.setNumKvHeads(a.getNumKvHeads() / parts);
        }
        return success();
      })
      .Case([&](RopeOp r) -> LogicalResult {
        int64_t c = shapeOf(r.getInput())[2];
        if (split(1) != 1)
          return fail("the sequence is split");
        if (!ShapedType::isDynamic(c) && (c / r.getHeadDim()) % split(2))
          return fail(Twine(split(2)) + " ranks do not divide the " +
                      Twine(c / r.getHeadDim()) + " heads");
        return success();
      })
      .Case([&](FusedMatmulOp m) -> LogicalResult {
        unsigned rank = shapeOf(m.getOutput()).size();
        bool nSplit = split(rank - 1) != 1, kSplit = split(rank) != 1;
        if (nSplit && m.getGlu())
          return fail("a gated (glu) fused_matmul's output features are split; shard "
                      "before fusion");
        if (nSplit && (m.getRopeCos() || m.getRopeHeads()))
          return fail("a fused_matmul with RoPE has its output features split; shard "
                      "before fusion");
        if (nSplit && m.getHeadDim()) {
          int64_t nn = shapeOf(m.getOutput()).back();
          if (!ShapedType::isDynamic(nn) && (nn / *m.getHeadDim()) % split(rank - 1))
            return fail("the ranks do not divide the heads");
        }
        if (kSplit && (m.getNorm() || m.getBias() || m.getResidual() || m.getGlu() ||
                       m.getActivation() != ActivationKind::None || m.getHeadNormWeight() ||
                       m.getRopeCos()))
          return fail("a row-parallel fused_matmul has a prologue or epilogue; shard "
                      "before fusion");
        return success();
      })
      .Case<RmsNormOp, LayerNormOp, ResidualRmsNormOp>([&](Operation *) -> LogicalResult {
        if (split(shapeOf(op->getOperand(0)).size() - 1) != 1)
          return fail("the normalized (last) dim is split");
        return success();
      })
      .Case([&](SoftmaxOp s) -> LogicalResult {
        int64_t rank = shapeOf(s.getInput()).size(), ax = s.getAxis();
        if (split(ax < 0 ? ax + rank : ax) != 1)
          return fail("the softmax axis is split");
        return success();
      })
      .Case([&](CausalMaskOp c) -> LogicalResult {
        unsigned rank = shapeOf(c.getInput()).size();
        if (split(rank - 1) != 1 || split(rank - 2) != 1)
          return fail("a query or key dim is split (their positions would shift)");
        return success();
      })
      .Case([&](ConcatOp c) -> LogicalResult {
        int64_t rank = shapeOf(c.getOutput()).size(), ax = c.getAxis();
        if (split(ax < 0 ? ax + rank : ax) != 1)
          return fail("the concatenation axis is split");
        return success();
      })
      .Case([&](SliceOp s) -> LogicalResult {
        ArrayRef<int64_t> in = shapeOf(s.getInput());
        SmallVector<int64_t> sizes(s.getSizes());
        for (unsigned d = 0; d < in.size(); ++d) {
          if (split(d) == 1)
            continue;
          bool whole = s.getOffsets()[d] == 0 && s.getStrides()[d] == 1 &&
                       (sizes[d] == -1 || sizes[d] == in[d]);
          if (!whole)
            return fail("dim " + Twine(d) + " is both sliced and split");
          sizes[d] = -1;
        }
        if (clone)
          cast<SliceOp>(clone).setSizes(sizes);
        return success();
      })
      .Case([&](BroadcastOp b) -> LogicalResult {
        if (clone)
          cast<BroadcastOp>(clone).setShape(shapeAttrOf(clone->getResult(0).getType()));
        return success();
      })
      .Default([](Operation *) { return success(); });
}

/// A vocab-parallel embedding (Megatron-LM): rank r holds table rows
/// [r·Vl, (r+1)·Vl). Each rank looks up the ids in its range (others read
/// row 0 and are replaced by zeros: a select, so that no inf or NaN of an
/// unused row leaks), and a sum all-reduce gives every rank the whole rows.
/// Ids out of the vocabulary are clamped first, as gather clamps them.
LogicalResult partitionVocabGather(GatherOp op, ArrayRef<Value> partitionedOperands,
                                   ArrayRef<GridAxis> vocabAxes, bool rowsSplit, GridOp grid,
                                   IRMapping &map, OpBuilder &b) {
  Location loc = op.getLoc();
  auto table = cast<RankedTensorType>(partitionedOperands[0].getType());
  auto ids = cast<RankedTensorType>(partitionedOperands[1].getType());
  if (rowsSplit)
    return op.emitOpError("cannot be partitioned over the device grid: both the vocabulary "
                          "and the embedding dim are split");
  // The rank's block is its linear index: the vocabulary is split over
  // every axis of the grid, in order.
  bool everyAxis = vocabAxes.size() == grid.getShape().size();
  for (auto [i, a] : llvm::enumerate(vocabAxes))
    everyAxis = everyAxis && a == static_cast<GridAxis>(i);
  if (!everyAxis || ShapedType::isDynamic(table.getDimSize(0)))
    return op.emitOpError("cannot be partitioned over the device grid: a vocab-parallel "
                          "gather splits the vocabulary over every axis of the grid, in order, "
                          "and needs a static vocabulary");
  int64_t rows = table.getDimSize(0);
  Type idType = ids.getElementType();
  Type elemType = table.getElementType();
  Value rank = shard::ProcessLinearIndexOp::create(b, loc, grid);
  Value rankId = arith::IndexCastOp::create(b, loc, idType, rank);
  Value rankT = tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, idType),
                                               ValueRange{rankId});
  auto maskType = RankedTensorType::get(ids.getShape(), b.getI1Type());
  auto local = FusedElementwiseOp::create(b, loc, TypeRange{ids, maskType},
                                          ValueRange{partitionedOperands[1], rankT});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = b.createBlock(&local.getBody());
    Value id = body->addArgument(idType, loc), r = body->addArgument(idType, loc);
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(idType, 0));
    Value count = arith::ConstantOp::create(b, loc, b.getIntegerAttr(idType, rows));
    // Out-of-range ids are clamped to the whole vocabulary, as gather does.
    Value last = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(idType, rows * groupSize(vocabAxes, grid) - 1));
    id = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, id, zero), last);
    Value first = arith::MulIOp::create(b, loc, r, count);
    Value row = arith::SubIOp::create(b, loc, id, first);
    Value geZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, zero);
    Value ltCount = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, count);
    Value mine = arith::AndIOp::create(b, loc, geZero, ltCount);
    Value safe = arith::SelectOp::create(b, loc, mine, row, zero);
    YieldOp::create(b, loc, ValueRange{safe, mine});
  }
  Value gathered = GatherOp::create(b, loc, partitionedOperands[0], local.getResult(0));
  SmallVector<int64_t> maskShape;
  for (int64_t d : ids.getShape())
    maskShape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  maskShape.push_back(1);
  Value mask = ReshapeOp::create(b, loc, local.getResult(1), maskShape);
  Value zero = ConstantOp::create(
      b, loc, DenseElementsAttr::get(RankedTensorType::get({}, elemType),
                                     b.getZeroAttr(elemType)));
  Value kept = SelectOp::create(b, loc, mask, gathered, zero);
  Value reduced = shard::AllReduceOp::create(b, loc, kept, grid.getSymName(), vocabAxes,
                                             ReductionKind::Sum);
  map.map(op.getOutput(), reduced);
  return success();
}

/// Expert parallelism (experts stacked [E, N, K], rank r holding experts
/// [r·El, (r+1)·El)): each rank computes the rows routed to its experts and
/// only those (the others get id -1 and a local grouped_matmul with
/// zero_out_of_range makes them zeros without computing them), and a sum
/// all-reduce gives every rank every row. Ids are clamped to [0, E) first,
/// as the op does (unless it has zero_out_of_range itself).
/// With expert tensor parallelism (rlx-mir-shard{ep}: grid [ep, tp/ep], the
/// experts over axis 0) N or K may be split over the other axis too: the
/// expert group is the linear index over the grid's later axes' size, a
/// split N stays split, and a split K joins the all-reduce.
LogicalResult partitionExpertGroupedMatmul(GroupedMatmulOp op, ArrayRef<Value> partitionedOperands,
                                           ArrayRef<SmallVector<GridAxis>> loops, GridOp grid,
                                           IRMapping &map, OpBuilder &b) {
  Location loc = op.getLoc();
  ArrayRef<GridAxis> expertAxes = loops[3];
  auto overlaps = [&](ArrayRef<GridAxis> axes) {
    return llvm::any_of(axes, [&](GridAxis a) { return llvm::is_contained(expertAxes, a); });
  };
  if (!loops[0].empty())
    return op.emitOpError("cannot be partitioned over the device grid: its rows and its "
                          "experts are split (expert parallelism computes every row on "
                          "the experts' ranks)");
  if (overlaps(loops[1]) || overlaps(loops[2]))
    return op.emitOpError("cannot be partitioned over the device grid: its experts and its "
                          "N or K dim are split over the same grid axes");
  auto weight = cast<RankedTensorType>(partitionedOperands[1].getType());
  auto ids = cast<RankedTensorType>(partitionedOperands[2].getType());
  if (expertAxes.size() != 1 || expertAxes[0] != 0 ||
      llvm::any_of(grid.getShape(), ShapedType::isDynamic) ||
      ShapedType::isDynamic(weight.getDimSize(0)))
    return op.emitOpError("cannot be partitioned over the device grid: expert parallelism "
                          "splits the experts over the grid's first axis of a static grid, "
                          "with a static number of experts");
  int64_t local = weight.getDimSize(0);
  // Ranks per expert group: the product of the grid's later axes.
  int64_t inner = 1;
  for (int64_t d : grid.getShape().drop_front())
    inner *= d;
  Type idType = ids.getElementType();
  Value rank = shard::ProcessLinearIndexOp::create(b, loc, grid);
  Value rankId = arith::IndexCastOp::create(b, loc, idType, rank);
  Value rankT = tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, idType),
                                               ValueRange{rankId});
  auto owned = FusedElementwiseOp::create(b, loc, TypeRange{ids},
                                          ValueRange{partitionedOperands[2], rankT});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = b.createBlock(&owned.getBody());
    Value id = body->addArgument(idType, loc), r = body->addArgument(idType, loc);
    auto constant = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getIntegerAttr(idType, v)).getResult();
    };
    Value zero = constant(0), count = constant(local);
    Value last = constant(local * groupSize(expertAxes, grid) - 1);
    if (!op.getZeroOutOfRange())
      id = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, id, zero), last);
    Value group = inner == 1 ? r : arith::DivSIOp::create(b, loc, r, constant(inner)).getResult();
    Value expert =
        arith::SubIOp::create(b, loc, id, arith::MulIOp::create(b, loc, group, count));
    Value mine = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, expert, zero),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, expert, count));
    YieldOp::create(b, loc, ValueRange{arith::SelectOp::create(b, loc, mine, expert, constant(-1))});
  }
  Value rows = GroupedMatmulOp::create(b, loc, partitionedOperands[0], partitionedOperands[1],
                                       owned.getResult(0), /*zero_out_of_range=*/true);
  // Rows that only reach the next expert-split grouped_matmul stay on
  // their rank (rlx-mir-shard checked it); the others are summed, with
  // the partial sums of a split K.
  SmallVector<GridAxis> summed(loops[2]);
  if (!op->hasAttr(kExpertLocalRowsAttr))
    summed.append(expertAxes.begin(), expertAxes.end());
  llvm::sort(summed);
  if (summed.empty())
    map.map(op.getOutput(), rows);
  else
    map.map(op.getOutput(), shard::AllReduceOp::create(b, loc, rows, grid.getSymName(), summed,
                                                       ReductionKind::Sum));
  return success();
}

/// The partition shared by every loop-space op.
LogicalResult partitionBySpace(Operation *op, ArrayRef<Value> partitionedOperands,
                               ArrayRef<Sharding> operandShardings,
                               ArrayRef<Sharding> resultShardings, IRMapping &map,
                               SymbolTableCollection &st, OpBuilder &b) {
  LoopSpace space = loopSpaceOf(op);
  if (!space.valid())
    return op->emitOpError("has no sharding rule for these operand shapes");
  GridOp grid = gridOf(op, operandShardings, resultShardings, st);
  ShardingArray loops = shard::getGridAxisAssignmentForLoopIterators(
      operandShardings, resultShardings, space.types, space.maps);
  // Every dim of an operand must be split as its loop is: partition takes
  // the operands as annotated.
  for (auto [sharding, m] : llvm::zip(operandShardings, space.maps)) {
    if (!sharding)
      continue;
    for (auto [axes, e] : llvm::zip(sharding.getSplitAxes(), m.getResults())) {
      unsigned loop = cast<AffineDimExpr>(e).getPosition();
      if (!llvm::equal(axes.asArrayRef(), loops[loop]))
        return op->emitOpError("operands split inconsistently over the device grid");
    }
  }
  // shard-partition hands a null operand where it could not reshard it
  // (a change of split that adds several grid axes at once).
  if (llvm::any_of(partitionedOperands, [](Value v) { return !v; }))
    return op->emitOpError("cannot be partitioned over the device grid: shard-partition found "
                           "no resharding for one of its operands");
  if (failed(checkAndFixup(op, /*clone=*/nullptr, loops, grid)))
    return failure();
  if (auto gather = dyn_cast<GatherOp>(op)) {
    unsigned ri = shapeOf(gather.getIndices()).size();
    if (!loops[ri + 1].empty())
      return partitionVocabGather(gather, partitionedOperands, loops[ri + 1],
                                  !loops[ri].empty(), grid, map, b);
  }
  if (auto gm = dyn_cast<GroupedMatmulOp>(op); gm && !loops[3].empty())
    return partitionExpertGroupedMatmul(gm, partitionedOperands, loops, grid, map, b);
  // Reductions over split loops: sum, max and min combine across ranks.
  SmallVector<GridAxis> reductionAxes;
  std::optional<ReductionKind> kind;
  unsigned r = 0;
  for (auto [t, axes] : llvm::zip(space.types, loops)) {
    if (t != IterType::reduction)
      continue;
    ReductionKind k = space.kinds[r++];
    if (axes.empty())
      continue;
    if (k != ReductionKind::Sum && k != ReductionKind::Max && k != ReductionKind::Min)
      return op->emitOpError("cannot be partitioned over the device grid: it reduces "
                             "over a split dim");
    if (kind && *kind != k)
      return op->emitOpError("mixes reduction kinds over split dims");
    kind = k;
    reductionAxes.append(axes.begin(), axes.end());
  }
  shard::partitionTriviallyShardableOperation(*op, partitionedOperands, operandShardings,
                                              resultShardings, map, st, b);
  Operation *clone = map.lookup(op->getResult(0)).getDefiningOp();
  if (failed(checkAndFixup(op, clone, loops, grid)))
    return failure();
  if (!reductionAxes.empty()) {
    for (Value result : op->getResults()) {
      Value local = map.lookup(result);
      Value reduced = shard::AllReduceOp::create(b, op->getLoc(), local,
                                                 grid.getSymName(), reductionAxes, *kind);
      map.map(result, reduced);
    }
  }
  return success();
}

template <typename OpT>
struct SpaceShardingModel
    : public shard::ShardingInterface::ExternalModel<SpaceShardingModel<OpT>, OpT> {
  SmallVector<IterType> getLoopIteratorTypes(Operation *op) const {
    return loopSpaceOf(op).types;
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const { return loopSpaceOf(op).maps; }
  SmallVector<ReductionKind> getReductionLoopIteratorKinds(Operation *op) const {
    return loopSpaceOf(op).kinds;
  }
  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &st, OpBuilder &b) const {
    return partitionBySpace(op, partitionedOperands, operandShardings, resultShardings, map,
                            st, b);
  }
};

//===----------------------------------------------------------------------===//
// reshape: dims paired by groups
//===----------------------------------------------------------------------===//

/// A contiguous group of input dims whose product equals that of a group of
/// output dims; `inLead`/`outLead` are the first dims of size != 1 (the only
/// ones a split may sit on: a block of the lead dim is a contiguous block of
/// the group's elements), -1 when the group is all ones.
struct ReshapeGroup {
  int64_t inBegin, inEnd, outBegin, outEnd, inLead = -1, outLead = -1;
};

FailureOr<SmallVector<ReshapeGroup>> reshapeGroups(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  SmallVector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  auto dyn = [](int64_t d) { return ShapedType::isDynamic(d); };
  while (i < in.size() || j < out.size()) {
    ReshapeGroup g{(int64_t)i, 0, (int64_t)j, 0};
    // Unit dims join the group of the next non-unit pair (or the last group).
    while (i < in.size() && in[i] == 1)
      ++i;
    while (j < out.size() && out[j] == 1)
      ++j;
    if (i == in.size() || j == out.size()) {
      if (i != in.size() || j != out.size())
        return failure();
      if (groups.empty())
        groups.push_back(g);
      groups.back().inEnd = i;
      groups.back().outEnd = j;
      break;
    }
    if (dyn(in[i]) || dyn(out[j])) {
      // A dynamic dim pairs only with a dynamic dim; when it is the only
      // dynamic dim of each side, the static dims after them tell their
      // ratio: the side with the larger remaining product merges that
      // factor into the group ([?, k, H] -> [?, H]: ? and k are one group).
      if (!dyn(in[i]) || !dyn(out[j]))
        return failure();
      ++i, ++j;
      auto dynamicDims = [&](ArrayRef<int64_t> s) { return llvm::count_if(s, dyn); };
      bool onlyDynamic = dynamicDims(in) == 1 && dynamicDims(out) == 1;
      auto rest = [&](ArrayRef<int64_t> s, size_t from) -> std::optional<int64_t> {
        int64_t p = 1;
        for (size_t d = from; d < s.size(); ++d) {
          if (dyn(s[d]))
            return std::nullopt;
          p *= s[d];
        }
        return p;
      };
      std::optional<int64_t> ri = rest(in, i), ro = rest(out, j);
      if (onlyDynamic && ri && ro && *ri != *ro) {
        bool inSide = *ri > *ro;
        ArrayRef<int64_t> s = inSide ? in : out;
        size_t &at = inSide ? i : j;
        int64_t big = std::max(*ri, *ro), small = std::min(*ri, *ro);
        if (small == 0 || big % small)
          return failure();
        for (int64_t factor = big / small; factor > 1;) {
          if (at == s.size() || factor % s[at])
            return failure();
          factor /= s[at++];
        }
      }
    } else {
      int64_t pi = in[i++], pj = out[j++];
      while (pi != pj) {
        if (pi < pj) {
          if (i == in.size() || dyn(in[i]))
            return failure();
          pi *= in[i++];
        } else {
          if (j == out.size() || dyn(out[j]))
            return failure();
          pj *= out[j++];
        }
      }
    }
    g.inEnd = i;
    g.outEnd = j;
    groups.push_back(g);
  }
  for (ReshapeGroup &g : groups) {
    for (int64_t d = g.inBegin; d < g.inEnd && g.inLead < 0; ++d)
      if (in[d] != 1)
        g.inLead = d;
    for (int64_t d = g.outBegin; d < g.outEnd && g.outLead < 0; ++d)
      if (out[d] != 1)
        g.outLead = d;
  }
  return groups;
}

SmallVector<shard::GridAxesAttr> toAttrs(MLIRContext *ctx, ArrayRef<SmallVector<GridAxis>> v) {
  SmallVector<SmallVector<GridAxis>> trimmed(v.begin(), v.end());
  shard::removeTrailingEmptySubArray(trimmed);
  SmallVector<shard::GridAxesAttr> res;
  for (const auto &axes : trimmed)
    res.push_back(shard::GridAxesAttr::get(ctx, axes));
  return res;
}

struct ReshapeShardingModel
    : public shard::ShardingInterface::ExternalModel<ReshapeShardingModel, ReshapeOp> {
  static FailureOr<SmallVector<ReshapeGroup>> groupsOf(Operation *op) {
    return reshapeGroups(shapeOf(op->getOperand(0)), shapeOf(op->getResult(0)));
  }

  SmallVector<IterType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<IterType>(shapeOf(op->getResult(0)).size(), IterType::parallel);
  }

  // Loops are the output dims; an input split on a group's lead dim is the
  // output split on the group's lead dim.
  FailureOr<ShardingOption> getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                                              ArrayRef<Sharding> resultShardings) const {
    FailureOr<SmallVector<ReshapeGroup>> groups = groupsOf(op);
    if (failed(groups))
      return op->emitOpError("pairs no dims between input and output for sharding");
    ShardingOption option;
    option.shardingArray.resize(shapeOf(op->getResult(0)).size());
    bool any = false;
    auto fill = [&](int64_t loop, ArrayRef<GridAxis> axes) {
      if (axes.empty())
        return true;
      if (!option.shardingArray[loop].empty())
        return llvm::equal(option.shardingArray[loop], axes);
      option.shardingArray[loop].assign(axes.begin(), axes.end());
      return true;
    };
    if (Sharding s = resultShardings[0]) {
      any = true;
      option.grid = s.getGridAttr();
      for (auto [d, axes] : llvm::enumerate(s.getSplitAxes())) {
        if (axes.empty())
          continue;
        if (d >= option.shardingArray.size())
          return failure();
        int64_t dim = d;
        bool lead = llvm::any_of(*groups, [&](const ReshapeGroup &g) {
          return g.outLead == dim;
        });
        if (!lead || !fill(d, axes.asArrayRef()))
          return failure();
      }
    }
    if (Sharding s = operandShardings[0]) {
      any = true;
      option.grid = s.getGridAttr();
      for (auto [d, axes] : llvm::enumerate(s.getSplitAxes())) {
        if (axes.empty())
          continue;
        int64_t dim = d;
        const ReshapeGroup *g = llvm::find_if(*groups, [&](const ReshapeGroup &g) {
          return g.inLead == dim;
        });
        if (g == groups->end() || g->outLead < 0 || !fill(g->outLead, axes.asArrayRef()))
          return failure();
      }
    }
    if (!any)
      return ShardingOption::makeEmpty();
    shard::removeTrailingEmptySubArray(option.shardingArray);
    return option;
  }

  FailureOr<std::vector<Sharding>> getShardingAnnotations(Operation *op,
                                                          const ShardingOption &option) const {
    FailureOr<SmallVector<ReshapeGroup>> groups = groupsOf(op);
    if (failed(groups))
      return failure();
    MLIRContext *ctx = op->getContext();
    SmallVector<SmallVector<GridAxis>> in(shapeOf(op->getOperand(0)).size());
    SmallVector<SmallVector<GridAxis>> out(shapeOf(op->getResult(0)).size());
    for (auto [d, axes] : llvm::enumerate(option.shardingArray)) {
      if (axes.empty())
        continue;
      int64_t dim = d;
      const ReshapeGroup *g = llvm::find_if(*groups, [&](const ReshapeGroup &g) {
        return g.outLead == dim;
      });
      if (g == groups->end() || g->inLead < 0)
        return failure();
      out[d] = axes;
      in[g->inLead] = axes;
    }
    return std::vector<Sharding>{Sharding::get(option.grid, toAttrs(ctx, in)),
                                 Sharding::get(option.grid, toAttrs(ctx, out))};
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &b,
                                       const ShardingOption &option) const {
    FailureOr<std::vector<Sharding>> s = getShardingAnnotations(op, option);
    if (failed(s))
      return failure();
    shard::maybeInsertTargetShardingAnnotation((*s)[1], op->getResult(0), b);
    OpBuilder::InsertionGuard guard(b);
    shard::maybeInsertSourceShardingAnnotation((*s)[0], op->getOpOperand(0), b);
    return success();
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &st, OpBuilder &b) const {
    FailureOr<SmallVector<ReshapeGroup>> groups = groupsOf(op);
    if (failed(groups))
      return op->emitOpError("pairs no dims between input and output for sharding");
    GridOp grid = gridOf(op, operandShardings, resultShardings, st);
    ArrayRef<int64_t> in = shapeOf(op->getOperand(0)), out = shapeOf(op->getResult(0));
    auto axesAt = [](const Sharding &s, int64_t d) -> ArrayRef<GridAxis> {
      if (!s || d < 0 || d >= (int64_t)s.getSplitAxes().size())
        return {};
      return s.getSplitAxes()[d].asArrayRef();
    };
    for (const ReshapeGroup &g : *groups) {
      for (int64_t d = g.inBegin; d < g.inEnd; ++d)
        if (d != g.inLead && !axesAt(operandShardings[0], d).empty())
          return op->emitOpError("cannot be partitioned: input dim ")
                 << d << " is split but is not the lead dim of its group";
      for (int64_t d = g.outBegin; d < g.outEnd; ++d)
        if (d != g.outLead && !axesAt(resultShardings[0], d).empty())
          return op->emitOpError("cannot be partitioned: output dim ")
                 << d << " is split but is not the lead dim of its group";
      ArrayRef<GridAxis> ia = axesAt(operandShardings[0], g.inLead);
      ArrayRef<GridAxis> oa = axesAt(resultShardings[0], g.outLead);
      if (!llvm::equal(ia, oa))
        return op->emitOpError("cannot be partitioned: input dim ")
               << g.inLead << " and output dim " << g.outLead << " are split differently";
      int64_t parts = groupSize(ia, grid);
      if ((g.inLead >= 0 && !divides(in[g.inLead], parts)) ||
          (g.outLead >= 0 && !divides(out[g.outLead], parts)))
        return op->emitOpError("cannot be partitioned: ")
               << parts << " ranks do not divide input dim " << g.inLead << " (size "
               << in[g.inLead] << ") and output dim " << g.outLead << " (size "
               << out[g.outLead] << ")";
    }
    shard::partitionTriviallyShardableOperation(*op, partitionedOperands, operandShardings,
                                                resultShardings, map, st, b);
    auto clone = cast<ReshapeOp>(map.lookup(op->getResult(0)).getDefiningOp());
    clone.setShape(shapeAttrOf(clone.getOutput().getType()));
    return success();
  }
};

template <typename... Ops>
void attachSpaceModels(MLIRContext *ctx) {
  (Ops::template attachInterface<SpaceShardingModel<Ops>>(*ctx), ...);
}

} // namespace

void mlir::rlx::mir::registerShardingInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, MIRDialect *) {
    ctx->getOrLoadDialect<shard::ShardDialect>();
    ReshapeOp::attachInterface<ReshapeShardingModel>(*ctx);
    attachSpaceModels<
        // elementwise (numpy broadcast)
        AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, NegOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
        ReciprocalOp, AbsOp, TanhOp, SigmoidOp, SiluOp, GeluOp, GeluTanhOp, ReluOp, ErfOp,
        SinOp, CosOp, CastOp, SelectOp, FusedElementwiseOp,
        // structured
        MatmulOp, FusedMatmulOp, ReduceOp, SoftmaxOp, RmsNormOp, LayerNormOp, ResidualRmsNormOp,
        AttentionOp, RopeOp, CausalMaskOp, TransposeOp, BroadcastOp, ConcatOp, SliceOp,
        GatherOp, GroupedMatmulOp, TopKOp>(ctx);
  });
}
