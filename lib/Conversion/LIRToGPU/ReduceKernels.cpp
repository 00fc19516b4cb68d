//===- ReduceKernels.cpp - reduce (sum, mean, prod, max, min) over axes ---===//
//
// rlx_mir.reduce over any set of axes, with the CPU path's numerics: float
// inputs accumulate in f32 (f64 for f64), integers in their own type (max and
// min signed), mean divides by the reduced count, the result is rounded once.
//
// Few reduced elements per output (≤ 64): one thread per output element,
// a serial loop. Otherwise one block per output element: the threads stride
// over the reduced elements and combine with warp shuffles and a shared
// buffer (KernelBuilder::blockReduce).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

namespace {

Combine combineOf(ReduceKind k) {
  switch (k) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    return Combine::Sum;
  case ReduceKind::Prod:
    return Combine::Prod;
  case ReduceKind::Max:
    return Combine::Max;
  case ReduceKind::Min:
    return Combine::Min;
  }
  llvm_unreachable("unknown reduce kind");
}

struct ReduceTemplate : KernelTemplate {
  StringRef name() const override { return "reduce"; }
  bool matches(Operation *root) const override { return isa<mir::ReduceOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::ReduceOp>(ctx.root);
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Value in = ctx.operand(op.getInput());
    if (!in)
      return unsupported(ctx, "a reduce of a value that is not a kernel input");
    Value out = ctx.outputs[0];
    ArrayRef<int64_t> inShape = shapeOf(in);
    int64_t rank = inShape.size();
    SmallVector<bool> reduced(rank, false);
    for (int64_t ax : op.getAxes())
      reduced[ax < 0 ? ax + rank : ax] = true;
    SmallVector<int64_t> keptShape, redShape;
    for (int64_t d = 0; d < rank; ++d)
      (reduced[d] ? redShape : keptShape).push_back(inShape[d]);
    int64_t count = numElements(redShape), outputs = numElements(keptShape);
    Type et = elementTypeOf(in);
    bool isFloat = isa<FloatType>(et);
    if (!isFloat && (!et.isInteger() || et.getIntOrFloatBitWidth() < 8))
      return unsupported(ctx, "a reduce of i1 values on the GPU");
    Type acc = isFloat ? kb.statsType(et) : et;
    Combine kind = combineOf(op.getKind());
    bool keepDims = op.getKeepDims();

    // The input position of (kept index, reduced index) and the output
    // position of the kept index.
    auto inputPos = [&](ArrayRef<Value> kept, Value r) {
      SmallVector<Value> red = redShape.empty() ? SmallVector<Value>{} : kb.delinearize(r, redShape);
      SmallVector<Value> p;
      size_t ki = 0, ri = 0;
      for (int64_t d = 0; d < rank; ++d)
        p.push_back(reduced[d] ? red[ri++] : kept[ki++]);
      return p;
    };
    auto outputPos = [&](ArrayRef<Value> kept) {
      if (!keepDims)
        return SmallVector<Value>(kept);
      SmallVector<Value> p;
      size_t ki = 0;
      for (int64_t d = 0; d < rank; ++d)
        p.push_back(reduced[d] ? kb.idx(0) : kept[ki++]);
      return p;
    };
    auto finish = [&](Value total, ArrayRef<Value> kept) {
      if (op.getKind() == ReduceKind::Mean) {
        total = isFloat ? kb.fdiv(total, kb.f(acc, static_cast<double>(count)))
                        : Value(arith::DivSIOp::create(
                              kb.b, kb.loc, total,
                              arith::ConstantOp::create(kb.b, kb.loc, acc,
                                                        kb.b.getIntegerAttr(acc, count))));
      }
      kb.store(kb.convert(total, elementTypeOf(out)), out, outputPos(kept));
    };
    auto element = [&](ArrayRef<Value> kept, Value r) {
      return kb.convert(kb.load(in, inputPos(kept, r)), acc);
    };

    if (count <= 64) {
      return forEachElementGroup(kb, keptShape, 1, [&](ArrayRef<Value> kept) {
        Value total = kb.forLoop(kb.idx(0), kb.idx(count), kb.idx(1),
                                 {kb.identity(kind, acc)},
                                 [&](Value r, ValueRange c) -> SmallVector<Value> {
                                   return {kb.combine(kind, c[0], element(kept, r))};
                                 })[0];
        finish(total, kept);
      });
    }
    int64_t threads = std::clamp<int64_t>(ceilDiv(count, 32) * 32, 32, 256);
    LaunchConfig launch;
    launch.block = {threads, 1, 1};
    launch.grid = {std::max<int64_t>(outputs, 1), 1, 1};
    if (outputs == 0)
      return launch;
    Value scratch = kb.workgroupBuffer(ctx.fn, {threads / 32}, acc);
    SmallVector<Value> kept =
        keptShape.empty() ? SmallVector<Value>{} : kb.delinearize(kb.blockId(), keptShape);
    Value partial = kb.forLoop(kb.threadId(), kb.idx(count), kb.idx(threads),
                               {kb.identity(kind, acc)},
                               [&](Value r, ValueRange c) -> SmallVector<Value> {
                                 return {kb.combine(kind, c[0], element(kept, r))};
                               })[0];
    Value total = kb.blockReduce(kind, partial, scratch, threads);
    kb.ifThen(kb.eq(kb.threadId(), kb.idx(0)), [&] { finish(total, kept); });
    return launch;
  }
};

} // namespace

void mlir::rlx::gpu_kernels::addReduceTemplates(
    std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<ReduceTemplate>());
}
