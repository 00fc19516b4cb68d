//===- ElementwiseOps.cpp - Scalar bodies of rlx_mir elementwise ops ------===//
//
// The scalar semantics of every elementwise MIR op, written once. Fusion into
// `rlx_mir.elementwise` regions, the linalg lowering and the GPU kernels all
// call buildScalar, so e.g. the definition of gelu_tanh lives only here.
// f16/bf16 are computed in f32 and rounded once per op (PyTorch eager rounds
// after every op too).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include <cmath>

using namespace mlir;
using namespace mlir::rlx::mir;

static Value constF(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
}

/// Computes `fn` in f32 for narrow floats and rounds the result back.
static Value inF32(OpBuilder &b, Location loc, ValueRange args,
                   function_ref<Value(ValueRange)> fn) {
  Type t = args.front().getType();
  auto ft = dyn_cast<FloatType>(t);
  if (!ft || ft.getWidth() >= 32)
    return fn(args);
  Type f32 = b.getF32Type();
  SmallVector<Value> wide;
  for (Value a : args)
    wide.push_back(arith::ExtFOp::create(b, loc, f32, a));
  return arith::TruncFOp::create(b, loc, t, fn(wide));
}

static bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

template <typename MathOp>
static Value unaryMath(OpBuilder &b, Location loc, ValueRange args) {
  return inF32(b, loc, args, [&](ValueRange a) -> Value {
    return MathOp::create(b, loc, a[0]);
  });
}

static Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value negX = arith::NegFOp::create(b, loc, x);
  Value e = math::ExpOp::create(b, loc, negX);
  Value den = arith::AddFOp::create(b, loc, constF(b, loc, t, 1.0), e);
  return arith::DivFOp::create(b, loc, constF(b, loc, t, 1.0), den);
}

Value NegOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return arith::NegFOp::create(b, loc, x0);
}
Value ExpOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::ExpOp>(b, loc, ValueRange{x0});
}
Value LogOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::LogOp>(b, loc, ValueRange{x0});
}
Value SqrtOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::SqrtOp>(b, loc, ValueRange{x0});
}
Value RsqrtOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::RsqrtOp>(b, loc, ValueRange{x0});
}
Value AbsOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return math::AbsFOp::create(b, loc, x0);
}
Value TanhOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::TanhOp>(b, loc, ValueRange{x0});
}
Value ErfOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::ErfOp>(b, loc, ValueRange{x0});
}
Value SinOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::SinOp>(b, loc, ValueRange{x0});
}
Value CosOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return unaryMath<math::CosOp>(b, loc, ValueRange{x0});
}
Value ReciprocalOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return inF32(b, loc, ValueRange{x0}, [&](ValueRange a) -> Value {
    return arith::DivFOp::create(b, loc, constF(b, loc, a[0].getType(), 1.0), a[0]);
  });
}
Value SigmoidOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return inF32(b, loc, ValueRange{x0}, [&](ValueRange a) { return sigmoid(b, loc, a[0]); });
}
Value SiluOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return inF32(b, loc, ValueRange{x0}, [&](ValueRange a) -> Value {
    return arith::MulFOp::create(b, loc, a[0], sigmoid(b, loc, a[0]));
  });
}
Value GeluOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return inF32(b, loc, ValueRange{x0}, [&](ValueRange a) -> Value {
    Value x = a[0];
    Type t = x.getType();
    Value scaled = arith::MulFOp::create(b, loc, x, constF(b, loc, t, M_SQRT1_2));
    Value erf = math::ErfOp::create(b, loc, scaled);
    Value onePlus = arith::AddFOp::create(b, loc, constF(b, loc, t, 1.0), erf);
    Value half = arith::MulFOp::create(b, loc, x, constF(b, loc, t, 0.5));
    return arith::MulFOp::create(b, loc, half, onePlus);
  });
}
Value GeluTanhOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  return inF32(b, loc, ValueRange{x0}, [&](ValueRange a) -> Value {
    Value x = a[0];
    Type t = x.getType();
    Value x3 = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
    Value inner = arith::AddFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, x3, constF(b, loc, t, 0.044715)));
    Value arg = arith::MulFOp::create(b, loc, inner,
                                      constF(b, loc, t, std::sqrt(2.0 / M_PI)));
    Value th = math::TanhOp::create(b, loc, arg);
    Value onePlus = arith::AddFOp::create(b, loc, constF(b, loc, t, 1.0), th);
    Value half = arith::MulFOp::create(b, loc, x, constF(b, loc, t, 0.5));
    return arith::MulFOp::create(b, loc, half, onePlus);
  });
}
Value ReluOp::buildScalarFor(OpBuilder &b, Location loc, Value x0) {
  Value x = x0;
  return arith::MaximumFOp::create(b, loc, x, constF(b, loc, x.getType(), 0.0));
}

