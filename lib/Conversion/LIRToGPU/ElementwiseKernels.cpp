//===- ElementwiseKernels.cpp - Elementwise regions, casts, masks ---------===//
//
// One template for every op that computes each output element from the
// inputs' elements at the same position (numpy broadcasting): MIR's
// elementwise ops (their own buildScalar, so the semantics are written once
// for CPU and GPU), rlx_mir.elementwise regions (their body, cloned), cast,
// select, broadcast and causal_mask (which also reads the position).
//
// Each thread computes V consecutive elements of the last dim: V is 16 bytes
// of the widest element type (4 f32, 8 bf16) when the last dim is a multiple
// of it, so full-shape operands and results move with 128-bit vector loads
// and stores (ld.global.v4); broadcast operands are read per element (the
// loads of one row fold). 256 threads per block, one element group each.
// A scalar output (rank 0) is one thread.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/AttentionLogits.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

namespace {

struct ElementwiseTemplate : KernelTemplate {
  StringRef name() const override { return "elementwise"; }

  bool matches(Operation *root) const override {
    return isa<mir::ElementwiseOpInterface, mir::FusedElementwiseOp, mir::BroadcastOp,
               mir::CausalMaskOp>(root);
  }

  /// The scalar results of `root` at `pos` from its operands' scalars.
  static SmallVector<Value> compute(KernelBuilder &kb, Operation *root, ValueRange args,
                                    ArrayRef<Value> pos, ArrayRef<int64_t> shape) {
    OpBuilder &b = kb.b;
    if (auto fused = dyn_cast<mir::FusedElementwiseOp>(root)) {
      Block &body = fused.getBody().front();
      IRMapping map;
      map.map(body.getArguments(), args);
      for (Operation &op : body.without_terminator())
        b.clone(op, map);
      return llvm::map_to_vector(cast<mir::YieldOp>(body.getTerminator()).getValues(),
                                 [&](Value v) { return map.lookupOrDefault(v); });
    }
    if (auto ew = dyn_cast<mir::ElementwiseOpInterface>(root))
      return {ew.buildScalar(b, kb.loc, args)};
    if (isa<mir::BroadcastOp>(root))
      return {args[0]};
    auto mask = cast<mir::CausalMaskOp>(root);
    int64_t sq = shape[shape.size() - 2], sk = shape.back();
    Value visible = attention_logits::causalVisible(b, kb.loc, mask.getWindow(), pos[pos.size() - 2],
                                             pos.back(), sk - sq, mask.getChunked());
    Type et = args[0].getType();
    return {kb.select(visible, args[0], kb.f(et, -std::numeric_limits<double>::infinity()))};
  }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    ArrayRef<int64_t> shape = shapeOf(ctx.outputs[0]);
    for (Value out : ctx.outputs)
      if (shapeOf(out) != shape)
        return unsupported(ctx, "elementwise outputs of different shapes");
    SmallVector<Value> operands;
    for (Value v : ctx.root->getOperands()) {
      Value m = ctx.operand(v);
      if (!m)
        return unsupported(ctx, "an elementwise operand that is neither an input nor a constant");
      operands.push_back(m);
    }
    // Outputs and full-shape operands move as 16-byte vectors when all of
    // them allow it; broadcast operands are read per element.
    SmallVector<Value> full(ctx.outputs);
    for (Value m : operands)
      if (shapeOf(m) == shape)
        full.push_back(m);
    int64_t width = isa<mir::CausalMaskOp>(ctx.root) ? 1 : vectorWidth(full, shape);
    return forEachElementGroup(kb, shape, width, [&](ArrayRef<Value> pos) {
      SmallVector<SmallVector<Value>> rows(operands.size());
      for (auto [i, m] : llvm::enumerate(operands))
        if (shapeOf(m) == shape)
          rows[i] = kb.loadRow(m, pos, width, width > 1);
      SmallVector<SmallVector<Value>> lanes(ctx.outputs.size());
      for (int64_t lane = 0; lane < width; ++lane) {
        SmallVector<Value> lanePos(pos);
        if (lane > 0)
          lanePos.back() = kb.add(pos.back(), kb.idx(lane));
        SmallVector<Value> args;
        for (auto [i, m] : llvm::enumerate(operands))
          args.push_back(rows[i].empty() ? kb.loadBroadcast(m, lanePos) : rows[i][lane]);
        for (auto [o, r] : llvm::enumerate(compute(kb, ctx.root, args, lanePos, shape)))
          lanes[o].push_back(r);
      }
      for (auto [o, out] : llvm::enumerate(ctx.outputs))
        kb.storeRow(lanes[o], out, pos, width > 1);
    });
  }
};

} // namespace

void mlir::rlx::gpu_kernels::addElementwiseTemplates(
    std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<ElementwiseTemplate>());
}
