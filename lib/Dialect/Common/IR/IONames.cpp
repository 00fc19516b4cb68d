//===- IONames.cpp - The names of a model's arguments and results ---------===//

#include "RLX/Dialect/Common/IR/IONames.h"

#include "RLX/Dialect/Common/IR/RLXDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

std::string mlir::rlx::argumentName(FunctionOpInterface fn, unsigned i) {
  for (StringRef role : {"rlx.param", "rlx.input"})
    if (auto s = fn.getArgAttrOfType<StringAttr>(i, role))
      return s.str();
  return "arg" + std::to_string(i);
}

std::string mlir::rlx::resultName(FunctionOpInterface fn, unsigned i) {
  if (auto s = fn.getResultAttrOfType<StringAttr>(i, "rlx.output"))
    return s.str();
  return "result" + std::to_string(i);
}

void mlir::rlx::nameUnnamedIO(ModuleOp module) {
  Builder b(module.getContext());
  for (auto fn : module.getOps<FunctionOpInterface>()) {
    if (fn.isExternal() || fn.isPrivate())
      continue;
    // Tensors only: a bufferized (LIR) function's memref arguments are
    // outputs and the arena too, named where they are.
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(fn.getArgumentTypes()[i]) && !fn.getArgAttr(i, "rlx.param") &&
          !fn.getArgAttr(i, "rlx.input") && !fn.getArgAttr(i, "rlx.output"))
        fn.setArgAttr(i, "rlx.input", b.getStringAttr(argumentName(fn, i)));
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      if (isa<TensorType>(fn.getResultTypes()[i]) && !fn.getResultAttr(i, "rlx.output"))
        fn.setResultAttr(i, "rlx.output", b.getStringAttr(resultName(fn, i)));
  }
}

std::vector<std::string> mlir::rlx::dimNames(FunctionOpInterface fn) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto dims = fn.getArgAttrOfType<ArrayAttr>(i, RLXDialect::kDimNamesAttr))
      for (Attribute a : dims)
        if (auto s = dyn_cast<StringAttr>(a);
            s && !s.getValue().empty() && !llvm::is_contained(names, s.getValue()))
          names.push_back(s.getValue().str());
  return names;
}

std::string mlir::rlx::joinedDimNames(FunctionOpInterface fn) {
  return llvm::join(dimNames(fn), ", ");
}
