//===- WgmmaRegisterA.cpp - wgmma with A in registers ---------------------===//
//
// The PTX (operands numbered as LLVM inline asm: the n/2 results, then the
// four A registers, B's descriptor, then the accumulator inputs tied to the
// results; scale-d S an immediate):
//   { .reg .pred p; setp.ne.b32 p, S, 0;
//     wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<t>.<t>
//       {$0, ...}, {$a0, $a1, $a2, $a3}, $descB, p, 1, 1, <trans-b>; }
// It has side effects so that LLVM keeps it between its wgmma.fence and
// commit_group.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/WgmmaRegisterA.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <string>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::nvvm;

Value nvvm::createWgmmaRegisterA(OpBuilder &b, Location loc, const WgmmaRegisterA &w, Value acc,
                                 ArrayRef<Value> a, Value descB) {
  const int64_t regs = w.n / 2;
  std::string type = w.bf16 ? "bf16" : "f16";
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, " + std::string(w.scaleD ? "1" : "0") +
                    ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(w.n) + "k16.f32." +
                    type + "." + type + " {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    ptx += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  ptx += "}, {$" + std::to_string(regs) + ", $" + std::to_string(regs + 1) + ", $" +
         std::to_string(regs + 2) + ", $" + std::to_string(regs + 3) + "}, $" +
         std::to_string(regs + 4) + ", p, 1, 1, " + (w.transB ? "1" : "0") + ";\n}\n";
  constraints += ",r,r,r,r,l";
  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(descB);
  for (int64_t i = 0; i < regs; ++i) {
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{i}));
    constraints += "," + std::to_string(i);
  }
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, acc.getType(), operands, ptx, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  asmOp->setAttr(kWgmmaRegisterAAttr,
                 b.getDictionaryAttr({b.getNamedAttr("n", b.getI64IntegerAttr(w.n)),
                                      b.getNamedAttr("bf16", b.getBoolAttr(w.bf16)),
                                      b.getNamedAttr("trans_b", b.getBoolAttr(w.transB)),
                                      b.getNamedAttr("scale_d", b.getBoolAttr(w.scaleD))}));
  return asmOp.getResult(0);
}

std::optional<WgmmaRegisterAOperands> nvvm::matchWgmmaRegisterA(Operation *op) {
  auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op);
  auto tag = op->getAttrOfType<DictionaryAttr>(kWgmmaRegisterAAttr);
  if (!asmOp || !tag)
    return std::nullopt;
  auto n = tag.getAs<IntegerAttr>("n");
  auto bf16 = tag.getAs<BoolAttr>("bf16");
  auto transB = tag.getAs<BoolAttr>("trans_b");
  auto scaleD = tag.getAs<BoolAttr>("scale_d");
  WgmmaRegisterAOperands r;
  if (!n || !bf16 || !transB || !scaleD || n.getInt() < 8 || n.getInt() > 256 || n.getInt() % 8 ||
      asmOp.getNumOperands() != static_cast<unsigned>(5 + n.getInt() / 2)) {
    op->emitError("a '") << kWgmmaRegisterAAttr
                         << "' inline asm that is not the form createWgmmaRegisterA builds";
    return std::nullopt;
  }
  r.shape = {n.getInt(), bf16.getValue(), transB.getValue(), scaleD.getValue()};
  ValueRange ops = asmOp.getOperands();
  r.a.assign(ops.begin(), ops.begin() + 4);
  r.descB = ops[4];
  r.acc.assign(ops.begin() + 5, ops.end());
  return r;
}

SmallVector<Value> nvvm::fenceWgmmaOperands(OpBuilder &b, Location loc, ValueRange values) {
  if (values.empty())
    return {};
  std::string constraints;
  SmallVector<Type> types;
  for (auto [i, v] : llvm::enumerate(values)) {
    constraints += (i ? "," : "") + std::string(v.getType().isF32() ? "=f" : "=r");
    types.push_back(v.getType());
  }
  for (size_t i = 0; i < values.size(); ++i)
    constraints += "," + std::to_string(i);
  Type result = types.size() == 1 ? types[0]
                                  : LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, result, values, "", constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT), ArrayAttr());
  asmOp->setAttr(kWgmmaFenceOperandsAttr, b.getUnitAttr());
  if (types.size() == 1)
    return {asmOp.getResult(0)};
  SmallVector<Value> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0),
                                               ArrayRef<int64_t>{static_cast<int64_t>(i)}));
  return out;
}

std::optional<SmallVector<Value>> nvvm::matchWgmmaFenceOperands(Operation *op) {
  if (!isa<LLVM::InlineAsmOp>(op) || !op->hasAttr(kWgmmaFenceOperandsAttr))
    return std::nullopt;
  return SmallVector<Value>(op->getOperands());
}
