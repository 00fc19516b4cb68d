//===- SoftmaxKernels.cpp - softmax along any axis -----------------------===//
//
// One block per row (all positions along `axis` for one position of the
// other dims). Each thread keeps a running (max, sum) over its elements in
// f32 (f64 for f64): m' = max(m, x), s = s·exp(m − m') + exp(x − m'); the
// block then reduces the maxima, rescales every thread's sum to the block
// maximum and reduces the sums, and a second pass writes exp(x − M) / S,
// rounded once. A row whose elements are all -inf (fully masked) writes 0,
// never NaN, as the CPU path does. The row moves as 16-byte vectors when
// the axis is the last, contiguous dim.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

namespace {

struct SoftmaxTemplate : KernelTemplate {
  StringRef name() const override { return "softmax"; }
  bool matches(Operation *root) const override { return isa<mir::SoftmaxOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::SoftmaxOp>(ctx.root);
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Value in = ctx.operand(op.getInput());
    if (!in)
      return unsupported(ctx, "a softmax of a value that is not a kernel input");
    Value out = ctx.outputs[0];
    ArrayRef<int64_t> shape = shapeOf(out);
    int64_t rank = shape.size();
    auto axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    int64_t len = shape[axis];
    SmallVector<int64_t> rowShape(shape);
    rowShape.erase(rowShape.begin() + axis);
    int64_t rows = numElements(rowShape);
    int64_t width = axis == rank - 1 ? vectorWidth({in, out}, shape) : 1;
    int64_t threads = std::clamp<int64_t>(ceilDiv(ceilDiv(len, width), 32) * 32, 32, 256);
    LaunchConfig launch;
    launch.block = {threads, 1, 1};
    launch.grid = {std::max<int64_t>(rows, 1), 1, 1};
    if (rows == 0 || len == 0)
      return launch;
    Type et = elementTypeOf(out), st = kb.statsType(et);
    Value scratch = kb.workgroupBuffer(ctx.fn, {threads / 32}, st);
    SmallVector<Value> rowPos = kb.delinearize(kb.blockId(), rowShape);
    if (rowShape.empty())
      rowPos.clear();
    auto posOf = [&](Value e) {
      SmallVector<Value> p(rowPos);
      p.insert(p.begin() + axis, e);
      return p;
    };
    Value tid = kb.threadId();
    Value groups = kb.idx(ceilDiv(len, width));
    double inf = std::numeric_limits<double>::infinity();
    Value ninf = kb.f(st, -inf), zero = kb.f(st, 0.0);
    // exp(x − m), 0 when m is -inf (then x is -inf too).
    auto expShifted = [&](Value x, Value m) {
      return kb.select(kb.eq(m, ninf), zero, kb.exp(kb.sub(x, m)));
    };
    // Pass 1: per-thread running max and sum.
    SmallVector<Value> ms = kb.forLoop(
        tid, groups, kb.idx(threads), {ninf, zero},
        [&](Value g, ValueRange carried) -> SmallVector<Value> {
          Value m = carried[0], s = carried[1];
          for (Value x : kb.loadRow(in, posOf(kb.mul(g, kb.idx(width))), width, width > 1)) {
            Value xf = kb.convert(x, st);
            Value m2 = kb.combine(Combine::Max, m, xf);
            s = kb.add(kb.mul(s, expShifted(m, m2)), expShifted(xf, m2));
            m = m2;
          }
          return {m, s};
        });
    Value maxAll = kb.blockReduce(Combine::Max, ms[0], scratch, threads);
    Value sum = kb.blockReduce(Combine::Sum, kb.mul(ms[1], expShifted(ms[0], maxAll)), scratch,
                               threads);
    Value dead = kb.eq(sum, zero);
    // Pass 2: the normalized values.
    kb.forLoop(tid, groups, kb.idx(threads), [&](Value g) {
      SmallVector<Value> p = posOf(kb.mul(g, kb.idx(width)));
      SmallVector<Value> outs;
      for (Value x : kb.loadRow(in, p, width, width > 1)) {
        Value q = kb.fdiv(expShifted(kb.convert(x, st), maxAll), sum);
        outs.push_back(kb.convert(kb.select(dead, zero, q), et));
      }
      kb.storeRow(outs, out, p, width > 1);
    });
    return launch;
  }
};

} // namespace

void mlir::rlx::gpu_kernels::addSoftmaxTemplates(
    std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<SoftmaxTemplate>());
}
