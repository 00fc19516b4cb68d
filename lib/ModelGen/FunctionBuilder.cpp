//===- FunctionBuilder.cpp - One model function under construction -------===//

#include "FunctionBuilder.h"

#include "RLX/Dialect/Common/IR/RLXDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::rlx;

OwningOpRef<ModuleOp> FunctionBuilder::begin() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(b, loc, o.funcName, b.getFunctionType({}, {}));
  entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  return module;
}

OwningOpRef<ModuleOp> FunctionBuilder::finish(OwningOpRef<ModuleOp> module) {
  if (mb.failed())
    return nullptr;
  auto fn = cast<func::FuncOp>(entry->getParentOp());
  func::ReturnOp::create(b, loc, results);
  fn.setType(b.getFunctionType(entry->getArgumentTypes(),
                               llvm::to_vector(llvm::map_range(results, [](Value v) {
                                 return v.getType();
                               }))));
  for (auto [i, attrs] : llvm::enumerate(argAttrs))
    fn.setArgAttrs(i, attrs);
  for (auto [i, name] : llvm::enumerate(resultNames))
    fn.setResultAttr(i, "rlx.output", b.getStringAttr(name));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

Type FunctionBuilder::elementType() {
  if (o.dtype == "bf16")
    return b.getBF16Type();
  if (o.dtype == "f16")
    return b.getF16Type();
  return b.getF32Type();
}

Value FunctionBuilder::addArg(Type type, StringRef role, StringRef name,
                              ArrayRef<StringRef> dimNames) {
  Value v = entry->addArgument(type, loc);
  NamedAttrList attrs;
  attrs.set(role, b.getStringAttr(name));
  if (!dimNames.empty())
    attrs.set(RLXDialect::kDimNamesAttr, b.getStrArrayAttr(dimNames));
  argAttrs.push_back(attrs.getDictionary(ctx));
  return v;
}

Value FunctionBuilder::input(StringRef name, ArrayRef<int64_t> shape, ArrayRef<StringRef> names,
                             Type et) {
  SmallVector<StringRef> dims;
  for (auto [d, n] : llvm::zip(shape, names))
    dims.push_back(d == kDyn ? n : StringRef(""));
  bool anyDynamic = llvm::is_contained(shape, kDyn);
  return addArg(tensor(shape, et), "rlx.input", name, anyDynamic ? dims : ArrayRef<StringRef>());
}
