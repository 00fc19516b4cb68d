//===- SourceLocations.cpp - An op's origins as file:line:col -------------===//

#include "RLX/Dialect/Common/IR/SourceLocations.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

Location mlir::rlx::fusedOrigins(Operation *op) {
  SmallVector<Location> locs;
  // Pre-order: the op's own location first (diagnostics show the first).
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    if (nested == op || !nested->hasTrait<OpTrait::IsTerminator>())
      locs.push_back(nested->getLoc());
  });
  return FusedLoc::get(op->getContext(), locs);
}

std::vector<std::string> mlir::rlx::sourceLocations(Location loc) {
  std::vector<std::string> out;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      std::string s =
          (f.getFilename().getValue() + ":" + Twine(f.getLine()) + ":" + Twine(f.getColumn()))
              .str();
      if (!llvm::is_contained(out, s))
        out.push_back(std::move(s));
    }
    return WalkResult::advance();
  });
  return out;
}
