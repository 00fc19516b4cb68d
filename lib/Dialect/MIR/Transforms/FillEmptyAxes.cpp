//===- FillEmptyAxes.cpp - rlx-mir-fill-empty-axes -------------------------===//
//
// Contractions and reductions over an empty axis rewritten over one element
// of their identity (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <limits>

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRFILLEMPTYAXES
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

bool isEmpty(Value v) {
  auto t = dyn_cast_or_null<RankedTensorType>(v ? v.getType() : Type());
  return t && t.hasStaticShape() && t.getNumElements() == 0;
}

/// Replaces an empty operand by a splat of `value` with its size-0 dims 1.
void fill(Operation *op, OpOperand &operand, double value) {
  auto t = cast<RankedTensorType>(operand.get().getType());
  SmallVector<int64_t> shape(t.getShape());
  for (int64_t &d : shape)
    d = d == 0 ? 1 : d;
  auto type = RankedTensorType::get(shape, t.getElementType());
  auto et = dyn_cast<FloatType>(t.getElementType());
  if (!et)
    return;
  OpBuilder b(op);
  auto attr = DenseElementsAttr::get(type, b.getFloatAttr(et, value).getValue());
  operand.set(ConstantOp::create(b, op->getLoc(), attr));
}

struct FillEmptyAxes : mir::impl::MIRFillEmptyAxesBase<FillEmptyAxes> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      auto result = op->getNumResults() == 1
                        ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                        : RankedTensorType();
      if (!result || !result.hasStaticShape() || result.getNumElements() == 0)
        return;
      if (isa<GroupedMatmulOp>(op)) {
        // K = 0: rows and weights over one zero.
        for (OpOperand &o : op->getOpOperands().take_front(2))
          if (isEmpty(o.get()))
            fill(op, o, 0.0);
      } else if (auto mm = dyn_cast<MatmulOp>(op)) {
        if (isEmpty(mm.getLhs()) || isEmpty(mm.getRhs()))
          for (OpOperand &o : op->getOpOperands())
            if (isEmpty(o.get()))
              fill(op, o, 0.0);
      } else if (auto fm = dyn_cast<FusedMatmulOp>(op)) {
        if (fm.getRhsScales() || !(isEmpty(fm.getLhs()) || isEmpty(fm.getRhs())))
          return;
        for (OpOperand &o : op->getOpOperands())
          if (isEmpty(o.get()))
            fill(op, o, o.get() == fm.getNormWeight() ? 1.0 : 0.0);
      } else if (auto r = dyn_cast<ReduceOp>(op)) {
        if (!isEmpty(r.getInput()))
          return;
        switch (r.getKind()) {
        case ReduceKind::Sum:
          return fill(op, op->getOpOperand(0), 0.0);
        case ReduceKind::Prod:
          return fill(op, op->getOpOperand(0), 1.0);
        case ReduceKind::Mean:
          return fill(op, op->getOpOperand(0), std::numeric_limits<double>::quiet_NaN());
        default:
          return; // max/min over an empty axis: the verifier's error
        }
      }
    });
  }
};

} // namespace
