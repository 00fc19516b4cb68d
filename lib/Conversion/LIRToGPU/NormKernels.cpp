//===- NormKernels.cpp - rms_norm, residual_rms_norm, layer_norm -----------===//
//
// One block per row of the last dim H. A row is read once into registers
// when it fits (up to 8 chunks of block × vector width per thread; H = 4096
// f32 is 4 float4 per thread of 256), else re-read per pass. Statistics are
// f32 (f64 for f64), reduced over the block with warp shuffles and a shared
// buffer; the output is x·rsqrt(mean(x²) + eps)·γ (LayerNorm: (x − mean)·
// rsqrt(var + eps)·γ + β, two-pass variance), rounded once, as the CPU path
// computes it (DESIGN §3). residual_rms_norm first forms the sum in the
// input's type, stores it, and normalizes that sum (HF's order).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

namespace {

/// What one row kernel computes.
struct RowNorm {
  NormKind kind;
  Value x, residual, weight, bias; // memrefs (residual/weight/bias optional)
  Value out, sum;                  // outputs (sum for residual_rms_norm)
  double eps;
};

struct NormTemplate : KernelTemplate {
  StringRef name() const override { return "norm"; }
  bool matches(Operation *root) const override {
    return isa<mir::RmsNormOp, mir::LayerNormOp, mir::ResidualRmsNormOp>(root);
  }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    RowNorm n;
    auto opnd = [&](Value v) { return v ? ctx.operand(v) : Value(); };
    if (auto r = dyn_cast<mir::RmsNormOp>(ctx.root)) {
      n = {NormKind::RmsNorm, opnd(r.getInput()), {}, opnd(r.getWeight()), {}, ctx.outputs[0],
           {}, r.getEps().convertToDouble()};
    } else if (auto l = dyn_cast<mir::LayerNormOp>(ctx.root)) {
      n = {NormKind::LayerNorm, opnd(l.getInput()), {}, opnd(l.getWeight()), opnd(l.getBias()),
           ctx.outputs[0], {}, l.getEps().convertToDouble()};
    } else {
      auto rr = cast<mir::ResidualRmsNormOp>(ctx.root);
      n = {NormKind::RmsNorm, opnd(rr.getInput()), opnd(rr.getResidual()), opnd(rr.getWeight()),
           {}, ctx.outputs[0], ctx.outputs[1], rr.getEps().convertToDouble()};
    }
    return buildRowNorm(ctx, n);
  }

