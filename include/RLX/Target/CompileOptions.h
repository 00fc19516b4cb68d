//===- CompileOptions.h - One options struct for every backend ---*- C++ -*-===//
//
// CompileOptions is what the CPU runner, the GPU artifact writer and both
// pass pipelines read. Its fields, flags, defaults and descriptions are
// declared once, in CompileOptions.def; the pipelines' PassPipelineOptions
// (CompileOptionsPipeline.inc), the tools' flags (CompileOptionsFlags) and
// Python's keyword arguments (CompileOptions::set) are generated from it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_COMPILEOPTIONS_H
#define RLX_TARGET_COMPILEOPTIONS_H

#include "RLX/Conversion/HIRToMIR/HIRToMIR.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/LLVM.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace mlir::rlx {

/// Where an option is taken (see CompileOptions.def).
enum class CompileOptionGroup : unsigned {
  Common = 1,
  Codegen = 2,
  Cpu = 4,
  CpuPipeline = 8,
  CpuJit = 16,
  Gpu = 32,
  GpuPipeline = 64,
  GpuArtifact = 128,
};

/// A set of groups, as a mask.
unsigned compileOptionGroups(std::initializer_list<CompileOptionGroup> groups);

struct CompileOptions {
#define RLX_OPTION(GROUP, TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION) TYPE FIELD = DEFAULT;
#define RLX_LIST_OPTION(GROUP, FIELD, FLAG, DESCRIPTION) std::vector<std::string> FIELD;
#include "RLX/Target/CompileOptions.def"

  /// Refuses values no entry point can compile with (an unknown fusion
  /// policy, kernel or spill mode, a rank outside [0, tp), a malformed dim
  /// binding, ...). The error starts with the option's flag
  /// (spellOptionError names it as the caller spells it).
  LogicalResult verify(std::string &error) const;
  /// `dims` as name -> size.
  FailureOr<std::map<std::string, int64_t>> dimBindings(std::string &error) const;
  /// Replaces the binding of `name` in `dims`, or adds it.
  void bindDim(StringRef name, int64_t size);
  FusionPolicy policy() const {
    return fusionPolicy == "fusable" ? FusionPolicy::Fusable : FusionPolicy::Direct;
  }
  /// Sets the option named `name` (its Python name, matmul_kernel, or its
  /// flag, matmul-kernel) from text: true/false for bools, a comma-separated
  /// list for lists. Fails, naming the options of `groups`, for a name that
  /// is not one of them.
  LogicalResult set(StringRef name, StringRef value, unsigned groups, std::string &error);
};

/// `error` from CompileOptions::verify, the option named as a tool's flag
/// (-O, --row-tile) or, with `python`, as Python's keyword (row_tile).
std::string spellOptionError(StringRef error, bool python);

/// One option as CompileOptions.def declares it.
struct CompileOptionInfo {
  CompileOptionGroup group;
  const char *field, *flag, *type, *help;
  std::string pythonName, defaultValue;
};
ArrayRef<CompileOptionInfo> compileOptionInfos();

/// The options of `groups` as a tool's command-line flags, in `category`
/// (a bool option that defaults to true also gets --no-<flag>). Construct it
/// before llvm::cl::ParseCommandLineOptions (a static object of the tool).
class CompileOptionsFlags {
public:
  /// `except`: flags of those groups the tool does not take.
  CompileOptionsFlags(llvm::cl::OptionCategory &category,
                      std::initializer_list<CompileOptionGroup> groups,
                      std::initializer_list<StringRef> except = {});
  /// The parsed flags over the defaults.
  CompileOptions values() const;
  /// The flags of `groups` (a mask) given on the command line.
  std::vector<std::string> given(unsigned groups) const;

private:
  struct Flag {
    CompileOptionGroup group;
    llvm::cl::Option *option;
    std::function<void(CompileOptions &)> apply;
  };
  // The flags live as long as the process (the command-line registry keeps
  // pointers to them), so they are never deleted.
  std::vector<Flag> flags;
};

/// Registers a pass pipeline whose options are `PipelineOptions` (generated
/// by CompileOptionsPipeline.inc): they are parsed, checked by
/// CompileOptions::verify (an error names the option) and handed to
/// `build` as CompileOptions.
template <typename PipelineOptions>
void registerCompilePipeline(StringRef arg, StringRef description,
                             void (*build)(OpPassManager &, const CompileOptions &)) {
  registerPassPipeline(
      arg, description,
      [build, name = arg.str()](OpPassManager &pm, StringRef text,
                                function_ref<LogicalResult(const Twine &)> errorHandler) {
        PipelineOptions parsed;
        if (failed(parsed.parseFromString(text)))
          return failure();
        CompileOptions options = parsed.values();
        std::string error;
        if (failed(options.verify(error)))
          return errorHandler(name + ": " + error);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) { handler(PipelineOptions()); });
}

} // namespace mlir::rlx

#endif // RLX_TARGET_COMPILEOPTIONS_H
