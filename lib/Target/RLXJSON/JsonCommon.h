//===- JsonCommon.h - Shared pieces of the RLX JSON import and export ----===//
//
// Internal to lib/Target/RLXJSON: dtype and enum spellings of the original
// format, shapes, and how MIR ops are written in it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_TARGET_RLXJSON_JSONCOMMON_H
#define RLX_LIB_TARGET_RLXJSON_JSONCOMMON_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::rlx::rlxjson {

/// "F32" → "f32" (MLIR element type spelling); nullopt when unsupported.
std::optional<std::string> dtypeToMlir(llvm::StringRef rlx);
/// f32 → "F32".
std::optional<std::string> dtypeToRlx(Type t);

/// "GeluTanh" → "gelu_tanh", "Silu" → "silu" (and back).
std::string camelToSnake(llvm::StringRef s);
std::string snakeToCamel(llvm::StringRef s);

/// The names of RLX's dynamic dim symbols: 0 batch, 1 seq, 2 rows, 3 past_seq.
std::string symbolName(int64_t symbol);

/// A float as an MLIR literal with every digit (%.17e).
std::string floatLiteral(double v);
/// `s` as an MLIR string literal: quoted, with escapes.
std::string quoted(llvm::StringRef s);
std::optional<int64_t> symbolOf(llvm::StringRef name);

/// A node's shape: MLIR dims (-1 for dynamic), the names of the dynamic dims
/// ("" for static), and the element type.
struct Shape {
  std::vector<int64_t> dims;
  std::vector<std::string> dimNames;
  std::string dtype;
  std::string tensorType() const;  ///< tensor<2x?x4xf32>
  std::string memrefType() const;  ///< memref<2x4xf32>
  int64_t byteSize() const;
};
bool parseShape(const llvm::json::Value *v, Shape &out, std::string &error);
llvm::json::Value shapeToJson(ShapedType t, llvm::ArrayRef<std::string> dimNames = {});

/// The enum tag and payload of an externally tagged serde value:
/// "MatMul" → ("MatMul", null); {"Softmax": {...}} → ("Softmax", &{...}).
std::pair<std::string, const llvm::json::Value *> tagOf(const llvm::json::Value &v);

/// Sliding windows: the original RLX's window w admits w + 1 keys (the
/// query's own position and w before it); ours (DESIGN §3, Hugging Face's
/// convention) admits w. Import adds 1, export subtracts 1. A window that is
/// not a non-negative integer imports as 0, which the verifier rejects at
/// the node.
int64_t slidingWindowFromJson(const llvm::json::Value *original);
llvm::json::Value slidingWindowToJson(int64_t window);

/// The text of the MIR op an RLX MIR op denotes, with `operands` (SSA names)
/// of `operandTypes`, producing `resultType`. Empty with `error` set when the
/// op is not supported.
std::string mirOpText(const llvm::json::Value &op, llvm::ArrayRef<std::string> operands,
                      llvm::ArrayRef<std::string> operandTypes, const Shape &result,
                      std::string &error);

} // namespace mlir::rlx::rlxjson

#endif // RLX_LIB_TARGET_RLXJSON_JSONCOMMON_H
