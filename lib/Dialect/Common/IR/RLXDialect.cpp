//===- RLXDialect.cpp - The shared `rlx` attribute dialect ----------------===//

#include "RLX/Dialect/Common/IR/RLXDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::rlx;

#include "RLX/Dialect/Common/IR/RLXDialect.cpp.inc"
#include "RLX/Dialect/Common/IR/RLXEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "RLX/Dialect/Common/IR/RLXAttrs.cpp.inc"

std::string mlir::rlx::formatNumber(double value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", value);
  return s;
}

FailureOr<APFloat> mlir::rlx::parseF64Param(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return APFloat(value);
}

ParseResult mlir::rlx::parseOptionalMaskKind(OpAsmParser &parser,
                                             MaskKindAttr &attr) {
  for (MaskKind kind : {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow}) {
    if (succeeded(parser.parseOptionalKeyword(stringifyMaskKind(kind)))) {
      attr = MaskKindAttr::get(parser.getContext(), kind);
      return success();
    }
  }
  return success();
}

void mlir::rlx::printOptionalMaskKind(OpAsmPrinter &printer, Operation *,
                                      MaskKindAttr attr) {
  if (attr && attr.getValue() != MaskKind::None)
    printer << stringifyMaskKind(attr.getValue());
}

void RLXDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "RLX/Dialect/Common/IR/RLXAttrs.cpp.inc"
      >();
}

LogicalResult
RopeScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        RopeScalingKind kind, APFloat factorF,
                        APFloat lowF, APFloat highF,
                        int64_t originalMaxPositions) {
  if (kind == RopeScalingKind::None)
    return success();
  double factor = factorF.convertToDouble();
  double lowFreqFactor = lowF.convertToDouble();
  double highFreqFactor = highF.convertToDouble();
  if (!(factor > 0.0))
    return emitError() << "rope_scaling factor must be > 0";
  if (kind == RopeScalingKind::Llama3) {
    double lo = lowFreqFactor;
    double hi = highFreqFactor;
    if (!(lo > 0.0) || !(hi > lo))
      return emitError() << "llama3 rope_scaling needs 0 < low_freq_factor < "
                            "high_freq_factor, got "
                         << formatNumber(lo) << " and " << formatNumber(hi);
    if (originalMaxPositions <= 0)
      return emitError()
             << "original_max_position_embeddings must be > 0";
  }
  return success();
}

LogicalResult RLXDialect::verifyRegionArgAttribute(Operation *op, unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() != kDimNamesAttr)
    return success();
  auto names = dyn_cast<ArrayAttr>(attr.getValue());
  if (!names)
    return op->emitError() << kDimNamesAttr << " must be an array of strings";
  Region &region = op->getRegion(regionIndex);
  if (region.empty() || argIndex >= region.getNumArguments())
    return success();
  auto type = dyn_cast<RankedTensorType>(region.getArgument(argIndex).getType());
  if (!type)
    return op->emitError() << kDimNamesAttr << " on argument " << argIndex
                           << " needs a ranked tensor argument";
  if (static_cast<int64_t>(names.size()) != type.getRank())
    return op->emitError() << kDimNamesAttr << " on argument " << argIndex
                           << " has " << names.size() << " names for rank "
                           << type.getRank();
  for (auto [dim, name] : llvm::enumerate(names)) {
    auto str = dyn_cast<StringAttr>(name);
    if (!str)
      return op->emitError() << kDimNamesAttr << " must be an array of strings";
    bool dynamic = type.isDynamicDim(dim);
    if (dynamic && str.getValue().empty())
      return op->emitError() << "dynamic dim " << dim << " of argument " << argIndex
                             << " needs a name in " << kDimNamesAttr;
    if (!dynamic && !str.getValue().empty())
      return op->emitError() << "static dim " << dim << " of argument " << argIndex
                             << " must not be named ('" << str.getValue() << "')";
  }
  return success();
}
