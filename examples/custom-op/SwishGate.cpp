//===- SwishGate.cpp - The demo dialect and its plugin entry point --------===//
//
// demo.swish_gate implements one method of RLX's interfaces, buildScalar;
// everything else (fusion, the CPU and GPU lowerings, the emulator, VJP,
// JVP and vmap rules, buffer reuse) comes from RLX's interface defaults.
// The plugin entry point makes `rlx-opt` and `rlx-run` load the dialect:
//
//   rlx-opt --load-dialect-plugin=libSwishGatePlugin.so model.mlir --rlx-mir-fuse
//   rlx-run --load-dialect-plugin=libSwishGatePlugin.so model.mlir --device=emu
//
//===----------------------------------------------------------------------===//

#include "SwishGate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

#include "SwishGateDialect.cpp.inc"

#define GET_OP_CLASSES
#include "SwishGateOps.cpp.inc"

void demo::DemoDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "SwishGateOps.cpp.inc"
      >();
}

LogicalResult demo::SwishGateOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                  Adaptor adaptor, SmallVectorImpl<Type> &types) {
  // RLX's rule for binary elementwise ops (broadcast shapes, one element type).
  return rlx::mir::detail::inferBinaryType(loc, adaptor.getGate(), adaptor.getUp(), types);
}

LogicalResult demo::SwishGateOp::verify() {
  if (!isa<FloatType>(getType().getElementType()))
    return emitOpError("expects float tensors, got ") << getType();
  return success();
}

/// gate · sigmoid(gate) · up on one element, as arith and math ops.
Value demo::SwishGateOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value gate = args[0], up = args[1];
  Type t = gate.getType();
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 1.0));
  Value negated = arith::NegFOp::create(b, loc, gate);
  Value sigmoid = arith::DivFOp::create(
      b, loc, one, arith::AddFOp::create(b, loc, one, math::ExpOp::create(b, loc, negated)));
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, gate, sigmoid), up);
}

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SwishGate", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) { registry->insert<demo::DemoDialect>(); }};
}
