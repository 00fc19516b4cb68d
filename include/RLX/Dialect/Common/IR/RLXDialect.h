//===- RLXDialect.h - The shared `rlx` attribute dialect --------*- C++ -*-===//
//
// Declares the `rlx` dialect, which holds the enums and attributes shared by
// rlx_hir, rlx_mir and rlx_lir (activation, mask kind, layouts, quantization,
// RoPE style and scaling, reduction kind). Every RLX level includes this.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_RLXDIALECT_H
#define RLX_DIALECT_COMMON_IR_RLXDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include <string>

#include "RLX/Dialect/Common/IR/RLXEnums.h.inc"

namespace mlir::rlx {
/// A number for diagnostics, printed with %g ("1e-05", "0.125").
std::string formatNumber(double value);
/// Parses a floating-point attribute parameter written as a plain number.
FailureOr<llvm::APFloat> parseF64Param(AsmParser &parser);
} // namespace mlir::rlx

#define GET_ATTRDEF_CLASSES
#include "RLX/Dialect/Common/IR/RLXAttrs.h.inc"

namespace mlir::rlx {
/// custom<OptionalMaskKind>: an optional bare keyword (`causal`,
/// `sliding_window`, `chunked`, `none`) in attention ops; absent means `none`.
ParseResult parseOptionalMaskKind(OpAsmParser &parser, MaskKindAttr &attr);
void printOptionalMaskKind(OpAsmPrinter &printer, Operation *op, MaskKindAttr attr);
} // namespace mlir::rlx

#include "RLX/Dialect/Common/IR/RLXDialect.h.inc"

namespace mlir::rlx {
/// The value of an optional or default-valued enum attribute, or `def` when it
/// is absent. Op adaptors used during parsing and building do not fill in
/// TableGen defaults, so inference must not assume the attribute is set.
template <typename AttrT, typename EnumT>
EnumT enumOr(AttrT attr, EnumT def) {
  return attr ? attr.getValue() : def;
}
} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_RLXDIALECT_H
