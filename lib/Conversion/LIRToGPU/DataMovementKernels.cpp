//===- DataMovementKernels.cpp - copy, transpose, gather, rope ------------===//
//
// Kernels that move elements (and RoPE, which reads each element's pair
// partner): one thread per group of consecutive output elements along the
// last dim, with 16-byte vector accesses where every full-shape operand
// allows them (forEachElementGroup).
//
//  - copy (host memref.copy: IO copies, the past KV cache into the present
//    one, a new K/V row into its slice of the cache): dst[i] = src[i] on any
//    static strided layouts.
//  - transpose: out[i] = in[perm⁻¹(i)], reads per element.
//  - gather: out[i..., j...] = table[clamp(ids[i...], 0, rows-1), j...] (the
//    CPU path's clamping; rows of the table move as vectors).
//  - rope: HF/NeoX half-split or GPT-J interleaved rotation of the first
//    rotary_dim dims of each head, f32 math, tables [S, r/2] or [B, S, r/2].
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

FailureOr<LaunchConfig> mlir::rlx::gpu_kernels::buildCopyKernel(gpu::GPUFuncOp fn, OpBuilder &b,
                                                                Value src, Value dst,
                                                                const nvvm::NVVMTarget &) {
  KernelBuilder kb(b, fn.getLoc());
  ArrayRef<int64_t> shape = shapeOf(dst);
  if (shapeOf(src) != shape || elementTypeOf(src) != elementTypeOf(dst))
    return failure();
  int64_t width = vectorWidth({src, dst}, shape);
  return forEachElementGroup(kb, shape, width, [&](ArrayRef<Value> pos) {
    kb.storeRow(kb.loadRow(src, pos, width, width > 1), dst, pos, width > 1);
  });
}

