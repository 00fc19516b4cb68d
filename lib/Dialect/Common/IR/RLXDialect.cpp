//===- RLXDialect.cpp - The shared `rlx` attribute dialect ----------------===//

#include "RLX/Dialect/Common/IR/RLXDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

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
  for (MaskKind kind :
       {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::Chunked}) {
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
                        int64_t originalMaxPositions, APFloat betaFastF,
                        APFloat betaSlowF, bool, APFloat attentionFactorF) {
  if (kind == RopeScalingKind::None)
    return success();
  double factor = factorF.convertToDouble();
  double lowFreqFactor = lowF.convertToDouble();
  double highFreqFactor = highF.convertToDouble();
  if (!(factor > 0.0) || !std::isfinite(factor))
    return emitError() << "rope_scaling factor must be finite and > 0";
  if (kind == RopeScalingKind::Yarn) {
    double fast = betaFastF.convertToDouble(), slow = betaSlowF.convertToDouble();
    if (!(fast > 0.0) || !(slow > 0.0))
      return emitError() << "yarn rope_scaling needs positive beta_fast and beta_slow, got "
                         << formatNumber(fast) << " and " << formatNumber(slow);
    double af = attentionFactorF.convertToDouble();
    if (!(af >= 0.0) || !std::isfinite(af) || !std::isfinite(fast) || !std::isfinite(slow))
      return emitError() << "yarn attention_factor must be finite and >= 0 (0: from factor), "
                            "its betas finite";
    if (originalMaxPositions <= 0)
      return emitError() << "original_max_position_embeddings must be > 0";
  }
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

/// A non-empty string attribute named `name`, or an error at `op`.
static LogicalResult checkName(Operation *op, NamedAttribute attr, StringRef where) {
  auto s = dyn_cast<StringAttr>(attr.getValue());
  if (!s || s.getValue().empty())
    return op->emitError() << attr.getName().getValue() << " on " << where
                           << " must be a non-empty string, got " << attr.getValue();
  return success();
}

/// `rlx.dim_names` against the argument's tensor type.
static LogicalResult verifyDimNames(Operation *op, Region &region, unsigned argIndex,
                                    Attribute value) {
  StringRef kDimNames = RLXDialect::kDimNamesAttr;
  auto names = dyn_cast<ArrayAttr>(value);
  if (!names)
    return op->emitError() << kDimNames << " must be an array of strings";
  if (region.empty() || argIndex >= region.getNumArguments())
    return success();
  // A memref once bufferized: the names stay (rlx-lir-plan-buffers reports
  // them).
  Type argType = region.getArgument(argIndex).getType();
  auto type = dyn_cast<ShapedType>(argType);
  if (!isa<RankedTensorType, MemRefType>(argType))
    return op->emitError() << kDimNames << " on argument " << argIndex
                           << " needs a ranked tensor or memref argument";
  if (static_cast<int64_t>(names.size()) != type.getRank())
    return op->emitError() << kDimNames << " on argument " << argIndex << " has "
                           << names.size() << " names for rank " << type.getRank();
  for (auto [dim, name] : llvm::enumerate(names)) {
    auto str = dyn_cast<StringAttr>(name);
    if (!str)
      return op->emitError() << kDimNames << " must be an array of strings";
    bool dynamic = type.isDynamicDim(dim);
    if (dynamic && str.getValue().empty())
      return op->emitError() << "dynamic dim " << dim << " of argument " << argIndex
                             << " needs a name in " << kDimNames;
    if (!dynamic && !str.getValue().empty())
      return op->emitError() << "static dim " << dim << " of argument " << argIndex
                             << " must not be named ('" << str.getValue() << "')";
  }
  return success();
}

/// `rlx.packed_by = {fn = @pack, result = i}`: @pack is a function next to
/// `op` with a result `i`.
static LogicalResult verifyPackedBy(Operation *op, Attribute value) {
  auto dict = dyn_cast<DictionaryAttr>(value);
  auto fn = dict ? dyn_cast_or_null<FlatSymbolRefAttr>(dict.get("fn")) : nullptr;
  auto result = dict ? dyn_cast_or_null<IntegerAttr>(dict.get("result")) : nullptr;
  if (!fn || !result || dict.size() != 2)
    return op->emitError() << "rlx.packed_by must be {fn = @<packing function>, result = "
                              "<index>}, got "
                           << value;
  Operation *table = op->getParentOp() ? SymbolTable::getNearestSymbolTable(op->getParentOp())
                                       : nullptr;
  auto pack = table ? dyn_cast_or_null<FunctionOpInterface>(
                          SymbolTable::lookupSymbolIn(table, fn.getAttr()))
                    : FunctionOpInterface();
  if (!pack)
    return op->emitError() << "rlx.packed_by names " << fn << ", which is not a function here";
  // After bufferization the results are out-parameters (named by rlx.output
  // only on the LIR path): only the tensor form can be checked.
  int64_t results = pack.getNumResults();
  int64_t i = result.getInt();
  if (i < 0 || (results > 0 && i >= results))
    return op->emitError() << "rlx.packed_by result " << i << " is not a result of " << fn
                           << " (it has " << results << ")";
  return success();
}

LogicalResult RLXDialect::verifyRegionArgAttribute(Operation *op, unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  std::string where = "argument " + std::to_string(argIndex);
  if (name == kDimNamesAttr)
    return verifyDimNames(op, op->getRegion(regionIndex), argIndex, attr.getValue());
  if (name == "rlx.input" || name == "rlx.param" || name == "rlx.output") {
    if (failed(checkName(op, attr, where)))
      return failure();
    // One role per argument.
    if (auto fn = dyn_cast<FunctionOpInterface>(op);
        fn && argIndex < fn.getNumArguments() && name != "rlx.output") {
      StringRef other = name == "rlx.input" ? "rlx.param" : "rlx.input";
      if (fn.getArgAttr(argIndex, other))
        return op->emitError() << where << " has both rlx.input and rlx.param";
    }
    return success();
  }
  if (name == "rlx.packed_by")
    return verifyPackedBy(op, attr.getValue());
  if (name == "rlx.packed_from") {
    auto a = dyn_cast<ArrayAttr>(attr.getValue());
    if (!a || !llvm::all_of(a, [](Attribute e) { return isa<StringAttr>(e); }))
      return op->emitError() << "rlx.packed_from must be an array of parameter names, got "
                             << attr.getValue();
    return success();
  }
  // rlx-mir-index-bounds: the rows of the tables an integer argument indexes.
  if (name == "rlx.index_bound") {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 1)
      return op->emitError() << "rlx.index_bound must be a positive integer, got "
                             << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown attribute '" << name << "' on " << where
                         << " (the rlx dialect defines rlx.input, rlx.param, rlx.output, "
                            "rlx.dim_names, rlx.packed_by, rlx.packed_from, rlx.index_bound)";
}

LogicalResult RLXDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned resultIndex,
                                                      NamedAttribute attr) {
  if (attr.getName() == "rlx.output")
    return checkName(op, attr, "result " + std::to_string(resultIndex));
  return op->emitError() << "unknown attribute '" << attr.getName().getValue() << "' on result "
                         << resultIndex << " (the rlx dialect defines rlx.output there)";
}

