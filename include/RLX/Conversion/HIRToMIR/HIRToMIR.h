//===- HIRToMIR.h - Lowering of rlx_hir to rlx_mir ---------------*- C++ -*-===//
//
// Patterns and the pass that lower HIR blocks to the MIR tensor graph, under
// a fusion policy (direct: fused MIR ops; fusable: primitive chains). Other
// pipelines can pull the patterns into their own conversion.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_CONVERSION_HIRTOMIR_HIRTOMIR_H
#define RLX_CONVERSION_HIRTOMIR_HIRTOMIR_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx {

/// How convert-rlx-hir-to-mir lowers blocks that have a fused MIR form.
enum class FusionPolicy { Direct, Fusable };

/// Adds the patterns that lower every rlx_hir op to rlx_mir.
void populateHIRToMIRConversionPatterns(RewritePatternSet &patterns,
                                        FusionPolicy policy);

} // namespace mlir::rlx

#endif // RLX_CONVERSION_HIRTOMIR_HIRTOMIR_H
