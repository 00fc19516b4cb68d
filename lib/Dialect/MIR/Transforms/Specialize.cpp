//===- Specialize.cpp - Bind symbolic dims and re-infer every type --------===//

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringMap.h"

#include <set>

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRSPECIALIZE
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

/// New result types for `op` from its (possibly refined) operands.
static LogicalResult reinfer(Operation *op, SmallVectorImpl<Type> &types) {
  if (auto infer = dyn_cast<InferTypeOpInterface>(op))
    return infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                  op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
                                  op->getRegions(), types);
  // The collectives of a partitioned program keep their operand's shape (an
  // all-gather multiplies the gather axis by the group's size).
  if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
    auto in = cast<RankedTensorType>(reduce.getInput().getType());
    types.push_back(RankedTensorType::get(in.getShape(), getElementTypeOrSelf(reduce.getType())));
    return success();
  }
  if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
    SymbolTableCollection symbols;
    auto grid = shard::getGridOrNull(op, gather.getGridAttr(), symbols);
    auto in = dyn_cast<RankedTensorType>(gather.getInput().getType());
    if (!grid || !in)
      return failure();
    SmallVector<int64_t> shape(in.getShape());
    int64_t axis = gather.getGatherAxis().getSExtValue();
    shape[axis] = shard::gatherDimension(
        shape[axis], shard::collectiveProcessGroupSize(gather.getGridAxes(), grid));
    types.push_back(RankedTensorType::get(shape, in.getElementType()));
    return success();
  }
  if (auto combine = dyn_cast<AttentionCombineOp>(op)) {
    auto o = cast<RankedTensorType>(combine.getPartialOutput().getType());
    if (o.getRank() != 5)
      return failure();
    types.push_back(RankedTensorType::get(
        AttentionCombineOp::resultShape(o.getShape(), combine.getLayout()),
        combine.getType().getElementType()));
    return success();
  }
  if (auto castOp = dyn_cast<CastOp>(op)) {
    auto in = cast<RankedTensorType>(castOp.getInput().getType());
    types.push_back(RankedTensorType::get(in.getShape(), castOp.getType().getElementType()));
    return success();
  }
  if (auto ew = dyn_cast<FusedElementwiseOp>(op)) {
    Shape shape;
    for (auto [i, v] : llvm::enumerate(ew.getInputs())) {
      auto s = cast<RankedTensorType>(v.getType()).getShape();
      if (i == 0) {
        shape.assign(s.begin(), s.end());
        continue;
      }
      auto b = broadcastShapes(op->getLoc(), shape, s);
      if (failed(b))
        return failure();
      shape = *b;
    }
    for (Type t : ew.getResultTypes())
      types.push_back(RankedTensorType::get(shape, cast<RankedTensorType>(t).getElementType()));
    return success();
  }
  if (auto c = dyn_cast<tensor::CastOp>(op)) {
    // The most static of the operand's type and the cast's.
    auto in = cast<RankedTensorType>(c.getSource().getType());
    auto out = cast<RankedTensorType>(c.getType());
    if (in.getRank() != out.getRank())
      return failure();
    SmallVector<int64_t> shape;
    for (auto [a, b] : llvm::zip(in.getShape(), out.getShape()))
      shape.push_back(ShapedType::isDynamic(a) ? b : a);
    types.push_back(RankedTensorType::get(shape, out.getElementType(), out.getEncoding()));
    return success();
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op); dps && dps.hasPureTensorSemantics()) {
    for (OpOperand &init : dps.getDpsInitsMutable())
      types.push_back(init.get().getType());
    return success(types.size() == op->getNumResults());
  }
  return failure();
}

/// The names of the dynamic dims still left in `fn`, e.g. "seq (argument 0)".
static SmallVector<std::string> remainingDims(func::FuncOp fn) {
  SmallVector<std::string> out;
  for (BlockArgument arg : fn.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || t.hasStaticShape())
      continue;
    auto names = fn.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), RLXDialect::kDimNamesAttr);
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (!t.isDynamicDim(d))
        continue;
      std::string name = names ? cast<StringAttr>(names[d]).str() : std::string("<unnamed>");
      out.push_back(name + " (argument " + std::to_string(arg.getArgNumber()) + ", dim " +
                    std::to_string(d) + ")");
    }
  }
  return out;
}

namespace {
struct MIRSpecializePass : mir::impl::MIRSpecializeBase<MIRSpecializePass> {
  using MIRSpecializeBase::MIRSpecializeBase;

