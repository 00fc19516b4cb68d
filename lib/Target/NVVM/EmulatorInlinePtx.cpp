//===- EmulatorInlinePtx.cpp - Inline PTX as the emulator reads it --------===//
//
// PTX ISA, "wgmma.mma_async": with A in registers the operands are
//   wgmma.mma_async.sync.aligned.shape.dtype.atype.btype
//       d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b;
// d a vector of shape-N/2 .f32 registers, a four .b32 registers, scale-d a
// predicate (or 0 / 1), imm-scale-a/b 1 or -1, imm-trans-b 0 or 1. LLVM
// inline asm numbers the operands $0.. : the outputs first, then the inputs
// in order; an input whose constraint is a number is tied to that output.
//===----------------------------------------------------------------------===//

#include "EmulatorInlinePtx.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::nvvm;

namespace {

/// "$3" -> 3.
std::optional<int64_t> operandNumber(StringRef token) {
  token = token.trim();
  int64_t v;
  if (!token.consume_front("$") || token.getAsInteger(10, v) || v < 0)
    return std::nullopt;
  return v;
}

FailureOr<SmallVector<int64_t>> operandList(StringRef list) {
  SmallVector<StringRef> parts;
  list.split(parts, ',');
  SmallVector<int64_t> out;
  for (StringRef p : parts) {
    std::optional<int64_t> v = operandNumber(p);
    if (!v)
      return failure();
    out.push_back(*v);
  }
  return out;
}

} // namespace

FailureOr<PtxWgmmaRegisterA> nvvm::readWgmmaRegisterAPtx(LLVM::InlineAsmOp op) {
  auto fail = [&](const Twine &why) {
    return op.emitError("rlx-gpu-outline-for-emulator: cannot read the inline PTX of a "
                        "register-A wgmma: ")
           << why;
  };
  StringRef text = op.getAsmString();
  llvm::Regex wgmma(
      "wgmma\\.mma_async\\.sync\\.aligned\\.m64n([0-9]+)k16\\.f32\\.(bf16|f16)\\.(bf16|f16)"
      "[ \t\n]*\\{([^}]*)\\}[ \t\n]*,[ \t\n]*\\{([^}]*)\\}[ \t\n]*,[ \t\n]*(\\$[0-9]+)[ \t\n]*,"
      "[ \t\n]*([a-z_][a-z0-9_]*|[01])[ \t\n]*,[ \t\n]*(-?1)[ \t\n]*,[ \t\n]*(-?1)[ \t\n]*,"
      "[ \t\n]*([01])[ \t\n]*;");
  SmallVector<StringRef> m;
  if (!wgmma.match(text, &m))
    return fail("no wgmma.mma_async m64nNk16 .f32 with A in registers in '" + text + "'");
  PtxWgmmaRegisterA w;
  if (m[1].getAsInteger(10, w.n) || w.n < 8 || w.n > 256 || w.n % 8)
    return fail("shape m64n" + m[1] + "k16");
  if (m[2] != m[3])
    return fail("A and B of different types (" + m[2] + ", " + m[3] + ")");
  w.bf16 = m[2] == "bf16";
  w.negA = m[8] == "-1";
  w.negB = m[9] == "-1";
  w.transB = m[10] == "1";
  // scale-d: an immediate, or a predicate set by setp.ne.b32 p, <imm>, 0.
  StringRef scale = m[7];
  if (scale == "0" || scale == "1") {
    w.scaleD = scale == "1";
  } else {
    llvm::Regex setp(("setp\\.ne\\.b32[ \t]+" + scale + "[ \t]*,[ \t]*([0-9]+)[ \t]*,[ \t]*0[ \t]*;")
                         .str());
    SmallVector<StringRef> s;
    if (!setp.match(text, &s))
      return fail("scale-d predicate '" + scale + "' is not set by setp.ne.b32 from an immediate");
    w.scaleD = s[1] != "0";
  }
  // Operand numbering from the constraints.
  SmallVector<StringRef> constraints;
  op.getConstraints().split(constraints, ',');
  int64_t outputs = 0;
  SmallVector<StringRef> inputs;
  for (StringRef c : constraints) {
    if (c.starts_with("="))
      ++outputs;
    else
      inputs.push_back(c);
  }
  if (inputs.size() != op.getNumOperands())
    return fail("its constraints name " + Twine(inputs.size()) + " inputs for " +
                Twine(op.getNumOperands()) + " operands");
  auto input = [&](int64_t number) -> Value {
    if (number < outputs || number - outputs >= static_cast<int64_t>(inputs.size()))
      return nullptr;
    return op.getOperand(static_cast<unsigned>(number - outputs));
  };
  FailureOr<SmallVector<int64_t>> d = operandList(m[4]), a = operandList(m[5]);
  if (failed(d) || failed(a) || static_cast<int64_t>(d->size()) != w.n / 2 || a->size() != 4)
    return fail("expected {" + Twine(w.n / 2) + " d registers}, {4 a registers}");
  for (int64_t r : *a) {
    Value v = input(r);
    if (!v || !v.getType().isInteger(32))
      return fail("A register $" + Twine(r) + " is not a 32-bit input");
    w.a.push_back(v);
  }
  w.descB = input(*operandNumber(m[6]));
  if (!w.descB || !w.descB.getType().isInteger(64))
    return fail("the B descriptor " + m[6] + " is not a 64-bit input");
  for (int64_t r : *d) {
    if (r >= outputs)
      return fail("d register $" + Twine(r) + " is not an output");
    w.resultIndex.push_back(r);
    // The input tied to output r (the accumulator when scale-d).
    Value tied;
    for (auto [i, c] : llvm::enumerate(inputs)) {
      int64_t t;
      if (!c.getAsInteger(10, t) && t == r)
        tied = op.getOperand(static_cast<unsigned>(i));
    }
    if (!tied && w.scaleD)
      return fail("d register $" + Twine(r) + " has no tied input (the accumulator)");
    w.acc.push_back(tied);
  }
  return w;
}
