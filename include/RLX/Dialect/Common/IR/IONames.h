//===- IONames.h - The names of a model's arguments and results -*- C++ -*-===//
//
// One rule for what a user calls a function's arguments and results (the
// --input NAME= of rlx-run, the keys of Python's run(), the GPU manifest's
// buffers, the JSON export): rlx.param / rlx.input / rlx.output when the
// function has them, else argN / resultN by the position in the function
// the user wrote. Every compile route calls nameUnnamedIO first, so later
// stages, which add, remove or reorder arguments (packing, bufferization,
// the GPU arena), keep the names the user was told.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_IONAMES_H
#define RLX_DIALECT_COMMON_IR_IONAMES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>
#include <vector>

namespace mlir::rlx {

/// rlx.param or rlx.input of argument `i`, else "arg<i>".
std::string argumentName(FunctionOpInterface fn, unsigned i);
/// rlx.output of result `i`, else "result<i>".
std::string resultName(FunctionOpInterface fn, unsigned i);
/// The symbolic dims the function's arguments name (rlx.dim_names), each
/// once, in order of appearance ("seq", "past_seq").
std::vector<std::string> dimNames(FunctionOpInterface fn);
/// The same joined with ", " ("" when none).
std::string joinedDimNames(FunctionOpInterface fn);

/// Writes the default names as rlx.input / rlx.output on the unnamed
/// tensor arguments and results of the module's public function
/// definitions.
void nameUnnamedIO(ModuleOp module);

} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_IONAMES_H