namespace {

struct TransposeTemplate : KernelTemplate {
  StringRef name() const override { return "transpose"; }
  bool matches(Operation *root) const override { return isa<mir::TransposeOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::TransposeOp>(ctx.root);
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Value in = ctx.operand(op.getInput());
    if (!in)
      return unsupported(ctx, "a transpose of a value that is not a kernel input");
    Value out = ctx.outputs[0];
    ArrayRef<int64_t> shape = shapeOf(out);
    ArrayRef<int64_t> perm = op.getPermutation();
    // Reads are strided by construction: stores stay scalar too, so that the
    // threads of a warp write one contiguous run.
    return forEachElementGroup(kb, shape, 1, [&](ArrayRef<Value> pos) {
      // out[i0, i1, ...] = in[j] with j[perm[d]] = i[d].
      SmallVector<Value> src(pos.size());
      for (auto [d, p] : llvm::enumerate(perm))
        src[p] = pos[d];
      kb.store(kb.load(in, src), out, pos);
    });
  }
};

struct GatherTemplate : KernelTemplate {
  StringRef name() const override { return "gather"; }
  bool matches(Operation *root) const override { return isa<mir::GatherOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::GatherOp>(ctx.root);
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Value table = ctx.operand(op.getTable()), ids = ctx.operand(op.getIndices());
    if (!table || !ids)
      return unsupported(ctx, "a gather whose operands are not kernel inputs");
    Value out = ctx.outputs[0];
    ArrayRef<int64_t> shape = shapeOf(out), tableShape = shapeOf(table);
    size_t idRank = shapeOf(ids).size();
    int64_t rows = tableShape[0];
    if (rows == 0)
      return unsupported(ctx, "a gather from an empty table");
    // A table row's trailing dims move as vectors when the table and the
    // output both allow it.
    int64_t width = 1;
    if (tableShape.size() > 1) {
      width = vectorWidth({out}, shape);
      if (width > 1 && !vectorizable(table, tableShape, width))
        width = 1;
    }
    return forEachElementGroup(kb, shape, width, [&](ArrayRef<Value> pos) {
      Value id = kb.load(ids, pos.take_front(idRank));
      id = arith::IndexCastOp::create(kb.b, kb.loc, kb.b.getIndexType(), id);
      id = arith::MaxSIOp::create(kb.b, kb.loc, id, kb.idx(0));
      id = arith::MinSIOp::create(kb.b, kb.loc, id, kb.idx(rows - 1));
      SmallVector<Value> src{id};
      llvm::append_range(src, pos.drop_front(idRank));
      kb.storeRow(kb.loadRow(table, src, width, width > 1), out, pos, width > 1);
    });
  }
};

struct RopeTemplate : KernelTemplate {
  StringRef name() const override { return "rope"; }
  bool matches(Operation *root) const override { return isa<mir::RopeOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::RopeOp>(ctx.root);
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Value x = ctx.operand(op.getInput()), cos = ctx.operand(op.getCos()),
          sin = ctx.operand(op.getSin());
    if (!x || !cos || !sin)
      return unsupported(ctx, "a rope whose operands are not kernel inputs");
    Value out = ctx.outputs[0];
    ArrayRef<int64_t> shape = shapeOf(out);
    if (shape.size() != 3)
      return unsupported(ctx, "rope expects [B, S, H*head_dim]");
    int64_t d = op.getHeadDim(), rot = op.getRotaryDimOrDefault();
    Type et = elementTypeOf(out), f32 = kb.statsType(et);
    return forEachElementGroup(kb, shape, 1, [&](ArrayRef<Value> pos) {
      Value col = pos[2];
      Value h = kb.divui(col, kb.idx(d)), dim = kb.remui(col, kb.idx(d));
      Value self = kb.load(x, pos);
      Value result = self;
      auto rotated = scf::IfOp::create(kb.b, kb.loc, TypeRange{et}, kb.ult(dim, kb.idx(rot)),
                                       /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard g(kb.b);
        kb.b.setInsertionPointToStart(&rotated.getThenRegion().front());
        RopePair pair = ropePair(kb, dim, rot, op.getStyle());
        SmallVector<Value> partnerPos{pos[0], pos[1], kb.add(kb.mul(h, kb.idx(d)), pair.partner)};
        SmallVector<Value> tablePos;
        if (shapeOf(cos).size() == 3)
          tablePos.push_back(pos[0]);
        tablePos.append({pos[1], pair.column});
        Value c = kb.convert(kb.loadBroadcast(cos, tablePos), f32);
        Value s = kb.convert(kb.loadBroadcast(sin, tablePos), f32);
        Value v = rotate(kb, kb.convert(self, f32), kb.convert(kb.load(x, partnerPos), f32), c, s,
                         pair.first);
        scf::YieldOp::create(kb.b, kb.loc, kb.convert(v, et));
        kb.b.setInsertionPointToStart(&rotated.getElseRegion().front());
        scf::YieldOp::create(kb.b, kb.loc, self);
      }
      result = rotated.getResult(0);
      kb.store(result, out, pos);
    });
  }
};

} // namespace

RopePair mlir::rlx::gpu_kernels::ropePair(KernelBuilder &kb, Value dim, int64_t rotary,
                                          RopeStyle style) {
  int64_t half = rotary / 2;
  RopePair p;
  if (style == RopeStyle::NeoX) {
    // Dim i pairs with i + r/2; the first half is the "first" of a pair.
    p.first = kb.ult(dim, kb.idx(half));
    p.partner = kb.select(p.first, kb.add(dim, kb.idx(half)), kb.sub(dim, kb.idx(half)));
    p.column = kb.remui(dim, kb.idx(half));
  } else {
    // GPT-J: 2i pairs with 2i + 1.
    Value odd = kb.remui(dim, kb.idx(2));
    p.first = kb.eq(odd, kb.idx(0));
    p.partner = kb.select(p.first, kb.add(dim, kb.idx(1)), kb.sub(dim, kb.idx(1)));
    p.column = kb.divui(dim, kb.idx(2));
  }
  return p;
}

Value mlir::rlx::gpu_kernels::rotate(KernelBuilder &kb, Value self, Value partner, Value cos,
                                     Value sin, Value first) {
  // First of a pair: self·cos − partner·sin; second: self·cos + partner·sin.
  Value sc = kb.mul(self, cos), ps = kb.mul(partner, sin);
  return kb.select(first, kb.sub(sc, ps), kb.add(sc, ps));
}

void mlir::rlx::gpu_kernels::addDataMovementTemplates(
    std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<TransposeTemplate>());
  out.push_back(std::make_unique<GatherTemplate>());
  out.push_back(std::make_unique<RopeTemplate>());
}