LogicalResult RLXDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == "rlx.fusion_policy") {
    auto s = dyn_cast<StringAttr>(attr.getValue());
    if (!s || (s.getValue() != "direct" && s.getValue() != "fusable"))
      return op->emitError() << "rlx.fusion_policy must be \"direct\" or \"fusable\", got "
                             << attr.getValue();
    return success();
  }
  // What rlx-nvvm-assemble keeps on a gpu.binary: the PTX and ptxas's report.
  if (attr.getName() == "rlx.ptx" || attr.getName() == "rlx.kernels") {
    bool ok = attr.getName() == "rlx.ptx" ? isa<StringAttr>(attr.getValue())
                                          : isa<DictionaryAttr>(attr.getValue());
    if (!ok)
      return op->emitError() << attr.getName().getValue() << " must be a "
                             << (attr.getName() == "rlx.ptx" ? "string" : "dictionary")
                             << ", got " << attr.getValue();
    return success();
  }
  // The register-A wgmma the kernel templates emit as inline PTX
  // (include/RLX/Target/NVVM/WgmmaRegisterA.h), for the emulator.
  if (attr.getName() == "rlx.wgmma_register_a") {
    auto d = dyn_cast<DictionaryAttr>(attr.getValue());
    if (op->getName().getStringRef() != "llvm.inline_asm" || !d || !d.getAs<IntegerAttr>("n") ||
        !d.getAs<BoolAttr>("bf16") || !d.getAs<BoolAttr>("trans_b") ||
        !d.getAs<BoolAttr>("scale_d"))
      return op->emitError() << "rlx.wgmma_register_a must be {n, bf16, trans_b, scale_d} on an "
                                "llvm.inline_asm, got "
                             << attr.getValue();
    return success();
  }
  // A kernel the GPU emulator does not run (tcgen05), and why.
  if (attr.getName() == "rlx.emulator_unavailable") {
    StringRef on = op->getName().getStringRef();
    if ((on != "gpu.func" && on != "llvm.func") || !isa<StringAttr>(attr.getValue()))
      return op->emitError() << "rlx.emulator_unavailable must be a string on a kernel function";
    return success();
  }
  // The rank a per-rank tensor-parallel program was compiled for
  // (rlx-mir-gpu-collectives).
  if (attr.getName() == "rlx.tp_rank") {
    auto r = dyn_cast<IntegerAttr>(attr.getValue());
    if (op->getName().getStringRef() != "builtin.module" || !r || r.getInt() < 0)
      return op->emitError() << "rlx.tp_rank must be a non-negative integer on a module";
    return success();
  }
  // A module as it left the GPU kernel pipeline (rlx-compile --emit-kernel-ir).
  if (attr.getName() == "rlx.kernel_ir") {
    if (op->getName().getStringRef() != "builtin.module" || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "rlx.kernel_ir must be a unit attribute on a module";
    return success();
  }
  // The traced kernels of a module (rlx-cpu-outline-kernels' trace): entry
  // id is {name, locations} of the kernel rlx_trace_kernel_begin(id) starts.
  if (attr.getName() == "rlx.trace_kernels") {
    auto table = dyn_cast<ArrayAttr>(attr.getValue());
    auto wellFormed = [](Attribute a) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto locations = d ? d.getAs<ArrayAttr>("locations") : ArrayAttr();
      return d && d.getAs<StringAttr>("name") && locations &&
             llvm::all_of(locations, [](Attribute l) { return isa<StringAttr>(l); });
    };
    if (op->getName().getStringRef() != "builtin.module" || !table ||
        !llvm::all_of(table, wellFormed))
      return op->emitError() << "rlx.trace_kernels must be an array of {name = string, "
                                "locations = [string]} on a module";
    return success();
  }
  if (attr.getName() == "rlx.wgmma_fence_operands") {
    if (op->getName().getStringRef() != "llvm.inline_asm" || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "rlx.wgmma_fence_operands must be a unit attribute on an "
                                "llvm.inline_asm";
    return success();
  }
  if (attr.getName() == "rlx.cumsum" || attr.getName() == "rlx.topk" ||
      attr.getName() == "rlx.topk_ranks") {
    // Set by cumsum's and topk's linalg lowerings; the CPU path calls its
    // runtime for them (rlx-cpu-topk-cumsum).
    bool cumsum = attr.getName() == "rlx.cumsum";
    auto array = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (op->getName().getStringRef() != "linalg.generic" ||
        (cumsum ? !array || array.size() != 3 : !isa<UnitAttr>(attr.getValue())))
      return op->emitError() << attr.getName().getValue() << " must be "
                             << (cumsum ? "[axis, exclusive, reverse]" : "a unit attribute")
                             << " on a linalg.generic";
    return success();
  }
  if (attr.getName() == "rlx.qmatmul") {
    // Set by qmatmul's linalg lowering; the CPU path calls its integer GEMM
    // for the op (cpu-matmul-to-blas), which reads these instead of the body.
    auto array = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    auto valid = [](ArrayRef<int64_t> p) {
      auto inRange = [](int64_t z, int64_t isUnsigned) {
        return isUnsigned ? z >= 0 && z <= 255 : z >= -128 && z <= 127;
      };
      return (p[2] == 0 || p[2] == 1) && (p[3] == 0 || p[3] == 1) && inRange(p[0], p[2]) &&
             inRange(p[1], p[3]);
    };
    if (op->getName().getStringRef() != "linalg.generic" || !array || array.size() != 4 ||
        !valid(array.asArrayRef()))
      return op->emitError() << "rlx.qmatmul must be [lhs_zero_point, rhs_zero_point, "
                                "lhs_unsigned, rhs_unsigned] (flags 0 or 1, zero points in their "
                                "byte's range) on a linalg.generic";
    return success();
  }
  if (attr.getName() == "rlx.expert_local_rows") {
    // Set by rlx-mir-shard on an expert-split grouped_matmul whose rows stay
    // on their expert's rank; read by its partition.
    if (op->getName().getStringRef() != "rlx_mir.grouped_matmul" || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "rlx.expert_local_rows must be a unit attribute on an "
                                "rlx_mir.grouped_matmul";
    return success();
  }
  if (attr.getName() == "rlx.grouped_matmul") {
    // Set by grouped_matmul's linalg lowering; the CPU path calls its
    // grouped GEMM for the op (cpu-matmul-to-blas); its value is the op's
    // zero_out_of_range.
    if (op->getName().getStringRef() != "linalg.generic" || !isa<BoolAttr>(attr.getValue()))
      return op->emitError() << "rlx.grouped_matmul must be a boolean attribute on a "
                                "linalg.generic";
    return success();
  }
  return op->emitError() << "unknown attribute '" << attr.getName().getValue()
                         << "' (the rlx dialect defines rlx.fusion_policy, rlx.tp_rank, rlx.kernel_ir "
                            "and rlx.trace_kernels on "
                            "modules, "
                            "rlx.ptx and rlx.kernels on gpu.binary, rlx.wgmma_register_a and "
                            "rlx.wgmma_fence_operands on llvm.inline_asm, "
                            "rlx.emulator_unavailable on gpu.func, rlx.grouped_matmul on "
                            "linalg.generic, rlx.cumsum, rlx.topk, rlx.topk_ranks and rlx.qmatmul on "
                            "linalg.generic, rlx.expert_local_rows on rlx_mir.grouped_matmul; "
                            "rlx.input, rlx.param, rlx.output, rlx.dim_names, rlx.packed_by "
                            "and rlx.packed_from on function arguments and results)";
}