Value mlir::rlx::mir::buildActivationScalar(OpBuilder &b, Location loc, ActivationKind kind,
                                            Value x) {
  // The ops' own scalar bodies are the definitions; build through them so
  // there is one formula per activation.
  switch (kind) {
  case ActivationKind::None:
    return x;
  case ActivationKind::Relu:
    return ReluOp::buildScalarFor(b, loc, x);
  case ActivationKind::Gelu:
    return GeluOp::buildScalarFor(b, loc, x);
  case ActivationKind::GeluTanh:
    return GeluTanhOp::buildScalarFor(b, loc, x);
  case ActivationKind::Silu:
    return SiluOp::buildScalarFor(b, loc, x);
  case ActivationKind::Sigmoid:
    return SigmoidOp::buildScalarFor(b, loc, x);
  case ActivationKind::Tanh:
    return TanhOp::buildScalarFor(b, loc, x);
  }
  llvm_unreachable("unknown activation");
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

template <typename FOp, typename IOp>
static Value binary(OpBuilder &b, Location loc, ValueRange args) {
  if (!isFloat(args[0]))
    return IOp::create(b, loc, args[0], args[1]);
  return inF32(b, loc, args, [&](ValueRange a) -> Value {
    return FOp::create(b, loc, a[0], a[1]);
  });
}

Value AddOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return binary<arith::AddFOp, arith::AddIOp>(b, loc, args);
}
Value SubOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return binary<arith::SubFOp, arith::SubIOp>(b, loc, args);
}
Value MulOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return binary<arith::MulFOp, arith::MulIOp>(b, loc, args);
}
Value DivOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return binary<arith::DivFOp, arith::DivSIOp>(b, loc, args);
}
Value MaxOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return binary<arith::MaximumFOp, arith::MaxSIOp>(b, loc, args);
}
Value MinOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return binary<arith::MinimumFOp, arith::MinSIOp>(b, loc, args);
}
Value PowOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return binary<math::PowFOp, math::IPowIOp>(b, loc, args);
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

Value mlir::rlx::mir::convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  // Conversions with no direct arith form go through f32, which holds every
  // f16, bf16, f8E4M3FN and f4E2M1FN value exactly (one rounding, at the
  // end): f16 ↔ bf16 (same width: neither extf nor truncf), anything from
  // f8/f4 (decoded by rlx-expand-low-precision-floats only to f32), and
  // integers to or from f8/f4 (LLVM has no such float types).
  auto isLowPrecision = [](Type t) { return isa<Float8E4M3FNType, Float4E2M1FNType>(t); };
  Type f32 = b.getF32Type();
  if (from != f32 && to != f32 &&
      ((fromF && toF && fromF.getWidth() == toF.getWidth()) || isLowPrecision(from) ||
       (isLowPrecision(to) && !fromF)))
    return convertScalar(b, loc, convertScalar(b, loc, v, f32), to);
  if (fromF && toF) {
    if (fromF.getWidth() < toF.getWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    if (isa<Float8E4M3FNType, Float4E2M1FNType>(to)) {
      // Saturate to the largest finite value (cvt.rn.satfinite semantics);
      // NaN stays NaN through minimum/maximum.
      double maxFinite = isa<Float8E4M3FNType>(to) ? 448.0 : 6.0;
      Value hi = constF(b, loc, from, maxFinite);
      Value lo = constF(b, loc, from, -maxFinite);
      v = arith::MinimumFOp::create(b, loc, arith::MaximumFOp::create(b, loc, v, lo), hi);
    }
    return arith::TruncFOp::create(b, loc, to, v);
  }
  auto fromI = dyn_cast<IntegerType>(from);
  auto toI = dyn_cast<IntegerType>(to);
  if (fromI && toF)
    return fromI.getWidth() == 1 || fromI.isUnsigned()
               ? Value(arith::UIToFPOp::create(b, loc, to, v))
               : Value(arith::SIToFPOp::create(b, loc, to, v));
  if (fromF && toI)
    return toI.getWidth() == 1
               ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                             constF(b, loc, from, 0.0)))
               : Value(arith::FPToSIOp::create(b, loc, to, v));
  if (fromI && toI) {
    if (toI.getWidth() == 1) // torch: nonzero is true (not the low bit)
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                   arith::ConstantOp::create(b, loc, from, b.getIntegerAttr(from, 0)));
    if (fromI.getWidth() < toI.getWidth())
      return fromI.getWidth() == 1 || fromI.isUnsigned()
                 ? Value(arith::ExtUIOp::create(b, loc, to, v))
                 : Value(arith::ExtSIOp::create(b, loc, to, v));
    return arith::TruncIOp::create(b, loc, to, v);
  }
  llvm_unreachable("unsupported scalar conversion");
}

Value CastOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return convertScalar(b, loc, args[0], getType().getElementType());
}

Value SelectOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}
