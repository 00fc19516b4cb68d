//===- WeightArguments.cpp - Which unmarked arguments are weights ---------===//
//
// Exported functions often take their weights as plain arguments (buddy-mlir's
// BuddyNext kernels, torch.export graphs lifted without parameter names).
// Unmarked, they are inputs: what is computed from them alone (the q|k|v and
// gate|up concatenations that fusion builds, weight transposes) runs on
// every call. Marked `rlx.param`, rlx-mir-pack-weights computes it once.
//
//===----------------------------------------------------------------------===//

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"
#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/GlobPattern.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::rlx;

/// True when every use of `v` reads it as the weight of a 2-D matmul: the
/// right operand of rlx_mir.matmul (a 2-D one), directly or through transposes and
/// reshapes that are themselves only read that way.
static bool onlyMatmulWeight(Value v) {
  if (v.use_empty())
    return false;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<mir::MatmulOp>(user)) {
      if (use.getOperandNumber() != 1 || cast<ShapedType>(v.getType()).getRank() != 2)
        return false;
      continue;
    }
    if (isa<mir::TransposeOp, mir::ReshapeOp>(user) && onlyMatmulWeight(user->getResult(0)))
      continue;
    return false;
  }
  return true;
}

/// True when every use of `v` adds it, as a bias, to a matmul's result
/// (both possibly through reshapes and broadcasts).
static bool onlyMatmulBias(Value v) {
  if (v.use_empty())
    return false;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<mir::ReshapeOp, mir::BroadcastOp>(user) && onlyMatmulBias(user->getResult(0)))
      continue;
    if (!isa<mir::AddOp>(user))
      return false;
    Value other = user->getOperand(1 - use.getOperandNumber());
    while (auto rs = other.getDefiningOp<mir::ReshapeOp>())
      other = rs.getInput();
    if (!other.getDefiningOp<mir::MatmulOp>())
      return false;
  }
  return true;
}

/// The heuristic: a static float argument read only as a matmul weight
/// (2-D) or as the bias added to a matmul's result (1-D).
static bool looksLikeWeight(BlockArgument arg) {
  auto t = dyn_cast<RankedTensorType>(arg.getType());
  if (!t || !t.hasStaticShape() || !isa<FloatType>(t.getElementType()))
    return false;
  return (t.getRank() == 2 && onlyMatmulWeight(arg)) || (t.getRank() == 1 && onlyMatmulBias(arg));
}

LogicalResult mlir::rlx::markWeightArguments(Operation *root, ArrayRef<std::string> spec) {
  // Empty: advise (the heuristic's candidates in a remark, nothing marked).
  bool advise = spec.empty();
  bool automatic = spec.size() == 1 && spec.front() == "auto";
  bool none = spec.size() == 1 && spec.front() == "none";
  if (none)
    return success();
  // Positions and name patterns.
  SmallVector<int64_t> positions;
  SmallVector<llvm::GlobPattern> patterns;
  if (!advise && !automatic) {
    for (const std::string &s : spec) {
      int64_t pos;
      if (!StringRef(s).getAsInteger(10, pos) && pos >= 0) {
        positions.push_back(pos);
        continue;
      }
      auto pat = llvm::GlobPattern::create(s);
      if (!pat || StringRef(s).empty()) {
        if (!pat)
          llvm::consumeError(pat.takeError());
        return root->emitError() << "rlx-import-to-mir: weights entry '" << s
                                 << "' is neither an argument position, a name pattern, "
                                    "'auto' nor 'none'";
      }
      patterns.push_back(std::move(*pat));
    }
  }
  // The functions whose arguments are sorted: definitions nothing calls (a
  // called function gets its arguments from the caller).
  SmallVector<func::FuncOp> fns;
  root->walk([&](func::FuncOp fn) {
    auto module = fn->getParentOfType<ModuleOp>();
    if (!fn.isExternal() && (!module || SymbolTable::symbolKnownUseEmpty(fn, module)))
      fns.push_back(fn);
  });
  unsigned most = 0;
  for (func::FuncOp fn : fns)
    most = std::max(most, fn.getNumArguments());
  for (int64_t pos : positions)
    if (pos >= static_cast<int64_t>(most))
      return root->emitError() << "rlx-import-to-mir: weights names argument " << pos
                               << ", but no function has more than " << most;
  for (func::FuncOp fn : fns) {
    // The runners name unnamed arguments first (nameUnnamedIO): an
    // rlx.input that is the default name argN is no choice of the user's.
    auto marked = [&](unsigned i) {
      auto input = fn.getArgAttrOfType<StringAttr>(i, "rlx.input");
      return fn.getArgAttr(i, "rlx.param") ||
             (input && input.getValue() != "arg" + std::to_string(i));
    };
    SmallVector<unsigned> taken;
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      if (marked(i))
        continue;
      std::string name = argumentName(fn, i);
      bool take = advise || automatic
                      ? looksLikeWeight(fn.getArgument(i))
                      : llvm::is_contained(positions, static_cast<int64_t>(i)) ||
                            llvm::any_of(patterns, [&](const llvm::GlobPattern &p) {
                              return p.match(name);
                            });
      if (take)
        taken.push_back(i);
    }
    if (taken.empty())
      continue;
    SmallVector<std::string> names;
    for (unsigned i : taken)
      names.push_back(argumentName(fn, i));
    bool one = names.size() == 1;
    if (advise) {
      // Marking them would be wrong for a caller that passes new values on
      // every run (packing reads the first run's): the user decides.
      mlir::emitRemark(fn.getLoc())
          << "rlx-import-to-mir: " << llvm::join(names, ", ")
          << (one ? " is read only as a matmul weight or bias but is an input"
                  : " are read only as matmul weights and biases but are inputs")
          << ": what is computed from them alone (concatenations, transposes) runs on "
             "every call; weights=auto takes them as parameters, packed once from the "
             "values of the first run (rlx-run does so by default)";
      continue;
    }
    for (unsigned i : taken) {
      // Named as they were (argN): --input and checkpoints keep working.
      std::string name = argumentName(fn, i);
      fn.removeArgAttr(i, "rlx.input");
      fn.setArgAttr(i, "rlx.param", StringAttr::get(fn.getContext(), name));
    }
    if (automatic)
      mlir::emitRemark(fn.getLoc())
          << "rlx-import-to-mir: " << llvm::join(names, ", ")
          << (one ? " is read only as a matmul weight or bias: taken as a parameter"
                  : " are read only as matmul weights and biases: taken as parameters")
          << " (rlx.param), packed once from the values of the first run; "
             "weights=none keeps them inputs";
  }
  return success();
}