  static FailureOr<LaunchConfig> buildRowNorm(KernelContext &ctx, const RowNorm &n) {
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    ArrayRef<int64_t> shape = shapeOf(n.out);
    if (shape.empty())
      return unsupported(ctx, "a norm of a scalar");
    int64_t h = shape.back();
    int64_t rows = numElements(shape.drop_back());
    Type et = elementTypeOf(n.out);
    Type st = kb.statsType(et);
    // 16-byte vectors when the row operands and γ/β all allow them.
    SmallVector<Value> rowMemrefs{n.x, n.out};
    for (Value m : {n.residual, n.sum})
      if (m)
        rowMemrefs.push_back(m);
    int64_t width = vectorWidth(rowMemrefs, shape);
    for (Value m : {n.weight, n.bias})
      if (m && width > 1 && !vectorizable(m, {h}, width))
        width = 1;
    // Threads: enough for one vector each, 32..256.
    int64_t threads = std::clamp<int64_t>(ceilDiv(ceilDiv(h, width), 32) * 32, 32, 256);
    int64_t chunks = ceilDiv(h, threads * width);
    bool inRegisters = chunks <= 8;
    LaunchConfig launch;
    launch.block = {threads, 1, 1};
    launch.grid = {std::max<int64_t>(rows, 1), 1, 1};
    if (rows == 0 || h == 0)
      return launch;
    Value scratch = kb.workgroupBuffer(ctx.fn, {threads / 32}, st);
    Value row = kb.blockId();
    SmallVector<Value> prefix = kb.delinearize(row, shape.drop_back());
    if (shape.size() == 1)
      prefix.clear();
    Value tid = kb.threadId();
    auto posOf = [&](Value col) {
      SmallVector<Value> p(prefix);
      p.push_back(col);
      return p;
    };
    // A vector of `width` elements at `col` of this row (or of γ/β: rank 1).
    auto vload = [&](Value m, Value col) -> Value {
      auto vt = VectorType::get({width}, elementTypeOf(m));
      SmallVector<Value> p = shapeOf(m).size() == 1 ? SmallVector<Value>{col} : posOf(col);
      return vector::LoadOp::create(kb.b, kb.loc, vt, m, p, false, llvm::MaybeAlign(16));
    };
    // The row's value at `col` (width lanes) in the stats type: x, or the sum
    // x + residual rounded to the input type (stored once, in pass 1).
    auto readX = [&](Value col, bool storeSum) -> SmallVector<Value> {
      SmallVector<Value> lanes;
      Value xv = width > 1 ? vload(n.x, col) : Value();
      Value rv = width > 1 && n.residual ? vload(n.residual, col) : Value();
      SmallVector<Value> sums;
      for (int64_t l = 0; l < width; ++l) {
        Value c = l ? kb.add(col, kb.idx(l)) : col;
        Value x = xv ? Value(vector::ExtractOp::create(kb.b, kb.loc, xv, ArrayRef<int64_t>{l}))
                     : kb.load(n.x, posOf(c));
        if (n.residual) {
          Value r = rv ? Value(vector::ExtractOp::create(kb.b, kb.loc, rv, ArrayRef<int64_t>{l}))
                       : kb.load(n.residual, posOf(c));
          x = kb.convert(kb.add(kb.convert(x, st), kb.convert(r, st)), et);
          sums.push_back(x);
        }
        lanes.push_back(kb.convert(x, st));
      }
      if (storeSum && n.sum) {
        if (width > 1)
          vector::StoreOp::create(kb.b, kb.loc,
                                  vector::FromElementsOp::create(
                                      kb.b, kb.loc, VectorType::get({width}, et), sums),
                                  n.sum, posOf(col), false, llvm::MaybeAlign(16));
        else
          kb.store(sums[0], n.sum, posOf(col));
      }
      return lanes;
    };
    auto colOf = [&](int64_t chunk) {
      return kb.mul(kb.add(kb.idx(chunk * threads), tid), kb.idx(width));
    };
    auto colOfIv = [&](Value iv) { return kb.mul(kb.add(iv, tid), kb.idx(width)); };
    Value hIdx = kb.idx(h);
    Value zero = kb.f(st, 0.0);

    // Pass 1: the row in registers (when it fits) and Σx (LayerNorm) or Σx².
    SmallVector<SmallVector<Value>> cached(chunks);
    auto accumulate = [&](Value acc, ArrayRef<Value> lanes, Value mean) {
      for (Value v : lanes) {
        Value c = mean ? kb.sub(v, mean) : v;
        acc = kb.add(acc, n.kind == NormKind::LayerNorm && !mean ? c : kb.mul(c, c));
      }
      return acc;
    };
    Value acc = zero;
    if (inRegisters) {
      for (int64_t c = 0; c < chunks; ++c) {
        Value col = colOf(c);
        Value valid = kb.ult(col, hIdx);
        cached[c] = kb.ifElse(
            valid, [&] { return readX(col, /*storeSum=*/true); }, SmallVector<Value>(width, zero));
        acc = accumulate(acc, cached[c], Value());
      }
    } else {
      acc = kb.forLoop(kb.idx(0), kb.idx(ceilDiv(h, width)), kb.idx(threads), {zero},
                       [&](Value iv, ValueRange carried) -> SmallVector<Value> {
                         Value col = colOfIv(iv);
                         return {kb.ifElse(
                             kb.ult(col, hIdx),
                             [&] { return accumulate(carried[0], readX(col, true), Value()); },
                             carried[0])};
                       })[0];
    }
    Value total = kb.blockReduce(Combine::Sum, acc, scratch, threads);
    Value mean;
    Value denom = kb.f(st, static_cast<double>(h));
    if (n.kind == NormKind::LayerNorm) {
      mean = kb.fdiv(total, denom);
      // Pass 2 (LayerNorm): the biased variance Σ(x − mean)², two-pass.
      Value acc2 = zero;
      if (inRegisters) {
        for (int64_t c = 0; c < chunks; ++c) {
          Value valid = kb.ult(colOf(c), hIdx);
          Value part = accumulate(zero, cached[c], mean);
          acc2 = kb.add(acc2, kb.select(valid, part, zero));
        }
      } else {
        acc2 = kb.forLoop(kb.idx(0), kb.idx(ceilDiv(h, width)), kb.idx(threads), {zero},
                          [&](Value iv, ValueRange carried) -> SmallVector<Value> {
                            Value col = colOfIv(iv);
                            return {kb.ifElse(
                                kb.ult(col, hIdx),
                                [&] { return accumulate(carried[0], readX(col, false), mean); },
                                carried[0])};
                          })[0];
      }
      total = kb.blockReduce(Combine::Sum, acc2, scratch, threads);
    }
    Value inv = math::RsqrtOp::create(kb.b, kb.loc,
                                      kb.add(kb.fdiv(total, denom), kb.f(st, n.eps)));
    // Last pass: normalize, scale, shift, round once, store.
    auto writeChunk = [&](Value col, ArrayRef<Value> lanes) {
      Value wv = width > 1 && n.weight ? vload(n.weight, col) : Value();
      Value bv = width > 1 && n.bias ? vload(n.bias, col) : Value();
      SmallVector<Value> outs;
      for (int64_t l = 0; l < width; ++l) {
        Value c = l ? kb.add(col, kb.idx(l)) : col;
        Value v = lanes[l];
        if (mean)
          v = kb.sub(v, mean);
        v = kb.mul(v, inv);
        auto lane = [&](Value vec, Value m) -> Value {
          return vec ? Value(vector::ExtractOp::create(kb.b, kb.loc, vec, ArrayRef<int64_t>{l}))
                     : kb.load(m, {c});
        };
        if (n.weight)
          v = kb.mul(v, kb.convert(lane(wv, n.weight), st));
        if (n.bias)
          v = kb.add(v, kb.convert(lane(bv, n.bias), st));
        outs.push_back(kb.convert(v, et));
      }
      if (width > 1)
        vector::StoreOp::create(kb.b, kb.loc,
                                vector::FromElementsOp::create(kb.b, kb.loc,
                                                               VectorType::get({width}, et), outs),
                                n.out, posOf(col), false, llvm::MaybeAlign(16));
      else
        kb.store(outs[0], n.out, posOf(col));
    };
    if (inRegisters) {
      for (int64_t c = 0; c < chunks; ++c) {
        Value col = colOf(c);
        kb.ifThen(kb.ult(col, hIdx), [&] { writeChunk(col, cached[c]); });
      }
    } else {
      kb.forLoop(kb.idx(0), kb.idx(ceilDiv(h, width)), kb.idx(threads), [&](Value iv) {
        Value col = colOfIv(iv);
        kb.ifThen(kb.ult(col, hIdx), [&] { writeChunk(col, readX(col, false)); });
      });
    }
    return launch;
  }
};

} // namespace

void mlir::rlx::gpu_kernels::addNormTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<NormTemplate>());
}