  void runOnOperation() override {
    llvm::StringMap<int64_t> bindings;
    for (const std::string &d : dims) {
      auto [name, value] = StringRef(d).split('=');
      int64_t size;
      if (name.trim().empty() || value.trim().getAsInteger(10, size) || size < 0) {
        emitError(getOperation().getLoc()) << "rlx-mir-specialize: bad binding '" << d
                                   << "', expected name=size with size >= 0";
        return signalPassFailure();
      }
      bindings[name.trim()] = size;
    }
    // A binding no function's dims are named by is a typo, not a no-op.
    std::set<std::string> known;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      for (std::string &n : dimNames(fn))
        known.insert(std::move(n));
    for (auto &binding : bindings)
      if (!known.count(binding.getKey().str())) {
        emitError(getOperation().getLoc())
            << "rlx-mir-specialize: no dim is named '" << binding.getKey() << "' ("
            << (known.empty() ? std::string("the module names no dims")
                              : "named dims: " + llvm::join(known, ", "))
            << ")";
        return signalPassFailure();
      }
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (failed(specialize(fn, bindings)))
        return signalPassFailure();
  }

  LogicalResult specialize(func::FuncOp fn, const llvm::StringMap<int64_t> &bindings) {
    if (fn.isExternal())
      return success();
    // Types are refined along one block and its nested regions; unstructured
    // control flow (cf.br / cf.cond_br between blocks) is not followed.
    if (!fn.getBody().hasOneBlock())
      return fn.emitError() << "rlx-mir-specialize: @" << fn.getSymName() << " has "
                            << llvm::range_size(fn.getBody())
                            << " blocks; only single-block functions are specialized "
                               "(lift the control flow to scf first, e.g. --lift-cf-to-scf)";
    Block &entry = fn.getBody().front();
    // Every value's type before binding, to tell which operands changed.
    DenseMap<Value, Type> oldTypes;
    for (BlockArgument arg : entry.getArguments())
      oldTypes[arg] = arg.getType();
    fn.walk([&](Operation *op) {
      for (Value r : op->getResults())
        oldTypes[r] = r.getType();
    });
    for (BlockArgument arg : entry.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      auto names = fn.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), RLXDialect::kDimNamesAttr);
      if (!t || !names)
        continue;
      SmallVector<int64_t> shape(t.getShape());
      SmallVector<Attribute> newNames;
      for (auto [d, name] : llvm::enumerate(names.getAsValueRange<StringAttr>())) {
        auto it = bindings.find(name);
        if (t.isDynamicDim(d) && it != bindings.end()) {
          shape[d] = it->second;
          newNames.push_back(StringAttr::get(fn.getContext(), ""));
        } else {
          newNames.push_back(StringAttr::get(fn.getContext(), name));
        }
      }
      arg.setType(RankedTensorType::get(shape, t.getElementType(), t.getEncoding()));
      if (llvm::all_of(newNames, [](Attribute a) { return cast<StringAttr>(a).empty(); }))
        fn.removeArgAttr(arg.getArgNumber(), RLXDialect::kDimNamesAttr);
      else
        fn.setArgAttr(arg.getArgNumber(), RLXDialect::kDimNamesAttr,
                      ArrayAttr::get(fn.getContext(), newNames));
    }
    WalkResult walk = fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == fn || op->hasTrait<OpTrait::ReturnLike>() || op->getNumResults() == 0 ||
          !llvm::any_of(op->getResultTypes(), [](Type t) { return isa<TensorType>(t); }))
        return WalkResult::advance();
      // Nothing to redo when no operand changed.
      bool changed = llvm::any_of(op->getOpOperands(), [&](OpOperand &o) {
        auto it = oldTypes.find(o.get());
        return it != oldTypes.end() && it->second != o.get().getType();
      });
      if (!changed)
        return WalkResult::advance();
      SmallVector<Type> types;
      if (succeeded(reinfer(op, types))) {
        for (auto [r, t] : llvm::zip(op->getResults(), types))
          r.setType(t);
        return WalkResult::advance();
      }
      if (isMIROp(op)) {
        // Our own ops' shape rules reject the bound sizes: their error.
        if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
          SmallVector<Type> ignored;
          (void)infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                       op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
                                       op->getRegions(), ignored);
        } else {
          op->emitOpError("cannot re-infer its result types for specialization");
        }
        return WalkResult::interrupt();
      }
      // An upstream op with no rule here: it keeps the types it had, its
      // refined operands cast back to them (canonicalization folds the casts
      // where the op allows it).
      OpBuilder b(op);
      for (OpOperand &o : op->getOpOperands()) {
        auto it = oldTypes.find(o.get());
        if (it == oldTypes.end() || it->second == o.get().getType() ||
            !tensor::CastOp::areCastCompatible(o.get().getType(), it->second))
          continue;
        o.set(tensor::CastOp::create(b, op->getLoc(), it->second, o.get()));
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    fn.setType(FunctionType::get(fn.getContext(), entry.getArgumentTypes(),
                                 ret.getOperandTypes()));
    if (requireStatic) {
      SmallVector<std::string> left = remainingDims(fn);
      if (!left.empty())
        return fn.emitError() << "dynamic dims remain after specialization: "
                              << llvm::join(left, ", ")
                              << "; bind them with rlx-mir-specialize{dims=<name>=<size>,...}";
    }
    return success();
  }
};
} // namespace
